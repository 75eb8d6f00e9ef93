"""Shared test set-up: GPU tests (marked `gpu`) skip with the reason when no GPU is usable."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))  # shared test helpers (probe_sim, figure_fixtures)


def _gpu_reason() -> str | None:
    from fraglab.runtime import gpu

    ok, why = gpu.available()
    return None if ok else why


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"no usable GPU: {reason}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture(autouse=True)
def no_tuning_table(monkeypatch):
    """No test reads a tuning table it did not write (a developer's own ~/.cache one would change which tile runs)."""
    monkeypatch.setenv("FRAGLAB_GEMM_TUNING", "off")


@pytest.fixture
def no_gpu(monkeypatch):
    """Make fraglab behave as on a machine without a GPU, whatever this machine has."""
    monkeypatch.setenv("FRAGLAB_NO_GPU", "1")
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "_CUPY", None)
    yield
