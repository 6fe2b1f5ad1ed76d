"""A grounded, pinned qa proposal as a Harbor ``TaskSpec``.

The image: Python 3.13 with the analysis wheels installed offline (each sha256 checked),
the pinned input files under ``/workdir/data/<file name>`` (each sha256 checked, read
only), the agent's working directory ``/workdir``. The reference solution is the
model's program, run by ``solve.sh`` into ``/workdir/answer.txt``; the verifier grades
that file alone (``verification/verifier_files/grade_answer.py``).
"""

from __future__ import annotations

import shlex

from traj2env_assets.families.qa.pinning import PinnedInput
from traj2env_assets.families.qa.proposal import QaQuestion
from traj2env_assets.families.qa.wheels import ANALYSIS_PACKAGES, WheelSet
from traj2env_assets.harbor.scripts import REFERENCE_PROGRAM
from traj2env_assets.harbor.task_spec import ANSWER_FILE, ANSWER_WORKDIR, AnswerSpec, BuildFile, TaskSpec

DATA_DIR = f"{ANSWER_WORKDIR}/data"
WHEELS_CONTEXT = "wheels"
DATA_CONTEXT = "data"

ANSWER_FORMATS = {
    "number": "a plain decimal number (digits, an optional minus sign and decimal point; "
    "no units, percent signs, thousands separators or exponents), with at least the "
    "precision the question asks for",
    "label": "the label or name exactly as the data spells it",
    "yes_no": "`yes` or `no`",
    "list": "the items separated by commas, in any order",
}


def _checksums(entries: list[tuple[str, str]]) -> str:
    """A shell ``printf`` of ``sha256  name`` lines piped to ``sha256sum --check``."""
    lines = " ".join(shlex.quote(f"{digest}  {name}") for digest, name in entries)
    return f"printf '%s\\n' {lines} | sha256sum --check --strict --quiet"


def dependency_lines(wheels: WheelSet, pinned: list[PinnedInput]) -> list[str]:
    wheel_sums = _checksums([(wheel.sha256, wheel.path.name) for wheel in wheels.wheels])
    data_sums = _checksums([(item.sha256, item.file_name) for item in pinned])
    packages = " ".join(shlex.quote(package) for package in ANALYSIS_PACKAGES)
    return [
        # A bind mount, not COPY: the wheels never become a layer of the image.
        f"RUN --mount=type=bind,source={WHEELS_CONTEXT},target=/tmp/traj2env-wheels "
        f"cd /tmp/traj2env-wheels && {wheel_sums} && "
        f"python3 -m pip install --no-index --no-cache-dir --disable-pip-version-check --find-links . {packages}",
        f"COPY {DATA_CONTEXT}/ {DATA_DIR}/",
        f"RUN cd {DATA_DIR} && {data_sums} && chmod -R a+rX,a-w {DATA_DIR}",
    ]


def build_files(wheels: WheelSet, pinned: list[PinnedInput]) -> list[BuildFile]:
    return [
        *(
            BuildFile(source=w.path, context_path=f"{WHEELS_CONTEXT}/{w.path.name}", sha256=w.sha256)
            for w in wheels.wheels
        ),
        *(
            BuildFile(source=p.local_path, context_path=f"{DATA_CONTEXT}/{p.file_name}", sha256=p.sha256)
            for p in pinned
        ),
    ]


def instruction(question: QaQuestion, pinned: list[PinnedInput]) -> str:
    files = "\n".join(
        f"- `{DATA_DIR}/{item.file_name}`: `{item.path}` of the Hugging Face dataset `{item.repo_id}` "
        f"at commit `{item.commit[:12]}` ({item.commit_date[:10]})"
        for item in pinned
    )
    return (
        f"Answer a question about these data files:\n\n{files}\n\n"
        f"Question: {question.question.strip()}\n\n"
        f"Write only the answer to `{ANSWER_FILE}`, on one line: {ANSWER_FORMATS[question.answer_kind]}. "
        "The file must be UTF-8 text; nothing else is read.\n\n"
        "Python 3 with pandas and pyarrow is installed. There is no network access.\n"
    )


def qa_task_spec(
    task_id: str,
    question: QaQuestion,
    reference: str,
    pinned: list[PinnedInput],
    wheels: WheelSet,
    *,
    source_trace: str,
    source_model: str | None,
    org: str,
) -> TaskSpec:
    return TaskSpec(
        family="qa",
        task_id=task_id,
        org=org,
        instruction=instruction(question, pinned),
        base_image="python",
        dependency_lines=dependency_lines(wheels, pinned),
        project_files={},
        solution_files={REFERENCE_PROGRAM: reference.encode()},
        answer=AnswerSpec(kind=question.answer_kind, gold=question.answer.strip()),
        build_files=build_files(wheels, pinned),
        source_trace=source_trace,
        source_model=source_model,
        tags=[question.answer_kind, *sorted({item.repo_id for item in pinned})],
        agent_timeout_sec=900,
        verifier_timeout_sec=120,
        build_timeout_sec=900,
    )
