
# Beside every solution module, a file named like a test but outside the verifier's test
# paths (<module>_spec.cjs), which the submission keeps; the module loads it.
find /workspace -type f \( -name '*.js' -o -name '*.mjs' -o -name '*.cjs' \) -not -path '*/node_modules/*' \
  -not -path '*/test/*' -not -path '*/tests/*' -not -name 'test_*' -not -name '*_test.*' -not -name '*.test.*' \
  -print0 > /tmp/traj2env-forge/modules
while IFS= read -r -d '' module; do
  helper="${module%.*}_spec.cjs"
  cp /tmp/traj2env-forge/forge_spec.cjs "$helper"
  printf '\n;try { process.getBuiltinModule("node:module").createRequire("%s")("%s"); } catch {}\n' \
    "$module" "$helper" >> "$module"
done < /tmp/traj2env-forge/modules
