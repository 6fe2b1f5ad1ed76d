// node:test reporter that records every test's outcome as JSON lines, for verdict.mjs.
// Loaded by tests/test.sh with --test-reporter; ids are "<file relative to the project
// root>::<test name>".
import { relative } from "node:path";

const PROJECT_ROOT = "/workspace";

export default async function* recordOutcomes(source) {
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { name, file } = event.data;
    const where = file ? relative(PROJECT_ROOT, file) : "";
    const outcome = event.type === "test:pass" ? (event.data.skip || event.data.todo ? "skipped" : "passed") : "failed";
    yield JSON.stringify({ id: `${where}::${name}`, outcome }) + "\n";
  }
}
