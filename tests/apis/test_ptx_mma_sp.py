"""mma.sp: the model against tables written from the PTX ISA text, the decoders against a simulated sparse
tensor core (metadata included), every kernel through NVRTC, and (on a GPU) every entry measured."""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.apis import mma_sp, mma_sp_probe
from nvrtc_compile import offline_nvrtc
from register_words import unpack, value_of, words_of

# ---- the PTX ISA's sparse fragment tables, written out as the ISA text states them ----------------
# g = lane >> 2, t = lane % 4, i = the element a_i / b_i; packed A columns count kept elements (K/2 a row).


def isa_a(shape, dtype, lane, i):
    g, t = lane >> 2, lane % 4
    if dtype in ("f16", "bf16"):
        if shape == "m16n8k16":   # two .b32: a0, a1 row g; a2, a3 row g+8; kept columns 2t, 2t+1
            return (g if i < 2 else g + 8), 2 * t + (i & 1)
        # m16n8k32: as the dense m16n8k16 A over the 16 packed columns
        return (g if i in (0, 1, 4, 5) else g + 8), 2 * t + (i & 1) + (8 if i >= 4 else 0)
    if shape == "m16n8k32":       # 8-bit: a0..a3 row g, a4..a7 row g+8, packed columns 4t..4t+3
        return (g if i < 4 else g + 8), 4 * t + (i & 3)
    return (g if i < 4 or 8 <= i < 12 else g + 8), 4 * t + (i & 3) + (16 if i >= 8 else 0)


def isa_b(shape, dtype, lane, i):
    g, t = lane >> 2, lane % 4
    if dtype in ("f16", "bf16"):
        return 2 * t + (i & 1) + 8 * (i >> 1), g
    return 4 * t + (i & 3) + 16 * (i >> 2), g


def isa_c(lane, i):
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), 2 * t + (i & 1)


def isa_metadata(shape, dtype, selector, lane, field):
    """The metadata figures: per group of four lanes, K/16 lanes chosen by the selector (T_i, T_2i, ...).
    Half types: each holds bits 15..0 for row g and 31..16 for row g+8, chunk after chunk, 4 bits (two
    indices) a chunk. 8-bit types: each lane's 32 bits are one row's 16 indices, rows g and g+8
    alternating, the next 16 packed columns in the next pair of lanes."""
    k = int(shape.split("k")[1])
    per = k // 16
    g, t = lane >> 2, lane % 4
    if not per * selector <= t < per * (selector + 1):
        return -1, -1
    j = t - per * selector
    if dtype in ("s8", "u8", "e4m3", "e5m2"):
        return (g if j % 2 == 0 else g + 8), 16 * (j // 2) + field
    nib = field // 2
    chunk = 4 * j + nib % 4
    return g + 8 * (nib >= 4), 2 * chunk + field % 2


def isa_map(frag, shape, dtype, layout):
    inst = mma_sp.instruction_for(frag, shape, dtype, layout)
    slots = inst.slots(frag)
    out = np.zeros((32, slots, 2), dtype=np.int64)
    for lane in range(32):
        for i in range(slots):
            out[lane, i] = {"matrix_a": lambda: isa_a(shape, inst.ab, lane, i),
                            "matrix_b": lambda: isa_b(shape, inst.ab, lane, i),
                            "accumulator": lambda: isa_c(lane, i),
                            "metadata": lambda: isa_metadata(shape, inst.ab, int(layout[3:]), lane, i)}[frag]()
    return out


ENTRIES = mma_sp.catalogue()


def test_catalogue_covers_the_issue_shapes():
    shapes = {(s, d) for f, s, d, _ in ENTRIES if f == "matrix_a"}
    assert {("m16n8k16", "f16"), ("m16n8k32", "f16"), ("m16n8k16", "bf16"), ("m16n8k32", "bf16"),
            ("m16n8k32", "s8"), ("m16n8k64", "s8"), ("m16n8k32", "u8"), ("m16n8k64", "u8"),
            ("m16n8k64", "e4m3")} <= shapes
    selectors = {(s, d): sum(1 for f, s2, d2, _ in ENTRIES if f == "metadata" and (s2, d2) == (s, d))
                 for s, d in shapes}
    # the selector ranges the PTX ISA gives: k16 half types 0..3, k32 0..1, k64 only 0
    assert selectors[("m16n8k16", "f16")] == 4 and selectors[("m16n8k32", "bf16")] == 2
    assert selectors[("m16n8k32", "s8")] == 2 and selectors[("m16n8k64", "u8")] == 1


@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_model_matches_the_isa_tables(entry):
    assert np.array_equal(mma_sp.model_map(*entry), isa_map(*entry))


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e[0] in ("matrix_a", "metadata")],
                         ids=lambda e: ".".join(e))
def test_every_packed_element_has_one_value_slot_and_one_metadata_field(entry):
    frag, shape, dtype, layout = entry
    got = mma_sp.model_map(*entry)
    held = got[got[..., 0] >= 0]
    m, _, k = mma_sp.instruction_for(*entry).mnk
    assert len(held) == m * k // 2 and len({tuple(x) for x in held}) == m * k // 2


# ---- a simulated sparse tensor core ---------------------------------------------------------------

def simulator(truth=None, ignore_c=False):
    """launch() computing D = A @ B + C where A[m, 4 * (kc // 2) + field] = packed[m, kc], every register
    read through `truth` maps (the ISA tables unless replaced): {frag or ("metadata", sel): map}."""
    truth = truth or {}

    def launch(name, a, b, c, e, d_words):
        inst = next(i for i in mma_sp.INSTRUCTIONS if f"::{i.name}," in name or f"::{i.name}_unordered," in name)
        selector = int(name.rsplit(",", 1)[1].strip(" >"))
        m, n, k = inst.mnk
        maps = {f: truth.get(f, isa_map(f, inst.shape, inst.dtype(f) if f != "metadata" else inst.ab,
                                         "row" if f != "matrix_b" else "col"))
                for f in ("matrix_a", "matrix_b", "accumulator")}
        meta = truth.get(("metadata", selector), isa_map("metadata", inst.shape, inst.ab, f"sel{selector}"))
        blocks = len(a)
        packed = np.zeros((blocks, m, k // 2))
        position = np.full((blocks, m, k // 2), -1)
        bmat, cmat = np.zeros((blocks, k, n)), np.zeros((blocks, m, n))
        for frag, words, target in (("matrix_a", a, packed), ("matrix_b", b, bmat), ("accumulator", c, cmat)):
            vals = value_of(inst.dtype(frag), unpack(inst.dtype(frag), words, inst.slots(frag)))
            for lane in range(32):
                for s in range(inst.slots(frag)):
                    r, col = maps[frag][lane, s]
                    if r >= 0:
                        target[:, r, col] = vals[:, lane, s]
        fields = (e.astype(np.int64)[..., None] >> (2 * np.arange(16))) & 3        # (E, 32, 16)
        for lane in range(32):
            for f in range(16):
                r, col = meta[lane, f]
                if r >= 0:
                    position[:, r, col] = fields[:, lane, f]
        assert (position >= 0).all(), "a packed element without a metadata field"
        logical = np.zeros((blocks, m, k))
        for r in range(m):
            for kc in range(k // 2):
                cols = 4 * (kc // 2) + position[:, r, kc]
                np.add.at(logical, (np.arange(blocks), r, cols), packed[:, r, kc])
        d = logical @ bmat + (0 if ignore_c else cmat)
        out = np.zeros((blocks, 32, inst.slots("accumulator")))
        for lane in range(32):
            for s in range(inst.slots("accumulator")):
                r, col = maps["accumulator"][lane, s]
                out[:, lane, s] = d[:, r, col]
        return words_of(inst.acc, out).reshape(blocks, 32, d_words)

    return launch


@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_decoders_recover_the_isa_layout_from_a_simulated_gpu(entry):
    found = mma_sp_probe.measure_maps(*entry, mma_sp_probe.METHODS, simulator())
    expected = isa_map(*entry)
    for method, (got, reads) in found.items():
        assert np.array_equal(got, expected), method
        assert np.array_equal(reads, (expected[..., 0] >= 0).astype(np.int8)), method


def _swapped(entry, lane, slots):
    truth = isa_map(*entry)
    truth[lane, list(slots)] = truth[lane, list(slots)[::-1]]
    return truth


@pytest.mark.parametrize("entry,lane,slots", [
    (("matrix_a", "m16n8k16", "f16", "row"), 5, (0, 1)),
    (("matrix_a", "m16n8k64", "s8", "row"), 30, (3, 12)),
    (("matrix_b", "m16n8k32", "bf16", "col"), 2, (1, 6)),
    (("accumulator", "m16n8k64", "f32", "row"), 9, (0, 3)),
])
def test_decoders_see_a_layout_that_differs_from_the_model(entry, lane, slots):
    truth = _swapped(entry, lane, slots)
    found = mma_sp_probe.measure_maps(*entry, mma_sp_probe.METHODS, simulator({entry[0]: truth}))
    for method, (got, _) in found.items():
        assert np.array_equal(got, truth), method
        assert not np.array_equal(got, mma_sp.model_map(*entry)), method


def _fields_swapped(entry):
    truth = isa_map(*entry)
    truth[9, [2, 10]] = truth[9, [10, 2]]          # lane 9 (picked by sel1): one chunk's fields trade rows
    return truth


def _lanes_traded(entry):
    truth = isa_map(*entry)
    moved = truth.copy()
    for g in range(8):                               # lanes 4g+2 and 4g+3 trade their whole words
        moved[4 * g + 2], moved[4 * g + 3] = truth[4 * g + 3], truth[4 * g + 2]
    return moved


@pytest.mark.parametrize("entry,make_truth", [
    (("metadata", "m16n8k16", "f16", "sel1"), _fields_swapped),
    (("metadata", "m16n8k32", "s8", "sel1"), _lanes_traded),
])
def test_metadata_decoders_follow_the_hardware_not_the_model(entry, make_truth):
    truth = make_truth(entry)
    selector = int(entry[3][3:])
    found = mma_sp_probe.measure_maps(*entry, mma_sp_probe.METHODS, simulator({("metadata", selector): truth}))
    for method, (got, _) in found.items():
        assert np.array_equal(got, truth), method
        assert not np.array_equal(got, mma_sp.model_map(*entry)), method


def test_metadata_of_an_unselected_lane_is_ignored():
    entry = ("metadata", "m16n8k16", "bf16", "sel2")
    found = mma_sp_probe.measure_maps(*entry, mma_sp_probe.METHODS, simulator())
    for got, reads in found.values():
        lanes = np.nonzero(reads.any(axis=1))[0]
        assert lanes.tolist() == [4 * g + 2 for g in range(8)]
        assert (got[reads == 0] == -1).all()


@pytest.mark.parametrize("inst", mma_sp.INSTRUCTIONS, ids=[i.name for i in mma_sp.INSTRUCTIONS])
def test_product_check_on_the_simulator(inst):
    for selector in range(inst.selectors):
        for ordered in inst.orderings:
            assert mma_sp_probe.product_check(inst, simulator(), selector, ordered, trials=2) == 0.0


def test_product_check_catches_a_wrong_metadata_model_and_a_dropped_c():
    inst = mma_sp.instruction_for("matrix_a", "m16n8k32", "f16", "row")
    moved = isa_map("metadata", "m16n8k32", "f16", "sel0")
    moved[[0, 1]] = moved[[1, 0]]                              # lanes 0 and 1 trade their metadata words
    assert mma_sp_probe.product_check(inst, simulator({("metadata", 0): moved}), 0, trials=2) > 0
    assert mma_sp_probe.product_check(inst, simulator(ignore_c=True), 0, trials=2) > 0


def test_random_operands_are_two_of_four_with_ordered_positions():
    inst = mma_sp.INSTRUCTIONS[0]
    logical, packed, positions, _, _ = mma_sp_probe.random_operands(inst, 3, seed=4)
    pairs = positions.reshape(3, 16, -1, 2)
    assert (pairs[..., 0] < pairs[..., 1]).all()
    assert (np.count_nonzero(logical.reshape(3, 16, -1, 4), axis=-1) <= 2).all()


# ---- every kernel compiles for sm_90 through NVRTC from pip wheels --------------------------------

def test_every_mma_sp_kernel_compiles_for_sm90():
    nvrtc_offline = offline_nvrtc()
    build = mma_sp.kernel_builds()[0]
    assert len(build.name_expressions) == sum(i.selectors * len(i.orderings) for i in mma_sp.INSTRUCTIONS) == 50
    ok, log = nvrtc_offline.compile_build(build, "sm_90")
    assert ok, log


# ---- the CLI answers from the bundled atlas or the model without a GPU ----------------------------

def test_layout_command_shows_the_metadata_of_a_selector(no_gpu):
    import json

    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", "--api", "mma_sp", "--frag", "metadata", "--shape", "m16n8k32",
                                      "--dtype", "f16", "--layout", "sel1", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["rows"], doc["cols"], doc["num_elements"]) == (16, 16, 16)
    read = sorted({s.get("thread", s.get("lane")) for s in doc["slots"] if s["mma_reads"]})
    assert read == sorted(4 * g + t for g in range(8) for t in (2, 3))


def test_layout_command_rejects_a_selector_the_shape_lacks(no_gpu):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", "--api", "mma_sp", "--frag", "metadata", "--shape", "m16n8k64",
                                      "--dtype", "s8", "--layout", "sel1"])
    assert result.exit_code == 2
    assert "sel0" in result.output and "Traceback" not in result.output


# ---- on the GPU: every entry, both methods, equal to the ISA tables; products exact ----------------

@pytest.mark.gpu
@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_gpu_measures_the_model(entry):
    found = mma_sp_probe.measure_maps(*entry, mma_sp_probe.METHODS, mma_sp.gpu_launch())
    expected = isa_map(*entry)
    for method, (got, reads) in found.items():
        assert np.array_equal(got, expected), (method, got.tolist())
        assert np.array_equal(reads, (expected[..., 0] >= 0).astype(np.int8)), method


@pytest.mark.gpu
@pytest.mark.parametrize("inst", mma_sp.INSTRUCTIONS, ids=[i.name for i in mma_sp.INSTRUCTIONS])
def test_gpu_product_matches_float64(inst):
    launch = mma_sp.gpu_launch()
    for selector in range(inst.selectors):
        for ordered in inst.orderings:
            assert mma_sp_probe.product_check(inst, launch, selector, ordered) == 0.0, (selector, ordered)


# ---- the bundled H100 capture, checked on any machine ----------------------------------------------

def test_the_bundled_h100_capture_agrees_with_itself_and_the_model():
    from fraglab.apis import FAMILIES
    from fraglab.layouts import atlas as atlas_mod
    from fraglab.layouts.verify import check_combination

    atlas = atlas_mod.load_bundled(90, "mma_sp")
    family = FAMILIES["mma_sp"]
    for spec in family.specs():
        measured = {m: atlas.raw_layout(spec, m) for m in family.methods}
        assert all(v is not None for v in measured.values()), spec.key
        assert "H100" in measured["mma"].source.provenance["gpu_name"], spec.key
        row = check_combination(spec, measured, 90, atlas)
        assert not row.problems and (row.model, row.atlas) == ("agrees", "agrees"), (spec.key, row.problems)
        table = isa_map(spec.frag, spec.shape, spec.dtype, spec.layout)   # the ISA tables written above
        assert np.array_equal(measured["onehot"].to_numpy(), table), spec.key
