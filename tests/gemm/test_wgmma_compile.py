"""The wgmma GEMM without a GPU: every instantiation the launcher can request compiles through NVRTC for
sm_90a from pip wheels, and the accumulator indexing generated into the kernel is fraglab's wgmma layout.

Expected coordinates come from the PTX ISA's accumulator figure for wgmma m64nNk16 (f32 accumulators),
written out here on its own, not from the code under test.
"""

import functools
import re

import numpy as np
import pytest

from fraglab.gemm import wgmma


def isa_accumulator(n):
    """PTX ISA, wgmma .m64nNk16 D fragment: thread t = 32 w + 4 g + q holds, in register i,
    row 16 w + g + 8 * ((i // 2) % 2), column 8 * (i // 4) + 2 q + i % 2."""
    out = np.zeros((128, n // 2, 2), dtype=np.int64)
    for t in range(128):
        w, g, q = t // 32, (t % 32) // 4, t % 4
        for i in range(n // 2):
            out[t, i] = (16 * w + g + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * q + i % 2)
    return out


@pytest.mark.parametrize("n", wgmma.ACC_N)
def test_generated_indexing_is_the_isa_layout(n):
    ix = wgmma.accumulator_indexing(n)
    assert np.array_equal(ix.coordinates(), isa_accumulator(n))
    assert ix.pairs_adjacent


def _parse_array(text, name):
    match = re.search(rf"{name}\[\d+\] = \{{([^}}]*)\}}", text)
    return [int(v) for v in match.group(1).split(",")]


@pytest.mark.parametrize("n", wgmma.ACC_N)
def test_emitted_header_holds_the_tables(n):
    """Re-expand the C++ arrays exactly as the kernel does and compare with the ISA formula."""
    header = wgmma.accumulator_header()
    row_bit, col_bit = _parse_array(header, "kRowBit"), _parse_array(header, "kColBit")
    block = header[header.index(f"struct Slots<{n}>"):]
    row_off, col_off = _parse_array(block, "kRowOff"), _parse_array(block, "kColOff")
    coords = np.zeros((128, n // 2, 2), dtype=np.int64)
    for t in range(128):
        base_row = sum(((t >> b) & 1) * row_bit[b] for b in range(7))
        base_col = sum(((t >> b) & 1) * col_bit[b] for b in range(7))
        for i in range(n // 2):
            coords[t, i] = (base_row + row_off[i], base_col + col_off[i])
    assert np.array_equal(coords, isa_accumulator(n))
    assert "kPairsAdjacent = true" in header


def test_a_layout_that_is_not_base_plus_offset_is_refused():
    layout = isa_accumulator(128).copy()
    layout[5, 3] = (63, 127)   # one register somewhere else: no per-thread base + per-slot offset explains it
    with pytest.raises(ValueError, match="not a per-thread base"):
        wgmma.accumulator_indexing(128, layout)


def test_swapped_pairs_are_not_stored_as_float2():
    layout = isa_accumulator(128)[:, ::-1].copy()   # slot order reversed: each pair holds (c + 1, c)
    assert not wgmma.accumulator_indexing(128, layout).pairs_adjacent


def isa_stmatrix_x4(lane, reg):
    """PTX ISA, stmatrix m8n8 .x4 (not transposed): register r of lane l holds row l // 4 of matrix r, columns
    2 (l % 4) and 2 (l % 4) + 1 (low half first); returns ((matrix, row, col) low, (matrix, row, col) high)."""
    return (reg, lane // 4, 2 * (lane % 4)), (reg, lane // 4, 2 * (lane % 4) + 1)


@pytest.mark.parametrize("n", wgmma.ACC_N)
def test_stmatrix_plan_stores_each_accumulator_where_it_belongs(n):
    """Follow every register half the kernel gives stmatrix (slot kStmatrixSlot[8 g + 2 j + h] of matrix j of
    16-column group g) to the shared-memory element the ISA says it lands on, with matrix j's rows addressed at
    the origin the header names: it must be the element the ISA's accumulator formula puts in that slot."""
    plan = wgmma.stmatrix_plan(n)
    acc = isa_accumulator(n)
    assert plan is not None and plan.shape == (n // 16, 8)
    for t in range(128):
        w, lane = divmod(t, 32)
        for g in range(n // 16):
            for j in range(4):
                for h, (matrix, row, col) in enumerate(isa_stmatrix_x4(lane, j)):
                    origin_row, origin_col = wgmma.STMATRIX_ORIGINS[matrix]
                    where = (16 * w + origin_row + row, 16 * g + origin_col + col)
                    assert tuple(acc[t, plan[g, 2 * j + h]]) == where


def test_a_layout_without_uniform_stmatrix_slots_has_no_plan():
    layout = isa_accumulator(64).copy()
    layout[3, [0, 4]] = layout[3, [4, 0]]      # thread 3 holds two slots swapped: no slot index fits every lane
    assert wgmma.stmatrix_plan(64, layout) is None
    assert wgmma.stmatrix_plan(64, isa_accumulator(64)) is not None


def test_header_asserts_what_the_staged_f32_store_assumes():
    header = wgmma.accumulator_header()
    assert "kBaseColBelow8 = true" in header and header.count("kPairColsOn8 = true") == len(wgmma.ACC_N)
    assert header.count("kStmatrix = true") == len(wgmma.ACC_N)


def test_persistent_grid_is_whole_clusters_and_at_most_one_block_per_sm():
    for name, tile in wgmma.ALL_TILES.items():
        for m, n in ((1, 8), (1000, 520), (8192, 8192), (130, 4096)):
            blocks = wgmma.launch_blocks(m, n, tile, 132)
            assert blocks % tile.cluster_blocks == 0 and 1 <= blocks <= 132, (name, m, n)
    c2 = wgmma.ALL_TILES["128x256c2"]
    assert wgmma.launch_blocks(1, 8, c2, 132) == 2       # one unit of two row tiles, the second past M
    assert wgmma.launch_blocks(384, 256, c2, 132) == 4   # three row tiles -> two units


def test_every_tile_fits_shared_memory_and_registers():
    for name, tile in {**wgmma.TILES, **wgmma.EXPERIMENTAL_TILES}.items():
        assert tile.smem_bytes + tile.staged_store_bytes() <= 227 * 1024, name
        rows = tile.warpgroup_rows
        assert rows % 64 == 0 and rows * (1 if tile.pingpong else tile.consumers) == tile.bm, name
        # f32 accumulators per consumer thread: 128 of the 232 registers two consumers get, 96 of three's 152
        assert (rows // 64) * tile.bn // 2 <= {2: 128, 3: 96}[tile.consumers], name


def test_spec_rejects_bad_choices_naming_them():
    with pytest.raises(ValueError, match="dtype 'f32'.*f16, bf16"):
        wgmma.WgmmaKernelSpec("f32")
    with pytest.raises(ValueError, match="act 'swish'"):
        wgmma.WgmmaKernelSpec("f16", act="swish")
    with pytest.raises(ValueError, match="tile '1x1'"):
        wgmma.WgmmaKernelSpec("f16", tile="1x1")
    with pytest.raises(ValueError, match="store 'smem'.*direct, tma"):
        wgmma.WgmmaKernelSpec("f16", store="smem")


def test_choose_tile_by_waves():
    assert wgmma.choose_tile(8192, 8192, 132) == "128x256"     # 2048 tiles: 15 waves
    assert wgmma.choose_tile(2048, 2048, 132) == "128x256"     # 128 tiles: 0.97 of a wave
    assert wgmma.choose_tile(1024, 1024, 132) == "64x128pkb2"  # 128 tiles of 64x128 fit one wave (rule few_tiles)
    assert wgmma.choose_tile(128, 4096, 132, k=2048) == "64x64pkb2"   # 32 tiles of 128x128: a quarter wave
    assert wgmma.choose_tile(128, 4096, 132) == "128x64k2"     # K 4096: two blocks on each 128x64 tile


def test_tensor_core_kernel_rules():
    """One rule set (gemm/validate.py): wgmma on sm_90 where TMA can describe the operands, else WMMA."""
    from fraglab.gemm.validate import GemmArgumentError, tensor_core_kernel

    assert tensor_core_kernel("auto", 90, 64, 128, (256, 512)) == ("wgmma", None)
    assert tensor_core_kernel("wgmma", 90, 64, 128, (256,)) == ("wgmma", None)
    assert tensor_core_kernel("auto", 80, 64, 128, (256,)) == ("wmma", None)
    assert tensor_core_kernel("wmma", 90, 64, 128, (256,)) == ("wmma", None)
    family, notice = tensor_core_kernel("wgmma", 90, 64, 100, (256,))   # N = 100: rows of B not 16-byte aligned
    assert family == "wmma" and "N=100" in notice and "\n" not in notice
    family, notice = tensor_core_kernel("auto", 90, 64, 128, (256 + 4,))   # a misaligned array
    assert family == "wmma" and notice
    with pytest.raises(GemmArgumentError, match="sm_90.*sm_80"):
        tensor_core_kernel("wgmma", 80, 64, 128, ())


def test_cli_wgmma_without_a_gpu_says_so_in_one_line(no_gpu):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    res = CliRunner().invoke(app, ["gemm", "--wgmma", "--size", "256"])
    assert res.exit_code == 1 and "no usable GPU" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(app, ["gemm", "--wgmma", "--simt"])
    assert res.exit_code == 2 and "--wgmma and --simt" in res.output
    # a bad tile is named (with the valid ones) before the missing GPU
    res = CliRunner().invoke(app, ["gemm", "--wgmma", "--tile", "96x96"])
    assert res.exit_code == 2 and "--tile" in res.output and "128x256" in res.output and "GPU" not in res.output
    # e4m3 is a --wgmma input type only
    res = CliRunner().invoke(app, ["gemm", "--wgmma", "--dtype", "e5m2"])
    assert res.exit_code == 2 and "--dtype" in res.output and "e4m3" in res.output
    res = CliRunner().invoke(app, ["gemm", "--dtype", "e4m3"])
    assert res.exit_code == 2 and "--dtype" in res.output and "e4m3" not in res.output.split("choices")[-1]
    res = CliRunner().invoke(app, ["gemm", "--wgmma", "--dtype", "e4m3", "--size", "256"])
    assert res.exit_code == 1 and "no usable GPU" in res.output
    # --b-order: C or F, for the tensor-core GEMMs; e4m3 has only F
    for args, fragment in ((["--wgmma", "--b-order", "T"], "valid choices are C, F"),
                           (["--simt", "--b-order", "F"], "--wmma and --wgmma"),
                           (["--wgmma", "--dtype", "e4m3", "--b-order", "C"], "K-major")):
        res = CliRunner().invoke(app, ["gemm", *args])
        assert res.exit_code == 2 and "--b-order" in res.output and fragment in res.output, args


# ---- NVRTC from pip wheels (dev extra) ----

nvrtc_offline = pytest.importorskip("fraglab.runtime.nvrtc_offline")
try:
    nvrtc_offline.wheel_include_dir()
    from cuda.bindings import nvrtc  # noqa: F401
    OFFLINE = None
except Exception as exc:  # the offline compiler is a dev extra
    OFFLINE = f"offline NVRTC is not installed: {exc}"

CHUNK = 384
CHUNKS_PER_TEST = 4   # compiled side by side: NVRTC releases the GIL
# Every instantiation through the front end only (template instantiation, static_asserts, device-code rules: about a
# sixth of the time NVVM takes even with -G); test_representatives_assemble_to_sm90a_cubins takes one of each tile
# and type through NVVM and ptxas
FRONT_END_ONLY = ("--fdevice-syntax-only",)


@functools.cache
def _chunks():   # every group slices the same list: built once
    names = [s.name() for s in wgmma.all_specs()]
    return [tuple(names[i:i + CHUNK]) for i in range(0, len(names), CHUNK)]


@pytest.mark.skipif(OFFLINE is not None, reason=str(OFFLINE))
@pytest.mark.parametrize("group", range(-(-len(_chunks()) // CHUNKS_PER_TEST)))
def test_every_instantiation_passes_the_front_end(group):
    """All of them instantiated for compute_90a by NVRTC's front end."""
    from concurrent.futures import ThreadPoolExecutor

    chunks = _chunks()[group * CHUNKS_PER_TEST:(group + 1) * CHUNKS_PER_TEST]
    with ThreadPoolExecutor(len(chunks)) as pool:
        results = list(pool.map(
            lambda names: nvrtc_offline.compile_build(wgmma.build_of(names, FRONT_END_ONLY), "compute_90a"),
            chunks))
    for ok, log in results:
        assert ok, log


@pytest.mark.skipif(OFFLINE is not None, reason=str(OFFLINE))
def test_the_front_end_alone_still_instantiates_the_kernel():
    """A tile the kernel's static_asserts refuse (96 rows: not whole 64-row warpgroup tiles) fails with the front
    end only, as it does through NVVM: the options above still instantiate each kernel's body."""
    name = wgmma.spec_for("f16", 256, 256, 256, tile="128x256", out_dtype="f16").name()
    assert "WgmmaTile<128, " in name
    bad = name.replace("WgmmaTile<128, ", "WgmmaTile<96, ", 1)
    ok, log = nvrtc_offline.compile_build(wgmma.build_of((bad,), FRONT_END_ONLY), "compute_90a")
    assert not ok and "static assertion failed" in log, log[-2000:]
    ok, log = nvrtc_offline.compile_build(wgmma.build_of((name,), FRONT_END_ONLY), "compute_90a")
    assert ok, log


@pytest.mark.skipif(OFFLINE is not None, reason=str(OFFLINE))
def test_representatives_assemble_to_sm90a_cubins():
    """One of each tile x dtype with the heaviest epilogue, and every experimental tile, with the real options."""
    def order(tile):   # B row-major where the tile takes it (the 64-column boxes), else column-major
        return "F" if wgmma.ALL_TILES[tile].k_major_b_only else "C"

    specs = [wgmma.WgmmaKernelSpec(dt, "gelu", "full", True, True, tile, b_order=order(tile)) for dt in wgmma.DTYPES
             for tile in wgmma.TILES]
    specs += [wgmma.WgmmaKernelSpec("bf16", "relu", "per_n", tile=tile, b_order=order(tile))
              for tile in wgmma.EXPERIMENTAL_TILES]
    specs += [wgmma.WgmmaKernelSpec(dt, "gelu", "full", True, True, tile, out_dtype=out,
                                    store=wgmma.default_store(tile, out), b_order=order(tile))
              for dt, out in (("f16", "f16"), ("bf16", "bf16"), ("f16", "f32")) for tile in wgmma.ALL_TILES]
    # block-scaled fp8 (a second accumulator beside the first, promoted after every K-block's wgmmas)
    specs += [wgmma.WgmmaKernelSpec("e4m3", act, "per_n", tile=tile, out_dtype="bf16", store="tma", b_order="F",
                                    block_scaled=True)
              for tile, cfg in wgmma.ALL_TILES.items() if cfg.holds_block_scales for act in ("relu",)]
    ok, log, cubin = nvrtc_offline.compile_build(wgmma.build_of(tuple(s.name() for s in specs)), "sm_90a",
                                                 cubin=True)
    assert ok, log
    assert cubin[:4] == b"\x7fELF"
    # ptxas says when it serialises wgmmas (accumulators touched where wgmmas may be in flight): a slow mainloop
    assert "C7518" not in log, [line for line in log.splitlines() if "C7518" in line][:3]


@pytest.mark.skipif(OFFLINE is not None, reason=str(OFFLINE))
def test_launcher_shared_memory_is_the_kernels():
    """The bytes the launcher asks for (TileConfig, Python) equal WgmmaTile::kSmemBytes (C++), for every tile with
    both stores: asked for less, the kernel would run past its shared memory. Its threads and consumer warpgroups
    too."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class SmemAsserts(wgmma.WgmmaBuild):
        asserts: str = ""

        def source_text(self) -> str:
            return super().source_text() + self.asserts

    lines = []
    for name in wgmma.ALL_TILES:
        for store in wgmma.STORES:
            spec = wgmma.WgmmaKernelSpec("f16", tile=name, store=store,
                                         b_order="F" if wgmma.ALL_TILES[name].k_major_b_only else "C",
                                         out_dtype="f16" if wgmma.ALL_TILES[name].swap_ab else "f32")
            tile = spec.tile_config
            lines.append(f"static_assert({tile.cpp(store == 'tma')}::kSmemBytes == {spec.smem_bytes}, "
                         f"\"{name} {store}\");")
            # the threads the launcher starts are the ones the kernel's roles and barriers count
            lines.append(f"static_assert({tile.cpp(store == 'tma')}::kThreads == {tile.threads} && "
                         f"{tile.cpp(store == 'tma')}::kConsumers == {tile.consumers}, \"{name} threads\");")
    ok, log = nvrtc_offline.compile_build(SmemAsserts(wgmma.ENTRY, (), (), "\n".join(lines) + "\n"), "compute_90a")
    assert ok, log
    double = {n for n, t in wgmma.ALL_TILES.items() if t.store_buffers == 2}
    assert "128x256" in double and "128x128p" not in double   # the default fits two buffers, ping-pong 128 rows not
    assert "128x256b1" not in double                            # one where asked
    # a cooperative 192-row tile runs three consumer warpgroups of 64 rows (512 threads); ping-pong stays at two
    assert (wgmma.TILES["192x192c2"].threads, wgmma.TILES["192x192c2"].warpgroup_rows) == (512, 64)
    assert wgmma.TILES["128x192c2"].threads == 384


def test_scaled_kernels_are_e4m3_only_and_named_by_their_policy():
    spec = wgmma.WgmmaKernelSpec("e4m3", "relu", "per_n", b_order="F", scaled=True)
    assert "false, false, true>" in spec.name() and "false, false, true>" not in spec.__class__("e4m3", "relu", "per_n", b_order="F").name()
    with pytest.raises(ValueError, match="scales.*e4m3"):
        wgmma.WgmmaKernelSpec("f16", scaled=True)
    specs = wgmma.all_specs()
    scaled = [s for s in specs if s.scaled]
    assert scaled and all(s.dtype == "e4m3" for s in scaled)
    plain = [s for s in specs if s.dtype == "e4m3" and not s.scaled and not s.block_scaled]
    assert len(scaled) == len(plain)   # every e4m3 kernel, scaled
    assert wgmma.spec_for("e4m3", 4096, 4096, 4096, b_order="F", scaled=True).scaled


def test_bind_refuses_scales_a_kernel_does_not_take():
    spec = wgmma.WgmmaKernelSpec("e4m3", b_order="F", scaled=True)
    with pytest.raises(ValueError, match="scale_a and scale_b"):
        wgmma.bind(spec, np.zeros((2, 16), np.uint8), np.zeros((16, 8), np.uint8), None)


def test_scale_arguments_come_together_and_only_for_e4m3():
    from fraglab.gemm.validate import GemmArgumentError, check_scales

    assert check_scales(None, None, "f16", 4, 8, 16) == "none"
    with pytest.raises(GemmArgumentError, match="scale_b"):
        check_scales(np.ones(4, np.float32), None, "e4m3", 4, 8, 16)
    with pytest.raises(GemmArgumentError, match="scale_a"):
        check_scales(None, np.ones(8, np.float32), "e4m3", 4, 8, 16)
    with pytest.raises(GemmArgumentError, match="scale_a.*e4m3"):
        check_scales(np.ones(4, np.float32), np.ones(8, np.float32), "bf16", 4, 8, 16)


@pytest.mark.skipif(OFFLINE is not None, reason=str(OFFLINE))
def test_the_traced_kernel_compiles_and_the_trace_is_off_by_default():
    """benchmarks/wgmma_trace.py compiles the kernel with -DFRAGLAB_WGMMA_TRACE (a timeline buffer it reads back by
    name, and timer reads at eight points); without the macro the buffer is not in the module."""
    names = tuple(wgmma.WgmmaKernelSpec("f16", "relu", "per_n", tile=t, out_dtype="f16", store="tma", b_order="F").name()
                  for t in ("64x64pk2", "128x192c2", "128x256"))
    for options, built in ((("-DFRAGLAB_WGMMA_TRACE",), names), ((), names[:1])):
        ok, log, cubin = nvrtc_offline.compile_build(wgmma.build_of(built, options), "sm_90a", cubin=True)
        assert ok, log
        assert (b"fraglab_wgmma_trace" in cubin) == bool(options)
