"""mma.sync: the model against tables written from the PTX ISA text, the decoders against a simulated
tensor core, every kernel through NVRTC, and (on a GPU) every entry measured against the model."""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.apis import mma
from nvrtc_compile import offline_nvrtc
from register_words import unpack, value_of, words_of

# ---- the PTX ISA's fragment tables, written out per shape as the ISA text states them -------------
# g = groupID = lane >> 2, t = threadID_in_group = lane % 4, i = the fragment element a_i / b_i / c_i.

def isa_a(shape, dtype, lane, i):
    g, t = lane >> 2, lane % 4
    kind = {"f16": "16", "bf16": "16", "tf32": "32", "f64": "64", "s8": "8", "u8": "8", "e4m3": "8", "e5m2": "8",
            "s4": "4", "u4": "4", "b1": "1"}[dtype]
    table = {
        ("m16n8k8", "16"): (g if i < 2 else g + 8, 2 * t + (i & 1)),
        ("m16n8k16", "16"): (g if i in (0, 1, 4, 5) else g + 8, 2 * t + (i & 1) + (8 if i >= 4 else 0)),
        ("m16n8k4", "32"): (g if i == 0 else g + 8, t),
        ("m16n8k8", "32"): (g if i in (0, 2) else g + 8, t if i < 2 else t + 4),
        ("m8n8k4", "64"): (g, t),
        ("m16n8k4", "64"): (g if i == 0 else g + 8, t),
        ("m16n8k8", "64"): (g if i in (0, 2) else g + 8, t if i < 2 else t + 4),
        ("m16n8k16", "64"): (g if i % 2 == 0 else g + 8, t + 4 * (i // 2)),
        ("m8n8k16", "8"): (g, 4 * t + i),
        ("m16n8k16", "8"): (g if i < 4 else g + 8, 4 * t + (i & 3)),
        ("m16n8k32", "8"): (g if i < 4 or 8 <= i < 12 else g + 8, 4 * t + (i & 3) + (16 if i >= 8 else 0)),
        ("m8n8k32", "4"): (g, 8 * t + i),
        ("m16n8k32", "4"): (g if i < 8 else g + 8, 8 * t + (i & 7)),
        ("m16n8k64", "4"): (g if i < 8 or 16 <= i < 24 else g + 8, 8 * t + (i & 7) + (32 if i >= 16 else 0)),
        ("m8n8k128", "1"): (g, 32 * t + i),
        ("m16n8k128", "1"): (g if i < 32 else g + 8, 32 * t + (i & 31)),
        ("m16n8k256", "1"): (g if i < 32 or 64 <= i < 96 else g + 8, 32 * t + (i & 31) + (128 if i >= 64 else 0)),
    }
    return table[(shape, kind)]


def isa_b(shape, dtype, lane, i):
    g, t = lane >> 2, lane % 4
    kind = {"f16": "16", "bf16": "16", "tf32": "32", "f64": "64", "s8": "8", "u8": "8", "e4m3": "8", "e5m2": "8",
            "s4": "4", "u4": "4", "b1": "1"}[dtype]
    row = {
        ("m16n8k8", "16"): 2 * t + i,
        ("m16n8k16", "16"): 2 * t + (i & 1) + (8 if i >= 2 else 0),
        ("m16n8k4", "32"): t,
        ("m16n8k8", "32"): t if i == 0 else t + 4,
        ("m8n8k4", "64"): t,
        ("m16n8k4", "64"): t,
        ("m16n8k8", "64"): t + 4 * i,
        ("m16n8k16", "64"): t + 4 * i,
        ("m8n8k16", "8"): 4 * t + i,
        ("m16n8k16", "8"): 4 * t + i,
        ("m16n8k32", "8"): 4 * t + (i & 3) + (16 if i >= 4 else 0),
        ("m8n8k32", "4"): 8 * t + i,
        ("m16n8k32", "4"): 8 * t + i,
        ("m16n8k64", "4"): 8 * t + (i & 7) + (32 if i >= 8 else 0),
        ("m8n8k128", "1"): 32 * t + i,
        ("m16n8k128", "1"): 32 * t + i,
        ("m16n8k256", "1"): 32 * t + (i & 31) + (128 if i >= 32 else 0),
    }[(shape, kind)]
    return row, g


def isa_c(shape, lane, i):
    g, t = lane >> 2, lane % 4
    if shape.startswith("m8n8"):
        return g, 2 * t + i
    return (g if i < 2 else g + 8), 2 * t + (i & 1)


def isa_m8n8k4_f16(frag, layout, acc, lane, i):
    """m8n8k4 .f16: the ISA's per-quad-pair figures; lanes 16..31 take rows (or columns) 4..7."""
    t, hi = lane % 4, lane >= 16
    if frag == "matrix_a":
        return (t + 4 * hi, i) if layout == "row" else (i + 4 * hi, t)
    if frag == "matrix_b":
        return (t, i + 4 * hi) if layout == "row" else (i, t + 4 * hi)
    if acc == "f16":
        return t + 4 * hi, i
    return (t % 2) + (i & 2) + 4 * hi, (i & 4) + (t & 2) + (i & 1)


def isa_map(frag, shape, dtype, layout, inst):
    slots = inst.slots(frag)
    out = np.zeros((32, slots, 2), dtype=np.int64)
    for lane in range(32):
        for i in range(slots):
            if inst.quadpair:
                out[lane, i] = isa_m8n8k4_f16(frag, layout, inst.acc, lane, i)
            elif frag == "matrix_a":
                out[lane, i] = isa_a(shape, dtype, lane, i)
            elif frag == "matrix_b":
                out[lane, i] = isa_b(shape, dtype, lane, i)
            else:
                out[lane, i] = isa_c(shape, lane, i)
    return out


ENTRIES = mma.catalogue()


def _inst(entry):
    return mma.instruction_for(*entry)


def test_catalogue_covers_issue_11_list():
    ptx = {i.ptx for i in mma.INSTRUCTIONS}
    shapes = {(i.shape, i.ab) for i in mma.INSTRUCTIONS}
    for shape, types in {"m16n8k8": ("f16", "bf16", "tf32", "f64"), "m16n8k16": ("f16", "bf16", "f64", "s8", "u8"),
                         "m8n8k4": ("f16", "f64"), "m16n8k4": ("tf32", "f64"), "m8n8k16": ("s8", "u8"),
                         "m16n8k32": ("s8", "u8", "s4", "u4", "e4m3", "e5m2"), "m8n8k32": ("s4", "u4"),
                         "m16n8k64": ("s4", "u4"), "m8n8k128": ("b1",), "m16n8k128": ("b1",),
                         "m16n8k256": ("b1",)}.items():
        for t in types:
            assert (shape, t) in shapes, (shape, t)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    assert "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc" in ptx
    assert len(ENTRIES) == len(set(ENTRIES))


@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_model_matches_the_isa_tables(entry):
    assert np.array_equal(mma.model_map(*entry), isa_map(*entry, _inst(entry)))


@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_every_element_is_held_once_per_independent_mma(entry):
    frag, shape, dtype, layout = entry
    inst = _inst(entry)
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    rows, cols = {"matrix_a": (m, k), "matrix_b": (k, n), "accumulator": (m, n)}[frag]
    found = mma.model_map(*entry)
    quadpair = (np.arange(32) % 16) // 4 if inst.quadpair else np.zeros(32, int)
    for q in set(quadpair.tolist()):
        held = found[quadpair == q].reshape(-1, 2)
        assert len(held) == rows * cols
        assert len({tuple(x) for x in held}) == rows * cols


def test_slot_packing_low_bits_first():
    assert mma.pack("f16", np.array([[0x1111, 0x2222]]))[0, 0] == 0x22221111
    assert mma.pack("s4", np.array([list(range(8))]))[0, 0] == 0x76543210
    assert mma.pack("b1", np.array([[1] + [0] * 30 + [1]]))[0, 0] == 0x80000001
    assert list(mma.pack("f64", np.array([[0x1122334455667788]], dtype=np.uint64))[0]) == [0x55667788, 0x11223344]
    raw = np.arange(32, dtype=np.uint64).reshape(1, 32) % 16
    assert np.array_equal(mma.unpack("u4", mma.pack("u4", raw), 32), raw)


def test_encodings_of_small_numbers():
    assert mma.encode("f16", np.array([1.0]))[0] == 0x3C00
    assert mma.encode("bf16", np.array([1.0]))[0] == 0x3F80
    assert mma.encode("e4m3", np.array([1.0, -2.0, 16.0]))[:].tolist() == [0x38, 0xC0, 0x58]
    assert mma.encode("e5m2", np.array([1.0, 3.0]))[:].tolist() == [0x3C, 0x42]
    assert mma.encode("s4", np.array([-1]))[0] == 0xF
    with pytest.raises(ValueError):
        mma.encode("e5m2", np.array([9.0]))


# ---- a simulated tensor core: registers -> matrices through a "truth" table, then back ----------

def simulator(truth=None, ignore_c=False):
    """A launch() that computes D = A @ B + C from register words through per-operand truth maps."""
    def launch(name, a, b, c, d_words):
        inst = next(i for i in mma.INSTRUCTIONS if i.kernel == name)
        m, n, k = inst.mnk
        maps = {f: isa_map(f, inst.shape, inst.dtype(f), inst.a_layout if f == "matrix_a" else inst.b_layout, inst)
                for f in ("matrix_a", "matrix_b", "accumulator")}
        maps.update(truth or {})
        quadpair = (np.arange(32) % 16) // 4 if inst.quadpair else np.zeros(32, int)
        groups = quadpair.max() + 1
        mats = {}
        for f, words, shape in (("matrix_a", a, (m, k)), ("matrix_b", b, (k, n)), ("accumulator", c, (m, n))):
            vals = value_of(inst.dtype(f), unpack(inst.dtype(f), words, inst.slots(f)))
            mat = np.zeros((len(words), groups) + shape)
            for lane in range(32):
                for s in range(inst.slots(f)):
                    r, col = maps[f][lane, s]
                    if r >= 0:
                        mat[:, quadpair[lane], r, col] = vals[:, lane, s]
            mats[f] = mat
        d = mats["matrix_a"] @ mats["matrix_b"] + (0 if ignore_c else mats["accumulator"])
        out = np.zeros((len(a), 32, inst.slots("accumulator")))
        for lane in range(32):
            for s in range(inst.slots("accumulator")):
                r, col = maps["accumulator"][lane, s]
                out[:, lane, s] = d[:, quadpair[lane], r, col]
        return words_of(inst.acc, out).reshape(len(a), 32, d_words)
    return launch


SMALL = [e for e in ENTRIES if not (e[2] == "b1" and e[0] != "accumulator")]


def _assert_both_methods_find_the_isa_layout(entry, launch):
    found = mma.measure_maps(*entry, mma.METHODS, launch)
    expected = isa_map(*entry, _inst(entry))
    for method, (got, reads) in found.items():
        assert np.array_equal(got, expected), method
        assert reads.min() == 1, method


@pytest.mark.parametrize("entry", SMALL, ids=[".".join(e) for e in SMALL])
def test_decoders_recover_the_isa_layout_from_a_simulated_gpu(entry):
    _assert_both_methods_find_the_isa_layout(entry, simulator())


def test_b1_decoders_on_the_largest_fragment():
    entry = ("matrix_a", "m16n8k256", "b1", "row")
    found = mma.measure_maps(*entry, mma.METHODS, simulator())
    for got, _ in found.values():
        assert np.array_equal(got, isa_map(*entry, _inst(entry)))


@pytest.mark.parametrize("entry", [("matrix_a", "m16n8k16", "f16", "row"), ("matrix_b", "m16n8k32", "e5m2", "col"),
                                   ("matrix_a", "m8n8k4", "f16", "col"), ("accumulator", "m16n8k8", "f64", "row"),
                                   ("accumulator", "m8n8k4", "f32", "row")])
def test_decoders_see_a_layout_that_differs_from_the_model(entry):
    frag = entry[0]
    inst = _inst(entry)
    truth = isa_map(*entry, inst)
    truth[5, [0, 1]] = truth[5, [1, 0]]          # lane 5 holds its first two elements the other way round
    found = mma.measure_maps(*entry, mma.METHODS, simulator({frag: truth}))
    for method, (got, _) in found.items():
        assert np.array_equal(got, truth), method
        assert not np.array_equal(got, mma.model_map(*entry)), method


def test_onehot_shows_an_ignored_slot():
    entry = ("matrix_a", "m16n8k16", "bf16", "row")
    truth = isa_map(*entry, _inst(entry))
    truth[3, 6] = -1                                  # the simulated MMA never reads lane 3 slot 6
    found = mma.measure_maps(*entry, mma.METHODS, simulator({"matrix_a": truth}))
    got, reads = found["onehot"]
    assert reads[3, 6] == 0 and got[3, 6, 0] == -1 and reads.sum() == reads.size - 1
    assert found["mma"][0][3, 6, 0] == -1


@pytest.mark.parametrize("inst", mma.INSTRUCTIONS, ids=[i.name for i in mma.INSTRUCTIONS])
def test_product_check_on_the_simulator(inst):
    assert mma.product_check(inst, simulator(), trials=2) == 0.0


def test_product_check_catches_a_wrong_accumulator_and_a_dropped_c():
    inst = mma.instruction_for("accumulator", "m16n8k16", "f32", "row")
    truth = isa_map("accumulator", "m16n8k16", "f32", "row", inst)
    truth[0, [0, 1]] = truth[0, [1, 0]]
    assert mma.product_check(inst, simulator({"accumulator": truth}), trials=2) > 0
    assert mma.product_check(inst, simulator(ignore_c=True), trials=2) > 0


# ---- every kernel compiles for sm_90 through NVRTC from pip wheels --------------------------------

def test_every_mma_kernel_compiles_for_sm90():
    from fraglab.runtime.build import KernelBuild

    nvrtc_offline = offline_nvrtc()
    build = KernelBuild("apis/mma.cu", mma.kernel_names())
    assert len(build.name_expressions) == len(mma.INSTRUCTIONS) == 39
    ok, log = nvrtc_offline.compile_build(build, "sm_90")
    assert ok, log


# ---- on the GPU: every entry, both methods, equal to the model; the product check exact ----------

@pytest.mark.gpu
@pytest.mark.parametrize("entry", ENTRIES, ids=[".".join(e) for e in ENTRIES])
def test_gpu_measures_the_model(entry):
    from fraglab.apis.mma import gpu_launch

    _assert_both_methods_find_the_isa_layout(entry, gpu_launch())


@pytest.mark.gpu
@pytest.mark.parametrize("inst", mma.INSTRUCTIONS, ids=[i.name for i in mma.INSTRUCTIONS])
def test_gpu_product_matches_float64(inst):
    from fraglab.apis.mma import gpu_launch

    assert mma.product_check(inst, gpu_launch()) == 0.0


# ---- the interface of issue 11, answered from the bundled H100 atlas on a machine without a GPU ----

def test_layout_command_answers_mma_from_the_bundled_atlas(no_gpu):
    import json

    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", "--api", "mma", "--shape", "m16n8k16", "--dtype", "f16",
                                      "--frag", "matrix_a", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["source"]["kind"] == "atlas" and "H100" in doc["source"]["gpu_name"]
    assert (doc["threads"], doc["num_elements"], doc["rows"], doc["cols"]) == (32, 8, 16, 16)
    got = {(s["thread"], s["slot"]): (s["row"], s["col"]) for s in doc["slots"]}
    assert all(got[(lane, i)] == isa_a("m16n8k16", "f16", lane, i) for lane in range(32) for i in range(8))


def test_layout_command_rejects_a_layout_mma_does_not_offer(no_gpu):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", "--api", "mma", "--shape", "m16n8k16", "--dtype", "f16",
                                      "--frag", "matrix_b", "--layout", "row"])
    assert result.exit_code == 2
    assert "--layout" in result.output and "col" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("api", ["mma", "ldmatrix", "stmatrix", "movmatrix"])
def test_verify_finds_the_bundled_h100_capture_consistent(api):
    # methods agree, model agrees, every element read as often as the model says (m8n8k4 .f16: four times)
    from fraglab.apis import FAMILIES
    from fraglab.layouts import atlas as atlas_mod
    from fraglab.layouts.verify import check_combination

    atlas = atlas_mod.load_bundled(90)
    family = FAMILIES[api]
    for spec in family.specs():
        measured = {m: atlas.raw_layout(spec, m) for m in family.methods}
        assert all(v is not None for v in measured.values()), spec.key
        row = check_combination(spec, measured, 90, atlas)
        assert not row.problems, (spec.key, row.problems)
        assert (row.model, row.atlas) == ("agrees", "agrees"), spec.key
