// Turn the recorded node:test outcomes into the reward, as root, after the test run.
// Usage: verdict.mjs RESULTS_JSONL KEY_HEX TRACKED_IDS_FILE SENTINELS_FILE MODE TAMPER_JSON OUT_DIR
// The same rules, in the same order, as verdict.py (see its docstring): tamper_check_failed,
// tamper_detected,
// results_forged, run_incomplete, sentinel_contradiction, then the mode (all_pass,
// fraction, check). A node test's outcome is its one reported event; a failure sticks.
import { createHmac, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [resultsPath, keyHex, trackedPath, sentinelsPath, mode, tamperPath, outDir] = process.argv.slice(2);
const key = keyHex;
const lines = (path) => readFileSync(path, "utf8").split("\n").filter((line) => line.trim());

function signedRecords(path) {
  const records = [];
  let forged = 0;
  if (!existsSync(path)) return { records, forged };
  for (const line of lines(path)) {
    let record = null;
    try {
      const { body, mac } = JSON.parse(line);
      const expected = Buffer.from(createHmac("sha256", key).update(String(body)).digest("hex"));
      const given = Buffer.from(String(mac));
      if (given.length === expected.length && timingSafeEqual(given, expected)) record = JSON.parse(body);
    } catch {
      record = null;
    }
    if (record === null || record.seq !== records.length + 1) forged += 1;
    else records.push(record);
  }
  return { records, forged };
}

// The static check's findings; null when it left no readable report.
function tamperFindings(path) {
  try {
    const findings = JSON.parse(readFileSync(path, "utf8")).findings;
    return Array.isArray(findings) ? findings : null;
  } catch {
    return null;
  }
}

const { records, forged } = signedRecords(resultsPath);
const results = new Map();
for (const record of records) {
  if (record.kind !== "report") continue;
  const previous = results.get(record.id);
  results.set(record.id, previous === "failed" ? "failed" : record.outcome);
}
const tracked = lines(trackedPath);
const trackedOutcomes = Object.fromEntries(tracked.map((id) => [id, results.get(id) ?? "missing"]));
const expectedSentinels = Object.fromEntries(lines(sentinelsPath).map((line) => line.split("\t")));
const sentinels = Object.fromEntries(Object.keys(expectedSentinels).map((id) => [id, results.get(id) ?? "missing"]));
const contradiction = Object.entries(expectedSentinels).some(([id, outcome]) => sentinels[id] !== outcome);
const ended = records.some((record) => record.kind === "end");
const findings = tamperFindings(tamperPath);
const passed = Object.values(trackedOutcomes).filter((outcome) => outcome === "passed").length;
const othersFailed = [...results.entries()]
  .filter(([id, outcome]) => outcome === "failed" && !(id in expectedSentinels))
  .map(([id]) => id)
  .sort();
let reward;
let reason;
if (findings === null) [reward, reason] = [0, "tamper_check_failed"];
else if (findings.length) [reward, reason] = [0, "tamper_detected"];
else if (forged) [reward, reason] = [0, "results_forged"];
else if (!ended) [reward, reason] = [0, "run_incomplete"];
else if (contradiction) [reward, reason] = [0, "sentinel_contradiction"];
else if (mode === "check" && (passed < tracked.length || othersFailed.length)) [reward, reason] = [0, "check_failed"];
else if (mode === "fraction") [reward, reason] = [passed / tracked.length, "fraction_passed"];
else if (passed === tracked.length) [reward, reason] = [1, "all_tracked_passed"];
else [reward, reason] = [0, "tracked_not_passed"];

const verdict = {
  reward,
  reason,
  tracked: trackedOutcomes,
  sentinels,
  failed: othersFailed,
  tamper_findings: findings,
  forged_records: forged,
  results_recorded: results.size,
};
writeFileSync(join(outDir, "verdict.json"), JSON.stringify(verdict, null, 2) + "\n");
writeFileSync(join(outDir, "reward.txt"), `${reward}\n`);
