"""Pieces every command shares: loading configuration, opening a fresh index, writing."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from ra.cli import output

#: ``--max-tokens`` of search, context and likethis (``ra.query.rank.fit_parts``).
BUDGET_HELP = ("Token budget over all results (cl100k; default [search] max_tokens, 4000; "
               "0: none); a page larger than it is given as its best matching section.")


def budget(given: int | None, config) -> int | None:
    """The token budget of a search, context or likethis command: ``--max-tokens`` if
    given, else ``[search] max_tokens``; 0 is none."""
    chosen = config.search.max_tokens if given is None else given
    return chosen or None


def load(cwd: Path | None = None):
    """The effective configuration, its warnings printed once on stderr."""
    from ra.config.settings import load_config

    config = load_config(cwd or Path.cwd())
    for w in config.warnings:
        output.warn(str(w))
    return config


#: Set by a long-lived process (``ra.serve.daemon``): a function ``config -> (reader, status)``
#: lending an up-to-date reader that it keeps open across commands.
lender = None


@contextlib.contextmanager
def open_reader(config, *, refresh: bool = True, semantic: bool = False) -> Iterator:
    """A reader of an up-to-date index; says on stderr what freshness had to do. With
    ``semantic``, vectors that a few changed files lack are embedded first
    (``ra.index.embedding.catch_up``; a daemon embeds in the background instead)."""
    if lender is not None and refresh:
        reader, status = lender(config)
        if status:
            output.note(status)
        yield reader
        return
    from ra.index.freshness import open_index

    reader, status = open_index(config, refresh=refresh, progress=progress_bar())
    if status:
        output.note(status)
    if semantic and refresh:
        from ra.index.embedding import catch_up

        reader = catch_up(config, reader, progress_bar("embedding", "chunks"))
    try:
        yield reader
    finally:
        reader.close()


def progress_bar(label: str = "indexing", unit: str = "files"):
    """A progress callback drawing on stderr, or None when stderr is not a terminal."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None

    def draw(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / max(total, 1))
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{total} {unit}")
        if done >= total:
            sys.stderr.write("\r" + " " * (width + 40) + "\r")
        sys.stderr.flush()

    return draw


def write_output(text: str) -> None:
    sys.stdout.write(text)


def write_file(path: Path, text: str) -> None:
    """Write a user's file (``.ra.toml``, AGENTS.md) whole or not at all: into a new file
    beside it, then renamed over it, so a command killed half-way leaves the old file as
    it was. A symlink is written through (CLAUDE.md -> AGENTS.md stays a link), and an
    existing file keeps its permissions."""
    import os
    import tempfile

    target = path.resolve() if path.is_symlink() else path
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:  # a read-only folder: said of the file asked for, not the new one
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:  # a new file: as open() would make it
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
