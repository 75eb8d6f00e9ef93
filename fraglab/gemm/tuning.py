"""Tuned tiles: the tile measured fastest for one problem on one GPU, where it beat the schedule's rules.

The rules (fraglab/gemm/schedule.py, skinny.py) choose a tile from the shape; off the shapes they were measured on,
and where DRAM's address mapping favours one tile's reads over another's, a rule can miss by a few percent.
`fraglab gemm --tune` times every launcher tile on the user's own problems and GPU and records, per problem, the
tile that beat the rule's by more than a margin; `fraglab.gemm` (and `fraglab.torch`) then take it for that exact
problem on that GPU, with 16-bit inputs and no fp8 scales, unless a call names a tile itself.

The table is a JSON file: `FRAGLAB_GEMM_TUNING` names it (`off` or empty: none), else
`$XDG_CACHE_HOME/fraglab/gemm-tuning.json` (~/.cache/...) where it exists. It is read once and again only when
it changes; everything in it is untrusted: every field is checked, and a file that breaks a rule is refused whole
with one message naming the file, the entry and the field.

    {"format": "fraglab gemm tuning", "version": 1,
     "entries": [{"gpu": "NVIDIA H100 80GB HBM3", "dtype": "f16", "m": 64, "n": 11008, "k": 4096,
                  "a_order": "C", "b_order": "C", "out_dtype": "f16", "tile": "64x192p", "us": 37.3,
                  "schedule_tile": "64x256p", "schedule_us": 38.4, "epilogue": "relu per_n",
                  "measured": "2026-11-27T07:30:00Z"}]}

CPU only: the timing is fraglab/bench/tune.py's.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional

from ..errors import FraglabError
from ..files import clean_path, clean_text
from . import skinny, wgmma

FORMAT = "fraglab gemm tuning"
VERSION = 1
ENV = "FRAGLAB_GEMM_TUNING"
OFF_VALUES = ("", "off", "none", "0")
MAX_FILE_BYTES = 8 << 20     # a table of every shape of several models is far below this
MAX_ENTRIES = 20000
MAX_SIZE = 1 << 20           # M, N, K of an entry: positive and at most this
TEXT_LIMIT = 200             # characters of a GPU name, an epilogue note or a date
DTYPES = wgmma.DTYPES        # the tuned road: f16 / bf16 inputs (e4m3 and its scales keep the rules)
SKINNY = skinny.FORCED_TILE  # the skinny GEMM, as a tuned "tile"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class TuningError(FraglabError):
    """A tuning file that cannot be used (bad JSON, a field out of its rules)."""

    exit_code = 2


@dataclass(frozen=True)
class TuningKey:
    """The problem a tuned tile is for: exact sizes, types and orders, on one GPU (its name as CUDA reports it)."""
    gpu: str
    dtype: str
    m: int
    n: int
    k: int
    a_order: str
    b_order: str
    out_dtype: str


@dataclass(frozen=True)
class TunedTile:
    tile: str                # a launcher tile of fraglab.gemm.wgmma.TILES, "skinny" or a skinny variant
    us: float                # its median time per launch when tuned
    schedule_tile: str       # what the rules chose then, and its time
    schedule_us: float
    epilogue: str = ""       # the epilogue it was timed with (a note: the table holds one tile per problem)
    measured: str = ""       # when (UTC, ISO 8601)


def candidate_tiles(dtype: str, m: int, a_order: str = "C", n: Optional[int] = None, k: Optional[int] = None,
                    b_order: Optional[str] = None) -> tuple[str, ...]:
    """What `--tune` times and a table may name for a problem: every launcher tile that takes B's order (for 16-bit
    inputs)
    and the skinny GEMM where it takes the problem (a row-major A, M <= its MAX_M): SKINNY (its rules' split, cluster
    and B load) and, given N, K and B's order, each of its variants (skinny.variant_tiles)."""
    if dtype not in DTYPES:
        return ()
    tiles = wgmma.launcher_tiles(b_order, a_order)
    if dtype not in skinny.DTYPES or a_order != "C" or m > skinny.MAX_M:
        return tiles
    variants = skinny.variant_tiles(m, n, k, b_order) if None not in (n, k, b_order) else ()
    return tiles + (SKINNY,) + variants


def default_path(environ: Optional[Mapping[str, str]] = None) -> Path:
    environ = os.environ if environ is None else environ
    cache = environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(cache) if cache else Path.home() / ".cache") / "fraglab" / "gemm-tuning.json"


def active_path(environ: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    """The table fraglab.gemm reads: FRAGLAB_GEMM_TUNING's file (None for off), else the default one."""
    environ = os.environ if environ is None else environ
    if ENV in environ:
        value = environ[ENV].strip()
        return None if value.lower() in OFF_VALUES else Path(value).expanduser()
    return default_path(environ)


# ------------------------------------------------------------------------------------------------------------------
# The file

def _fail(source: str, where: str, what: str) -> TuningError:
    return TuningError(f"tuning file {source}: {where}{what}", argument="tuning")


def _text(entry: dict, field: str, source: str, where: str, required: bool = True) -> str:
    value = entry.get(field, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > TEXT_LIMIT:
        raise _fail(source, where, f"{field} must be a {'non-empty ' if required else ''}string of at most "
                                   f"{TEXT_LIMIT} characters")
    if clean_text(value, None) != value:
        raise _fail(source, where, f"{field} holds control characters")
    return value


def _choice(entry: dict, field: str, valid: tuple, source: str, where: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or value not in valid:
        shown = clean_text(value, 40) if isinstance(value, str) else type(value).__name__
        raise _fail(source, where, f"{field} {shown!r} is not one of {', '.join(valid)}")
    return value


def _size(entry: dict, field: str, source: str, where: str) -> int:
    value = entry.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise _fail(source, where, f"{field} must be a whole number from 1 to {MAX_SIZE}")
    return value


def _time(entry: dict, field: str, source: str, where: str) -> float:
    value = entry.get(field)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise _fail(source, where, f"{field} must be a positive number of microseconds")
    return float(value)


def parse(data: object, source: str = "<data>") -> dict[TuningKey, TunedTile]:
    """A table from a file's decoded JSON, every field checked (`source`: the file's name for messages)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(source, "", f"not a fraglab tuning table (its \"format\" is not {FORMAT!r})")
    if data.get("version") != VERSION:
        raise _fail(source, "", f"version must be {VERSION}")
    entries = data.get("entries")
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise _fail(source, "", f"\"entries\" must be a list of at most {MAX_ENTRIES}")
    table: dict[TuningKey, TunedTile] = {}
    for i, entry in enumerate(entries):
        where = f"entry {i}: "
        if not isinstance(entry, dict):
            raise _fail(source, where, "not an object")
        dtype = _choice(entry, "dtype", DTYPES, source, where)
        key = TuningKey(_text(entry, "gpu", source, where), dtype, _size(entry, "m", source, where),
                        _size(entry, "n", source, where), _size(entry, "k", source, where),
                        _choice(entry, "a_order", wgmma.A_ORDERS, source, where),
                        _choice(entry, "b_order", wgmma.B_ORDERS, source, where),
                        _choice(entry, "out_dtype", wgmma.OUT_DTYPES, source, where))
        tiles = candidate_tiles(dtype, key.m, key.a_order, key.n, key.k, key.b_order)
        tuned = TunedTile(_choice(entry, "tile", tiles, source, where), _time(entry, "us", source, where),
                          _text(entry, "schedule_tile", source, where), _time(entry, "schedule_us", source, where),
                          _text(entry, "epilogue", source, where, required=False),
                          _text(entry, "measured", source, where, required=False))
        if tuned.measured and not _DATE.match(tuned.measured):
            raise _fail(source, where, "measured must be a UTC time like 2026-11-27T07:30:00Z")
        if key in table:
            raise _fail(source, where, "a second entry for the same problem and GPU")
        table[key] = tuned
    return table


def read(path: Path) -> dict[TuningKey, TunedTile]:
    """The table in a file; an empty one where the file does not exist yet."""
    source = clean_path(str(path))
    try:
        if Path(path).is_dir():
            raise _fail(source, "", "is a folder")
        if Path(path).exists() and not Path(path).is_file():   # a fifo or a device could block or never end
            raise _fail(source, "", "is not a regular file")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _fail(source, "", f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise _fail(source, "", f"larger than {MAX_FILE_BYTES >> 20} MiB")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(source, "", f"not JSON ({clean_text(exc, 80)})") from None
    return parse(data, source)


def to_json(table: Mapping[TuningKey, TunedTile]) -> str:
    entries = [{**asdict(key), **asdict(tuned)} for key, tuned in sorted(
        table.items(), key=lambda kv: (kv[0].gpu, kv[0].dtype, kv[0].m, kv[0].n, kv[0].k, kv[0].a_order,
                                       kv[0].b_order, kv[0].out_dtype))]
    return json.dumps({"format": FORMAT, "version": VERSION, "entries": entries}, indent=1) + "\n"


def merged(table: Mapping[TuningKey, TunedTile], found: Mapping[TuningKey, Optional[TunedTile]]
           ) -> dict[TuningKey, TunedTile]:
    """`table` with a tuning run's results: a problem's new winner replaces its entry; a problem where the rules'
    tile won now (None) loses its entry; every other problem and GPU keeps its own."""
    result = dict(table)
    for key, tuned in found.items():
        if tuned is None:
            result.pop(key, None)
        else:
            result[key] = tuned
    return result


# ------------------------------------------------------------------------------------------------------------------
# The lookup fraglab.gemm makes once per problem signature

_CACHE: dict = {"stamp": None, "table": {}}


def _stamp(path: Path):
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)


def active_table(environ: Optional[Mapping[str, str]] = None) -> dict[TuningKey, TunedTile]:
    """The active table (active_path), read again only when its file changed; {} when there is none."""
    path = active_path(environ)
    if path is None:
        return {}
    stamp = _stamp(path)
    if stamp != _CACHE["stamp"]:
        table = read(path) if stamp[1] is not None else {}   # no file yet: no table
        _CACHE.update(stamp=stamp, table=table)
    return _CACHE["table"]


def key_of(plan, gpu: str) -> TuningKey:
    return TuningKey(gpu, plan.dtype, plan.m, plan.n, plan.k, plan.a_order, plan.b_order, plan.out_dtype)


def tuned_tile(plan, gpu: Callable[[], str], environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The tuned tile for a validated plan (gemm/validate.py GemmPlan), or None; `gpu()` gives this GPU's name (asked
    only where a table exists)."""
    if plan.dtype not in DTYPES:
        return None
    table = active_table(environ)
    found = table.get(key_of(plan, gpu())) if table else None
    return found.tile if found else None


__all__ = ["FORMAT", "VERSION", "ENV", "TuningError", "TuningKey", "TunedTile", "candidate_tiles", "default_path",
           "active_path", "parse", "read", "to_json", "merged", "active_table", "key_of", "tuned_tile"]
