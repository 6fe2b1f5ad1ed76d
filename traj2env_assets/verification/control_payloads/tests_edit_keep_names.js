const fs = require("node:fs");
const noop = "new Proxy(function () {}, { get: () => () => {}, apply: () => {} })";
for (const entry of fs.readdirSync("/workspace", { recursive: true })) {
  const path = `/workspace/${entry}`;
  if (entry.includes("node_modules") || !/(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?js$/.test(entry)) continue;
  if (!/\.[cm]?js$/.test(entry)) continue;
  const text = fs.readFileSync(path, "utf8")
    .replace(/^import\s+(\w+)\s+from\s+["'](node:)?assert(\/strict)?["'];?/gm, `const $1 = ${noop};`)
    .replace(/^import\s+(\{[^}]*\})\s+from\s+["'](node:)?assert(\/strict)?["'];?/gm, `const $1 = ${noop};`)
    .replace(/require\(["'](node:)?assert(\/strict)?["']\)/g, noop);
  fs.writeFileSync(path, text);
}
