"""The fraglab command line: the app, --version, the command groups, and the ONE error handler.

Commands only parse options and call the library. Any FraglabError raised below becomes one line
"fraglab: error: ..." on stderr and exit code e.exit_code (2 bad input, 1 a failed check or a refused
GPU); the parser's own usage errors keep their exit 2. Click's types come through typer's public API
(typer.Context, typer.echo): typer 0.29 carries its own copy of click and no longer installs it.
"""

from __future__ import annotations

import importlib
from typing import Annotated

import typer
from typer.core import TyperGroup

from .._version import __version__
from ..errors import CompileError, FraglabError, GpuUnavailable
from ..show.terminal import ascii_only


class _HandledGroup(TyperGroup):
    """A command group whose invoke turns every FraglabError into one line and its exit code."""

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except FraglabError as exc:
            message = str(exc).split("\n")[0] or exc.__class__.__name__
            if isinstance(exc, GpuUnavailable) and not message.startswith("no usable GPU"):
                message = f"no usable GPU: {message}"
            typer.echo(f"fraglab: error: {message}", err=True)
            if isinstance(exc, CompileError) and exc.log.strip():
                typer.echo("--- NVRTC log ---\n" + exc.log.strip(), err=True)
            ctx.exit(exc.exit_code)


app = typer.Typer(
    cls=_HandledGroup,
    help="Measure, show and use tensor-core fragment layouts on the GPU in hand (or from the bundled atlas).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # rich draws help panels with box characters; an ASCII-only terminal gets click's plain help instead
    rich_markup_mode=None if ascii_only() else "rich",
)


def _version_callback(value: bool):
    if value:
        typer.echo(f"fraglab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                                                help="Print the version and exit.")] = False):
    pass


# Each module registers its commands with register(app); the optional ones (owned by other features) may be absent.
_COMMAND_MODULES = ("fraglab.cli.layout", "fraglab.cli.atlas", "fraglab.cli.figures", "fraglab.cli.gemm",
                    "fraglab.cli.smem", "fraglab.cli.explain")
_OPTIONAL_MODULES = ("fraglab.cli.export",)


def _register_commands() -> None:
    for module_name in _COMMAND_MODULES:
        importlib.import_module(module_name).register(app)
    for module_name in _OPTIONAL_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(app)


_register_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
