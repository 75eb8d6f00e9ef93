"""The one writer for every file fraglab writes: layouts, atlases, figures, tables, html, headers, JSON rows.

Rules (issue 10, item 4):
- "-" is stdout. An existing folder, or a path ending in "/", gets `default_name` inside it.
- A symlink is followed: its target is replaced atomically and the link stays a link.
- A fifo, a character device or any other non-regular file is written to directly, never replaced.
- A new file gets the mode the umask gives (an existing one keeps its mode); the data lands whole or not at
  all (temporary file beside the target, then rename), and a failure leaves nothing behind, not even the
  folders this call created.
- One suffix rule for every command: a suffix that belongs to another format than the one written is an
  InputError (`check_suffix`, which write_output applies from `fmt` or its default name's suffix); with no
  format given, the suffix chooses (`format_from_suffix`). An empty name and a filesystem root are refused.
- "wrote ..." lines go to stderr (`report_written`); stdout is for data.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

from .errors import FraglabError, InputError

PathLike = Union[str, os.PathLike]

# Which suffixes each output format owns; a suffix owned only by other formats contradicts the format written.
FORMAT_SUFFIXES: dict[str, tuple[str, ...]] = {
    "json": (".json",), "csv": (".csv",), "png": (".png",), "svg": (".svg",), "pdf": (".pdf",),
    "table": (".txt",), "text": (".txt",), "html": (".html", ".htm"), "header": (".h", ".hpp", ".cuh"),
    "tikz": (".tex",), "python": (".py",),
}


# What a string read from a file may not bring to a terminal or a generated line: C0 controls (ESC, NUL, BEL,
# CR, newline ...), DEL, C1 controls (U+009B starts escapes too) and the bidi overrides that reorder text.
_UNSAFE_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
CLEAN_LIMIT = 120  # characters of one file string shown before it is shortened


def clean_text(value: object, limit: int | None = CLEAN_LIMIT) -> str:
    """A string read from a file (an atlas's gpu_name, a key, a path, an argument) made safe to print or to put
    in one generated line: every control or bidi character becomes '?', and over `limit` characters it is cut
    with an ellipsis. The one sanitizer (fraglab.show.terminal re-exports it)."""
    text = _UNSAFE_CHARACTERS.sub("?", str(value))
    if limit is not None and len(text) > limit:
        text = text[:max(limit - 1, 0)] + "\u2026"
    return text


def is_path_like(text: str) -> bool:
    """True for a value that names a file through folders (it holds a path separator)."""
    return "/" in text or "\\" in text


def clean_path(value: object, limit: int | None = CLEAN_LIMIT) -> str:
    """clean_text for a path: cut in the middle, keeping the tail (the file name says which file; the head of a
    long path is folders), e.g. '/very/long/\u2026/atlas_sm90.json'. A value without a separator keeps its head."""
    text = _UNSAFE_CHARACTERS.sub("?", str(value))
    if limit is None or len(text) <= limit or not is_path_like(text):
        return clean_text(text, limit)
    name = len(text) - max(text.rfind("/"), text.rfind("\\"))
    tail = min(name, limit * 3 // 4)  # a very long file name still leaves room for the path's start
    return text[:max(limit - 1 - tail, 0)] + "\u2026" + text[len(text) - tail:]


def is_stdout(path: PathLike | None) -> bool:
    return path is None or str(path) == "-"


def _owners(path: PathLike) -> set[str]:
    suffix = Path(str(path)).suffix.lower()
    return {fmt for fmt, suffixes in FORMAT_SUFFIXES.items() if suffix in suffixes}


def format_from_suffix(path: PathLike | None, choices: tuple[str, ...] | None = None) -> str | None:
    """The format a file name's suffix names (e.g. 'png' for a.png), or None when it names none of `choices`."""
    if is_stdout(path):
        return None
    suffix = Path(path).suffix.lower()
    for fmt, suffixes in FORMAT_SUFFIXES.items():
        if suffix in suffixes and (choices is None or fmt in choices):
            return fmt
    return None


def _alternatives(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def check_target(path: PathLike | None, argument: str = "--out") -> None:
    """InputError unless `path` can name where a file goes: not empty, not a filesystem root."""
    if path is None:
        return
    text = str(path)
    if not text.strip():
        raise InputError(f"invalid {argument} {text!r}: give a file name (or '-' for stdout)", argument=argument)
    if text != "-" and Path(text).resolve() == Path(Path(text).resolve().anchor):
        raise InputError(f"invalid {argument} {clean_path(text, 40)!r}: a filesystem root is not a file name; "
                         "give a file name", argument=argument)


def check_suffix(path: PathLike | None, fmt: str, argument: str = "--out") -> None:
    """The one suffix rule of every command: InputError when the file name's suffix belongs only to other
    formats than `fmt` (TeX into t.png, a header into a.json). No suffix, or one no format owns, is free."""
    check_target(path, argument)
    if is_stdout(path) or _names_folder(path):
        return
    owners = _owners(path)
    accepted = {f for f, suffixes in FORMAT_SUFFIXES.items() if set(suffixes) & set(FORMAT_SUFFIXES.get(fmt, ()))}
    accepted.add(fmt)
    if owners and not owners & accepted:
        named = sorted(owners)[0]
        wanted = FORMAT_SUFFIXES.get(fmt)
        advice = f"use a name ending in {_alternatives(list(wanted))}" if wanted else "use another name"
        raise InputError(f"invalid {argument} {clean_path(str(path), 40)!r}: its suffix {Path(str(path)).suffix} "
                         f"is for {named}, but this writes {fmt}; {advice}", argument=argument)


def _names_folder(path: PathLike) -> bool:
    text = str(path)
    return text.endswith(("/", os.sep)) or Path(text).is_dir()


def target_path(path: PathLike, default_name: str) -> Path:
    """Where `path` writes: default_name inside a folder (existing, or named with a trailing '/')."""
    if _names_folder(path):
        return Path(path) / default_name
    return Path(path)


def umask_mode() -> int:
    """The mode an ordinary new file gets here (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _make_parents(folder: Path) -> list[Path]:
    """Create missing folders down to `folder`; return the ones created, deepest last."""
    missing = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    created = []
    try:
        for p in reversed(missing):
            p.mkdir()
            created.append(p)
    except OSError:
        _remove_folders(created)
        raise
    return created


def _remove_folders(created: list[Path]) -> None:
    for p in reversed(created):
        try:
            p.rmdir()
        except OSError:
            pass


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)


def _replace_atomically(target: Path, payload: bytes) -> None:
    """Temporary file in the target's folder, then rename over it (keeping an existing file's mode)."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = umask_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.chmod(tmp, mode)  # mkstemp makes 0600; the file is an ordinary one
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_path(target: Path, payload: bytes) -> None:
    real = Path(os.path.realpath(target))  # a symlink: replace what it points at, keep the link
    if real.exists() and not real.is_file():
        if real.is_dir():
            raise InputError(f"cannot write {str(target)!r}: it is a folder", argument="--out")
        with open(real, "wb") as fh:  # fifo, device, socket: write into it, never replace the node
            fh.write(payload)
        return
    created = _make_parents(real.parent)
    try:
        _replace_atomically(real, payload)
    except BaseException:
        _remove_folders(created)
        raise


def write_output(path: PathLike | None, data: str | bytes, *, default_name: str, argument: str = "--out",
                 fmt: str | None = None) -> Path | None:
    """Write `data` to `path` by the rules above; returns the file written, or None for stdout. The format
    written is `fmt`, or else the one `default_name`'s suffix names: a `path` whose suffix says otherwise is
    refused (check_suffix), as are an empty path and a filesystem root."""
    check_target(path, argument)
    fmt = fmt or format_from_suffix(default_name)
    if fmt is not None:
        check_suffix(path, fmt, argument)
    if is_stdout(path):
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
            sys.stdout.flush()
        return None
    target = target_path(path, default_name)
    try:
        _write_path(target, _as_bytes(data))
    except FraglabError:
        raise
    except OSError as exc:
        raise FraglabError(f"cannot write {str(target)!r}: {exc.strerror or exc}", argument=argument,
                           exit_code=1) from None
    return target


def report_written(path: PathLike | None, what: str = "") -> None:
    """The "wrote ..." line of every command: on stderr (stdout is for data), the path cleaned."""
    if path is not None:
        sys.stderr.write(f"wrote {clean_text(str(path), None)}{what}\n")
        sys.stderr.flush()


class _Staging:
    """Files staged beside their final names in one folder; `write_many` renames them all at the end."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.staged: list[tuple[str, Path]] = []

    def write(self, name: str, data: str | bytes) -> Path:
        if any(n == name for n, _ in self.staged):
            raise ValueError(f"{name} is written twice")
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.folder)
        self.staged.append((name, Path(tmp)))
        with os.fdopen(fd, "wb") as fh:
            fh.write(_as_bytes(data))
        os.chmod(tmp, umask_mode())
        return self.folder / name


@contextmanager
def write_many(folder: PathLike, argument: str = "--out") -> Iterator[_Staging]:
    """All-or-nothing writing of many files into one folder (figures, a gallery):

        with write_many(out) as files:
            files.write("a.svg", data)

    Every file is staged first; only when the block finishes are they renamed into place. An error inside the
    block removes what was staged and the folders this call created."""
    check_target(folder, argument)
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"invalid {argument} {str(folder)!r}: it is a file, not a folder", argument=argument)
    try:
        created = _make_parents(folder)
    except OSError as exc:
        raise FraglabError(f"cannot create {str(folder)!r}: {exc.strerror or exc}", argument=argument,
                           exit_code=1) from None
    staging = _Staging(folder)
    try:
        yield staging
        for name, tmp in staging.staged:
            os.replace(tmp, folder / name)
        staging.staged.clear()
    except BaseException as exc:
        for _, tmp in staging.staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        _remove_folders(created)
        if isinstance(exc, OSError):
            raise FraglabError(f"cannot write into {str(folder)!r}: {exc.strerror or exc}", argument=argument,
                               exit_code=1) from None
        raise


__all__ = ["clean_text", "clean_path", "check_target", "report_written", "write_output", "write_many", "check_suffix", "format_from_suffix", "target_path", "umask_mode",
           "FORMAT_SUFFIXES"]
