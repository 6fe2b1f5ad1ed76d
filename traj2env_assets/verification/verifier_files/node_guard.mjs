// Preloaded (--import) into every `node --test` process before any test file or project
// module: freezes the assertion and test-runner modules, so code under test cannot swap
// `assert.deepEqual` or `test` for a function that always passes (an assignment throws,
// and the test file that imported the code fails to load).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

for (const name of ["node:assert", "node:assert/strict", "node:test"]) {
  const exports = require(name);
  for (const value of Object.values(exports)) {
    if (typeof value === "function" || (typeof value === "object" && value !== null)) Object.freeze(value);
  }
  Object.freeze(exports);
}
