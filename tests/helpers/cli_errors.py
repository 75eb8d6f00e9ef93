"""How a test reads fraglab's error: one message under one `fraglab: error: ` head, wrapped at word boundaries
within 80 columns, its continuation lines indented by two spaces; no traceback, nothing else printed."""

from __future__ import annotations

HEAD = "fraglab: error: "
WIDTH = 80


def error_message(output: str, width: int = WIDTH) -> str:
    """The one error message in `output` (asserting its shape), unwrapped into one line."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines and lines[0].startswith(HEAD), output
    assert "Traceback" not in output, output
    for line in lines[1:]:  # a continuation of the same message, never a second one
        assert line.startswith("  ") and not line.startswith("   ") and HEAD not in line, output
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    return " ".join([lines[0], *(line.strip() for line in lines[1:])])
