"""A non-editable install carries the CUDA sources and the atlas, and finds them."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(out), str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    (path,) = out.glob("fraglab-*.whl")
    return path


def test_wheel_holds_every_kernel_source_and_the_atlas(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for source in sorted((ROOT / "kernels").glob("*.cu*")):
        assert f"fraglab/kernels/{source.name}" in names, source.name
    assert "fraglab/data/atlas_sm90.json" in names


def test_installed_wheel_finds_its_own_kernels(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    env = dict(os.environ, PYTHONPATH=str(target))
    code = "from fraglab.sources import kernels_dir; from fraglab.atlas import load_bundled; print(kernels_dir()); print(load_bundled().arch)"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    kernels, arch = result.stdout.split()
    assert Path(kernels) == target / "fraglab" / "kernels" and arch == "90"
