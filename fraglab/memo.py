"""Bounded memo tables for per-call paths: `table[key]` makes a missing value once with `make(key)`, and a full
table starts over (cheaper than LRU bookkeeping on a path that costs microseconds; the keys are few in practice:
one per GEMM signature, dtype, tensor map or bound launch)."""

from __future__ import annotations

from typing import Callable, Hashable


class BoundedMemo(dict):
    """A dict whose misses call `make(key)`; emptied when it holds `limit` entries. A hit is a plain dict lookup."""

    __slots__ = ("make", "limit")

    def __init__(self, make: Callable[[Hashable], object], limit: int):
        super().__init__()
        self.make = make
        self.limit = limit

    def remember(self, key, value):
        """Store a value made by the caller (a miss whose making needs more than the key), within the limit."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value

    def __missing__(self, key):
        value = self.make(key)   # made before anything is dropped: a make that raises leaves the table as it was
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


__all__ = ["BoundedMemo"]
