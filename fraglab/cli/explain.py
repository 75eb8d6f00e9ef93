"""`fraglab explain`: the tensor-core and matrix-move instructions of a compiled kernel and their layouts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import InputError
from .common import console

_FORMATS = ("table", "json")


def explain_command(
    path: Annotated[Optional[Path], typer.Argument(help="A .cu (compiled here through NVRTC), a .ptx, or a cubin")] = None,
    api: Annotated[Optional[str], typer.Option(help="Instead of a file: this family's own probe kernels (see `fraglab list`)")] = None,
    arch: Annotated[Optional[str], typer.Option(help="A .cu's target, e.g. sm_90a (default: the GPU's, sm_90 as sm_90a; no GPU: sm_90a)")] = None,
    level: Annotated[str, typer.Option(help="sass: what the GPU runs (needs nvdisasm or cuobjdump: pip install 'fraglab[explain]'); ptx: the PTX")] = "sass",
    include: Annotated[Optional[list[str]], typer.Option("--include", "-I", help="An include folder for a .cu (repeatable)")] = None,
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    out: Annotated[Optional[str], typer.Option(help="Write here instead of stdout ('-': stdout)")] = None,
):
    """List every HMMA/IMMA/HGMMA/QGMMA/LDSM/STSM/MOVM (or mma/wgmma/wmma/ldmatrix/... in PTX) of a kernel: the
    fragment family, shape and types it implies, the registers of each operand, and the `fraglab layout`
    command that shows each layout."""
    from .. import explain
    from ..files import write_output

    if format not in _FORMATS:
        raise InputError(f"invalid --format {format!r}: valid choices are {', '.join(_FORMATS)}", argument="format")
    explain.check_level(level)
    if (path is None) == (api is None):
        raise InputError("give a file (a .cu, .ptx or cubin) or --api, not both", argument="path")
    if api is not None:
        from ..apis import get_family

        builds = get_family(api).kernel_builds()
        if not builds:
            raise InputError(f"{api} has no probe kernels (model only)", argument="api")
        found = explain.explain_build(builds[0], arch=explain.check_arch(arch or "sm_90a"), level=level)
    else:
        found = explain.explain_file(path, arch=arch, level=level, include_dirs=tuple(include or ()))
    if format == "json":
        write_output(out, found.to_json() + "\n", default_name="explain.json")
        return
    if out is not None and out != "-":
        write_output(out, found.to_text(80), default_name="explain.txt")
        return
    con = console()
    con.print(found.to_text(min(con.width, 80)), end="", markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("explain")(explain_command)
