"""One error family for everything a user can cause or meet; the CLI maps each to one line and an exit code.

exit_code 2 = bad input (what, which argument, the valid choices); 1 = a check failed or the machine refused.
"""

from __future__ import annotations


class FraglabError(Exception):
    """Base of every error fraglab reports to a person; `argument` names the culprit option when there is one, and
    `see` the command that shows all its valid choices (the CLI points there when it shortens a long list)."""

    exit_code = 2

    def __init__(self, message: str, *, argument: str | None = None, exit_code: int | None = None,
                 see: str | None = None):
        super().__init__(message)
        self.argument = argument
        self.see = see
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(FraglabError, ValueError):
    """A bad argument or a combination of valid choices that makes no sense together (also a ValueError)."""

    exit_code = 2


def check_choice(value, valid, argument: str, *, name: str | None = None, shown: str | None = None):
    """`value` if it is one of `valid`, else the one InputError for a value outside its choices, naming the argument
    (as `name` shows it, e.g. "--api"; default `argument`) and every valid choice. `shown`: the value as the message
    quotes it (a cleaned copy of an untrusted string)."""
    if value not in valid:
        quoted = value if shown is None else shown
        raise InputError(f"invalid {name or argument} {quoted!r}: valid choices are {', '.join(map(str, valid))}",
                         argument=argument)
    return value


class CheckFailed(FraglabError):
    """A comparison (verify, a GEMM check) found a difference."""

    exit_code = 1


class GpuUnavailable(FraglabError):
    """No usable GPU: CuPy missing, no driver, no device, or a device too old for the request."""

    exit_code = 1


class CompileError(FraglabError):
    """NVRTC refused a kernel; `log` holds the compiler's output."""

    exit_code = 1

    def __init__(self, message: str, log: str = "", **kwargs):
        super().__init__(message, **kwargs)
        self.log = log


class ProbeError(FraglabError):
    """A probe's output does not decode into a consistent slot map (or the GPU refused the probe)."""

    exit_code = 1


class ProbeUnsupported(ProbeError):
    """The present GPU cannot run this fragment (too old an architecture)."""


class AtlasError(FraglabError, ValueError):
    """A file that is not a usable atlas, or an atlas without the asked-for layout."""

    exit_code = 2


class LayoutFormatError(FraglabError, ValueError):
    """A JSON/CSV layout document that does not follow the format."""

    exit_code = 2


__all__ = ["FraglabError", "InputError", "CheckFailed", "GpuUnavailable", "CompileError", "ProbeError",
           "ProbeUnsupported", "AtlasError", "LayoutFormatError", "check_choice"]
