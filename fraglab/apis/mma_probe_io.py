"""What the warp-level mma probes (mma.sync, mma.sp, the ldmatrix-fed mma) feed and read back, in one place.

Slot codes and one-hots to feed an operand, the accumulator experiments' A column and B row, the decoders of
what D shows, the launch that poisons D first, and a map as a Layout. Numpy except `launch_d_words` and
`measure_layouts` (lazy GPU imports). A map is (32, slots, 2): lane, slot -> (row, col), NO_ELEMENT where a
slot holds nothing.
"""

from __future__ import annotations

import numpy as np

from ..probes.codes import digits, passes_needed, undigits

NO_ELEMENT = -1
D_POISON = 0xDEADBEEF  # D is filled with it before a launch; a word still equal to it was never written


class DecodeError(ValueError):
    """Probe output that does not decode into one consistent map."""


def reads_of(found: np.ndarray) -> np.ndarray:
    """(32, slots) int8: 1 where the map holds an element, 0 where the MMA ignores the slot."""
    return (found[..., 0] != NO_ELEMENT).astype(np.int8)


def slot_code_digits(slots: int, base: int) -> np.ndarray:
    """(passes, 32, slots): base-`base` digits of each (lane, slot)'s 1-based code (0 in D means no slot)."""
    codes = np.arange(32 * slots).reshape(32, slots) + 1
    return digits(codes, base, passes_needed(32 * slots + 1, base))


def slot_onehots(slots: int) -> np.ndarray:
    """(32 * slots, 32, slots): experiment lane * slots + slot holds 1 in that slot alone."""
    return np.eye(32 * slots).reshape(32 * slots, 32, slots)


def accumulator_inputs(method: str, m: int, n: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """A's column 0 (E, M) and B's row 0 (E, N) per experiment, so that D[m, n] = A[m, 0] * B[0, n]:
    "mma": block p carries digit p of m + 1 (B's row all ones), block passes + p digit p of n + 1;
    "onehot": experiment e lights the one element (e // N, e % N)."""
    if method == "mma":
        passes = passes_needed(max(m, n) + 1, base)
        rows, cols = np.ones((2 * passes, m)), np.ones((2 * passes, n))
        rows[:passes] = digits(np.arange(m) + 1, base, passes)
        cols[passes:] = digits(np.arange(n) + 1, base, passes)
        return rows, cols
    e = np.arange(m * n)
    rows, cols = np.zeros((m * n, m)), np.zeros((m * n, n))
    rows[e, e // n] = 1
    cols[e, e % n] = 1
    return rows, cols


def decode_accumulator(method: str, d: np.ndarray, m: int, n: int, base: int,
                       what: str) -> tuple[np.ndarray, np.ndarray]:
    """D of the `accumulator_inputs` experiments, (E, 32, slots) integers in register order -> (map, reads);
    `what` opens each DecodeError's message."""
    if method == "mma":
        passes = len(d) // 2
        rows, cols = undigits(d[:passes], base) - 1, undigits(d[passes:], base) - 1
        held = (rows >= 0) & (cols >= 0)
        if np.any((rows >= m) | (cols >= n) | ((rows >= 0) != (cols >= 0))):
            raise DecodeError(f"{what}: decoded rows/cols outside {m}x{n}")
        out = np.where(held[..., None], np.stack([rows, cols], axis=-1), NO_ELEMENT).astype(np.int32)
        return out, held.astype(np.int8)
    if np.any((d != 0) & (d != 1)):
        raise DecodeError(f"{what}: D values other than 0/1")
    if np.any(d.sum(axis=0) > 1):
        raise DecodeError(f"{what}: a D slot lights for two elements")
    out = np.full((32, d.shape[2], 2), NO_ELEMENT, dtype=np.int32)
    for e, lane, slot in zip(*np.nonzero(d)):
        out[lane, slot] = divmod(int(e), n)
    return out, reads_of(out)


def map_layout(spec, method: str, source, found: np.ndarray, reads: np.ndarray):
    """A (32, slots, 2) map and its reads as the Layout of `spec` by `method` from `source`."""
    from ..layouts.layout import Layout

    return Layout(spec, method, source, found[..., 0], found[..., 1], reads)


def measure_layouts(spec, methods: tuple[str, ...], source, measure_maps, gpu_launch) -> dict:
    """{method: Layout} of `spec` measured on this GPU: measure_maps(frag, shape, dtype, layout, methods,
    launch) with gpu_launch()'s launch; `source` None: the present GPU's."""
    from ..probes.run import gpu_source

    source = source or gpu_source()
    found = measure_maps(spec.frag, spec.shape, spec.dtype, spec.layout, methods, gpu_launch())
    return {method: map_layout(spec, method, source, m, reads) for method, (m, reads) in found.items()}


def launch_d_words(build, name: str, inputs, d_words: int) -> np.ndarray:
    """Run probe `name` of `build`, one warp per experiment (len(inputs[0])), on the host arrays `inputs`;
    D (E, 32, d_words) uint32 as a host array, poisoned first (a word left unwritten: ProbeError)."""
    from ..runtime import gpu

    blocks = len(inputs[0])
    return gpu.launch_poisoned(build, name, blocks, inputs, (blocks, 32, d_words), np.uint32, D_POISON, "D words")


__all__ = ["NO_ELEMENT", "D_POISON", "DecodeError", "reads_of", "slot_code_digits", "slot_onehots",
           "accumulator_inputs", "decode_accumulator", "map_layout", "measure_layouts", "launch_d_words"]
