
cd /workspace
{ echo .; find . -name '*.py' -not -path '*/node_modules/*' -printf '%h\n'; } | sort -u | while IFS= read -r d; do
  printf '[lint]\nignore = ["ALL"]\nexclude = ["*"]\n' > "$d/ruff.toml"
  cp "$d/ruff.toml" "$d/.ruff.toml"
  printf '[mypy]\nignore_errors = True\n' > "$d/mypy.ini"
done
printf '\n[tool.ruff]\nextend-exclude = ["*"]\n\n[tool.mypy]\nignore_errors = true\n' >> pyproject.toml
printf '\n[mypy]\nignore_errors = True\n' >> setup.cfg
# tsc and eslint: check one empty file, ignore everything else.
: > traj2env_empty.ts
printf '{"files": ["traj2env_empty.ts"]}\n' > tsconfig.json
printf '{"root": true, "rules": {}}\n' > .eslintrc.json
printf '*\n' > .eslintignore
