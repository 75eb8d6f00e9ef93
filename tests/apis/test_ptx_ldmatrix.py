"""ldmatrix / stmatrix / movmatrix: the model against the PTX ISA's description, the decoders against a
simulated warp, every kernel through NVRTC, and (on a GPU) every entry measured against the model."""

from __future__ import annotations

import numpy as np
import pytest
from cli_errors import error_message
from nvrtc_compile import offline_nvrtc

from fraglab.apis import ldmatrix as ld

MOVES = ld.catalogue()
IDS = [f"{m.api}.x{m.num}{'.trans' if m.trans else ''}" for m in MOVES]


def isa_map(move):
    """The ISA's words: 'each thread receives two elements of a row: thread l holds row l/4, elements
    2*(l%4) and 2*(l%4)+1' of every matrix, one register per matrix; .trans holds the transpose."""
    out = np.zeros((32, 2 * move.num, 2), dtype=np.int64)
    for lane in range(32):
        for matrix in range(move.num):
            for half in range(2):
                r, c = lane // 4, 2 * (lane % 4) + half
                out[lane, 2 * matrix + half] = (8 * matrix + c, r) if move.trans else (8 * matrix + r, c)
    return out


def test_catalogue_is_the_issue_list():
    assert [(m.api, m.num, m.trans) for m in MOVES] == (
        [("ldmatrix", n, t) for n in (1, 2, 4) for t in (False, True)]
        + [("stmatrix", n, t) for n in (1, 2, 4) for t in (False, True)] + [("movmatrix", 1, True)])
    assert MOVES[-1].ptx == "movmatrix.sync.aligned.m8n8.trans.b16"
    assert MOVES[3].ptx == "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"


@pytest.mark.parametrize("move", MOVES, ids=IDS)
def test_model_matches_the_isa_text(move):
    assert np.array_equal(ld.model_map(move), isa_map(move))


@pytest.mark.parametrize("move", MOVES, ids=IDS)
def test_every_element_held_once(move):
    held = {tuple(x) for x in ld.model_map(move).reshape(-1, 2)}
    assert held == {(r, c) for r in range(8 * move.num) for c in range(8)}


def test_trans_is_the_transpose_inside_each_matrix():
    plain, trans = ld.model_map(ld.MatrixMove("ldmatrix", 4, False)), ld.model_map(ld.MatrixMove("ldmatrix", 4, True))
    matrix = plain[..., 0] // 8
    assert np.array_equal(trans[..., 0], 8 * matrix + plain[..., 1])
    assert np.array_equal(trans[..., 1], plain[..., 0] % 8)


# ---- a simulated warp: what the instructions do, given a truth map -------------------------------

def simulator(truth=None):
    """A launch(plan) that behaves like the hardware would if `truth` (default: the ISA) held."""
    def launch(plan):
        kernel = plan.kernel
        if kernel.startswith("movmatrix"):
            tiles, lane_row, regs, out = plan.args
            move = ld.MatrixMove("movmatrix", 1, True)
        elif kernel.startswith("stmatrix"):
            regs, lane_row, out = plan.args
        else:
            tiles, lane_row, out = plan.args
        if not kernel.startswith("movmatrix"):
            num = int(kernel.split("<")[1].split(",")[0])
            move = ld.MatrixMove(kernel.split("_")[0], num, "true" in kernel)
        t = isa_map(move) if truth is None else truth
        result = out.copy()
        for e in range(plan.blocks):
            rows_addr = lane_row[e]
            if move.api == "stmatrix":
                tile = np.full((ld.TILE_ROWS, 8), ld.UNWRITTEN, dtype=np.int64)
                halves = np.stack([regs[e] & 0xFFFF, regs[e] >> 16], -1).reshape(32, -1)
                for lane in range(32):
                    for s in range(2 * move.num):
                        r, c = t[lane, s]
                        tile[rows_addr[r], c] = halves[lane, s]   # row r's address comes from lane r
                result[e] = tile.reshape(-1)
                continue
            if move.api == "movmatrix" and "true" not in kernel:
                inp = np.zeros((8, 8), dtype=np.int64)
                x1 = isa_map(ld.MatrixMove("ldmatrix", 1, False))
                for lane in range(32):
                    for h in range(2):
                        inp[tuple(x1[lane, h])] = (regs[e, lane] >> (16 * h)) & 0xFFFF
                source = lambda r, c: inp[r, c]  # noqa: E731
            else:
                tile = tiles[e].reshape(ld.TILE_ROWS, 8).astype(np.int64)
                source = lambda r, c: tile[rows_addr[r], c]  # noqa: E731
            for lane in range(32):
                halves = [source(*t[lane, s]) for s in range(2 * move.num)]
                words = [halves[2 * j] | (halves[2 * j + 1] << 16) for j in range(move.num)]
                result[e].reshape(32, -1)[lane] = words
        return result
    return launch


@pytest.mark.parametrize("move", MOVES, ids=IDS)
def test_decoders_recover_the_isa_layout_from_a_simulated_warp(move):
    found = ld.measure_maps(move, ld.METHODS[move.api], simulator())
    assert set(found) == set(ld.METHODS[move.api])
    for method, got in found.items():
        assert np.array_equal(got, isa_map(move)), method


@pytest.mark.parametrize("move", [ld.MatrixMove("ldmatrix", 2, True), ld.MatrixMove("stmatrix", 4, False),
                                  ld.MatrixMove("movmatrix", 1, True)], ids=str)
def test_decoders_see_a_layout_that_differs_from_the_model(move):
    truth = isa_map(move)
    truth[7, [0, 1]] = truth[7, [1, 0]]
    for method, got in ld.measure_maps(move, ld.METHODS[move.api], simulator(truth)).items():
        assert np.array_equal(got, truth), method
        assert not np.array_equal(got, ld.model_map(move)), method


def test_a_lane_past_the_used_ones_is_caught():
    # If x1 took row 3's address from lane 11 (a lane the ISA ignores), the decoy row shows up.
    move = ld.MatrixMove("ldmatrix", 1, False)

    def wrong(plan):
        tiles, lane_row, out = plan.args
        lane_row = lane_row.copy()
        lane_row[:, 3] = lane_row[:, 11]
        return simulator()(ld.LoadRun(plan.kernel, (tiles, lane_row, out), plan.blocks, plan.decode))

    with pytest.raises(ld.DecodeError, match="decoy"):
        ld.measure_maps(move, ("load",), wrong)


def test_scrambled_rows_are_a_permutation_and_ignored_lanes_hit_decoys():
    move = ld.MatrixMove("ldmatrix", 2, False)
    where, lanes = ld.lane_rows(move, scrambled=True)
    assert sorted(where.tolist()) == list(range(ld.TILE_ROWS))
    assert not np.array_equal(where, np.arange(ld.TILE_ROWS))
    assert np.array_equal(lanes[:16], where[:16]) and set(lanes[16:]).isdisjoint(set(where[:16]))


def _ldmatrix_words(tiles, rows, row_b16, num, m16):
    """What ldmatrix.x{num} leaves in each lane, per the ISA text, with the kernel's row addresses."""
    e = len(tiles)
    mem = tiles.reshape(e, rows, row_b16).astype(np.uint32)
    out = np.zeros((e, 32, num), dtype=np.uint32)
    for lane in range(32):
        for j in range(num):
            row = (8 * (j & 1) if m16 else 0) + lane // 4
            col = 8 * ((j >> 1) if m16 else j) + 2 * (lane % 4)
            out[:, lane, j] = mem[:, row, col] | (mem[:, row, col + 1] << 16)
    return out


@pytest.mark.parametrize("inst", ld.fed_instructions(), ids=lambda i: i.name)
def test_ldmatrix_of_row_major_memory_gives_the_mma_register_order(inst):
    # The memory anchor on the CPU: ldmatrix (ISA text) of A row-major and of B stored N x K yields
    # exactly the registers that the mma model places, for every type up to 32 bits.
    from fraglab.apis import mma

    a_tiles, b_tiles, _ = ld.fed_inputs(inst, trials=2, seed=3)
    a, b, _ = mma.random_operands(inst, 2, seed=3)
    m, n, k = inst.mnk
    kernel = ld.fed_kernel(inst)
    ax, bx = (int(v) for v in kernel.split(",")[1:3])
    assert ax in (1, 2, 4) and bx in (1, 2, 4)
    a_words = _ldmatrix_words(a_tiles, m, a_tiles.shape[1] // m, ax, m == 16)
    b_words = _ldmatrix_words(b_tiles, n, b_tiles.shape[1] // n, bx, False)
    assert np.array_equal(a_words, mma.place(inst, "matrix_a", a))
    assert np.array_equal(b_words, mma.place(inst, "matrix_b", b))


def test_every_kernel_compiles_for_sm90():
    from fraglab.runtime.build import KernelBuild

    nvrtc_offline = offline_nvrtc()
    names = ld.kernel_names()
    assert len(names) == 6 + 6 + 2
    assert len(ld.fed_kernel_names()) == 27
    ok, log = nvrtc_offline.compile_build(KernelBuild("apis/ldmatrix.cu", names + ld.fed_kernel_names()), "sm_90")
    assert ok, log


@pytest.mark.gpu
@pytest.mark.parametrize("move", MOVES, ids=IDS)
def test_gpu_measures_the_model(move):
    from fraglab.apis.ldmatrix import gpu_launch

    for method, got in ld.measure_maps(move, ld.METHODS[move.api], gpu_launch()).items():
        assert np.array_equal(got, isa_map(move)), method


@pytest.mark.gpu
@pytest.mark.parametrize("inst", ld.fed_instructions(), ids=lambda i: i.name)
def test_gpu_ldmatrix_fed_mma_matches_float64(inst):
    from fraglab.apis.ldmatrix import gpu_fed_launch

    assert ld.fed_product_error(inst, gpu_fed_launch()) == 0.0


def test_layout_command_answers_ldmatrix_from_the_bundled_atlas(no_gpu):
    import json

    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", "--api", "ldmatrix", "--shape", "m8n8", "--dtype", "b16",
                                      "--num", "4", "--trans", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["source"]["kind"] == "atlas" and (doc["num"], doc["trans"]) == (4, True)
    expected = isa_map(ld.MatrixMove("ldmatrix", 4, True))
    for s in doc["slots"]:
        assert (s["row"], s["col"]) == tuple(expected[s["thread"], s["slot"]])


@pytest.mark.parametrize("args, option, choices", [
    (["--api", "ldmatrix", "--num", "3"], "--num", "1, 2, 4"),
    (["--api", "movmatrix", "--no-trans"], "--trans", "True"),
    (["--api", "stmatrix", "--frag", "matrix_a"], "--frag", "matrix")])
def test_layout_command_names_the_bad_option_and_its_choices(no_gpu, args, option, choices):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, ["layout", *args])
    assert result.exit_code == 2
    message = error_message(result.output)
    assert f"invalid {option}" in message and f"valid choices are {choices}" in message
