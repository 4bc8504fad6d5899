"""The ``ra`` command line: a typer app whose commands live one group per module.

Commands are thin: parse options, call the library, render with ``ra.query.render`` and
print through ``ra.cli.output``. Errors from the library (``ra.errors.RaError``) are
translated here, at the border, into a message on stderr and an exit code — never a
traceback. Heavy modules (duckdb, pyarrow,
mistletoe, tiktoken, mcp) are imported inside the commands that need them, so ``ra
--help`` and ``ra search`` start quickly. Help is click's plain formatting
(``rich_markup_mode=None``): rich's renderer costs more to import than the rest of
``ra --help`` together.
"""

from __future__ import annotations

import functools
import os
import re
import sys

import typer

from ra import __version__
from ra.cli.groups import HintingGroup

#: What other tools call a command of ra's, for the error on an unknown command: click
#: suggests only names spelled alike, and `ra index` is what a new user types first.
SYNONYMS = {
    "index": "update", "build": "update", "reindex": "update", "rebuild": "update",
    "refresh": "update", "find": "search", "query": "search", "grep": "search",
    "list": "ls", "show": "get", "cat": "get", "serve": "mcp", "server": "mcp",
    "info": "status", "doctor": "check", "validate": "check", "similar": "likethis",
}


class _Group(HintingGroup):
    """ra's command group: an unknown command that another tool's name for one of ra's
    (``SYNONYMS``) says which."""

    def hint(self, name: str) -> str | None:
        meant = SYNONYMS.get(name.lower())
        return f"{meant!r}" if meant else None


app = typer.Typer(
    cls=_Group,
    name="ra",
    help="ra — research assistant: search your markdown knowledge base.\n\n"
         "Example: ra search \"error handling\"",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ra {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version,
                                       is_eager=True, help="Show the version and exit.")
          ) -> None:
    """ra — research assistant: search your markdown knowledge base."""


def _register() -> None:
    from ra.cli import agents_cmd, index_cmd, inspect_cmd, mcp_cmd, search_cmd, sql_cmd

    search_cmd.register(app)
    index_cmd.register(app)
    inspect_cmd.register(app)
    mcp_cmd.register(app)
    agents_cmd.register(app)
    __import__("ra.cli.context_cmd", fromlist=["register"]).register(app)
    sql_cmd.register(app)
    __import__("ra.cli.daemon_cmd", fromlist=["register"]).register(app)


_register()


@functools.cache
def command():
    """The click command of ``app``, built once a process. Typer builds it on every call
    from each command's signature and type hints (``app(...)``): 6 ms of every command the
    daemon answered, twice what a warm search takes (cpp-docs, ``ra search --list`` of 100
    agent queries in the daemon: p50 11.1 ms)."""
    return typer.main.get_command(app)


#: The end of a DuckDB error raised by Python code it called back that Ctrl-C interrupted:
#: "… failed: KeyboardInterrupt", or the traceback it quotes ("…\nKeyboardInterrupt\n")
_PYTHON_INTERRUPT = re.compile(r"(?:^|[:\s])KeyboardInterrupt\s*$")


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C that DuckDB turned into an error of its own: in a query
    it raises ``RuntimeError("Query interrupted")``; in the Python code it calls back (a
    registered relation's schema or stream read) the ``KeyboardInterrupt`` becomes the end
    of its message ("… reading the schema of the object registered as 'terms' failed:
    KeyboardInterrupt", or the traceback it quotes), which ``ra update`` printed as an
    internal error (exit 70) once in some twenty Ctrl-C's."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return True
        if isinstance(exc, RuntimeError) and str(exc) == "Query interrupted":
            return True
        if type(exc).__module__.startswith(("duckdb", "_duckdb")) and _PYTHON_INTERRUPT.search(
                str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def main(argv: list[str] | None = None, prog_name: str | None = None) -> int:
    """Run the app, turning ra's errors into messages; the exit code."""
    from ra.errors import DISK_FULL, WRITE_REFUSED, RaError

    try:
        command()(args=argv, prog_name=prog_name, standalone_mode=True)
    except RaError as exc:
        from ra.cli.output import error

        error(exc)
        return exc.exit_code
    except SystemExit as exc:  # typer exits through SystemExit
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, not a user error: one line, traceback on request
        if interrupted(exc):
            return 130
        if os.environ.get("RA_DEBUG"):
            raise
        from ra.cli.output import error

        # the machine's, not ra's (the index's own writes say more: generations.write_problem)
        if isinstance(exc, OSError) and exc.errno in (*DISK_FULL, *WRITE_REFUSED):
            error(RuntimeError(f"{exc.strerror}: {exc.filename}" if exc.filename
                               else str(exc)))
            return 1
        error(RuntimeError(f"internal error: {type(exc).__name__}: {exc} "
                           "(run with RA_DEBUG=1 for a traceback)"))
        return 70
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
