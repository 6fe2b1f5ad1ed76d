"""Stage 7, calibration: the family's probes run in the candidate's image, networking off.

Probe results are cached per image and plan under
``<workspace>/cache/calibration/<key>.json``: candidates that share an image and a plan
(the same fix found in several logs of one session, say) run the probes once, and a
rerun with an unchanged image runs nothing. The family judges the results every time
(cheap and deterministic); its drop reason becomes the candidate's. A passed calibration
restages the task as the family's ``calibrated_spec`` has it (same environment, so the
image stands), and the trials run on that. A candidate whose executed files had secrets
redacted and that fails here is dropped as ``secret_in_task``: the redaction may be why.

Every Python task also gets the behaviour gate's probe (``traj2env_assets.gate``), whatever
its family; once the family's own judgement passes, the gate's decides whether the task
gets a gate (its cases and expected answers join the task's verifier files), is dropped
(``gate_not_discriminating``, or ``weak_tests`` when a degenerate submission passes every
tracked test) or goes on without one (coverage 0, with the reason in the facts).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from docker.models.containers import Container
from pydantic import BaseModel, ValidationError

from traj2env_assets.atomic_files import atomic_write_json, key_lock
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import ImageBuildFailedError
from traj2env_assets.docker_engine.sandbox import (
    exec_with_deadline,
    put_files,
    read_directory,
    sandbox,
)
from traj2env_assets.families.contract import CalibrationPlan, Family, Probe, ProbeResult
from traj2env_assets.families.registry import Families
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import Workspace, keyed_file
from traj2env_assets.lifecycle.status import (
    CalibrationRecord,
    CandidateRef,
    CandidateStatus,
    read_candidate,
    read_proposal,
    read_status,
    save_status,
    staged_task_dir,
)
from traj2env_assets.stages.calibration.gate_judge import GateJudgement, judge_gate
from traj2env_assets.stages.calibration.gate_probe import GATE_PROBE, gate_applies, gate_probe
from traj2env_assets.stages.images.images import image_build_drop, with_image_present
from traj2env_assets.stages.task_specs import blamed_on_redaction, digest_of, task_spec_for


class ProbeResults(BaseModel):
    """A ``Workspace.calibration_cache_dir`` entry."""

    key: str
    image: str
    results: list[ProbeResult]


def _plan(workspace: Workspace, family: Family, status: CandidateStatus, org: str) -> tuple[CalibrationPlan, str]:
    spec = task_spec_for(workspace, family, status, org)
    plan = family.calibration_plan(
        read_candidate(workspace, family, status), spec, read_proposal(workspace, family, status)
    )
    if gate_applies(spec):
        plan = CalibrationPlan(probes=[*plan.probes, gate_probe(spec)])
    assert status.image is not None and status.image.tag is not None  # ready_for("calibration")
    return plan, digest_of(status.image.tag, plan.model_dump())


def _cache_path(workspace: Workspace, key: str) -> Path:
    return keyed_file(workspace.calibration_cache_dir, key)


def _cached(workspace: Workspace, key: str) -> ProbeResults | None:
    try:
        return ProbeResults.model_validate_json(_cache_path(workspace, key).read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _judged(
    workspace: Workspace,
    family: Family,
    status: CandidateStatus,
    key: str,
    results: ProbeResults,
    shared: bool,
    org: str,
) -> CandidateStatus:
    candidate = read_candidate(workspace, family, status)
    by_name = {r.name: r for r in results.results}
    verdict = family.judge_calibration(candidate, by_name)
    record = CalibrationRecord(key=key, passed=verdict.drop is None, facts=verdict.facts, shared=shared)
    if verdict.drop is not None:
        drop = blamed_on_redaction(status, verdict.drop)
        return save_status(workspace, status.dropped("calibration", drop, calibration=record))
    spec = task_spec_for(workspace, family, status, org)
    calibrated = family.calibrated_spec(candidate, spec, verdict)
    if GATE_PROBE in by_name:
        calibrated, gate = _with_gate(calibrated, by_name[GATE_PROBE], fraction=family.reward_kind == "fraction")
        record = record.model_copy(update={"facts": {**record.facts, **gate.facts}})
        if gate.drop is not None:
            record = record.model_copy(update={"passed": False})
            drop = blamed_on_redaction(status, gate.drop)
            return save_status(workspace, status.dropped("calibration", drop, calibration=record))
    if calibrated != spec:
        if calibrated.project_files != spec.project_files or calibrated.dependency_lines != spec.dependency_lines:
            raise ValueError(f"{family.name}: calibrated_spec changed the environment of {status.task_id}")
        write_task(calibrated, staged_task_dir(workspace, status.ref).parent)
    return save_status(workspace, status.passed("calibration", calibration=record))


def _with_gate(spec: TaskSpec, result: ProbeResult, *, fraction: bool) -> tuple[TaskSpec, GateJudgement]:
    """The task with its behaviour gate; tests a degenerate submission passes stop counting
    toward a fraction reward."""
    tests = spec.tests
    assert tests is not None  # gate_applies
    judgement = judge_gate(
        result,
        tracked_tests=tests.tracked_test_ids,
        fraction_reward=fraction,
        excluded=[*spec.existing_tests_left_out, *tests.deselected_test_ids],
    )
    if judgement.drop is not None:
        return spec, judgement
    tracked = [test_id for test_id in tests.tracked_test_ids if test_id not in judgement.untracked]
    update = {"behaviour_gate": judgement.gate, "tracked_test_ids": tracked}
    return spec.model_copy(update={"tests": tests.model_copy(update=update)}), judgement


def plan_calibration(
    workspace: Workspace, families: Families, statuses: list[CandidateStatus], org: str
) -> tuple[list[CandidateStatus], list[CandidateRef]]:
    """Judge every ready candidate whose probes already ran; return the rest to run, one
    candidate per key (the others are judged on its results when the stage settles)."""
    decided, to_run, planned = [], [], set()
    for status in statuses:
        if not status.ready_for("calibration"):
            continue
        family = families.by_name(status.family)
        _, key = _plan(workspace, family, status, org)
        cached = _cached(workspace, key)
        if cached is None:
            if key not in planned:
                planned.add(key)
                to_run.append(status.ref)
        else:
            previous = status.calibration
            shared = previous.shared if previous and previous.key == key else True
            decided.append(_judged(workspace, family, status, key, cached, shared=shared, org=org))
    return decided, to_run


def run_probes(engine: DockerEngine, image: str, plan: CalibrationPlan, *, parallelism: int = 1) -> list[ProbeResult]:
    """Every probe of ``plan`` in a sandbox of its own, up to ``parallelism`` at once (the
    probes are independent: one container each, nothing shared); results in plan order."""
    if parallelism <= 1 or len(plan.probes) <= 1:
        return [_run_probe(engine, image, probe) for probe in plan.probes]
    # Leaving the block waits for the probes started: each removes its own container.
    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        return list(pool.map(lambda probe: _run_probe(engine, image, probe), plan.probes))


def _run_probe(engine: DockerEngine, image: str, probe: Probe) -> ProbeResult:
    with sandbox(
        engine.client,
        image,
        role="probe",
        limits=engine.limits(),
        labels=engine.container_labels,
        work_s=probe.timeout_s,
    ) as box:
        if probe.files:
            put_files(box, probe.files)
        run = exec_with_deadline(
            box,
            probe.script,
            timeout_s=probe.timeout_s,
            workdir=probe.workdir,
            env=probe.env,
            disk_bytes=engine.limits().disk_bytes,
        )
        result = _result_file(box, probe.result_file) if probe.result_file else None
    return ProbeResult(
        name=probe.name,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        output_tail=run.output_tail,
        seconds=run.seconds,
        stopped_by=run.stopped_by,
        result=result,
    )


def _result_file(box: Container, path: str) -> str | None:
    folder = PurePosixPath(path)
    raw = read_directory(box, str(folder.parent)).get(folder.name)
    return raw.decode("utf-8", "replace") if raw is not None else None


def calibrate_candidate(
    workspace: Workspace, family: Family, engine: DockerEngine, ref: CandidateRef, org: str, *, parallelism: int = 1
) -> CandidateStatus:
    try:
        status = with_image_present(workspace, engine, read_status(workspace, ref))
    except ImageBuildFailedError as exc:
        return save_status(workspace, read_status(workspace, ref).dropped("images", image_build_drop(exc)))
    plan, key = _plan(workspace, family, status, org)
    with key_lock(_cache_path(workspace, key)):
        cached = _cached(workspace, key)
        if cached is not None:  # another candidate (or worker) shared the image and plan
            return _judged(workspace, family, status, key, cached, shared=True, org=org)
        assert status.image is not None and status.image.tag is not None
        results = ProbeResults(
            key=key, image=status.image.tag, results=run_probes(engine, status.image.tag, plan, parallelism=parallelism)
        )
        atomic_write_json(_cache_path(workspace, key), results)
    return _judged(workspace, family, status, key, results, shared=False, org=org)
