"""What every command shares: the console, the choice enums, the small parsing helpers, and fraglab's own help
and usage errors.

Help and parse errors are written here, in fraglab's words, from the commands' Python signatures (annotations
and typer.Option help), so that they read the same under every typer the project supports (typer 0.12 with
click, typer 0.29 with its own click and pydantic coercion): flags without values, choices listed once,
descriptions wrapped at word boundaries to the output width (80 columns when piped), and each error one
message under one head, wrapped within 80 columns (error_text).
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
import textwrap
import typing
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from typer.core import TyperCommand, TyperGroup

from ..errors import FraglabError
from ..files import clean_path, clean_text, is_path_like

# Named exit codes (the one handler in cli/main.py maps FraglabError.exit_code onto these).
SUCCESS, FAILED, BAD_INPUT = 0, 1, 2

# click's UsageError, from typer's own copy of click (0.29) or from click itself (older typer)
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
ARGUMENT_LIMIT = 64      # a quoted argument (or an unquoted word) longer than this is shortened in an error line
FIRST_COLUMN = 24        # widest option column that keeps its description beside it


def console(file=None, width: int | None = None, stderr: bool = False) -> Console:
    """The console every command prints through: width, colour and ASCII rules in fraglab.show.terminal."""
    from ..show.terminal import make_console

    return make_console(file, width=width, stderr=stderr)


class SourceChoice(str, Enum):
    auto = "auto"
    gpu = "gpu"
    atlas = "atlas"
    model = "model"


class FormatChoice(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    png = "png"
    svg = "svg"
    pdf = "pdf"
    tikz = "tikz"  # a standalone LaTeX picture (fraglab.export.tikz)


class ViewChoice(str, Enum):
    grid = "grid"
    lanes = "lanes"


class ColorBy(str, Enum):
    lane = "lane"
    slot = "slot"
    register = "register"


# ---- errors: one message under one head, every line within 80 columns --------------------------------------
ERROR_HEAD = "fraglab: error: "
ERROR_WIDTH = 80         # no error line is wider, whatever the terminal (a narrower one narrows them)
ERROR_INDENT = "  "      # the continuation lines of one wrapped message
MANY_CHOICES = 12        # a longer list of choices shows its first SHOWN_CHOICES and where the rest are
SHOWN_CHOICES = 8
_CHOICE_LIST = re.compile(r"(?P<lead>valid choices are|valid commands are|choose one of|one of:?) "
                          r"(?P<items>[^\s,;()]+(?:, [^\s,;()]+)+)")


def shorten_value(text: str, limit: int = ARGUMENT_LIMIT) -> str:
    """One argument as an error shows it: at most `limit` characters, a path keeping its tail (the file name),
    anything else its head."""
    return clean_path(text, limit) if is_path_like(text) else clean_text(text, limit)


def shorten_arguments(message: str, limit: int = ARGUMENT_LIMIT) -> str:
    """The message with every quoted argument, and every unquoted word (a path in "no atlas file at ..."), longer
    than `limit` cut (a 5000-character --out is not repeated)."""
    def cut(match: re.Match) -> str:
        quote, body = match.group(1), match.group(2)
        return f"{quote}{shorten_value(body, limit)}{quote}" if len(body) > limit else match.group(0)

    message = re.sub(r"""(['"])(.*?)\1""", cut, message)
    # a word over the limit by more than its quotes and punctuation (so a shortened quoted one stays whole)
    return re.sub(r"\S{%d,}" % (limit + 5), lambda m: shorten_value(m.group(0), limit), message)


def shorten_choices(message: str, see: str | None = None) -> str:
    """A list of more than MANY_CHOICES choices cut to its first SHOWN_CHOICES, saying how many more and where
    all of them are shown (`see`, a command)."""
    def cut(match: re.Match) -> str:
        items = match.group("items").split(", ")
        if len(items) <= MANY_CHOICES:
            return match.group(0)
        where = f"; see {see}" if see else ""
        shown = ", ".join(items[:SHOWN_CHOICES])
        return f"{match.group('lead')} {shown}, ... ({len(items) - SHOWN_CHOICES} more{where})"

    return _CHOICE_LIST.sub(cut, message)


def error_width() -> int:
    from ..show.terminal import output_width

    return min(ERROR_WIDTH, output_width(sys.stderr))


def error_text(message: str, see: str | None = None, width: int | None = None) -> str:
    """One error as fraglab prints it: `fraglab: error: ` and the first line of the message, control characters
    removed, long arguments and long lists of choices shortened, wrapped at word boundaries to `width` (at most
    80 columns) with the continuation lines indented. No trailing newline."""
    first = (message.splitlines() or [""])[0]
    text = clean_text(shorten_choices(shorten_arguments(first), see), limit=None)
    width = error_width() if width is None else width
    lines = textwrap.wrap(text, width=width, initial_indent=ERROR_HEAD, subsequent_indent=ERROR_INDENT,
                          break_long_words=False, break_on_hyphens=False) or [ERROR_HEAD.rstrip()]
    fitted = []
    for line in lines:  # a shortened word (<= ~70 characters) fits a continuation line; cut only on a narrow terminal
        while len(line) > width:
            fitted.append(line[:width])
            line = ERROR_INDENT + line[width:]
        fitted.append(line)
    return "\n".join(fitted)


COMPILE_LOG_HEAD = "--- NVRTC log ---"


def compile_log_text(log: str, width: int | None = None) -> str:
    """A compiler's log as fraglab prints it under a CompileError: every line kept whole (it stays greppable),
    control characters shown as '?', a line wider than `width` (at most 80 columns) wrapped at spaces (a longer
    word cut) with its continuation lines indented two more than it. No trailing newline."""
    width = error_width() if width is None else width
    lines = [clean_text(line.expandtabs(), limit=None).rstrip() for line in log.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    out = [COMPILE_LOG_HEAD]
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip())]
        indent = (lead + ERROR_INDENT)[:width // 2]   # a deeply indented line still leaves room for its text
        out += textwrap.wrap(line, width=width, subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(out)


# ---- what each option takes, from the command's signature ----------------------------------------------
def _signature_hints(command) -> dict[str, object]:
    function = getattr(command.callback, "__wrapped__", command.callback)
    if function is None:
        return {}
    try:
        return typing.get_type_hints(function)
    except Exception:  # an annotation that does not resolve: fall back to plain text for every option
        return {}


def _bare(annotation):
    """int for Optional[int], list[str] -> str, and so on."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or (sys.version_info >= (3, 10) and origin is getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _bare(args[0]) if len(args) == 1 else str
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        return _bare(args[0]) if args else str
    return annotation


def value_kind(command, param) -> tuple[str, tuple[str, ...]]:
    """('int' | 'float' | 'choice' | 'path' | 'text' | 'flag', choices) of one option or argument."""
    if getattr(param, "is_flag", False):
        return "flag", ()
    annotation = _bare(_signature_hints(command).get(param.name, str))
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return "choice", tuple(str(m.value) for m in annotation)
    if annotation is bool:
        return "flag", ()
    if annotation is int:
        return "int", ()
    if annotation is float:
        return "float", ()
    if inspect.isclass(annotation) and issubclass(annotation, Path):
        return "path", ()
    return "text", ()


METAVARS = {"int": "N", "float": "X", "path": "PATH", "text": "TEXT", "choice": "WORD"}
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


def check_raw_value(command, param, name: str, raw: str) -> None:
    """Refuse, in fraglab's words, a value the option's type cannot take, before the parser sees it
    (so `--num 4.0` is refused under every typer, never quietly taken as 4)."""
    from ..errors import InputError, check_choice

    kind, choices = value_kind(command, param)
    shown = clean_text(raw, ARGUMENT_LIMIT)
    if kind == "int" and not _INTEGER.match(raw.strip()):
        raise InputError(f"invalid {name} {shown!r}: a whole number is needed, e.g. 4", argument=name)
    if kind == "float":
        try:
            float(raw)
        except ValueError:
            raise InputError(f"invalid {name} {shown!r}: a number is needed, e.g. 0.5", argument=name) from None
    if kind == "choice":
        check_choice(raw, choices, name, shown=shown)


def _option_values(command, args: list[str]):
    """(param, the option name as typed, raw value) for every valued option in `args`."""
    by_name = {}
    for param in command.params:
        if param.param_type_name == "option" and not getattr(param, "is_flag", False) and param.opts:
            for opt in param.opts:
                by_name[opt] = param
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return
        name, eq, value = word.partition("=")
        if name in by_name:
            if eq:
                yield by_name[name], name, value
            elif i + 1 < len(args):
                i += 1
                yield by_name[name], name, args[i]
        i += 1


# ---- help in fraglab's words -----------------------------------------------------------------------------
def _help_width() -> int:
    from ..show.terminal import output_width

    return output_width(sys.stdout)


def _paragraphs(text: str) -> list[str]:
    text = inspect.cleandoc(text or "")
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def _wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_long_words=False, break_on_hyphens=False) or [""]


def _default_text(param, kind: str) -> str:
    default = param.default
    if callable(default) or default is None or (kind == "flag" and not getattr(param, "secondary_opts", None)):
        return ""
    if kind == "flag":  # a --this/--that pair: the default is one of the two flags, not a value
        return param.opts[0] if default else param.secondary_opts[0]
    if isinstance(default, Enum):
        default = default.value
    if isinstance(default, (list, tuple)):
        return ", ".join(str(d) for d in default) if default else ""
    return str(default)


def option_row(command, param) -> tuple[str, str]:
    """(the option as typed, e.g. `--num N` or `--trans / --no-trans`; its description)."""
    kind, choices = value_kind(command, param)
    help_text = " ".join((getattr(param, "help", None) or "").split())
    if param.param_type_name == "argument":
        name = param.name.upper()
        return (name if param.required else f"[{name}]"), help_text
    names = " / ".join([", ".join(param.opts), *([", ".join(param.secondary_opts)] if param.secondary_opts else [])])
    if kind != "flag":
        names += " " + METAVARS[kind]
    extra = []
    if choices and not all(re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", help_text) for c in choices):
        extra.append(f"(one of: {', '.join(choices)})")
    default = _default_text(param, kind)
    if param.required:
        extra.append("(required)")
    elif default and "default" not in help_text.lower():
        extra.append(f"(default: {default})")
    if getattr(param, "multiple", False):
        extra.append("(may be given more than once)")
    return names, " ".join([help_text, *extra]).strip()


def _rows(rows: list[tuple[str, str]], width: int) -> list[str]:
    column = min(max((len(n) for n, _ in rows), default=0), FIRST_COLUMN) + 4
    out = []
    for name, text in rows:
        if len(name) + 4 <= column:
            out += _wrap(text, width, " " * column, first=f"  {name}".ljust(column))
        else:
            out.append(f"  {name}")
            if text:
                out += _wrap(text, width, " " * column)
    return [line.rstrip() for line in out]


def _usage(command, ctx) -> str:
    pieces = ["[OPTIONS]"] if any(p.param_type_name == "option" for p in command.params) else []
    for param in command.params:
        if param.param_type_name == "argument":
            pieces.append(option_row(command, param)[0])
    if isinstance(command, typer.core.TyperGroup) or hasattr(command, "commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(["Usage:", ctx.command_path, *pieces])


def render_help(command, ctx) -> str:
    """The whole help text of a command or group, laid out for the output width."""
    width = _help_width()
    lines = _wrap(_usage(command, ctx), width, "  ", first="")
    for paragraph in _paragraphs(command.help or ""):
        lines += [""] + _wrap(paragraph, width, "  ")
    arguments = [option_row(command, p) for p in command.params if p.param_type_name == "argument"]
    if arguments:
        lines += ["", "Arguments:"] + _rows(arguments, width)
    options = [option_row(command, p) for p in command.params
               if p.param_type_name == "option" and not getattr(p, "hidden", False)]
    options.append(("--help", "Show this message and exit."))
    lines += ["", "Options:"] + _rows(options, width)
    subcommands = getattr(command, "commands", None)
    if subcommands:
        rows = []
        for name in command.list_commands(ctx):
            sub = subcommands[name]
            if getattr(sub, "hidden", False):
                continue
            rows.append((name, (_paragraphs(sub.help or "") or [""])[0]))
        lines += ["", "Commands:"] + _rows(rows, width)
    return "\n".join(lines) + "\n"


def usage_error_text(exc, ctx=None) -> str:
    """A parser error (unknown option, missing value, bad value) in fraglab's words, as error_text lays it out."""
    kind = type(exc).__name__
    ctx = getattr(exc, "ctx", None) or ctx
    where = ctx.command_path if ctx is not None else "fraglab"

    def one_error(message: str) -> str:  # a parser error's choices are all in the command's --help
        return error_text(message, see=f"{where} --help")

    param = getattr(exc, "param", None)
    name = None
    if param is not None:
        name = (param.opts[0] if param.param_type_name == "option" and param.opts else param.name.upper())
    if kind == "NoSuchOption":
        option = getattr(exc, "option_name", "") or ""
        close = getattr(exc, "possibilities", None) or []
        hint = f"; did you mean {', '.join(sorted(close))}?" if close else ""
        return one_error(f"unknown option {option!r} for {where}{hint} (see {where} --help)")
    if kind == "MissingParameter" and name is not None:
        kind_, choices = value_kind(ctx.command, param) if ctx is not None else ("text", ())
        what = f": one of {', '.join(choices)}" if choices else ""
        return one_error(f"missing {name}{what} (see {where} --help)")
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    found = re.match(r"Option '?([^' ]+)'? requires an argument", message)
    if found:
        return one_error(f"{found.group(1)} needs a value (see {where} --help)")
    found = re.match(r"No such command '(.*)'", message)
    if found:
        known = ", ".join(ctx.command.list_commands(ctx)) if ctx is not None else ""
        return one_error(f"unknown command {found.group(1)!r}: valid commands are {known}")
    found = re.match(r"Got unexpected extra arguments?(?:\(s\))? \((.*)\)", message)
    if found:
        return one_error(f"unexpected argument {found.group(1)!r} for {where} (see {where} --help)")
    if name is not None:
        return one_error(f"invalid value for {name} (see {where} --help)")
    return one_error(f"{message.rstrip('.')} (see {where} --help)")


class FraglabCommand(TyperCommand):
    """A command whose help and raw-value checks are fraglab's own (see the module's docstring)."""

    def format_help(self, ctx, formatter) -> None:
        formatter.write(render_help(self, ctx))

    def parse_args(self, ctx, args):
        try:
            for param, name, raw in _option_values(self, list(args)):
                check_raw_value(self, param, name, raw)
            return super().parse_args(ctx, args)
        except _UsageError as exc:  # the parser's own errors may name the root context: name this command
            exc.ctx = ctx
            raise
        except FraglabError as exc:
            _for_this_command(exc, self, ctx)
            raise

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except FraglabError as exc:
            _for_this_command(exc, self, ctx)
            raise


def _for_this_command(exc, command, ctx) -> None:
    """What the library could not know about its error: the option of this command it is about, when the message
    does not name it ("no atlas file at x" becomes "invalid --atlas: no atlas file at x"), and where a shortened
    list of choices sends the reader (this command's --help), unless the error names a better place itself."""
    if getattr(exc, "see", None) is None:
        exc.see = f"{ctx.command_path} --help"
    argument = getattr(exc, "argument", None)
    if not argument or exc.exit_code != BAD_INPUT or len(exc.args) != 1 or not isinstance(exc.args[0], str):
        return
    option = "--" + argument.lstrip("-").replace("_", "-")
    offered = {name for p in command.params if p.param_type_name == "option" for name in p.opts}
    if option in offered and not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", exc.args[0]):
        exc.args = (f"invalid {option}: {exc.args[0]}",)


class FraglabGroup(TyperGroup):
    """A command group with fraglab's help (the root's group in cli/main.py adds the error handling)."""

    def format_help(self, ctx, formatter) -> None:
        formatter.write(render_help(self, ctx))


def use_fraglab_help(app: typer.Typer) -> None:
    """Give every command and group registered on `app` (and on its sub-apps) fraglab's help and checks,
    unless its module asked for a class of its own."""
    from typer.models import DefaultPlaceholder

    def unset(value) -> bool:  # typer's own default classes count as "not asked for"
        if isinstance(value, DefaultPlaceholder):
            value = value.value
        return value is None or value in (TyperCommand, TyperGroup)

    for info in app.registered_commands:
        if unset(info.cls):
            info.cls = FraglabCommand
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        if unset(group.cls) and unset(sub.info.cls):
            sub.info.cls = FraglabGroup
        use_fraglab_help(sub)
