"""The fraglab command line: the app, --version, the command groups, and the ONE error handler.

Commands only parse options and call the library. Any FraglabError raised below becomes one message
"fraglab: error: ..." on stderr (wrapped at word boundaries within 80 columns, cli/common.error_text) and exit
code e.exit_code (2 bad input, 1 a failed check or a refused GPU); the parser's own usage errors keep their exit 2.
Click's types come through typer's public API (typer.Context, typer.echo): typer 0.29 carries its own copy of
click and no longer installs it.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
from typing import Annotated

import typer

from .._version import __version__
from ..errors import CompileError, FraglabError, GpuUnavailable
from ..files import clean_text
from .common import (ERROR_WIDTH, FraglabGroup, _UsageError, compile_log_text, error_text, usage_error_text,
                     use_fraglab_help)

_log = logging.getLogger("fraglab")


def _gpu_message(message: str) -> str:
    """No usable GPU in one short line; the parenthesised details (the exception, the install hint) are logged
    for --verbose."""
    if not message.startswith("no usable GPU") and "needs a GPU" not in message:
        message = f"no usable GPU: {message}"
    short = re.sub(r" \((?:[^()]|\([^()]*\))*\)", "", message).split("; ")[0]
    if short != message:
        _log.info("%s", message)
        hint = " (--verbose says more)"
        if len(error_text(short + hint, width=10 ** 6)) <= ERROR_WIDTH:  # only where it keeps the error one line
            short += hint
    return short


class _HandledGroup(FraglabGroup):
    """The root group: every FraglabError and every parser error becomes one message on stderr and its exit code."""

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except FraglabError as exc:
            message = str(exc).split("\n")[0] or exc.__class__.__name__
            if isinstance(exc, GpuUnavailable):
                message = _gpu_message(message)
            typer.echo(error_text(message, see=getattr(exc, "see", None)), err=True)
            if isinstance(exc, CompileError) and exc.log.strip():
                typer.echo(compile_log_text(exc.log), err=True)
            ctx.exit(exc.exit_code)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _UsageError as exc:
            typer.echo(usage_error_text(exc), err=True)
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_HandledGroup,
    help="Measure, show and use tensor-core fragment layouts on the GPU in hand (or from the bundled atlas).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is fraglab's own (cli/common.py), the same under every typer
)


def _version_callback(value: bool):
    if value:
        typer.echo(f"fraglab {__version__}")
        raise typer.Exit()


class _CleanFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return "fraglab: " + clean_text(record.getMessage(), limit=None)


class _StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a record comes (a test runner swaps and closes its streams)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _verbose_callback(ctx: typer.Context, value: bool):
    if value:
        handler = _StderrHandler()
        handler.setFormatter(_CleanFormatter())
        _log.addHandler(handler)
        _log.setLevel(logging.INFO)
        ctx.call_on_close(lambda: _log.removeHandler(handler))  # for this invocation only


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                                                help="Print the version and exit.")] = False,
          verbose: Annotated[bool, typer.Option("--verbose", callback=_verbose_callback, is_eager=True,
                                                help="Say on stderr why no GPU is used, and what else "
                                                     "fraglab chose by itself.")] = False):
    pass


# Each module registers its commands with register(app); the optional ones (owned by other features) may be absent.
_COMMAND_MODULES = ("fraglab.cli.layout", "fraglab.cli.atlas", "fraglab.cli.figures", "fraglab.cli.gemm",
                    "fraglab.cli.check", "fraglab.cli.smem", "fraglab.cli.explain")
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
use_fraglab_help(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
