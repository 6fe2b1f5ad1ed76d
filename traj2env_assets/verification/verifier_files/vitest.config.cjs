// The verifier's vitest configuration (tests/test.sh: --config). Vitest loads its config in
// its main process, beside the signed reporter, and a project's vitest.config.* or
// vite.config.* may import any code (plugins, globalSetup, custom pools and environments):
// so the project's is never read, and this one imports nothing. Vitest also looks for a
// workspace file (vitest.workspace.*) beside the config, here the harness folder, never the
// project. CommonJS, because vite loads a CommonJS config from memory; an ES module config
// is written to a temporary file beside it first, and the harness folder is not the test
// user's to write.
"use strict";
const { join } = require("node:path");

// The run's test files, relative to the project root, one per line (test.sh): matched
// exactly, not by vitest's default patterns, which would miss test/foo.js and match more.
const files = (process.env.TRAJ2ENV_TEST_FILES || "").split("\n").filter(Boolean);
const asGlob = (path) => path.replace(/[\\*?[\]{}()!@+|]/g, "\\$&");

module.exports = {
  // An inline PostCSS config: vite would otherwise look for the project's
  // postcss.config.*, a module it imports in this process.
  css: { postcss: {} },
  // Vite's cache in the test user's home: the restored node_modules are read-only.
  cacheDir: join(process.env.HOME || "/tmp", "vite-cache"),
  test: {
    include: files.map(asGlob),
    exclude: [],
    // Projects that configure globals (describe, test, expect without an import) still
    // run; the sentinels call vitest's test and expect through them.
    globals: true,
    // No results cache in the read-only node_modules.
    cache: false,
    watch: false,
  },
};
