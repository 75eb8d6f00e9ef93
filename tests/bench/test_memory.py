"""`fraglab peak --memory` (fraglab.bench.memory): sizes, readers, launch shapes and the row arithmetic on the CPU;
(GPU) each reader reads every byte exactly once, at sizes that leave blocks idle and pieces short."""

import re

import pytest

from fraglab.bench import memory
from fraglab.errors import InputError
from fraglab.runtime.build import kernels_dir

MIB = 1 << 20


def _constexpr(name: str) -> int:
    text = (kernels_dir() / "bench" / "dram_read.cu").read_text()
    expr = re.search(rf"constexpr int {name} = ([^;]+);", text).group(1)
    values = {k: v for k, v in (("kConsumerWarps", 4), ("kStages", memory.BULK_STAGES),
                                ("kChunk", memory.BULK_CHUNK))}
    return eval(expr, {}, values)   # the kernel's own arithmetic, e.g. 32 * (1 + kConsumerWarps)


def test_the_launcher_constants_are_the_kernels():
    assert _constexpr("kThreads") == memory.LDG_THREADS
    assert _constexpr("kUnroll") == memory.LDG_UNROLL
    assert _constexpr("kChunk") == memory.BULK_CHUNK
    assert _constexpr("kStages") == memory.BULK_STAGES
    assert _constexpr("kBulkThreads") == memory.BULK_THREADS
    assert _constexpr("kBulkSmem") == memory.BULK_SMEM


def test_launch_shapes_fill_the_gpu_and_fit_its_limits():
    blocks, threads, smem = memory.launch_shape("ldg", 132)
    assert blocks == 132 * memory.READ_BLOCKS_PER_SM and smem == 0
    assert blocks // 132 * threads <= 2048   # an SM's threads: every block of a wave resident at once
    blocks, threads, smem = memory.launch_shape("bulk", 132)
    assert blocks == 132 and threads % 32 == 0 and 48 * 1024 < smem <= 227 * 1024
    with pytest.raises(InputError, match="invalid reader 'tma'"):
        memory.launch_shape("tma", 132)


def test_default_sizes_are_the_decode_weights_once_each_then_a_gibibyte():
    nk = (4096, 11008, 14336)
    weights = {n * k * 2 for n in nk for k in nk}   # 4096 x 11008 and 11008 x 4096 read the same bytes
    sizes = memory.default_sizes()
    assert [s.nbytes for s in sizes] == sorted(weights | {1 << 30})
    assert sizes[0].label == "4096x4096 f16" and sizes[-1].label == "1024 MiB"
    assert all(s.nbytes % 16 == 0 for s in sizes)


@pytest.mark.parametrize("text,expected", [
    ("32", [32 * MIB]),
    ("0.5, 4096x14336", [MIB // 2, 4096 * 14336 * 2]),
    ("4096 x 4096,", [4096 * 4096 * 2]),
    ("3x5", [16]),   # 30 bytes: read in whole 16-byte words
])
def test_sizes_parse_as_mib_or_f16_weights(text, expected):
    assert [s.nbytes for s in memory.parse_sizes(text)] == expected


@pytest.mark.parametrize("text,fragment", [
    ("abc", "'abc' is not a size"),
    ("32MB", "'32MB' is not a size"),
    ("4096X4096", None),
    ("", "give one or more sizes"),
    ("1x3", "is 0 bytes"),
    ("20000", "is 20971520000 bytes"),
    ("-4", "'-4' is not a size"),
])
def test_bad_sizes_are_one_input_error_naming_the_option(text, fragment):
    if fragment is None:   # a capital X is a weight too
        assert memory.parse_sizes(text)[0].nbytes == 4096 * 4096 * 2
        return
    with pytest.raises(InputError, match="--sizes") as err:
        memory.parse_sizes(text)
    assert fragment in str(err.value) and err.value.argument == "--sizes"


def test_readers_default_to_both_and_refuse_unknown_names():
    assert memory.parse_readers(None) == ("ldg", "bulk")
    assert memory.parse_readers(["bulk", "bulk", "ldg"]) == ("bulk", "ldg")
    with pytest.raises(InputError, match="invalid --reader 'tma': valid choices are ldg, bulk"):
        memory.parse_readers(["tma"])


def test_the_bulk_reader_is_offered_from_sm90_and_refused_by_name_below():
    assert memory.runnable(("ldg", "bulk"), 80, asked=False) == ("ldg",)
    assert memory.runnable(("ldg", "bulk"), 90, asked=False) == ("ldg", "bulk")
    assert memory.runnable(("bulk",), 100, asked=True) == ("bulk",)
    with pytest.raises(InputError, match="invalid --reader bulk: .*sm_90 or later.*this GPU is sm_86"):
        memory.runnable(("bulk",), 86, asked=True)


def test_copies_make_a_pass_twice_l2_within_the_cap():
    l2 = 50 * MIB
    assert memory.copies_for(32 * MIB, l2) == 4          # 128 MiB >= 100 MiB; 3 copies would be 96
    assert memory.copies_for(1 << 30, l2) == 1
    assert memory.copies_for(MIB, l2) == 64              # rotation_count's cap
    assert memory.copies_for(4 << 30, 8 << 30) == 1      # the 6 GiB cap wins over four copies


def test_reps_scale_with_size_within_bounds():
    assert memory.reps_for(MIB) == 60 and memory.reps_for(16 << 30) == 8
    assert 8 < memory.reps_for(4 << 30) < 60   # about 40 ms of reading: 28 launches of 1.4 ms


def test_a_row_gives_the_rate_and_the_share_of_peak():
    size = memory.ReadSize("4096x4096 f16", 4096 * 4096 * 2)
    r = memory.row("ldg", size, 0.0125, 0.0120, 0.0130, 4, 3.35)
    assert r["us"] == pytest.approx(12.5) and r["mib"] == 32
    assert r["tbs"] == pytest.approx(33554432 / 12.5e-6 / 1e12)          # 2.68 TB/s
    assert r["peak_share"] == pytest.approx(r["tbs"] / 3.35)
    assert memory.row("bulk", size, 0.0125, 0.0120, 0.0130, 4, None)["peak_share"] is None


def test_the_compile_test_sees_the_readers():
    from fraglab.bench import peak

    assert any(build is memory.READ_BUILD for build, _ in peak.kernel_builds())


# ---------------------------------------------------------------------------------------------------------------
# GPU


@pytest.mark.gpu
@pytest.mark.parametrize("nbytes", [48, 64 * 1024 + 16, 3 * MIB + 16 * 1024 - 32, 40 * MIB])
def test_each_reader_reads_every_byte_once(nbytes):
    """Sizes with fewer 16 KB pieces than blocks (blocks that read nothing), a last piece cut short, and more
    pieces than ring stages per block: the sums must match the buffer's words."""
    from fraglab.runtime import gpu

    cp = gpu.cupy()
    rng = cp.random.default_rng(7)
    buffers = [rng.integers(0, 2**32, size=nbytes // 4, dtype=cp.uint32) for _ in range(2)]
    for reader in memory.runnable(memory.READERS, gpu.compute_capability(), asked=False):
        runner = memory.Reader(reader, buffers, gpu.device_info()["sm_count"])
        runner.check(0)
        runner.check(1)


@pytest.mark.gpu
def test_a_reader_that_skips_bytes_is_caught():
    from fraglab.runtime import gpu

    cp = gpu.cupy()
    buffer = cp.random.default_rng(8).integers(1, 2**32, size=MIB // 4, dtype=cp.uint32)
    for reader in memory.runnable(memory.READERS, gpu.compute_capability(), asked=False):
        runner = memory.Reader(reader, [buffer], gpu.device_info()["sm_count"])
        runner._count = cp.int64(int(runner._count) // 2)   # as if the kernel stopped half-way
        with pytest.raises(RuntimeError, match="skipped or repeated bytes"):
            runner.check(0)


@pytest.mark.gpu
def test_measure_gives_a_checked_row_per_size_and_reader():
    from fraglab.bench.timing import l2_cache_bytes
    from fraglab.runtime import gpu

    sizes = memory.parse_sizes("8,1024x1024")
    readers = memory.runnable(memory.READERS, gpu.compute_capability(), asked=False)
    rows = memory.measure(sizes, readers)
    assert [(r["label"], r["reader"]) for r in rows] == [(s.label, x) for s in sizes for x in readers]
    peak = gpu.device_info()["memory_peak_tbs"]
    for r in rows:
        assert 0 < r["p20_us"] <= r["us"] <= r["p80_us"]
        # above DRAM's peak would mean the rotation let L2 serve the reads
        assert 0.05 < r["tbs"] < (peak or 10.0), r
        assert r["copies"] * r["bytes"] >= 2 * l2_cache_bytes() or r["copies"] == 64
