"""A non-editable install carries the CUDA sources and the atlas, and finds them."""

import os
import shutil
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


def test_sources_hash_changes_when_any_file_under_kernels_changes(tmp_path, monkeypatch):
    """The kernel cache's key covers kernels/: an edited source, or a new file in a new wing, is a new hash."""
    from fraglab.runtime import build

    copy = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", copy)
    monkeypatch.setattr(build, "WHEEL_KERNELS_DIR", copy)  # looked at first, as for a wheel

    def fresh_hash() -> str:
        build.kernels_dir.cache_clear()
        build.sources_hash.cache_clear()
        assert build.kernels_dir() == copy
        return build.sources_hash()

    try:
        hashes = [fresh_hash()]
        with open(copy / "apis" / "wmma.cu", "a") as source:
            source.write("\n// one more line\n")
        hashes.append(fresh_hash())
        (copy / "newwing").mkdir()
        (copy / "newwing" / "probe.cuh").write_text("#pragma once\n")
        hashes.append(fresh_hash())
    finally:
        monkeypatch.undo()
        build.kernels_dir.cache_clear()
        build.sources_hash.cache_clear()
    assert len(set(hashes)) == len(hashes), hashes


def test_a_wheel_in_a_fresh_venv_compiles_a_probe_through_nvrtc_on_the_cpu(wheel, tmp_path):
    """The wheel alone (no checkout on the path) in a new virtual environment, with the CUDA wheels NVRTC needs:
    one WMMA probe compiles for sm_90 from the kernels the wheel carries."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel), "cuda-bindings>=13",
                              "nvidia-cuda-nvrtc", "nvidia-cuda-crt", "nvidia-cuda-runtime"],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    code = ("from fraglab.apis import wmma; from fraglab.runtime import nvrtc_offline\n"
            "spec = [s for s in wmma.wmma_catalogue() if s.frag == 'matrix_a' and s.dtype == 'f16'][0]\n"
            "build = wmma.build_for([spec])\n"
            "ok, log, cubin = nvrtc_offline.compile_build(build, 'sm_90', cubin=True)\n"
            "import fraglab; print(ok, len(cubin), build.path, fraglab.__file__); print(log)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    ok, size, kernel, package = result.stdout.split("\n")[0].split()
    assert ok == "True" and int(size) > 1000, result.stdout
    assert Path(package).is_relative_to(venv) and Path(kernel).is_relative_to(venv), (package, kernel)
    assert Path(kernel).parts[-3:] == ("_kernels", "apis", "wmma.cu")
