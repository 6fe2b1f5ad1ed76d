
if command -v python3 >/dev/null; then python3 - <<'PY'
{python}PY
fi
if command -v node >/dev/null; then node - <<'JS'
{node}JS
fi
