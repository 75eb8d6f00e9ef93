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


WGMMA_CHECK_ITERS = 5  # not a multiple of the 4x unrolling ptxas chose: the unrolled loop and its remainder both run


WGMMA_NAMES = ("peak_wgmma_m64n256k16_f16_f32_ss", "peak_wgmma_m64n256k16_f16_f32_rs",
               "peak_wgmma_m64n256k16_bf16_f32_ss", "peak_wgmma_m64n256k16_bf16_f32_rs",
               "peak_wgmma_m64n256k32_e4m3_f32_ss")


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
    # 2 blocks x 2 warpgroups x 10 iterations x 4 wgmmas x 2*64*256*k
    assert peak.total_flops(peak.probe(WGMMA_NAMES[0]), 2, 10) == 2 * 2 * 10 * 4 * (2 * 64 * 256 * 16)
    assert peak.total_flops(peak.probe(WGMMA_NAMES[4]), 2, 10) == 2 * 2 * 10 * 4 * (2 * 64 * 256 * 32)


def test_launch_shape_and_output_size():
    assert peak.launch_shape(_probe(), 132) == (264, 256, 0)
    # wgmma: one block of 2 warpgroups per SM, both tiles plus alignment slack in shared memory; one float per thread
    assert peak.launch_shape(peak.probe(WGMMA_NAMES[0]), 132) == (132, 256, 64 * 128 + 256 * 128 + 1024)
    assert peak.out_elements(peak.probe(WGMMA_NAMES[0]), 132) == 132 * 256


def test_wgmma_probes_run_by_default_only_on_sm90():
    wmma_kernels = tuple(p.kernel for p in peak.PROBES if p.api != "wgmma")
    assert peak.default_kernels(80) == wmma_kernels        # an A100 still gets every WMMA row
    assert peak.default_kernels(90) == peak.PROBE_NAMES
    assert peak.default_kernels(100) == wmma_kernels       # sm_100 has no wgmma either


def test_measure_refuses_a_wgmma_probe_on_another_gpu_before_running_anything(monkeypatch):
    from fraglab.errors import ProbeUnsupported
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "cupy", lambda: object())
    monkeypatch.setattr(gpu, "compute_capability", lambda: 80)
    monkeypatch.setattr(gpu, "device_info", lambda: pytest.fail("the refusal must come before any GPU work"))
    with pytest.raises(ProbeUnsupported, match="needs an sm_90 GPU .*sm_90a.*this GPU is sm_80"):
        peak.measure(["peak_wmma_f16_f32", WGMMA_NAMES[0]])


def test_measure_launches_each_probe_with_its_own_shape_and_build(monkeypatch):
    """The GPU stood in for (numpy as CuPy, launches recorded, 1 ms per launch): what measure() asks of it."""
    from fraglab import bench
    from fraglab.runtime import gpu

    launches = []
    monkeypatch.setattr(gpu, "cupy", lambda: np)
    monkeypatch.setattr(gpu, "compute_capability", lambda: 90)
    monkeypatch.setattr(gpu, "device_info", lambda: {"sm_count": 132})
    monkeypatch.setattr(gpu, "function", lambda build, name: lambda grid, block, args, shared_mem=0: launches.append(
        (build, name, grid, block, shared_mem, len(args))))
    monkeypatch.setattr(bench, "time_cuda", lambda fn, warmup, reps: fn(0) or bench.Timing(1.0, 1.0, 1.0, reps))
    rows = peak.measure(["peak_wmma_f16_f32", WGMMA_NAMES[4]], iters=10)
    assert launches == [(peak.PEAK_BUILD, "peak_wmma_f16_f32", (264,), (256,), 0, 4),
                        (peak.PEAK_WGMMA_BUILD, WGMMA_NAMES[4], (132,), (256,), peak.WGMMA_SMEM_BYTES, 6)]
    # 1 ms per launch: 132 blocks x 2 warpgroups x 10 iterations x 4 wgmma x 2*64*256*32 flop
    assert rows[1]["tflops"] == pytest.approx(132 * 2 * 10 * 4 * 2 * 64 * 256 * 32 / 1e-3 / 1e12)
    assert (rows[1]["api"], rows[1]["blocks"], rows[1]["threads"]) == ("wgmma", 132, 256)


def test_ceiling_picks_the_probe_of_the_gemms_instruction():
    rows = [{"kernel": "peak_wmma_f16_f32", "tflops": 640.0}, {"kernel": WGMMA_NAMES[0], "tflops": 900.0},
            {"kernel": WGMMA_NAMES[2], "tflops": 910.0}]
    assert peak.ceiling("f16", rows) == 640.0
    assert peak.ceiling("f16", rows, api="wgmma") == 900.0 and peak.ceiling("bf16", rows, api="wgmma") == 910.0
    assert peak.ceiling("bf16", rows) is None
    with pytest.raises(ValueError, match="valid choices are wmma, wgmma"):
        peak.ceiling("f16", rows, api="mma")


# ---- wgmma SASS: HGMMA lines as ptxas writes them (pipelined: 4 per wait; serialised: a wait after each)
def _gmma_sass(groups: list[int], name: str = WGMMA_NAMES[0], op: str = "HGMMA.64x256x16.F32",
               extra: str = "") -> list[str]:
    lines, at = ["        /*0600*/                   WARPGROUP.ARRIVE ;   /* 0x0 */"], 0x610
    for n in groups:
        for j in range(n):
            gsb = ", gsb0" if j == n - 1 else ""
            lines.append(f"        /*{at:04x}*/                   {op} R24, gdesc[UR{4 * j + 4}], R24{gsb} ;   /* 0x0 */")
            at += 16
            if extra and j == 0:
                lines.append(f"        /*{at:04x}*/                   {extra} ;   /* 0x0 */")
                at += 16
        lines.append(f"        /*{at:04x}*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;   /* 0x0 */")
        at += 16
    text = f"        Function : {name}\n" + "\n".join(lines) + "\n"
    return peak.parse_sass(text)[name]


def test_wgmma_sass_in_whole_commit_groups_passes():
    check = peak.check_probe_sass(peak.probe(WGMMA_NAMES[0]), _gmma_sass([4, 4, 4, 4, 4]))
    assert check.ok and check.mma_count == 20 and "5 groups of 4" in check.note


def test_serialised_wgmmas_are_caught():
    # what ptxas makes when a non-wgmma instruction touches the accumulators between wgmmas: a wait after each
    check = peak.check_probe_sass(peak.probe(WGMMA_NAMES[0]), _gmma_sass([1] * 8))
    assert not check.ok and "serialised" in check.note


def test_wgmma_sass_checks_count_moves_and_the_right_opcode():
    moved = peak.check_probe_sass(peak.probe(WGMMA_NAMES[0]), _gmma_sass([4, 4], extra="MOV R24, R30"))
    assert not moved.ok and moved.moves_between == 2
    e4m3 = peak.probe(WGMMA_NAMES[4])
    assert not peak.check_probe_sass(e4m3, _gmma_sass([4, 4], name=e4m3.kernel)).ok   # HGMMA is not QGMMA
    assert peak.check_probe_sass(e4m3, _gmma_sass([4, 4], name=e4m3.kernel, op="QGMMA.64x256x32.F32.E4M3.E4M3")).ok


# ---- wgmma inputs and the expected result (CPU)
def test_input_types_round_to_nearest_and_integers_are_exact():
    values = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    for wtype in ("f16", "bf16", "e4m3"):
        assert np.array_equal(peak.to_input_type(values, wtype)[1], values), wtype
    raw, exact = peak.to_input_type(np.array([1.0, 448.0, -2.0, 0.3]), "e4m3")
    assert list(raw[:, 0]) == [0x38, 0x7E, 0xC0, 0x2A] and exact[3] == 0.3125  # 0.3 -> 1.25 * 2**-2
    assert peak.to_input_type(np.array([1.0 + 2.0 ** -9]), "bf16")[1][0] == 1.0   # 8 mantissa bits: rounds down
    with pytest.raises(ValueError, match="valid choices"):
        peak.to_input_type(values, "tf32")


def _decode(raw: np.ndarray, wtype: str) -> np.ndarray:
    """Element bytes -> values, from the bit fields (independent of peak.to_input_type)."""
    if wtype == "f16":
        return np.ascontiguousarray(raw).view(np.float16)[..., 0].astype(np.float64)
    if wtype == "bf16":
        return (np.ascontiguousarray(raw).view(np.uint16)[..., 0].astype(np.uint32) << 16).view(np.float32) \
            .astype(np.float64)
    x = raw[..., 0].astype(np.int64)
    exp, man = (x >> 3) & 0xF, x & 7
    mag = np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * 2.0 ** (exp - 7))
    return np.where(x & 0x80, -mag, mag)


def _simulated_probe(p, a_src: np.ndarray, b_src: np.ndarray, iters: int) -> np.ndarray:
    """What one warpgroup of peak_wgmma.cu stores, from the launcher's buffers and descriptor fields, with the
    hardware's addressing taken from the wgmma model: tests the plumbing (images, per-step starts, register
    packing), not the model (the atlas tests that)."""
    from fraglab.apis import wgmma_model as wm

    wtype = peak.WGMMA_TYPE[p.in_dtype]
    e = wm.element_bytes(wtype)
    k = wm.K_BY_TYPE[wtype]
    desc_a, desc_b = peak.wgmma_descriptor_fields(p)

    def read(image, desc, step, operand, mn):
        tile = dict(element_bytes=e, swizzle={1: "128B", 0: "none"}[desc >> 62], mn=mn, k_extent=k,
                    lbo=((desc >> 16) & 0x3FFF) << 4, sbo=((desc >> 32) & 0x3FFF) << 4, major="k", operand=operand)
        off = wm.smem_offsets(tile, step * 32)                # each wgmma's start address is 32 bytes further
        return _decode(image[off[..., None] + np.arange(e)], wtype)

    d = np.zeros((64, 256))
    for step in range(peak.WGMMA_STEPS):
        if p.a_from == "smem":
            a = read(a_src, desc_a, step, "matrix_a", 64)
        else:
            amap = wm.register_a_map(wtype)
            a = np.zeros((64, k))
            a[amap[..., 0], amap[..., 1]] = _decode(a_src[step].view(np.uint8).reshape(128, -1, e), wtype)
        d += a @ read(b_src, desc_b, step, "matrix_b", 256)
    slots = wm.accumulator_map(256)
    return (iters * d)[slots[..., 0], slots[..., 1]].sum(axis=1)


@pytest.mark.parametrize("kernel", WGMMA_NAMES)
def test_the_launchers_buffers_hold_the_values_the_expected_result_is_computed_from(kernel):
    p = peak.probe(kernel)
    a, b = peak.wgmma_values(p, "integers")
    a_src, b_src = peak.wgmma_operands(p, a, b)
    expected = peak.wgmma_expected(p, a, b, WGMMA_CHECK_ITERS)
    assert np.array_equal(_simulated_probe(p, a_src, b_src, WGMMA_CHECK_ITERS), expected)
    # integers keep every f32 sum exact: |iters * A @ B| < 2**13, per-thread sums < 2**24
    assert np.all(expected == np.rint(expected)) and WGMMA_CHECK_ITERS * np.abs(a @ b).max() < 2 ** 13
    assert np.abs(expected).max() < 2 ** 24 and np.any(expected != 0)


def test_every_probe_names_a_kernel_of_its_source():
    for p in peak.PROBES:
        build = peak.build_of(p)
        text = build.path.read_text()
        assert p.kernel in build.name_expressions
        # peak.cu spells each kernel out; peak_wgmma.cu stamps them from one macro
        assert f"void {p.kernel}(" in text or f"FRAGLAB_PEAK_WGMMA_KERNEL({p.kernel}," in text
    assert set(peak.WGMMA_PROBE_NAMES) == {p.kernel for p in peak.PROBES if p.api == "wgmma"}
    assert not set(peak.WGMMA_PROBE_NAMES) & set(peak.PEAK_BUILD.name_expressions)  # plain sm_90 rejects wgmma
    with pytest.raises(ValueError, match="valid choices"):
        peak.probe("peak_wgmma")


def test_the_wgmma_probes_are_the_five_asked_for():
    assert peak.WGMMA_PROBE_NAMES == WGMMA_NAMES
    rows = {p.kernel: p for p in peak.PROBES}
    for kernel in WGMMA_NAMES:
        p = rows[kernel]
        k = 32 if "e4m3" in kernel else 16
        assert p.api == "wgmma" and p.shape == f"m64n256k{k}" and p.flops_per_mma == 2 * 64 * 256 * k
        assert p.sass_op == ("QGMMA" if "e4m3" in kernel else "HGMMA") and p.sass_per_mma == 1
        assert p.a_from == ("smem" if kernel.endswith("_ss") else "registers")
    # each GEMM input type is judged by its own instruction with both operands in shared memory
    assert peak.WGMMA_CEILING_PROBE == {"f16": WGMMA_NAMES[0], "bf16": WGMMA_NAMES[2], "e4m3": WGMMA_NAMES[4]}


def test_the_wgmma_constants_match_peak_wgmma_cu():
    import re

    text = peak.PEAK_WGMMA_BUILD.path.read_text()
    consts: dict[str, int] = {}
    for name, expr in re.findall(r"constexpr int (k\w+) = ([^;]+);", text):
        consts[name] = eval(expr, {}, dict(consts))  # noqa: S307  (each right-hand side is integer arithmetic)
    assert (consts["kWarpgroups"], consts["kSteps"], consts["kABytes"], consts["kBBytes"], consts["kSmemBytes"]) == \
        (peak.WGMMA_WARPGROUPS, peak.WGMMA_STEPS, peak.WGMMA_A_BYTES, peak.WGMMA_B_BYTES, peak.WGMMA_SMEM_BYTES)
    tile_a, tile_b = peak.wgmma_tiles(peak.probe(WGMMA_NAMES[0]))
    assert (tile_a["region"], tile_b["region"]) == (peak.WGMMA_A_BYTES, peak.WGMMA_B_BYTES)
    assert tile_a["k_steps"] == peak.WGMMA_STEPS and tile_a["k_step_bytes"] == consts["kStepBytes"]


def test_sass_checks_compile_only_the_builds_of_the_probes_asked_for(monkeypatch):
    compiled = []
    monkeypatch.setattr(peak, "compile_cubin", lambda build, arch: compiled.append((build.entry, arch)) or b"")
    monkeypatch.setattr(peak, "sass_text", lambda cubin: "")
    wmma = peak.PROBES[0].kernel
    assert set(peak.sass_checks(90, [wmma])) == {wmma}
    assert compiled == [(peak.PEAK_BUILD.entry, "sm_90")]            # no sm_90a wgmma build for a WMMA probe
    compiled.clear()
    assert set(peak.sass_checks(80)) == set(peak.default_kernels(80))  # wgmma probes do not run on sm_80
    assert compiled == [(peak.PEAK_BUILD.entry, "sm_80")]
    compiled.clear()
    peak.sass_checks(90, [WGMMA_NAMES[0]])
    assert compiled == [(peak.PEAK_WGMMA_BUILD.entry, peak.WGMMA_ARCH)]


def test_real_sass_of_every_probe_is_clean():
    if peak.find_tool("cuobjdump") is None or peak.find_tool("nvdisasm") is None:
        pytest.skip("cuobjdump/nvdisasm not installed (CUDA toolkit, or pip nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    try:
        checks = peak.sass_checks(90)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    bad = {k: c.note for k, c in checks.items() if not c.ok}
    assert not bad
    assert set(checks) == set(peak.PROBE_NAMES)   # on sm_90 every probe runs, so every probe is checked


@pytest.mark.parametrize("kernel", WGMMA_NAMES)
def test_launch_args_follow_the_kernels_parameters(kernel):
    """numpy stands in for CuPy: the arguments come in the kernel's order and types and carry the inputs."""
    import re

    p = peak.probe(kernel)
    params = re.search(r"NAME\(([^)]*)\)", peak.PEAK_WGMMA_BUILD.path.read_text()).group(1)
    assert [t.rsplit(" ", 1)[0].strip() for t in params.replace("\\", "").split(",")] == \
        ["const uint4*", "const uint4*", "float*", "int", "unsigned long long", "unsigned long long"]
    args, out = peak.launch_args(np, p, 3, WGMMA_CHECK_ITERS, values="integers")
    a_src, b_src, stored, iters, desc_a, desc_b = args
    assert stored is out and out.dtype == np.float32 and out.size == 3 * 256
    assert isinstance(iters, np.int32) and isinstance(desc_a, np.uint64) and isinstance(desc_b, np.uint64)
    assert (int(desc_a), int(desc_b)) == peak.wgmma_descriptor_fields(p)
    a, b = peak.wgmma_values(p, "integers")
    assert np.array_equal(_simulated_probe(p, a_src, b_src, int(iters)), peak.wgmma_expected(p, a, b, int(iters)))


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
@pytest.mark.parametrize("kernel", ["peak_wmma_f16_f32", WGMMA_NAMES[0]])
def test_sustained_measure_runs_the_probe_first_for_that_long(kernel):
    import time

    if kernel in WGMMA_NAMES:
        _sm90_or_skip()
    t0 = time.perf_counter()
    rows = peak.measure([kernel], iters=256, reps=3, sustain_s=0.5)
    assert time.perf_counter() - t0 >= 0.5
    assert rows[0]["sustain_s"] == 0.5 and rows[0]["tflops"] > 0
    with pytest.raises(ValueError, match="sustain_s"):
        peak.measure([kernel], sustain_s=-1)


def _sm90_or_skip():
    from fraglab.runtime import gpu

    cc = gpu.compute_capability()
    if cc != 90:
        pytest.skip(f"the wgmma probes need an sm_90 GPU; this one is sm_{cc}")


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", WGMMA_NAMES)
def test_wgmma_probe_result_is_each_threads_sum_of_iters_times_a_at_b(kernel):
    """Every wgmma ran on the intended operands: each thread stores exactly the sum of its 128 accumulator slots
    of iters * A @ B, computed in float64 from the same integer inputs (with which every f32 sum is exact)."""
    from fraglab.runtime import gpu

    _sm90_or_skip()
    cp = gpu.cupy()
    p = peak.probe(kernel)
    blocks = 2
    _, threads, smem = peak.launch_shape(p, 1)
    args, out = peak.launch_args(cp, p, blocks, WGMMA_CHECK_ITERS, values="integers")
    out.fill(np.nan)  # a thread that stores nothing shows as NaN
    gpu.function(peak.PEAK_WGMMA_BUILD, kernel)((blocks,), (threads,), args, shared_mem=smem)
    got = out.get().astype(np.float64).reshape(-1, 128)          # one row per warpgroup
    a, b = peak.wgmma_values(p, "integers")                       # the inputs launch_args built
    assert got.shape[0] == blocks * peak.WGMMA_WARPGROUPS
    # layout-free first: a lost wgmma shows here whatever the accumulator layout
    np.testing.assert_array_equal(got.sum(axis=1), np.full(got.shape[0], WGMMA_CHECK_ITERS * (a @ b).sum()))
    expected = peak.wgmma_expected(p, a, b, WGMMA_CHECK_ITERS)
    for warpgroup in got:
        np.testing.assert_array_equal(warpgroup, expected)


@pytest.mark.gpu
def test_wgmma_measure_gives_a_positive_rate_below_the_tensor_cores_peak():
    from fraglab.runtime import gpu

    _sm90_or_skip()
    rows = peak.measure(list(WGMMA_NAMES), iters=64, reps=3)
    assert [r["kernel"] for r in rows] == list(WGMMA_NAMES)
    # Hopper: 4096 dense f16 flop per SM per clock (989 TFLOP/s / 132 SMs / 1.83 GHz), fp8 twice that; 2 GHz is
    # above any Hopper's clock, so a rate past this bound means the flop count is wrong
    bound = gpu.device_info()["sm_count"] * 4096 * 2.0e9 / 1e12
    for r in rows:
        assert 0 < r["tflops"] < bound * (2 if "e4m3" in r["kernel"] else 1) and r["ms"] > 0, r


@pytest.mark.gpu
def test_fraglab_peak_on_sm90_lists_the_wgmma_rows_after_the_wmma_ones(tmp_path):
    import json

    from typer.testing import CliRunner

    from fraglab.cli.main import app

    _sm90_or_skip()
    res = CliRunner().invoke(app, ["peak", "--iters", "64", "--no-sass", "--json", str(tmp_path / "peak.json")])
    assert res.exit_code == 0, res.output
    rows = json.loads((tmp_path / "peak.json").read_text())["rows"]
    assert [r["kernel"] for r in rows] == list(peak.PROBE_NAMES)
    assert all(r["tflops"] > 0 for r in rows) and "m64n256k32" in res.output
