#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: Python 3.12 venv with the locked packages,
# the Docker tools and the browser the tests need, and the offline base images.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python312() {
  for candidate in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "Python 3.12 not found (pyenv install 3.12, or put python3.12 on PATH)" >&2
  return 1
}

PYTHON=$(find_python312)
if ! "$PYTHON" -m uv --version >/dev/null 2>&1; then
  "$PYTHON" -m pip install --quiet --disable-pip-version-check uv
fi
# Bytecode compiled once here: where PYTHONDONTWRITEBYTECODE is set (as on the CI machine)
# every process would otherwise compile what it imports from source, seconds of CPU for
# each CLI start, pool worker and `harbor run` (LiteLLM alone is thousands of modules).
UV_PYTHON="$PYTHON" "$PYTHON" -m uv sync --frozen --all-extras --quiet --compile-bytecode

if [ -x .ci/install-docker-tools ] || [ -f .ci/install-docker-tools ]; then
  bash .ci/install-docker-tools
fi
if [ -f .ci/install-browser ]; then
  bash .ci/install-browser
fi
if .venv/bin/traj2env --help 2>/dev/null | grep -q '\bbases\b'; then
  .venv/bin/traj2env bases
fi
