// Mocha reporter that sends every test's outcome to the root-side verdict (verdict.mjs).
// Loaded by tests/test.sh with --reporter in mocha's own process, which runs in parallel
// mode: the test files run in worker processes that mocha starts after this reporter has
// read the key (from descriptor 4, closed at once), and this process loads no project code
// (test.sh reads no .mocharc, so nothing is --require'd here). Records go to file
// descriptor 3, a pipe a root process drains into a file the test user cannot open, each
// signed with the key: an unsigned record makes the verdict 0. Ids are "<file relative to
// the project root>::<describe titles and the test's> joined by ' > '", as mocha's failure
// list names a failure; a failing hook fails its file; the last record, "end", says the
// run finished. Mocha's spec reporter prints the run for the logs, as a default run would.
"use strict";
const { createHmac } = require("node:crypto");
const { closeSync, readFileSync, writeSync } = require("node:fs");
const { relative } = require("node:path");

const PROJECT_ROOT = "/workspace";
const CHANNEL_FD = 3;
const KEY_FD = 4;

// Mocha's own spec reporter, from the mocha that loaded this file (its bin/mocha.js).
function specReporter() {
  try {
    return require.main.require("../lib/reporters/spec.js");
  } catch {
    return null;
  }
}

class SignedResultsReporter {
  constructor(runner, options) {
    this.key = readFileSync(KEY_FD, "utf8").trim();
    closeSync(KEY_FD);
    this.seq = 0;
    const where = (runnable) => (runnable.file ? relative(PROJECT_ROOT, runnable.file) : "<no file>");
    const id = (test) => `${where(test)}::${test.titlePath().join(" > ")}`;
    runner.on("pass", (test) => this.send({ kind: "report", id: id(test), outcome: "passed" }));
    runner.on("pending", (test) => this.send({ kind: "report", id: id(test), outcome: "skipped" }));
    runner.on("fail", (runnable) => {
      const test = runnable.type === "test";
      this.send({ kind: "report", id: test ? id(runnable) : where(runnable), outcome: "failed" });
    });
    runner.once("end", () => this.send({ kind: "end" }));
    const Spec = specReporter();
    if (Spec) new Spec(runner, options);
  }

  send(record) {
    this.seq += 1;
    const body = JSON.stringify({ ...record, seq: this.seq });
    const mac = createHmac("sha256", this.key).update(body).digest("hex");
    writeSync(CHANNEL_FD, JSON.stringify({ body, mac }) + "\n");
  }
}

module.exports = SignedResultsReporter;
