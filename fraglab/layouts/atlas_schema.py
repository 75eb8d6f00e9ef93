"""The atlas file format as a checker: every read of an atlas goes through `check_atlas_document`.

An atlas is JSON: {"fraglab_atlas": 1, "provenance": {...}, "entries": {key: {method: {"cells", "reads"}}},
"refused": {key: why}}. `cells[lane][slot]` is row * cols + col (-1: no element); `reads[lane]` has one
character per slot: '1' read by the MMA, '0' ignored, '?' not measured. The checker names the first thing
wrong with a path into the document (e.g. `entries["wmma.matrix_a..."].load.cells[3]`), so a user who hands
fraglab a wrong file learns where it is wrong, not that a KeyError happened somewhere.
"""

from __future__ import annotations

from typing import Any, Callable

ATLAS_FORMAT = 1
READ_CHARS = frozenset("01?")

# key -> number of elements of the fragment's tile (rows * cols), or a message saying why the key is invalid
TileSize = Callable[[str], "int | str"]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_method(where: str, enc: Any, tile: int | None) -> str | None:
    if not isinstance(enc, dict):
        return f"{where} must be an object with 'cells' and 'reads'"
    for name in ("cells", "reads"):
        if name not in enc:
            return f"{where} lacks '{name}'"
    cells, reads = enc["cells"], enc["reads"]
    if not isinstance(cells, list) or not cells:
        return f"{where}.cells must be a non-empty list (one list per thread)"
    width = None
    for lane, slots in enumerate(cells):
        if not isinstance(slots, list) or not slots:
            return f"{where}.cells[{lane}] must be a non-empty list of integers"
        if width is None:
            width = len(slots)
        elif len(slots) != width:
            return f"{where}.cells[{lane}] has {len(slots)} slots, thread 0 has {width}"
        for slot, code in enumerate(slots):
            if not _is_int(code) or code < -1 or (tile is not None and code >= tile):
                limit = f" below {tile}" if tile is not None else ""
                return f"{where}.cells[{lane}][{slot}] = {code!r}: expected -1 or an element index 0..{limit or 'n'}"
    if not isinstance(reads, list) or len(reads) != len(cells):
        return f"{where}.reads must be a list of {len(cells)} strings (one per thread)"
    for lane, text in enumerate(reads):
        if not isinstance(text, str) or len(text) != width or not set(text) <= READ_CHARS:
            return f"{where}.reads[{lane}] must be a string of {width} characters from '0', '1', '?'"
    return None


def check_atlas_document(data: Any, tile_size: TileSize | None = None, deep: bool = True) -> str | None:
    """The first thing wrong with an atlas document, or None when it is a valid atlas.

    `deep=False` checks the frame only; the entries are then checked one by one as they are decoded
    (`check_atlas_entry`), which keeps answering from the large bundled atlases fast.

    `tile_size(key)` (optional) validates an entry key and gives rows * cols of its tile, so element
    indices can be range-checked; it returns a message string for a key it does not accept.
    """
    if not isinstance(data, dict):
        return "the document is not a JSON object"
    if "fraglab_atlas" not in data:
        return "'fraglab_atlas' (the format version) is missing: not a fraglab atlas"
    if data["fraglab_atlas"] != ATLAS_FORMAT:
        return f"'fraglab_atlas' is {data['fraglab_atlas']!r}; this fraglab reads format {ATLAS_FORMAT}"
    if not isinstance(data.get("provenance"), dict):
        return "'provenance' must be an object (GPU name, compute capability, capture date)"
    if not _is_int(data["provenance"].get("compute_capability")):
        return "provenance.compute_capability must be an integer such as 90"
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return "'entries' must be an object mapping fragment keys to their methods"
    refused = data.get("refused", {})
    if not isinstance(refused, dict) or not all(isinstance(v, str) for v in refused.values()):
        return "'refused' must map fragment keys to the reason they were not measured"
    if not deep:
        return None
    for key, methods in entries.items():
        problem = check_atlas_entry(key, methods, tile_size)
        if problem:
            return problem
    return None


def check_atlas_entry(key: str, methods: Any, tile_size: TileSize | None = None) -> str | None:
    """The first thing wrong with one entry (key -> method -> slot map), or None."""
    where = f"entries[{key!r}]"
    tile = None
    if tile_size is not None:
        found = tile_size(key)
        if isinstance(found, str):
            return f"{where}: {found}"
        tile = found
    if not isinstance(methods, dict) or not methods:
        return f"{where} must map at least one method name to its slot map"
    for method, enc in methods.items():
        problem = _check_method(f"{where}.{method}", enc, tile)
        if problem:
            return problem
    return None
