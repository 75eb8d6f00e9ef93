"""A non-editable install carries the CUDA sources and the atlas, and finds them."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    sources = sorted(p for p in (ROOT / "kernels").rglob("*") if p.suffix in (".cu", ".cuh"))
    assert len(sources) >= 6  # apis/wmma.cu, gemm/{wmma,simt}.cu, gemm/epilogue.cuh, bench/peak.cu, ...
    for source in sources:
        assert "fraglab/_kernels/" + source.relative_to(ROOT / "kernels").as_posix() in names, source
    assert not [p for p in (ROOT / "fraglab").rglob("*") if p.suffix in (".cu", ".cuh")], "CUDA outside kernels/"
    bundled = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "fraglab" / "data").glob("atlas_sm*"))
    assert "fraglab/data/atlas_sm90.json" in bundled and len(bundled) >= 3  # WMMA, PTX and wgmma captures
    assert set(bundled) <= names


def test_installed_wheel_finds_its_own_kernels(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    env = dict(os.environ, PYTHONPATH=str(target))
    code = ("from fraglab.runtime.build import KernelBuild; from fraglab.layouts.atlas import load_bundled; "
            "print(KernelBuild('apis/wmma.cu', ()).path); print(load_bundled().arch); "
            "print(sorted({s.api for s in load_bundled().specs()}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    kernel, arch, apis = result.stdout.split("\n")[:3]
    assert "'wgmma'" in apis and "'mma'" in apis and "'ldmatrix'" in apis  # the gzip captures came along
    assert Path(kernel) == target / "fraglab" / "_kernels" / "apis" / "wmma.cu" and Path(kernel).is_file()
    assert arch == "90"
