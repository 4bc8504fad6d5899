"""One error family for the whole library.

The library raises these and never prints or exits; the CLI and the MCP server translate
them at their border into a message plus an exit code, or a tool error.
"""

from __future__ import annotations

import errno

#: What a write can meet that is no fault of ra's: a full disk or quota, and a folder
#: that is read-only or not the user's. Said as such, never as an internal error.
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
WRITE_REFUSED = (errno.EROFS, errno.EACCES, errno.EPERM)


class RaError(Exception):
    """Base of every error ra reports to a user."""

    exit_code = 1


class ConfigError(RaError):
    """A configuration file is broken: names the file, and the key and line when known."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 line: int | None = None) -> None:
        self.message, self.file, self.key, self.line = message, file, key, line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file or "configuration"
        if self.line is not None:
            where += f":{self.line}"
        key = f" [{self.key}]" if self.key else ""
        return f"{where}{key}: {self.message}"


class QueryError(RaError):
    """A query cannot be parsed or run; ``position`` is a character offset when known."""

    exit_code = 2

    def __init__(self, message: str, *, query: str = "", position: int | None = None,
                 hint: str | None = None, syntax: bool = True) -> None:
        self.message, self.query, self.position = message, query, position
        self.hint, self.syntax = hint, syntax
        super().__init__(message)

    def __str__(self) -> str:
        return self.display()

    def display(self) -> str:
        """The message, the query with a caret under the position, and a hint."""
        kind = "query syntax error" if self.syntax else "query error"
        lines = [f"{kind}: {self.message}"]
        if self.query and self.position is not None:
            lines += [f"  {self.query}", "  " + " " * self.position + "^"]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class IndexStateError(RaError):
    """The index is missing, damaged or cannot be built."""


class NotFoundError(RaError):
    """An id, file or tree does not exist; carries suggestions when there are some."""

    def __init__(self, message: str, *, suggestions: list[str] | None = None) -> None:
        self.suggestions = suggestions or []
        super().__init__(message)


def message(exc: BaseException, label: str = "error: ") -> str:
    """The text a user sees for ``exc``, the same in the CLI and the MCP server: a query
    error with its caret display, an unknown id with the nearest ids."""
    if isinstance(exc, QueryError):
        return exc.display()
    lines = [f"{label}{exc}"]
    if isinstance(exc, RaError) and (suggestions := getattr(exc, "suggestions", None)):
        lines += ["did you mean:"] + [f"  {s}" for s in suggestions]
    return "\n".join(lines)
