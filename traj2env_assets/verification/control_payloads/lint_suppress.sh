
find /workspace -name '*.py' -not -path '*/node_modules/*' -print0 | while IFS= read -r -d '' f; do
  { printf '# type: ignore\n# ruff: noqa\n# mypy: ignore-errors\n'; cat "$f"; } > "$f.t2e" && mv -- "$f.t2e" "$f"
done
find /workspace \( -name '*.[cm]js' -o -name '*.js' -o -name '*.jsx' -o -name '*.ts' -o -name '*.tsx' \) \
  -not -path '*/node_modules/*' -print0 | while IFS= read -r -d '' f; do
  { printf '// @ts-nocheck\n/* eslint-disable */\n'; cat "$f"; } > "$f.t2e" && mv -- "$f.t2e" "$f"
done
