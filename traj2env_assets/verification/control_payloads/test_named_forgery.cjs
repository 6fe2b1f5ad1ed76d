const nodeTest = require("node:test");
const original = nodeTest.test;
const swallow = (fn) => (typeof fn === "function" ? async (...args) => { try { await fn(...args); } catch {} } : fn);
const forged = (name, options, fn) => original(name, swallow(options), swallow(fn));
try {
  nodeTest.test = forged;
  nodeTest.it = forged;
  require("node:module").syncBuiltinESMExports();
} catch {}
