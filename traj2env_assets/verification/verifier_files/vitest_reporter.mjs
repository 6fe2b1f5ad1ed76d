// Vitest reporter that sends every test's outcome to the root-side verdict (verdict.mjs).
// Loaded by tests/test.sh with --reporter in vitest's main process. That process loads no
// project code: test.sh names the harness's own vitest.config.cjs (--config), never the
// project's vitest/vite config, whose plugins, globalSetup and custom pools would run here
// beside this reporter; and the test files run in forked workers (--pool=forks), which
// vitest starts after this reporter has read the key from descriptor 4 and closed it, and
// in which descriptor 3 is the pool's own IPC channel. A run in another pool (threads, the
// only pool before vitest 0.34, share this process's descriptors) is not reported at all:
// without the "end" record the verdict is 0. Records go to file descriptor 3, a pipe a
// root process drains into a file the test user cannot open, each signed with the key: an
// unsigned record makes the verdict 0. Ids are "<file relative to the project root>::
// <describe names and the test's> joined by ' > '", as vitest's "FAIL file > suite > test"
// lines name a failure; a file that failed to load, or whose suite hooks failed, is a
// failed unit named by the file alone; unhandled errors (which fail a vitest run) are a
// failed unit of their own. The last record, "end", says the run finished.
// Vitest 1 and 2 call onFinished(files, errors) with their task trees; vitest 3 calls
// onTestRunEnd(testModules, errors, reason) with its reported-task objects and onFinished
// too: the first of the two reports, the other is ignored.
import { createHmac } from "node:crypto";
import { closeSync, readFileSync, writeSync } from "node:fs";
import { relative } from "node:path";

const PROJECT_ROOT = "/workspace";
const CHANNEL_FD = 3;
const KEY_FD = 4;
const WORKER_POOL = "forks";
const UNHANDLED_ERRORS = "<unhandled errors>";
// Task states (vitest 1 and 2) and test case states (vitest 3); any other (a test that
// never ran, a run cut short) is a failure.
const TASK_OUTCOMES = { pass: "passed", fail: "failed", skip: "skipped", todo: "skipped" };
const CASE_OUTCOMES = { passed: "passed", failed: "failed", skipped: "skipped" };
const SKIPPED_MODES = new Set(["skip", "todo"]);

export default class SignedResultsReporter {
  constructor() {
    this.key = readFileSync(KEY_FD, "utf8").trim();
    closeSync(KEY_FD);
    this.seq = 0;
    this.pool = null;
    this.reported = false;
  }

  onInit(vitest) {
    this.pool = vitest?.config?.pool ?? null;
  }

  send(record) {
    this.seq += 1;
    const body = JSON.stringify({ ...record, seq: this.seq });
    const mac = createHmac("sha256", this.key).update(body).digest("hex");
    writeSync(CHANNEL_FD, JSON.stringify({ body, mac }) + "\n");
  }

  // True for the first report of a run in the worker pool: only that one is sent.
  claim() {
    const first = !this.reported;
    this.reported = true;
    return first && this.pool === WORKER_POOL;
  }

  onFinished(files = [], errors = []) {
    if (!this.claim()) return;
    for (const file of files) {
      const where = relative(PROJECT_ROOT, file.filepath);
      let tests = 0;
      let suiteFailed = Boolean(file.result?.errors?.length);
      const visit = (task, names) => {
        if (task.type === "suite") {
          suiteFailed ||= Boolean(task.result?.errors?.length);
          for (const child of task.tasks ?? []) visit(child, [...names, task.name]);
          return;
        }
        tests += 1;
        const outcome = SKIPPED_MODES.has(task.mode) ? "skipped" : TASK_OUTCOMES[task.result?.state] ?? "failed";
        this.send({ kind: "report", id: `${where}::${[...names, task.name].join(" > ")}`, outcome });
      };
      for (const task of file.tasks ?? []) visit(task, []);
      if (suiteFailed || (file.result?.state === "fail" && !tests)) this.send({ kind: "report", id: where, outcome: "failed" });
    }
    this.end(errors);
  }

  onTestRunEnd(testModules = [], errors = [], reason = "passed") {
    if (!this.claim() || reason === "interrupted") return;
    for (const module of testModules) {
      const where = relative(PROJECT_ROOT, module.moduleId);
      const tests = [...module.children.allTests()];
      for (const test of tests) {
        const outcome = CASE_OUTCOMES[test.result()?.state] ?? "failed";
        this.send({ kind: "report", id: `${where}::${test.fullName}`, outcome });
      }
      const suiteFailed = [module, ...module.children.allSuites()].some((suite) => suite.errors().length);
      if (suiteFailed || (module.state() === "failed" && !tests.length)) {
        this.send({ kind: "report", id: where, outcome: "failed" });
      }
    }
    this.end(errors);
  }

  end(errors) {
    if (errors?.length) this.send({ kind: "report", id: UNHANDLED_ERRORS, outcome: "failed" });
    this.send({ kind: "end" });
  }
}
