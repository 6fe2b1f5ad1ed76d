"""The files the behaviour gate runs inside task images (standard library and pytest only)."""

from importlib import resources

WORKER = "gate_worker.py"
PROBE = "gate_probe.py"


def runtime_file(name: str) -> bytes:
    return (resources.files(__name__) / name).read_bytes()
