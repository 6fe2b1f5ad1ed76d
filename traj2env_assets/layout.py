"""Every path traj2env reads or writes: the workspace's and a written Harbor task's.

The one place a folder or file name is spelled. Other modules ask a :class:`Workspace`
(``<root>/...``), a :class:`TaskLayout` (``<task dir>/...``) or one of the smaller layouts
(:class:`CandidateLayout`, :class:`ReplayLayout`, :class:`WheelhouseLayout`,
:class:`QaCacheLayout`) for a path; ``traj2env_assets_tests/test_layout_owner.py`` fails
on a module that composes one of these names itself.

The workspace, under ``<root>``::

    conversion/<key>/trajectory.json, record.json
    scan/<key>/verdict.json
    replay/<key>/outcome.json, record.json, manifests.jsonl, fidelity.json,
                 repository.json, blobs/, deltas.jsonl
    candidates/<family>/<key>/mining.json
    candidates/<family>/<key>/<task id>/candidate.json, status.json, proposal.json,
                                        trials.json, staging/<task id>/
    sources/registry.json
    cache/calibration/, cache/trials/, cache/secrets/  (``<ab>/<key>.json`` entries: keyed_file)
    cache/qa/wheels/<key>/, cache/qa/pins/<key>.json, cache/qa/hub/
    cache/trajectory_to_env/llm/                       (the default LLM cache)
    wheelhouse/wheels/<wheel>, wheelhouse/locks/<key>.json
    dedupe/<work key>/<task id>.json, dedupe/signatures/, dedupe/dataset.lock
    llm_ledger/<scope>.json
    trajectory-tasks/                                  (the default dataset destination)
    harbor-jobs/, .dagster/, trajectory-spec/
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

STAGE_CONVERSION = "conversion"
STAGE_SCAN = "scan"
STAGE_REPLAY = "replay"
STAGE_CANDIDATES = "candidates"

TRAJECTORY_FILE = "trajectory.json"
"""The ATIF trajectory conversion writes, the input of every later stage."""
CONVERSION_RECORD_FILE = "record.json"
VERDICT_FILE = "verdict.json"
MINING_FILE = "mining.json"
CANDIDATE_FILE = "candidate.json"
STATUS_FILE = "status.json"
PROPOSAL_FILE = "proposal.json"
TRIALS_FILE = "trials.json"
STAGING_DIR = "staging"

CACHE_DIR = "cache"
SOURCES_DIR = "sources"
REGISTRY_FILE = "registry.json"
WHEELHOUSE_DIR = "wheelhouse"
DEDUPE_DIR = "dedupe"
SIGNATURES_DIR = "signatures"
DATASET_LOCK_KEY = "dataset"
LEDGER_DIR = "llm_ledger"
DESTINATION_DIR = "trajectory-tasks"
HARBOR_JOBS_DIR = "harbor-jobs"
INSTANCE_DIR = ".dagster"
LLM_CACHE_DIR = Path(CACHE_DIR, "trajectory_to_env", "llm")
TRAJECTORY_SPEC_DIR = "trajectory-spec"
"""The ``trajectory_spec`` asset's default output folder, under the root."""

DEFAULT_WORKSPACE = Path("workspace")
"""The workspace root when ``--workspace`` is not given (relative to the current directory)."""
DEFAULT_SOURCE_DIR = DEFAULT_WORKSPACE / "trajectories"
"""The sessions' folder when the config names no ``source.path`` (relative to the current
directory like every path the config gives, so ``--workspace`` does not move it)."""


def keyed_file(directory: Path, key: str) -> Path:
    """A content-keyed cache entry: ``<directory>/<first two characters>/<key>.json``,
    so no folder holds more than a fraction of the entries."""
    return directory / key[:2] / f"{key}.json"


class Workspace(BaseModel):
    """The workspace under ``root``: every stage's output, the candidates, the caches and
    the stores runs share (the tree is in this module's docstring)."""

    root: Path

    # The stages, per partition key (one trajectory).

    def conversion_dir(self, partition_key: str) -> Path:
        return self.root / STAGE_CONVERSION / partition_key

    def trajectory_file(self, partition_key: str) -> Path:
        return self.conversion_dir(partition_key) / TRAJECTORY_FILE

    def conversion_record_file(self, partition_key: str) -> Path:
        return self.conversion_dir(partition_key) / CONVERSION_RECORD_FILE

    def verdict_file(self, partition_key: str) -> Path:
        return self.root / STAGE_SCAN / partition_key / VERDICT_FILE

    def replay_dir(self, partition_key: str) -> Path:
        return self.root / STAGE_REPLAY / partition_key

    # The candidates: ``candidates/<family>/<partition key>/<task id>/``.

    @property
    def candidates_dir(self) -> Path:
        return self.root / STAGE_CANDIDATES

    def partition_dir(self, family: str, partition_key: str) -> Path:
        return self.candidates_dir / family / partition_key

    def mining_file(self, family: str, partition_key: str) -> Path:
        return self.partition_dir(family, partition_key) / MINING_FILE

    def candidate(self, family: str, partition_key: str, task_id: str) -> CandidateLayout:
        return CandidateLayout(self.partition_dir(family, partition_key) / task_id)

    def every_status_file(self) -> list[Path]:
        """Every candidate's ``status.json``, of every family and partition, sorted."""
        return sorted(self.candidates_dir.glob(f"*/*/*/{STATUS_FILE}"))

    def every_staging_dir(self) -> list[Path]:
        """Every candidate's ``staging/`` folder, of every family and partition, sorted."""
        return sorted(self.candidates_dir.glob(f"*/*/*/{STAGING_DIR}"))

    # The caches and stores runs share.

    @property
    def sources_registry_file(self) -> Path:
        return self.root / SOURCES_DIR / REGISTRY_FILE

    @property
    def cache_dir(self) -> Path:
        """The families' cache root (``FamilySource.cache_root``; qa's: :class:`QaCacheLayout`)."""
        return self.root / CACHE_DIR

    @property
    def calibration_cache_dir(self) -> Path:
        return self.cache_dir / "calibration"

    @property
    def trials_cache_dir(self) -> Path:
        return self.cache_dir / "trials"

    @property
    def secrets_cache_dir(self) -> Path:
        return self.cache_dir / "secrets"

    @property
    def default_llm_cache_dir(self) -> Path:
        """The LLM cache when the config names no ``llm_cache_dir``."""
        return self.root / LLM_CACHE_DIR

    @property
    def wheelhouse_dir(self) -> Path:
        """The host-side wheel cache shared by every task image (see ``dependencies``)."""
        return self.root / WHEELHOUSE_DIR

    @property
    def dedupe_dir(self) -> Path:
        """The fix claims, ``<work key>/<task id>.json`` (``quality.duplicates.FixClaims``)."""
        return self.root / DEDUPE_DIR

    @property
    def published_signatures_dir(self) -> Path:
        return self.dedupe_dir / SIGNATURES_DIR

    @property
    def dataset_lock_key(self) -> Path:
        """The ``key_lock`` key held while a candidate is published into the dataset."""
        return self.dedupe_dir / DATASET_LOCK_KEY

    def llm_ledger_file(self, scope: str) -> Path:
        return self.root / LEDGER_DIR / f"{scope}.json"

    # Outside the pipeline's own state.

    @property
    def default_destination(self) -> Path:
        """The dataset when the config names no ``output.destination``."""
        return self.root / DESTINATION_DIR

    def resolve(self, path: str | Path) -> Path:
        """A path the user gave: a relative one lives under the root."""
        return self.root / path

    @property
    def harbor_jobs_dir(self) -> Path:
        return self.root / HARBOR_JOBS_DIR

    @property
    def dagster_home(self) -> Path:
        """The Dagster instance when ``DAGSTER_HOME`` is not set."""
        return self.root / INSTANCE_DIR


class CandidateLayout:
    """One candidate's folder (``Workspace.candidate``), named after its task id."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def candidate_file(self) -> Path:
        """The family's candidate model (what the task is made from)."""
        return self.directory / CANDIDATE_FILE

    @property
    def status_file(self) -> Path:
        return self.directory / STATUS_FILE

    @property
    def proposal_file(self) -> Path:
        return self.directory / PROPOSAL_FILE

    @property
    def trials_file(self) -> Path:
        return self.directory / TRIALS_FILE

    @property
    def staged_task_dir(self) -> Path:
        """The Harbor task, staged privately until it is published (a folder of its own,
        so the task folder keeps the task id as its name)."""
        return self.directory / STAGING_DIR / self.directory.name


class ReplayLayout:
    """A replay directory (``Workspace.replay_dir``, or the staging folder that becomes it)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def outcome_file(self) -> Path:
        """Replayed or skipped, with the cache key; the one file every replay directory has."""
        return self.directory / "outcome.json"

    @property
    def record_file(self) -> Path:
        return self.directory / "record.json"

    @property
    def manifests_file(self) -> Path:
        """One delta per shell command and per user request."""
        return self.directory / "manifests.jsonl"

    @property
    def fidelity_file(self) -> Path:
        return self.directory / "fidelity.json"

    @property
    def repository_file(self) -> Path:
        """Written only when a repository checkout covered the session."""
        return self.directory / "repository.json"

    @property
    def blobs_dir(self) -> Path:
        """The file versions' contents (``replay.content_store``)."""
        return self.directory / "blobs"

    @property
    def deltas_file(self) -> Path:
        return self.directory / "deltas.jsonl"


class WheelhouseLayout:
    """A wheelhouse (``Workspace.wheelhouse_dir``): ``wheels/<wheel>`` and ``locks/<key>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def wheels_dir(self) -> Path:
        return self.root / "wheels"

    def wheel_file(self, name: str) -> Path:
        return self.wheels_dir / name

    def lock_file(self, resolution_key: str) -> Path:
        return self.root / "locks" / f"{resolution_key}.json"


class QaCacheLayout:
    """The qa family's part of the cache root (``Workspace.cache_dir``)."""

    def __init__(self, cache_root: Path) -> None:
        self.root = cache_root / "qa"

    def wheels_dir(self, key: str) -> Path:
        return self.root / "wheels" / key

    def pin_file(self, key: str) -> Path:
        return self.root / "pins" / f"{key}.json"

    @property
    def hub_dir(self) -> Path:
        """The Hugging Face Hub cache the pinned inputs are fetched into."""
        return self.root / "hub"


HARNESS_DIR = "traj2env"
"""``tests/traj2env/``: the verifier's helpers and the task's fixed inputs."""
SOLUTION_FILES_DIR = "files"
TRACKED_IDS_FILE = "tracked_ids.txt"
SHOWN_WORKSPACE_DIR = "workspace"
CARD_FILE = "README.md"
"""The task's card (``stages.publish.card``), added when the task is published."""


class TaskLayout:
    """A written Harbor task under ``task_dir``. The names Harbor reads mirror its
    ``harbor.models.task.paths.TaskPaths`` (the layout tests pin them to it); the mirror
    spares every module Harbor's import and, unlike ``TaskPaths``, does not resolve the
    folder, so paths keep the form they were given in (relative ones stay relative)."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = task_dir

    @property
    def config_path(self) -> Path:
        return self.task_dir / "task.toml"

    @property
    def instruction_path(self) -> Path:
        return self.task_dir / "instruction.md"

    @property
    def card_path(self) -> Path:
        return self.task_dir / CARD_FILE

    @property
    def environment_dir(self) -> Path:
        return self.task_dir / "environment"

    @property
    def dockerfile_path(self) -> Path:
        return self.environment_dir / "Dockerfile"

    @property
    def shown_workspace_dir(self) -> Path:
        """The project files the agent starts from, copied into the image."""
        return self.environment_dir / SHOWN_WORKSPACE_DIR

    @property
    def solution_dir(self) -> Path:
        return self.task_dir / "solution"

    @property
    def solve_path(self) -> Path:
        return self.solution_dir / "solve.sh"

    @property
    def solution_files_dir(self) -> Path:
        """The reference's changed files, which ``solve.sh`` copies into place."""
        return self.solution_dir / SOLUTION_FILES_DIR

    @property
    def tests_dir(self) -> Path:
        return self.task_dir / "tests"

    @property
    def test_path(self) -> Path:
        return self.tests_dir / "test.sh"

    @property
    def harness_dir(self) -> Path:
        return self.tests_dir / HARNESS_DIR

    def harness_file(self, name: str) -> Path:
        return self.harness_dir / name

    @property
    def tracked_ids_path(self) -> Path:
        return self.harness_file(TRACKED_IDS_FILE)

    @property
    def pristine_paths_path(self) -> Path:
        return self.harness_file("pristine_paths.txt")

    @property
    def gate_ids_path(self) -> Path:
        return self.harness_file("gate_ids.txt")

    @property
    def restore_dir(self) -> Path:
        """The files the verifier restores before it runs the checks."""
        return self.harness_dir / "restore"
