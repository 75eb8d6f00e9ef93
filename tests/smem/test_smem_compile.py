"""The bank probe's build names every access form the measurement may launch (tests/runtime/
test_compile_kernels.py compiles it with NVRTC from pip wheels)."""

from fraglab.smem import measure
from fraglab.smem.access import parse_access


def test_every_timed_access_form_is_in_the_build():
    names = set(measure.PROBE_BUILD.name_expressions)
    forms = [f"{k}.b{8 * w}" for k in ("ld", "st") for w in (2, 4, 8, 16)]
    forms += [f"{k}.x{n}{t}" for k in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in ("", ".trans")]
    forms += [f"cp.async.{w}" for w in (4, 8, 16)]
    assert {measure.kernel_name(parse_access(f)) for f in forms} == names and len(names) == 23
    assert measure.kernel_builds() == [measure.PROBE_BUILD]


def test_the_probe_source_is_in_the_sources_hash():
    from fraglab.runtime.build import kernels_dir, source_files

    assert "smem/bank_probe.cu" in {p.relative_to(kernels_dir()).as_posix() for p in source_files()}
