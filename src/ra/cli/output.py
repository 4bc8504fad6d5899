"""Printing for the command line: colour on a terminal only (never with ``NO_COLOR``),
status and warnings on stderr so stdout stays parseable. What results look like is
``ra.query.render``'s business, shared with the MCP server.
"""

from __future__ import annotations

import os
import sys

from ra.query.render import style


def use_color(stream=None) -> bool:
    """Colour only on a terminal, never with NO_COLOR set."""
    stream = stream or sys.stdout
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def echo(text: str = "", *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")


def warn(message: str) -> None:
    echo(style("warning: ", "33", use_color(sys.stderr)) + message, err=True)


def note(message: str) -> None:
    echo(message, err=True)


def error(exc: BaseException) -> None:
    """An error message (``ra.errors.message``), the label red on a terminal."""
    from ra.errors import message

    echo(message(exc, style("error: ", "31", use_color(sys.stderr))), err=True)
