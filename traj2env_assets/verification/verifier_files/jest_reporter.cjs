// Jest reporter that sends every test's outcome to the root-side verdict (verdict.mjs).
// Loaded by tests/test.sh with --reporters in jest's parent process; the test files run in
// worker processes (test.sh gives jest at least two files and two workers, so it never runs
// them in band), which inherit neither descriptor. Records go to file descriptor 3, a pipe
// a root process drains into a file the test user cannot open, each signed with the key
// read from descriptor 4 when jest creates this reporter: an unsigned record makes the
// verdict 0. The outcomes are the aggregated results jest prints with --json; ids are
// "<file relative to the project root>::<describe names and the test's> joined by ' > '",
// as jest's "●" headers name a failure; the last record, "end", says the run finished.
"use strict";
const { createHmac } = require("node:crypto");
const { closeSync, readFileSync, writeSync } = require("node:fs");
const { relative } = require("node:path");

const PROJECT_ROOT = "/workspace";
const CHANNEL_FD = 3;
const KEY_FD = 4;
const OUTCOMES = { passed: "passed", failed: "failed", pending: "skipped", skipped: "skipped", todo: "skipped", disabled: "skipped" };

class SignedResultsReporter {
  constructor() {
    this.key = readFileSync(KEY_FD, "utf8").trim();
    closeSync(KEY_FD);
    this.seq = 0;
  }

  send(record) {
    this.seq += 1;
    const body = JSON.stringify({ ...record, seq: this.seq });
    const mac = createHmac("sha256", this.key).update(body).digest("hex");
    writeSync(CHANNEL_FD, JSON.stringify({ body, mac }) + "\n");
  }

  onRunComplete(_contexts, results) {
    for (const file of results.testResults) {
      const where = relative(PROJECT_ROOT, file.testFilePath);
      // A file that failed to load or run reports no tests: the file itself failed.
      if (file.testExecError || file.failureMessage && !file.testResults.length) {
        this.send({ kind: "report", id: where, outcome: "failed" });
      }
      for (const test of file.testResults) {
        const name = [...test.ancestorTitles, test.title].join(" > ");
        this.send({ kind: "report", id: `${where}::${name}`, outcome: OUTCOMES[test.status] ?? "failed" });
      }
    }
    this.send({ kind: "end" });
  }
}

module.exports = SignedResultsReporter;
