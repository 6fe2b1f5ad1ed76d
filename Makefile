# The README's two commands: `make run` (the pipeline on the bundled samples) and `make test`.
.PHONY: setup run lint test dev deploy deploy-down

# mypy's incremental cache, outside the checkout (one per checkout path): no cache directory
# is written inside the repository (ruff's is set in pyproject.toml; --no-cache here too).
MYPY_CACHE = $${TMPDIR:-/tmp}/traj2env-mypy-$$(printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)

setup:
	bash scripts/setup.sh

run: setup
	.venv/bin/traj2env generate --config examples/trajectory-to-env.yaml

# Style and types ([tool.ruff], [tool.mypy] in pyproject.toml); `make test` runs it first.
lint: setup
	.venv/bin/ruff check --no-cache .
	.venv/bin/ruff format --no-cache --check .
	.venv/bin/mypy --cache-dir "$(MYPY_CACHE)"

# Lint first, then two tiers, the fast one first: the tests that need no Docker engine (none
# is reachable there, so a test that needs one without its `docker` mark fails), then the
# Docker tests.
# Two workers (pytest-xdist): much of the suite waits on the engine, not the CPU. Work
# units are test modules (traj2env_assets_tests/scheduling.py).
test: setup lint
	DOCKER_HOST=unix:///nonexistent/docker.sock .venv/bin/python -m pytest -n 2 --dist loadscope -m "not docker"
	.venv/bin/python -m pytest -n 2 --dist loadscope -m docker

dev: setup
	mkdir -p workspace/.dagster && cp -n dagster.yaml workspace/.dagster/dagster.yaml || true
	DAGSTER_HOME=$(CURDIR)/workspace/.dagster .venv/bin/dagster dev -w workspace.yaml

# The compose deployment (docker-compose.yml): PostgreSQL, code server, webserver, daemon.
deploy: setup
	bash scripts/deploy.sh up

deploy-down:
	bash scripts/deploy.sh down
