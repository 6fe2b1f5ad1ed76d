// node:test reporter that sends every test's outcome to the root-side verdict (verdict.mjs).
// Loaded by tests/test.sh with --test-reporter in the `node --test` parent process, which
// runs no project code (each test file runs in a child process). Records go to file
// descriptor 3, a pipe a root process drains into a file the test user cannot open, each
// signed with the key that arrives on descriptor 4 (read before any test file starts):
// an unsigned record written by a child makes the verdict 0. Ids are
// "<file relative to the project root>::<test name>", a nested test's name being its
// suites' names and its own joined with " > " (as the TAP and spec reporters print them);
// the last record, "end", tells the verdict that the run finished.
import { createHmac } from "node:crypto";
import { closeSync, readFileSync, writeSync } from "node:fs";
import { relative } from "node:path";

const PROJECT_ROOT = "/workspace";
const CHANNEL_FD = 3;
const KEY_FD = 4;

const key = readFileSync(KEY_FD, "utf8").trim();
closeSync(KEY_FD);
let seq = 0;

function send(record) {
  seq += 1;
  const body = JSON.stringify({ ...record, seq });
  const mac = createHmac("sha256", key).update(body).digest("hex");
  writeSync(CHANNEL_FD, JSON.stringify({ body, mac }) + "\n");
}

// The names of the tests running at each nesting level, per file: node announces a test
// ("test:start") before its subtests, and files run in parallel.
const running = new Map();

function nestedName(file, nesting, name) {
  const parents = (running.get(file) ?? []).slice(0, nesting);
  return [...parents, name].join(" > ");
}

export default async function* recordOutcomes(source) {
  for await (const event of source) {
    if (event.type === "test:start") {
      const { file, nesting, name } = event.data;
      const names = (running.get(file) ?? []).slice(0, nesting);
      names[nesting] = name;
      running.set(file, names);
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { file, nesting } = event.data;
    const name = nestedName(file, nesting ?? 0, event.data.name);
    const where = file ? relative(PROJECT_ROOT, file) : "";
    const skipped = event.data.skip || event.data.todo;
    const outcome = event.type === "test:pass" ? (skipped ? "skipped" : "passed") : "failed";
    send({ kind: "report", id: `${where}::${name}`, outcome });
  }
  send({ kind: "end" });
}
