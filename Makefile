# The README's two commands: `make run` (the pipeline on the bundled samples) and `make test`.
.PHONY: setup run test dev

setup:
	bash scripts/setup.sh

run: setup
	.venv/bin/traj2env generate --config examples/trajectory-to-env.yaml

test: setup
	.venv/bin/python -m pytest

dev: setup
	mkdir -p .dagster_home && cp -n dagster.yaml .dagster_home/dagster.yaml || true
	DAGSTER_HOME=$(CURDIR)/.dagster_home .venv/bin/dagster dev -w workspace.yaml
