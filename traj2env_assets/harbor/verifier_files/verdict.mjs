// Turn recorded node:test outcomes into the reward, as root, after the test run.
// Usage: verdict.mjs RESULTS_JSONL TRACKED_IDS_FILE SENTINEL MODE OUT_DIR SENTINEL_FILES...
// Same rules as verdict.py (modes all_pass, fraction, check); the sentinel pair is appended to every tracked test file, so
// each of those files must report both sentinels exactly as written.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [resultsPath, trackedPath, sentinel, mode, outDir, ...sentinelFiles] = process.argv.slice(2);

const results = new Map();
if (existsSync(resultsPath)) {
  for (const line of readFileSync(resultsPath, "utf8").split("\n")) {
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof record?.id !== "string") continue;
    const previous = results.get(record.id);
    results.set(record.id, previous === "failed" ? "failed" : record.outcome);
  }
}

const tracked = readFileSync(trackedPath, "utf8").split("\n").filter((line) => line.trim());
const trackedOutcomes = Object.fromEntries(tracked.map((id) => [id, results.get(id) ?? "missing"]));
const sentinels = {};
for (const file of sentinelFiles) {
  sentinels[`${file}::${sentinel}_pass`] = results.get(`${file}::${sentinel}_pass`) ?? "missing";
  sentinels[`${file}::${sentinel}_fail`] = results.get(`${file}::${sentinel}_fail`) ?? "missing";
}
const forged = Object.entries(sentinels).some(
  ([id, outcome]) => outcome !== (id.endsWith("_pass") ? "passed" : "failed"),
);
const passed = Object.values(trackedOutcomes).filter((outcome) => outcome === "passed").length;
const sentinelNames = new Set([`${sentinel}_pass`, `${sentinel}_fail`]);
const othersFailed = [...results.entries()]
  .filter(([id, outcome]) => outcome === "failed" && !sentinelNames.has(id.split("::").pop()))
  .map(([id]) => id)
  .sort();
let reward;
let reason;
if (forged) [reward, reason] = [0, "sentinel_contradiction"];
else if (mode === "check" && (passed < tracked.length || othersFailed.length)) [reward, reason] = [0, "check_failed"];
else if (mode === "fraction") [reward, reason] = [passed / tracked.length, "fraction_passed"];
else if (passed === tracked.length) [reward, reason] = [1, "all_tracked_passed"];
else [reward, reason] = [0, "tracked_not_passed"];

const verdict = { reward, reason, tracked: trackedOutcomes, sentinels, failed: othersFailed, results_recorded: results.size };
writeFileSync(join(outDir, "verdict.json"), JSON.stringify(verdict, null, 2) + "\n");
writeFileSync(join(outDir, "reward.txt"), `${reward}\n`);
