"""`fraglab explain`: which tensor-core and matrix-move instructions a compiled kernel uses, what fragments
they imply, which registers carry them and which `fraglab layout` command shows each layout.

Input: a .cu (compiled here through NVRTC), a .ptx, or a cubin; or one of fraglab's own kernel builds. The
tools (NVRTC, nvdisasm/cuobjdump) run through fraglab.runtime.disassemble; the text they print is parsed here.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from ..errors import FraglabError, InputError, check_choice
from ..files import clean_text
from .instructions import Finding, classify_ptx, classify_sass
from .parse import Line, looks_like_ptx, ptx_lines, sass_lines
from .report import Explanation, Kind, Layouts

LEVELS = ("sass", "ptx")
_ELF_MAGIC = b"\x7fELF"
_ARCH_FORMS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a")


def check_arch(arch: str) -> str:
    if not (arch.startswith("sm_") and arch[3:].rstrip("a").isdigit()):
        raise InputError(f"invalid --arch {arch!r}: expected sm_<number>[a], e.g. {', '.join(_ARCH_FORMS)}",
                         argument="arch")
    return arch


def check_level(level: str) -> str:
    return check_choice(level, LEVELS, "level", name="--level")


def findings_of_sass(text: str) -> tuple[list[str], list[Finding]]:
    lines = sass_lines(text)
    return _kernels(lines), [f for f in (classify_sass(ln) for ln in lines) if f is not None]


def findings_of_ptx(text: str) -> tuple[list[str], list[Finding]]:
    lines = ptx_lines(text)
    kernels = _kernels(lines)
    for raw in text.splitlines():  # kernels without any instruction still count
        stripped = raw.split("//", 1)[0]
        if ".entry" in stripped:
            name = stripped.split(".entry", 1)[1].strip().split("(")[0].strip()
            if name and name not in kernels:
                kernels.append(name)
    return kernels, [f for f in (classify_ptx(ln) for ln in lines) if f is not None]


def _kernels(lines: list[Line]) -> list[str]:
    return list(dict.fromkeys(ln.kernel for ln in lines))


def layout_command(api: str, options: dict) -> tuple[str | None, str | None, str]:
    """(`fraglab layout` command, fragment key, why none) for one operand, checked against the catalogue."""
    from ..apis import FAMILIES, make_spec

    if api not in FAMILIES:
        return None, None, f"fraglab has no {api} family"
    tries = [dict(options)]
    if "layout" in options:
        tries.append({k: v for k, v in options.items() if k != "layout"})
    tries += _same_layout_shapes(api, options)
    why = ""
    for opts in tries:
        try:
            spec = make_spec(api=api, **opts)
        except FraglabError as exc:
            why = str(exc)
            continue
        single = len({s.frag for s in spec.family.specs()}) == 1
        parts = ["fraglab layout", f"--api {api}"] + ([] if single else [f"--frag {spec.frag}"])
        parts += [f"--shape {spec.shape}", f"--dtype {spec.dtype}"]
        extra = [(n, v) for n, v in (("layout", spec.layout), ("num", spec.num), ("trans", spec.trans))
                 if v is not None]
        base = dict(frag=spec.frag, shape=spec.shape, dtype=spec.dtype)
        # the fewest extra options that still name this fragment (the family's defaults fill the rest)
        subsets = sorted((c for r in range(len(extra) + 1) for c in combinations(extra, r)), key=len)
        needed = next(c for c in subsets if make_spec(api=api, **base, **dict(c)) == spec)
        for name, value in needed:
            parts.append(("--trans" if value else "--no-trans") if name == "trans" else f"--{name} {value}")
        return " ".join(parts), spec.key, ""
    return None, None, clean_text(why, 100)


def _same_layout_shapes(api: str, options: dict) -> list[dict]:
    """Catalogued stand-ins with the same register layout (PTX ISA): a wgmma accumulator depends only on N
    and its type (fraglab catalogues K = 16, and K = 32 for s32); a register A only on K and its type (N = 8)."""
    shape = options.get("shape", "")
    if api != "wgmma" or not shape.startswith("m64n"):
        return []
    n, k = shape[4:].split("k")
    if options.get("frag") == "accumulator":
        return [{**options, "shape": f"m64n{n}k{kk}"} for kk in (16, 32, 8) if str(kk) != k]
    if options.get("frag") == "matrix_a":
        return [{**options, "shape": f"m64n8k{k}"}]
    return []


def build_explanation(file: str, input_kind: str, level: str, text: str, *, arch: str | None = None,
                      tool: str | None = None, notes: list[str] | None = None) -> Explanation:
    kernels, findings = findings_of_sass(text) if level == "sass" else findings_of_ptx(text)
    out = Explanation(file, input_kind, level, arch, tool, list(notes or []), kernels, findings)
    for f in findings:
        known = [k for k in out.kinds if (k.api, k.shape, k.types) == (f.api, f.shape, f.types)]
        if known:
            known[0].count += 1
            continue
        layouts = [Layouts(role, *layout_command(f.api, opts)) for role, opts in f.fragments]
        for lay in layouts:
            stand_in = lay.key.split(".")[2] if lay.key else f.shape
            if stand_in != f.shape:
                lay.why = f"{stand_in} has the same register layout as {f.shape}"
        out.kinds.append(Kind(len(out.kinds) + 1, f.api, f.shape, f.types, f.note, layouts, 1))
    return out


def default_arch() -> str:
    """The present GPU's architecture (sm_90 as sm_90a, a superset that runs there), else sm_90a."""
    from ..runtime import gpu

    usable, _ = gpu.available()
    if not usable:
        return "sm_90a"
    sm = gpu.compute_capability()
    return "sm_90a" if sm == 90 else f"sm_{sm}"


def _sass_or_ptx(name: str, input_kind: str, level: str, ptx: str | None, cubin: bytes | None, arch: str | None,
                 notes: list[str]) -> Explanation:
    from ..runtime import disassemble

    if level == "sass" and cubin is not None:
        try:
            tool, sass = disassemble.disassemble(cubin)
        except disassemble.ToolUnavailable as exc:
            if ptx is None:
                raise
            notes.append(f"{exc}; showing the PTX instead")
        else:
            return build_explanation(name, input_kind, "sass", sass, arch=arch, tool=tool, notes=notes)
    if ptx is None:
        raise InputError(f"{name} is a cubin: it holds no PTX, use --level sass", argument="level")
    return build_explanation(name, input_kind, "ptx", ptx, arch=arch, notes=notes)


def _cuda_includes() -> list[str]:
    """The CUDA headers' folder (wheels, toolkit), or none: a .cu that includes nothing still compiles."""
    from ..errors import CompileError
    from ..runtime.toolkit import include_dirs

    try:
        return include_dirs()
    except CompileError:
        return []


def explain_file(path: str | Path, *, arch: str | None = None, level: str = "sass",
                 include_dirs: tuple[str, ...] = ()) -> Explanation:
    """Explain a .cu (compiled for `arch` through NVRTC), a .ptx or a cubin."""
    from ..runtime import disassemble

    check_level(level)
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no file at {path}", argument="path") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", argument="path") from None
    notes: list[str] = []
    if data[:4] == _ELF_MAGIC:
        if level == "ptx":
            raise InputError(f"{path.name} is a cubin: it holds no PTX, use --level sass", argument="level")
        return _sass_or_ptx(path.name, "cubin", "sass", None, data, None, notes)
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".ptx" or looks_like_ptx(text):
        if level == "sass":
            notes.append("a .ptx is explained at the PTX level (ptxas turns it into SASS per GPU)")
        return build_explanation(path.name, "ptx", "ptx", text, notes=notes)
    if path.suffix not in (".cu", ".cuh"):
        raise InputError(f"{path.name}: expected a .cu, a .ptx or a cubin (ELF)", argument="path")
    arch = check_arch(arch or default_arch())
    includes = [str(path.resolve().parent), *include_dirs, *_cuda_includes()]
    ptx, cubin = disassemble.compile_source(text, arch, includes, file_name=path.name)
    return _sass_or_ptx(path.name, "cu", level, ptx, cubin, arch, notes)


def explain_build(build, *, arch: str = "sm_90a", level: str = "sass") -> Explanation:
    """Explain one of fraglab's own KernelBuilds (its probes, its GEMMs) compiled for `arch`."""
    from ..runtime import disassemble

    check_level(level)
    options = build.all_options(_cuda_includes(), arch)
    wanted = next((o.split("=", 1)[1] for o in options if o.startswith("-arch=")), arch)
    rest = tuple(o for o in options if not o.startswith("-arch=") and o != "-std=c++17")
    ptx, cubin = disassemble.compile_source(build.source_text(), wanted, [], rest, build.name_expressions,
                                            "fraglab_build.cu")
    return _sass_or_ptx(build.entry, "build", level, ptx, cubin, wanted, [])


__all__ = ["explain_file", "explain_build", "build_explanation", "layout_command", "Explanation", "LEVELS",
           "check_arch", "check_level", "default_arch"]
