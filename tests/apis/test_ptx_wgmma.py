"""wgmma family: the model against tables written from the PTX ISA text, the probe plumbing through a
numpy stand-in of the kernel, the generated instruction wrappers through NVRTC, and the GPU run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fraglab.apis import wgmma_capture as wc
from fraglab.apis import wgmma_model as wm
from fraglab.apis import wgmma_probe as wp

sys.path.insert(0, str(Path(__file__).parent))
from wgmma_simulator import simulate  # noqa: E402


# ---- accumulator: the ISA figure, written out register by register ---------------------------------
def _accumulator_table(n: int) -> np.ndarray:
    """PTX ISA figure 'WGMMA .m64nNk16 register fragment layout for accumulator matrix D': warp w owns
    rows 16w..16w+15; per 8 columns a thread holds 4 registers: {d0, d1} in row g, {d2, d3} in row g + 8,
    at columns 2*(lane % 4) and 2*(lane % 4) + 1 of that 8-column block."""
    table = np.zeros((128, n // 2, 2), dtype=np.int64)
    for t in range(128):
        warp, lane = divmod(t, 32)
        for block in range(n // 8):
            for j, (dr, dc) in enumerate(((0, 0), (0, 1), (8, 0), (8, 1))):
                table[t, 4 * block + j] = (16 * warp + lane // 4 + dr, 8 * block + 2 * (lane % 4) + dc)
    return table


@pytest.mark.parametrize("n", [8, 16, 24, 64, 96, 136, 256])
def test_accumulator_map_matches_isa_figure(n):
    assert np.array_equal(wm.accumulator_map(n), _accumulator_table(n))


@pytest.mark.parametrize("n", range(8, 257, 8))
def test_accumulator_holds_every_element_once(n):
    amap = wm.accumulator_map(n)
    assert amap.shape == (128, n // 2, 2)
    counts = np.zeros((64, n), dtype=int)
    np.add.at(counts, (amap[..., 0], amap[..., 1]), 1)
    assert np.all(counts == 1)


def test_f16_accumulator_packs_two_slots_per_register():
    regs = wm.accumulator_register_map(64, "f16")
    amap = wm.accumulator_map(64)
    assert regs.shape == (128, 16, 2, 2)
    for r in (0, 5, 15):
        for half in (0, 1):
            assert np.array_equal(regs[:, r, half], amap[:, 2 * r + half])


@pytest.mark.parametrize("bad", [0, 4, 12, 264, 7.5])
def test_accumulator_rejects_invalid_n(bad):
    with pytest.raises(ValueError, match="multiple of 8"):
        wm.accumulator_map(bad)


def test_valid_n_lists_follow_the_isa():
    assert wm.VALID_N["f16"] == tuple(range(8, 257, 8))
    # integer shapes: n8, n16, n24, then multiples of 16 up to 256
    assert wm.VALID_N["s8"] == (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)


# ---- register-sourced A: the ISA's a0.. lists ---------------------------------------------------------
def _register_a_table(dtype: str) -> np.ndarray:
    rows = []
    for t in range(128):
        w, lane = divmod(t, 32)
        g, q = lane // 4, lane % 4
        base = 16 * w + g
        if dtype == "tf32":   # a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4)
            slots = [(base, q), (base + 8, q), (base, q + 4), (base + 8, q + 4)]
        elif dtype == "f16":  # a0,a1 row g; a2,a3 row g+8; a4..a7 the same 8 columns to the right
            slots = [(base + 8 * hi, 2 * q + j + 8 * right) for right in (0, 1) for hi in (0, 1) for j in (0, 1)]
        else:                 # 8-bit: four per register, a0-3 (g), a4-7 (g+8), a8-15 16 columns right
            slots = [(base + 8 * hi, 4 * q + j + 16 * right) for right in (0, 1) for hi in (0, 1) for j in range(4)]
        rows.append(slots)
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("dtype,table", [("tf32", "tf32"), ("f16", "f16"), ("bf16", "f16"), ("e4m3", "8"),
                                         ("e5m2", "8"), ("s8", "8"), ("u8", "8")])
def test_register_a_matches_isa(dtype, table):
    assert np.array_equal(wm.register_a_map(dtype), _register_a_table(table))


# ---- shared-memory operands ----------------------------------------------------------------------------
def _all_tiles():
    for dtype in wp.INPUT_TYPES:
        for sw in wm.SWIZZLES:
            for major in wm.majors_for(dtype):
                for operand in ("matrix_a", "matrix_b"):
                    yield wm.smem_tile(dtype, sw, major, operand)


def test_every_tile_is_a_bijection_onto_its_region():
    for tile in _all_tiles():
        off = wm.smem_offsets(tile)
        e = tile["element_bytes"]
        assert np.all(off % e == 0)
        assert len(np.unique(off)) == off.size
        assert tile["region"] == off.size * e, tile


def test_128b_k_major_chunks_follow_the_xor_pattern():
    # ISA figure "K-major 128B swizzling": in row r of a 1024-byte atom, 16-byte chunk c of the row holds
    # logical chunk c XOR (r mod 8); rows are 128 bytes apart.
    tile = wm.smem_tile("f16", "128B", "k", "matrix_a")
    off = wm.smem_offsets(tile)
    for m in range(64):
        for logical in range(8):
            byte = off[m, 8 * logical]
            assert byte // 128 == m
            assert (byte % 128) // 16 == logical ^ (m % 8)


def test_64b_and_32b_k_major_patterns():
    t64 = wm.smem_tile("f16", "64B", "k", "matrix_a")
    off = wm.smem_offsets(t64)
    for m in range(16):   # 64-byte rows: two rows share a 128-byte line, the XOR key is (m mod 8) // 2
        for logical in range(4):
            byte = off[m, 8 * logical]
            assert byte // 64 == m and (byte % 64) // 16 == logical ^ ((m % 8) // 2)
    t32 = wm.smem_tile("f16", "32B", "k", "matrix_a")
    off = wm.smem_offsets(t32)
    for m in range(16):   # 32-byte rows: four rows per line, the key is (m mod 8) // 4
        for logical in range(2):
            byte = off[m, 8 * logical]
            assert byte // 32 == m and (byte % 32) // 16 == logical ^ ((m % 8) // 4)


def test_no_swizzle_k_major_core_matrices():
    tile = wm.smem_tile("f16", "none", "k", "matrix_a")
    off = wm.smem_offsets(tile)
    # core matrix: 8 rows x 16 bytes, 128 contiguous bytes; the second K half at LBO, rows 8.. at SBO
    assert off[0, 0] == 0 and off[1, 0] == 16 and off[7, 7] == 7 * 16 + 14
    assert off[0, 8] == tile["lbo"] == 128 and off[8, 0] == tile["sbo"] == 256


def test_mn_major_128b_b_tile_runs_along_n():
    tile = wm.smem_tile("f16", "128B", "mn", "matrix_b")   # B(k, n), n contiguous
    off = wm.smem_offsets(tile)
    assert off[0, 1] == 2 and off[0, 63] == 126
    assert off[1, 0] == 128 + 16     # next k row, chunk 0 XOR 1
    assert off[0, 64] == tile["lbo"] == 1024 and off[8, 0] == tile["sbo"] == 2048


def test_descriptor_fields_bits():
    tile = wm.smem_tile("f16", "128B", "k", "matrix_a")
    assert wm.descriptor_fields(tile) == (1 << 16) | (64 << 32) | (1 << 62)
    tile = wm.smem_tile("f16", "none", "k", "matrix_b")
    assert wm.descriptor_fields(tile) == (8 << 16) | (16 << 32)
    assert wm.SWIZZLE_CODE == {"none": 0, "128B": 1, "64B": 2, "32B": 3}


def test_mn_major_only_for_16_bit_types():
    assert wm.majors_for("f16") == ("k", "mn") and wm.majors_for("tf32") == ("k",)
    with pytest.raises(ValueError, match="major must be one of"):
        wm.smem_tile("e4m3", "128B", "mn", "matrix_a")
    with pytest.raises(ValueError, match="swizzle must be one of"):
        wm.smem_tile("f16", "16B", "k", "matrix_a")


def test_chunk_map_names_every_chunk_element():
    tile = wm.smem_tile("s8", "64B", "k", "matrix_b")
    row, col = wm.smem_chunk_map(tile)
    assert row.shape == (tile["region"] // 16, 16)
    assert np.all(row >= 0)
    off = wm.smem_offsets(tile)
    assert off[row[37, 5], col[37, 5]] == 37 * 16 + 5


# ---- probe plumbing ------------------------------------------------------------------------------------
def test_encode_known_bit_patterns():
    assert wp.hot_bits("f16") == 0x3C00 and wp.hot_bits("bf16") == 0x3F80 and wp.hot_bits("tf32") == 0x3F800000
    assert wp.hot_bits("e4m3") == 0x38 and wp.hot_bits("e5m2") == 0x3C and wp.hot_bits("s8") == 1
    assert wp.encode(np.array(7), "e4m3")[0] == 0x4E and wp.encode(np.array(7), "e5m2")[0] == 0x47
    assert wp.encode(np.array(6), "e5m2")[0] == 0x46
    with pytest.raises(ValueError):
        wp.encode(np.array(9), "e5m2")


def test_digits_round_trip():
    v = np.arange(5000)
    p = wp.passes_for(5000)
    assert p == 5
    assert np.array_equal(np.tensordot(8 ** np.arange(p), wp.digits(v, p), axes=1), v)


SIM_KEYS = [
    ("accumulator", 16, "f32", "f16", "mma"), ("accumulator", 8, "f16", "f16", "onehot"),
    ("accumulator", 32, "s32", "s8", "mma"),
    ("register_a", "tf32", "mma"), ("register_a", "bf16", "onehot"), ("register_a", "e5m2", "mma"),
    ("smem", "matrix_a", "f16", "128B", "k", "mma"), ("smem", "matrix_b", "f16", "32B", "mn", "onehot"),
    ("smem", "matrix_a", "e4m3", "64B", "k", "onehot"), ("smem", "matrix_b", "tf32", "none", "k", "mma"),
]


@pytest.mark.parametrize("key", SIM_KEYS, ids=lambda k: ".".join(map(str, k)))
def test_plans_decode_a_simulated_run_to_the_model(key):
    plan = wp.all_plans()[key]()
    result = plan.decode(simulate(plan))
    record = wc.compare(key[:-1], {key[-1]: result})
    assert record["disagreements"] == []
    assert result.get("anomaly_count", 0) == 0


def test_compare_reports_a_wrong_slot():
    key = ("accumulator", 16, "f32", "f16", "mma")
    plan = wp.all_plans()[key]()
    result = plan.decode(simulate(plan))
    result["row"][5, 3] += 1
    record = wc.compare(key[:-1], {"mma": result, "onehot": plan.decode(simulate(plan))})
    assert "mma vs model: 1 values" in record["disagreements"]
    assert "mma vs onehot: 1 values" in record["disagreements"]


def test_every_plan_uses_a_compiled_op():
    ops = set(wp.all_ops())
    keys = wp.all_plans()
    for key in [k for k in keys if k[-1] == "mma"][::7]:
        assert keys[key]().op in ops


def test_generated_wrapper_lists_every_register():
    op = wp.Op(256, "f16", "f32")
    text = op.cpp()
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in text
    assert "%127}" in text and text.count('"+f"') == 128
    rs = wp.Op(32, "u8", "s32", reg_a=True).cpp()
    assert "{%16, %17, %18, %19}, %20, p;" in rs and "m64n32k32.s32.u8.u8" in rs


def test_every_probe_kernel_compiles_offline():
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    ops = wp.all_ops()
    err, prog = nvrtc.nvrtcCreateProgram(wp.source_text(ops).encode(), b"wgmma.cu", 0, [], [])
    for op in ops:
        nvrtc.nvrtcAddNameExpression(prog, op.kernel.encode())
    opts = [o.encode() for o in wp.COMPILE_OPTIONS] + [f"--gpu-architecture={wp.ARCH}".encode()]
    (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = bytearray(size)
    nvrtc.nvrtcGetProgramLog(prog, log)
    assert status == nvrtc.nvrtcResult.NVRTC_SUCCESS, bytes(log).decode(errors="replace")


# ---- GPU -------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_subset_agrees_with_model():
    doc = wc.capture(list(wc.SANITIZE_KEYS))
    assert doc["errors"] == {}
    bad = {k: r["disagreements"] for k, r in doc["entries"].items() if r["disagreements"]}
    assert bad == {}


# ---- the Family entry ------------------------------------------------------------------------------------
def _family():
    from fraglab.apis import FAMILIES

    return FAMILIES["wgmma"]


def test_family_catalogue_covers_the_brief():
    fam = _family()
    specs = fam.specs()
    acc = {(s.dtype, s.shape) for s in specs if s.frag == "accumulator"}
    assert ("f32", "m64n256k16") in acc and ("f16", "m64n8k16") in acc and ("s32", "m64n24k32") in acc
    assert ("s32", "m64n40k32") not in acc          # integer shapes skip n40
    reg_a = {s.dtype for s in specs if s.frag == "matrix_a" and s.swizzle is None}
    assert reg_a == {"tf32", "f16", "bf16", "e4m3", "e5m2", "s8", "u8"}
    smem_b = {(s.dtype, s.swizzle, s.major) for s in specs if s.frag == "matrix_b"}
    assert ("f16", "128B", "mn") in smem_b and ("tf32", "32B", "k") in smem_b and ("e4m3", "64B", "mn") not in smem_b
    assert fam.threads == 128 and fam.min_sm == 90


def test_family_model_holds_every_element_once():
    fam = _family()
    for spec in fam.specs():
        layout = fam.model(spec, "mma")
        assert layout.missing_elements == 0 and layout.duplicate_slots == 0, spec.key


def test_interface_examples_resolve():
    from fraglab.apis import make_spec

    acc = make_spec(api="wgmma", frag="accumulator", shape="m64n128k16", dtype="f32")
    assert acc.dims == (64, 128)
    reg = make_spec(api="wgmma", frag="matrix_a", shape="m64n8k16", dtype="f16")
    assert reg.swizzle is None and reg.dims == (64, 16)
    smem = make_spec(api="wgmma", frag="matrix_b", swizzle="128B", major="k")
    assert smem.dims == (64, 128) and smem.key.endswith("swizzle128B.majork")


def test_smem_layout_from_codes_and_onehot_results_match_the_model():
    from fraglab.apis import make_spec
    from fraglab.apis import wgmma as fam_mod

    spec = make_spec(api="wgmma", frag="matrix_a", dtype="f16", swizzle="32B", major="mn")
    src = fam_mod.model_source()
    model = fam_mod.model_layout(spec)
    for method in ("mma", "onehot"):
        plan = fam_mod.plan_for(spec, method)
        layout = fam_mod.layout_from_result(spec, method, src, plan.decode(simulate(plan)))
        assert layout.same_map(model), method


def test_smem_grid_text_shows_swizzled_chunks():
    from fraglab.apis import make_spec
    from fraglab.apis.wgmma import smem_grid_text

    text = smem_grid_text(make_spec(api="wgmma", frag="matrix_a", dtype="f16", swizzle="128B", major="k"))
    lines = text.splitlines()
    chunk_rows = lines[lines.index(next(line for line in lines if line.startswith("# 16-byte"))) + 1:]
    assert chunk_rows[1].split("|")[1].split()[:2] == ["(1,1)", "(1,0)"]   # row 1: chunks swap pairwise
    assert chunk_rows[7].split("|")[1].split()[0] == "(7,7)"


def test_captured_h100_atlas_agrees_with_model_and_between_methods():
    from fraglab.layouts.atlas import DATA_DIR, load

    atlas = load(DATA_DIR / "atlas_sm90_wgmma.json.gz")
    fam = _family()
    specs = atlas.specs()
    assert set(specs) == set(fam.specs())  # every wgmma fragment of the catalogue was captured
    assert "H100" in atlas.provenance["gpu_name"]
    for spec in specs:
        mma, onehot = atlas.raw_layout(spec, "mma"), atlas.raw_layout(spec, "onehot")
        assert mma.same_map(onehot), spec.key
        assert mma.same_map(fam.model(spec, "mma")), spec.key
        assert onehot.missing_elements == 0 and onehot.duplicate_slots == 0, spec.key


@pytest.mark.parametrize("n,atype,acc", [(24, "s8", "s32"), (40, "s8", "s32"), (48, "u8", "s32"), (56, "s8", "s32"),
                                         (40, "e4m3", "f32"), (24, "tf32", "f32")])
def test_valid_n_is_what_ptxas_accepts(n, atype, acc):
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    op = wp.Op(n, atype, acc)
    err, prog = nvrtc.nvrtcCreateProgram(wp.source_text([op]).encode(), b"wgmma.cu", 0, [], [])
    nvrtc.nvrtcAddNameExpression(prog, op.kernel.encode())
    opts = [b"-std=c++17", f"--gpu-architecture={wp.ARCH}".encode()]
    (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    assert (status == nvrtc.nvrtcResult.NVRTC_SUCCESS) == (n in wm.VALID_N[atype])
