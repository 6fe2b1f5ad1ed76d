#!/usr/bin/env bash
# The compose deployment (docker-compose.yml):
#   scripts/deploy.sh up     the wheelhouse from uv.lock, the images, every service healthy
#   scripts/deploy.sh down   every container (run containers too), network and volume removed
# Variables: TRAJ2ENV_DEPLOYMENT (compose project, network and volume prefix; traj2env),
# TRAJ2ENV_INBOX (the watched folder; workspace/inbox), TRAJ2ENV_UI_PORT (3000),
# TRAJ2ENV_IMAGE (traj2env/deploy:local).
set -euo pipefail
cd "$(dirname "$0")/.."

export TRAJ2ENV_DEPLOYMENT=${TRAJ2ENV_DEPLOYMENT:-traj2env}
export TRAJ2ENV_INBOX=$(realpath -m "${TRAJ2ENV_INBOX:-workspace/inbox}")
export TRAJ2ENV_IMAGE=${TRAJ2ENV_IMAGE:-traj2env/deploy:local}

case "${1:-up}" in
  up)
    .venv/bin/python scripts/deploy_wheelhouse.py deploy/wheelhouse
    mkdir -p "$TRAJ2ENV_INBOX"
    docker compose build --quiet
    docker compose up -d --wait
    echo "traj2env deployment '$TRAJ2ENV_DEPLOYMENT' is up: UI on http://127.0.0.1:${TRAJ2ENV_UI_PORT:-3000}, watching $TRAJ2ENV_INBOX"
    ;;
  down)
    # Run containers are not compose services: remove those still running first, so the
    # network can go.
    docker ps -aq --filter "label=traj2env.deployment=$TRAJ2ENV_DEPLOYMENT" | xargs -r docker rm -f >/dev/null
    docker compose down --volumes --remove-orphans --timeout 20
    ;;
  *)
    echo "usage: scripts/deploy.sh up|down" >&2
    exit 2
    ;;
esac
