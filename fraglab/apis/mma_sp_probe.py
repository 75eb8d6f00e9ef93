"""mma.sp probes: the experiments of each method, their decoders, the random product check (pure numpy).

Register words are built through fraglab.apis.mma_sp (instruction table, model, packing); a `launch` runs
them (the GPU's, or the tests' simulated tensor core). Anchors of each method: see fraglab/apis/mma_sp.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..probes.codes import passes_needed, undigits
from .mma import CODE_BASE, encode, pack
from .mma_probe_io import NO_ELEMENT, DecodeError, accumulator_inputs, decode_accumulator, reads_of, \
    slot_code_digits, slot_onehots
from .mma_sp import (FIELDS, POSITIONS_HIGH, POSITIONS_LOW, SparseInstruction, gather_d, instruction_for,
                     metadata_from_positions, metadata_words, nibble_positions, place, read_d, selector_of,
                     uniform_metadata)

METHODS = ("mma", "onehot")
_RANDOM_RANGE = {"u8": (0, 3)}

Launch = Callable[[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
"""launch(kernel_name, a_words, b_words, c_words, metadata_words, d_words_per_lane) -> (E, 32, d_words)"""


# ---- experiments and decoders --------------------------------------------------------------------

def _zero_c(inst: SparseInstruction, count: int) -> np.ndarray:
    return np.zeros((count, 32, inst.words("accumulator")), np.uint32)


@dataclass
class Experiment:
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    e: np.ndarray                                               # (E, 32) metadata words
    decode: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _logical_to_packed(k: int, nibble: int) -> int | None:
    """The packed column that lands on logical column k when every chunk keeps `nibble`'s positions."""
    low, high = nibble_positions(nibble)
    within = {low: 0, high: 1}.get(k % 4)
    return None if within is None else 2 * (k // 4) + within


def _a_mma(inst: SparseInstruction) -> Experiment:
    m, n, k = inst.mnk
    slots, base = inst.slots("matrix_a"), CODE_BASE[inst.ab]
    selections = k // n
    codes = slot_code_digits(slots, base)
    passes = len(codes)
    probe = pack(inst.ab, encode(inst.ab, codes))
    partner = np.zeros((selections, k, n))
    for j in range(selections):
        partner[j, j * n + np.arange(n), np.arange(n)] = 1                 # D[m, f] = A[m, j*N + f]
    a = np.repeat(probe, selections, axis=0)
    b = np.tile(place(inst, "matrix_b", partner), (passes, 1, 1))

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64).reshape(passes, selections, m, n)
        total = undigits(d, base)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for j, dm, dn in zip(*np.nonzero(total)):
            code = int(total[j, dm, dn])
            packed = _logical_to_packed(j * n + dn, POSITIONS_LOW)
            if not 1 <= code <= 32 * slots or packed is None:
                raise DecodeError(f"mma.sp {inst.name} matrix_a: code {code} at logical column {j * n + dn}")
            lane, slot = divmod(code - 1, slots)
            if out[lane, slot, 0] != NO_ELEMENT:
                raise DecodeError(f"mma.sp {inst.name} matrix_a: lane {lane} slot {slot} shows twice")
            out[lane, slot] = (dm, packed)
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), uniform_metadata(len(a), POSITIONS_LOW), decode_out)


def _k_code_b(k: int, n: int) -> np.ndarray:
    """(K, N) 0/1: column f < 6 carries bit f of k, column 6 is all ones (k = 0 still shows)."""
    kk = np.arange(k)[:, None]
    cols = np.arange(n)[None, :]
    return np.where(cols < 6, (kk >> np.minimum(cols, 5)) & 1, cols == 6).astype(np.float64)


def _read_k(row: np.ndarray) -> int | None:
    """The logical column a D row of `_k_code_b` names (None: the row is empty)."""
    if row[6] == 0 and not row.any():
        return None
    if row[6] != 1 or np.any((row != 0) & (row != 1)):
        raise DecodeError(f"a D row {row.tolist()} is not one coded column")
    return int(row[:6] @ (1 << np.arange(6)))


def _a_onehot(inst: SparseInstruction) -> Experiment:
    m, n, k = inst.mnk
    slots = inst.slots("matrix_a")
    a = pack(inst.ab, encode(inst.ab, slot_onehots(slots)))
    b = np.repeat(place(inst, "matrix_b", _k_code_b(k, n)[None]), len(a), axis=0)

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64)     # (targets, m, n)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for target in range(32 * slots):
            lane, slot = divmod(target, slots)
            found = [(r, _read_k(d[target, r])) for r in range(m)]
            found = [(r, kk) for r, kk in found if kk is not None]
            if not found:
                continue
            packed = _logical_to_packed(found[0][1], POSITIONS_HIGH)
            if len(found) != 1 or packed is None:
                raise DecodeError(f"onehot mma.sp {inst.name} matrix_a: lane {lane} slot {slot} shows {found}")
            out[lane, slot] = (found[0][0], packed)
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), uniform_metadata(len(a), POSITIONS_HIGH), decode_out)


def _partner_a(inst: SparseInstruction, logical: np.ndarray) -> tuple[np.ndarray, int]:
    """A logical (E, M, K) 0/1 partner whose every chunk's ones sit in one nibble's positions -> packed
    (E, M, K/2) values and that nibble."""
    chunks = logical.reshape(*logical.shape[:-1], -1, 4)
    for nibble in (POSITIONS_LOW, POSITIONS_HIGH):
        kept = list(nibble_positions(nibble))
        if not chunks[..., [q for q in range(4) if q not in kept]].any():
            return chunks[..., kept].reshape(*logical.shape[:-1], -1), nibble
    raise ValueError("partner keeps positions of both nibbles")


def _b_mma(inst: SparseInstruction) -> Experiment:
    m, n, k = inst.mnk
    slots, base = inst.slots("matrix_b"), CODE_BASE[inst.ab]
    codes = slot_code_digits(slots, base)
    passes = len(codes)
    probe = pack(inst.ab, encode(inst.ab, codes))
    rows = np.arange(k // 4)                                    # row r reads logical column 4r + q
    a_words, e_words = [], []
    for q in range(4):
        logical = np.zeros((1, m, k))
        logical[0, rows, 4 * rows + q] = 1
        packed, nibble = _partner_a(inst, logical)
        a_words.append(place(inst, "matrix_a", packed))
        e_words.append(uniform_metadata(1, nibble))
    a = np.tile(np.concatenate(a_words), (passes, 1, 1))
    e = np.tile(np.concatenate(e_words), (passes, 1))
    b = np.repeat(probe, 4, axis=0)                              # block = pass * 4 + q

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64).reshape(passes, 4, m, n)
        total = undigits(d, base)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for q, dm, dn in zip(*np.nonzero(total)):
            code = int(total[q, dm, dn])
            if not 1 <= code <= 32 * slots or dm >= k // 4:
                raise DecodeError(f"mma.sp {inst.name} matrix_b: code {code} in D row {dm}")
            lane, slot = divmod(code - 1, slots)
            out[lane, slot] = (4 * dm + q, dn)
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), e, decode_out)


def _b_onehot(inst: SparseInstruction) -> Experiment:
    m, n, k = inst.mnk
    slots = inst.slots("matrix_b")
    kc = np.arange(k // 2)
    packed = np.zeros((m, k // 2))
    packed[:5] = (kc[None, :] >> np.arange(5)[:, None]) & 1            # rows 0..4: bits of kc
    packed[5] = 1                                                       # row 5: every kc (presence)
    packed[6:11] = ((31 - kc)[None, :] >> np.arange(5)[:, None]) & 1   # rows 6..10: bits of ~kc
    onehots = pack(inst.ab, encode(inst.ab, slot_onehots(slots)))
    a = np.tile(place(inst, "matrix_a", packed[None]), (2 * len(onehots), 1, 1))
    b = np.repeat(onehots, 2, axis=0)                                   # block = target * 2 + nibble
    nibbles = (POSITIONS_LOW, POSITIONS_HIGH)
    e = np.tile(np.concatenate([uniform_metadata(1, nb) for nb in nibbles]), (len(onehots), 1))
    weights = 1 << np.arange(5)

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64).reshape(-1, 2, m, n)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for target in range(32 * slots):
            lane, slot = divmod(target, slots)
            hits = [(h, col) for h in range(2) for col in range(n) if d[target, h, 5, col]]
            if not hits:
                continue
            if len(hits) != 1:
                raise DecodeError(f"onehot mma.sp {inst.name} matrix_b: lane {lane} slot {slot} lights {hits}")
            h, col = hits[0]
            bits = d[target, h, :, col]
            kc_value, kc_not = int(bits[:5] @ weights), 31 - int(bits[6:11] @ weights)
            if kc_value != kc_not:
                raise DecodeError(f"onehot mma.sp {inst.name} matrix_b: lane {lane} slot {slot}: kc {kc_value} "
                                  f"vs ~kc {kc_not}")
            out[lane, slot] = (4 * (kc_value // 2) + nibble_positions(nibbles[h])[kc_value % 2], col)
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), e, decode_out)


def _accumulator(inst: SparseInstruction, method: str) -> Experiment:
    m, n, k = inst.mnk
    base = CODE_BASE[inst.ab]
    rows, cols = accumulator_inputs(method, m, n, base)        # packed A[:, 0] and B[0, :] of each experiment
    a = np.zeros((len(rows), m, k // 2))
    b = np.zeros((len(rows), k, n))
    a[:, :, 0] = rows
    b[:, 0, :] = cols
    what = f"mma.sp {inst.name} accumulator" if method == "mma" else f"onehot mma.sp {inst.name} accumulator"

    def decode_out(d_words):
        return decode_accumulator(method, np.rint(read_d(inst, d_words)).astype(np.int64), m, n, base, what)

    return Experiment(place(inst, "matrix_a", a), place(inst, "matrix_b", b), _zero_c(inst, len(a)),
                      uniform_metadata(len(a), POSITIONS_LOW), decode_out)


def _moved_b(k: int, n: int) -> np.ndarray:
    """(K, N): column 0 marks odd logical columns (a moved element), column 1 says it was the second kept
    one (4c+3), columns 2..5 carry the bits of its chunk c."""
    kk = np.arange(k)
    odd = kk % 2
    out = np.zeros((k, n))
    out[:, 0] = odd
    out[:, 1] = odd * ((kk % 4) // 2)
    for bit in range(4):
        out[:, 2 + bit] = odd * (((kk // 4) >> bit) & 1)
    return out


def _spread_fields(count: int) -> np.ndarray:
    """(count, 32, 16) fields of nibble 0x8 (positions 0 and 2): even fields 0, odd fields 2."""
    return np.broadcast_to(2 * (np.arange(FIELDS) % 2), (count, 32, FIELDS)).copy()


def _decode_moved(inst: SparseInstruction, d: np.ndarray) -> tuple[int, int] | None:
    """(M, N) D of one `_moved_b` experiment -> the packed (m, kc) that moved, or None."""
    rows = np.nonzero(d[:, 0])[0]
    if len(rows) == 0 and not d.any():
        return None
    if len(rows) != 1 or d[rows[0], 0] != 1 or np.any((d != 0) & (d != 1)) or d[np.arange(len(d)) != rows[0]].any():
        raise DecodeError(f"mma.sp {inst.name} metadata: D {d.tolist()} is not one moved element")
    r = int(rows[0])
    chunk = int(d[r, 2:6] @ (1 << np.arange(4)))
    return r, 2 * chunk + int(d[r, 1])


def _metadata_onehot(inst: SparseInstruction, selector: int) -> Experiment:
    m, n, k = inst.mnk
    fields = _spread_fields(32 * FIELDS)
    for target in range(32 * FIELDS):
        lane, field = divmod(target, FIELDS)
        fields[target, lane, field] += 1                      # 0 -> 1 or 2 -> 3: nibbles (1,2) and (0,3)
    ones = place(inst, "matrix_a", np.ones((1, m, k // 2)))
    a = np.repeat(ones, len(fields), axis=0)
    b = np.repeat(place(inst, "matrix_b", _moved_b(k, n)[None]), len(fields), axis=0)

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64)
        out = np.full((32, FIELDS, 2), NO_ELEMENT, dtype=np.int32)
        for target in range(32 * FIELDS):
            moved = _decode_moved(inst, d[target])
            if moved is not None:
                out[divmod(target, FIELDS)] = moved
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), metadata_words(inst, fields), decode_out)


def _metadata_mma(inst: SparseInstruction, selector: int) -> Experiment:
    m, n, k = inst.mnk
    bits = passes_needed(32 * FIELDS, 2)                       # 9: one bit of lane * 16 + field a pass
    ident = (np.arange(32)[:, None] * FIELDS + np.arange(FIELDS)[None, :])
    fields = np.stack([_spread_fields(1)[0] + ((ident >> p) & 1) for p in range(bits)])   # (bits, 32, 16)
    columns = k // 2
    packed = np.zeros((columns, m, columns))
    packed[np.arange(columns), :, np.arange(columns)] = 1     # experiment j: packed column j of every row
    a = np.tile(place(inst, "matrix_a", packed), (bits, 1, 1))              # block = bit * columns + j
    e = np.repeat(metadata_words(inst, fields), columns, axis=0)
    b = np.repeat(place(inst, "matrix_b", _k_code_b(k, n)[None]), len(a), axis=0)

    def decode_out(d_words):
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64).reshape(bits, columns, m, n)
        out = np.full((32, FIELDS, 2), NO_ELEMENT, dtype=np.int32)
        for j in range(columns):
            for r in range(m):
                ks = [_read_k(d[p, j, r]) for p in range(bits)]
                if any(kk is None or kk // 4 != j // 2 for kk in ks) or len({kk & 2 for kk in ks}) != 1:
                    raise DecodeError(f"mma.sp {inst.name} metadata: packed ({r}, {j}) lands on columns {ks}")
                lane, field = divmod(sum((kk & 1) << p for p, kk in enumerate(ks)), FIELDS)
                if (ks[0] & 2) != 2 * (field % 2) or out[lane, field, 0] != NO_ELEMENT:
                    raise DecodeError(f"mma.sp {inst.name} metadata: packed ({r}, {j}) names lane {lane} "
                                      f"field {field}, which cannot hold it")
                out[lane, field] = (r, j)
        return out, reads_of(out)

    return Experiment(a, b, _zero_c(inst, len(a)), e, decode_out)


def experiment(inst: SparseInstruction, frag: str, method: str, selector: int = 0) -> Experiment:
    if method not in METHODS:
        raise ValueError(f"unknown mma_sp method {method!r}: valid choices are {', '.join(METHODS)}")
    if frag == "metadata":
        return (_metadata_mma if method == "mma" else _metadata_onehot)(inst, selector)
    if frag == "accumulator":
        return _accumulator(inst, method)
    if frag == "matrix_a":
        return _a_mma(inst) if method == "mma" else _a_onehot(inst)
    return _b_mma(inst) if method == "mma" else _b_onehot(inst)


def random_operands(inst: SparseInstruction, trials: int, seed: int = 0):
    """Logical A (2:4: two random ordered positions a chunk), its packed values and positions, B and C:
    small integers, exact in every type here."""
    rng = np.random.default_rng(seed)
    m, n, k = inst.mnk
    lo, hi = _RANDOM_RANGE.get(inst.ab, (-2, 2))
    pairs = np.array([(p, q) for p in range(4) for q in range(p + 1, 4)])
    chosen = pairs[rng.integers(0, len(pairs), (trials, m, k // 4))]             # (T, M, K/4, 2)
    positions = chosen.reshape(trials, m, k // 2)
    packed = rng.integers(lo, hi + 1, (trials, m, k // 2)).astype(np.float64)
    logical = np.zeros((trials, m, k))
    chunk_start = 4 * (np.arange(k // 2) // 2)
    for t in range(trials):
        for r in range(m):
            logical[t, r, chunk_start + positions[t, r]] = packed[t, r]
    b = rng.integers(lo, hi + 1, (trials, k, n)).astype(np.float64)
    c = rng.integers(-8, 9, (trials, m, n)).astype(np.float64)
    return logical, packed, positions, b, c


def product_check(inst: SparseInstruction, launch: "Launch", selector: int = 0, ordered: bool = True,
                  trials: int = 4, seed: int = 0) -> float:
    """Largest |D - (A @ B + C)| with everything placed through the model (0.0: the model holds). Fields
    the selector does not pick get random ordered positions, so reading them would show."""
    rng = np.random.default_rng(seed + 1)
    logical, packed, positions, b, c = random_operands(inst, trials, seed)
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    filler = pairs[rng.integers(0, 6, (trials, 32, FIELDS // 2))].reshape(trials, 32, FIELDS)
    e = metadata_from_positions(inst, selector, positions, filler)
    d = launch(inst.kernel(selector, ordered), place(inst, "matrix_a", packed), place(inst, "matrix_b", b),
               place(inst, "accumulator", c), e, inst.words("accumulator"))
    return float(np.max(np.abs(gather_d(inst, read_d(inst, d)) - (logical @ b + c))))



# ---- one fragment through a launch ---------------------------------------------------------------

def measure_maps(frag: str, shape: str, dtype: str, layout: str, methods: tuple[str, ...],
                 launch: Launch) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{method: (map, reads)} for one fragment, each method one launch through `launch`."""
    inst = instruction_for(frag, shape, dtype, layout)
    selector = selector_of(layout) if frag == "metadata" else 0
    out = {}
    for method in methods:
        e = experiment(inst, frag, method, selector)
        out[method] = e.decode(launch(inst.kernel(selector), e.a, e.b, e.c, e.e, inst.words("accumulator")))
    return out
