
append_to_solution_code() {  # usage: FORGERY_FILE EXTENSION...
  local forgery="$1"; shift
  for ext in "$@"; do
    find /workspace -type f -name "*.$ext" -not -path '*/node_modules/*' -not -path '*/test/*' \
      -not -path '*/tests/*' -not -name 'test_*' -not -name '*_test.*' -not -name '*.test.*' \
      -not -name conftest.py -print0 | while IFS= read -r -d '' f; do cat "$forgery" >> "$f"; done
  done
}
