"""The bank model: for one instruction, each thread's 32-bit words and banks, and the wavefronts of each phase.

Shared memory serves 32 banks of 4 bytes, one 32-bit word per bank per wavefront (128 bytes). Inside a phase
(the thread group the hardware serves at once: a warp for 1-4-byte accesses, a half warp for 8, a quarter warp
for 16, one 8x16-byte matrix for ldmatrix/stmatrix) a bank asked for k distinct words takes k wavefronts;
threads asking for the same word share it (broadcast). Phases add up. The fewest wavefronts the bytes need is
ceil(distinct words * 4 / 128): equal to the prediction means conflict-free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .access import Instruction
from .layout import BANK_BYTES, BANKS


@dataclass
class PhaseModel:
    threads: np.ndarray          # the threads of this phase that give an address
    words: list[np.ndarray]      # the instruction's words per thread (shared with the InstructionModel)
    wavefronts: int

    def layers(self) -> tuple[list[dict[int, int]], dict[tuple[int, int], int]]:
        """Layer k: bank -> first thread asking for the k-th distinct word of that bank (one wavefront each);
        and (layer, bank) -> threads sharing that word, where more than one does (a broadcast)."""
        per_bank: dict[int, list[int]] = {}
        first: dict[int, int] = {}
        count: dict[int, int] = {}
        for t in self.threads:
            for w in self.words[t]:
                w = int(w)
                if w not in first:
                    first[w] = int(t)
                    per_bank.setdefault(w % BANKS, []).append(w)
                count[w] = count.get(w, 0) + 1
        layers = [{b: first[ws[k]] for b, ws in per_bank.items() if k < len(ws)} for k in range(self.wavefronts)]
        shared = {(k, b): count[ws[k]] for b, ws in per_bank.items() for k in range(len(ws)) if count[ws[k]] > 1}
        return layers, shared


@dataclass
class InstructionModel:
    words: list[np.ndarray]      # per thread: the 32-bit word indices its address covers (empty: none)
    phases: list[PhaseModel]
    minimum: int

    @property
    def wavefronts(self) -> int:
        return sum(p.wavefronts for p in self.phases)

    def banks(self, thread: int) -> list[int]:
        return [int(w) % BANKS for w in self.words[thread]]


def thread_words(address: int, width: int) -> np.ndarray:
    if address < 0:
        return np.empty(0, dtype=np.int64)
    return np.arange(address // BANK_BYTES, (address + width - 1) // BANK_BYTES + 1, dtype=np.int64)


def phase_wavefronts(words: np.ndarray) -> int:
    """Wavefronts of one phase: the most distinct words any one bank is asked for."""
    if words.size == 0:
        return 0
    distinct = np.unique(words)
    return int(np.bincount(distinct % BANKS, minlength=BANKS).max())


def model_instruction(instr: Instruction) -> InstructionModel:
    words = [thread_words(int(a), instr.width) for a in instr.addresses]
    phases = []
    for p in instr.phases:
        active = np.array([t for t in p if len(words[t])], dtype=np.int64)
        joined = np.concatenate([words[t] for t in active]) if len(active) else np.empty(0, dtype=np.int64)
        phases.append(PhaseModel(active, words, phase_wavefronts(joined)))
    distinct = len(np.unique(np.concatenate(words))) if any(len(w) for w in words) else 0
    minimum = max(1, -(-distinct * BANK_BYTES // (BANKS * BANK_BYTES))) if distinct else 0
    return InstructionModel(words, phases, minimum)


def total_wavefronts(instructions: list[Instruction]) -> tuple[int, int]:
    """(predicted, minimum) summed over instructions, all at once in numpy (what the search ranks by)."""
    predicted = minimum = 0
    for width in {i.width for i in instructions}:
        group = [i for i in instructions if i.width == width]
        addr = np.stack([i.addresses for i in group])                      # (I, T)
        per = max(1, (width + BANK_BYTES - 1) // BANK_BYTES)
        words = addr[:, :, None] // BANK_BYTES + np.arange(per)[None, None, :]
        words = np.where(addr[:, :, None] >= 0, words, -1)
        for phase in group[0].phases:
            predicted += _most_per_bank(words[:, phase].reshape(len(group), -1)).sum()
        distinct = _distinct_count(words.reshape(len(group), -1))
        minimum += np.maximum(1, -(-distinct * BANK_BYTES // (BANKS * BANK_BYTES))).sum()
    return int(predicted), int(minimum)


def _distinct_mask(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.sort(words, axis=1)
    first = np.ones_like(w, dtype=bool)
    first[:, 1:] = w[:, 1:] != w[:, :-1]
    return w, first & (w >= 0)


def _distinct_count(words: np.ndarray) -> np.ndarray:
    return _distinct_mask(words)[1].sum(axis=1)


def _most_per_bank(words: np.ndarray) -> np.ndarray:
    w, keep = _distinct_mask(words)
    counts = np.zeros((len(w), BANKS), dtype=np.int64)
    rows = np.broadcast_to(np.arange(len(w))[:, None], w.shape)
    np.add.at(counts, (rows[keep], w[keep] % BANKS), 1)
    return counts.max(axis=1)


__all__ = ["total_wavefronts", "PhaseModel", "InstructionModel", "model_instruction", "phase_wavefronts", "thread_words"]
