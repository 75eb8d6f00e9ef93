"""`fraglab peak`: the SASS checks against the two pitfalls, FLOP counting, and (GPU) the probes' results."""

import numpy as np
import pytest

from fraglab.bench import peak

GOOD = """
        Function : peak_wmma_f16_f32
        /*0100*/                   ISETP.GE.AND P0, PT, R0, 0x1, PT ;   /* 0x0 */
""" + "".join(f"        /*{0x200 + 16 * i:04x}*/                   HMMA.16816.F32 R{4 * i}, R2, R{80 + i}, R{4 * i} ;   /* 0x0 */\n"
              for i in range(16)) + """
        /*0400*/              @!P0 BRA 0x200 ;   /* 0x0 */
"""


def _probe():
    return peak.probe("peak_wmma_f16_f32")


def test_parse_sass_splits_functions():
    funcs = peak.parse_sass(GOOD + "        Function : other\n        /*0000*/  EXIT ;  /* 0x0 */\n")
    assert set(funcs) == {"peak_wmma_f16_f32", "other"} and len(funcs["other"]) == 1


def test_a_clean_loop_passes():
    check = peak.check_probe_sass(_probe(), peak.parse_sass(GOOD)["peak_wmma_f16_f32"])
    assert check.ok and check.mma_count == 16 and check.moves_between == 0


def test_dropped_hmma_is_caught():
    lines = [l for l in peak.parse_sass(GOOD)["peak_wmma_f16_f32"] if "R95" not in l]
    assert len(lines) == 17  # one HMMA fewer: as if the compiler dropped a dead half-fragment
    check = peak.check_probe_sass(_probe(), lines)
    assert not check.ok and "dropped" in check.note


def test_register_shuffles_between_mmas_are_caught():
    lines = peak.parse_sass(GOOD)["peak_wmma_f16_f32"]
    lines.insert(5, "        /*0250*/                   MOV R81, R2 ;   /* 0x0 */")
    check = peak.check_probe_sass(_probe(), lines)
    assert not check.ok and check.moves_between == 1


def test_no_mma_at_all_fails():
    assert not peak.check_probe_sass(_probe(), ["        /*0000*/   EXIT ;  /* 0x0 */"]).ok


def test_flop_count():
    p = _probe()
    # 2 blocks x 8 warps x 10 iterations x 8 chains x 2*16*16*16
    assert peak.total_flops(p, 2, 10) == 2 * 8 * 10 * 8 * 8192


def test_every_probe_names_a_kernel_of_peak_cu():
    from fraglab.runtime.build import PACKAGE_DIR

    text = (PACKAGE_DIR / "bench" / "peak.cu").read_text()
    for p in peak.PROBES:
        assert f"void {p.kernel}(" in text
    with pytest.raises(ValueError, match="valid choices"):
        peak.probe("peak_wgmma")


def test_real_sass_of_every_probe_is_clean():
    if peak.find_tool("cuobjdump") is None or peak.find_tool("nvdisasm") is None:
        pytest.skip("cuobjdump/nvdisasm not installed (CUDA toolkit, or pip nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    try:
        checks = peak.sass_checks("sm_90")
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    bad = {k: c.note for k, c in checks.items() if not c.ok}
    assert not bad


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["peak_wmma_f16_f32", "peak_wmma_bf16_f32", "peak_wmma_u8_s32",
                                    "peak_wmma_tf32_f32", "peak_wmma_f16_f16"])
def test_probe_result_is_iters_times_the_sum_of_all_chains(kernel):
    """Every MMA really ran: the stored fragment equals iters * sum_ij A_i @ B_j."""
    from fraglab.runtime import gpu

    cp = gpu.cupy()
    p = peak.probe(kernel)
    a, b = peak._random_inputs(cp, p)
    iters, blocks = 3, 1
    out = cp.empty(blocks * peak.WARPS_PER_BLOCK * p.out_per_warp, dtype=p.acc_dtype)
    gpu.function(peak.PEAK_BUILD, kernel)((blocks,), (32 * peak.WARPS_PER_BLOCK,), (a, b, out, cp.int32(iters)))
    fm, fn = 16, 16
    fk = 8 if "tf32" in kernel else 16
    ah, bh = a.get(), b.get()
    if p.in_dtype == "bfloat16":
        ah, bh = ((x.astype(np.uint32) << 16).view(np.float32) for x in (ah, bh))
    if "tf32" in kernel:  # the tensor core keeps 10 mantissa bits
        ah, bh = ((x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for x in (ah, bh))
    ah, bh = ah.astype(np.float64), bh.astype(np.float64)
    expected = np.zeros((fm, fn))
    for i in range(2):
        for j in range(4):
            ai = ah[i * fm * fk:(i + 1) * fm * fk].reshape(fm, fk)              # row-major
            bj = bh[j * fn * fk:(j + 1) * fn * fk].reshape(fn, fk).T            # col-major
            expected += iters * (ai @ bj)
    got = out.get().astype(np.float64).reshape(-1, fm, fn)
    rtol = 2e-2 if kernel == "peak_wmma_f16_f16" else 1e-4
    atol = (2e-3 if "tf32" in kernel else 1e-5) * np.abs(expected).max() + (1e-3 if "f16_f16" in kernel else 0)
    for w in range(got.shape[0]):
        np.testing.assert_allclose(got[w], expected, rtol=rtol, atol=atol)


@pytest.mark.gpu
def test_measure_gives_a_positive_rate_per_probe():
    rows = peak.measure(["peak_wmma_f16_f32", "peak_mma_m16n8k16_f16_f32"], iters=64, reps=3)
    assert [r["kernel"] for r in rows] == ["peak_wmma_f16_f32", "peak_mma_m16n8k16_f16_f32"]
    assert all(r["tflops"] > 0 and r["ms"] > 0 for r in rows)


@pytest.mark.gpu
def test_sustained_measure_runs_the_probe_first_for_that_long():
    import time

    t0 = time.perf_counter()
    rows = peak.measure(["peak_wmma_f16_f32"], iters=256, reps=3, sustain_s=0.5)
    assert time.perf_counter() - t0 >= 0.5
    assert rows[0]["sustain_s"] == 0.5 and rows[0]["tflops"] > 0
    with pytest.raises(ValueError, match="sustain_s"):
        peak.measure(["peak_wmma_f16_f32"], sustain_s=-1)
