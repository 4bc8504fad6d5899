"""Shared fixtures: the conformance cases, the corpora, and an isolated home directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPORA = SHARED / "corpora"


#: A small markdown document the CLI and MCP tests share.
GUIDE = """---
title: Getting Started
tags: [intro, setup]
---

Welcome to the guide.

# Installation

Install with pip. Error handling is described below.

## Error handling

Use Result types for error handling in Rust.

## Logging

Configure logging conventions here.

# Usage

Run the tool.
"""


def partitioned_book(root: Path, monkeypatch, chapters: int = 24) -> Path:
    """A knowledge base at ``root``: the first ``chapters`` chapters of the Rust book,
    indexed four files to a partition (builds and updates alike), so that a few dozen
    files make several partitions."""
    import shutil

    from ra.config.settings import load_config
    from ra.index.freshness import refresh_index
    from ra.pipeline import run, update

    monkeypatch.setattr(run, "PART_FILES", 4)
    monkeypatch.setattr(update, "PART_FILES", 4)
    (root / "docs").mkdir(parents=True)
    found = sorted((CORPORA / "rust-book" / "src").glob("ch*.md"))[:chapters]
    assert len(found) == chapters
    for path in found:
        shutil.copy(path, root / "docs" / path.name)
    (root / ".ra.toml").write_text('[tree.book]\npath = "docs"\n')
    refresh_index(load_config(root))
    return root


@contextmanager
def searcher_over(root: Path, home: Path) -> Iterator:
    """A ``Searcher`` over the knowledge base configured at ``root`` (built first), with
    ``home`` as HOME; its reader is closed after use."""
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = load_config(root, home=home)
        reader, _ = open_index(config)
    try:
        yield Searcher(reader, config)
    finally:
        reader.close()


def doc_ids(searcher, query: str, complete: bool = False, **options) -> list[str]:
    """The documents of ``query``'s results, best first (each result's id up to its
    ``#``): up to 20 results, no elbow cutoff, unless ``options`` say otherwise;
    ``complete``: only those holding every word (not the ones ``[search] fill`` adds)."""
    from ra.query.search import SearchOptions

    opts = SearchOptions(**{"limit": 20, "cutoff_ratio": 0.0, **options})
    return [r.id.split("#")[0] for r in searcher.search([query], opts).queries[0].results
            if not (complete and r.partial)]


@contextmanager
def kb_searcher(tmp_path_factory, name: str, docs: dict[str, str], settings: str = ""
                ) -> Iterator:
    """A ``Searcher`` (``searcher_over``) over a tree ``kb`` of ``docs`` (file name → text),
    with ``settings`` (TOML) before the tree's table."""
    with searcher_over(*kb_folder(tmp_path_factory, name, docs, settings)) as searcher:
        yield searcher


def kb_folder(tmp_path_factory, name: str, docs: dict[str, str], settings: str = ""
              ) -> tuple[Path, Path]:
    """``(root, home)``: a project whose tree ``kb`` holds ``docs`` (path → text),
    with ``settings`` (TOML) before the tree's table, and an empty home."""
    root, home = tmp_path_factory.mktemp(name), tmp_path_factory.mktemp(f"{name}-home")
    (root / "kb").mkdir()
    for file, text in docs.items():
        (root / "kb" / file).parent.mkdir(parents=True, exist_ok=True)
        (root / "kb" / file).write_text(text)
    (root / ".ra.toml").write_text(f'{settings}[tree.kb]\npath = "./kb"\n')
    return root, home


@contextmanager
def short_and_held(root: Path, home: Path) -> Iterator:
    """``(short, held, config)``: a short-lived reader of the knowledge base configured at
    ``root`` (built first, with ``home`` as HOME) and a long-lived one of the same
    generation (``keep_vocabulary``: what the daemon and the MCP server hold); both are
    closed after use."""
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.index.reader import IndexReader

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = load_config(root, home=home)
        short, _ = open_index(config)
    held = IndexReader.open(config.index_dir, keep_vocabulary=True)  # as WarmIndex opens it
    try:
        assert held.generation.path == short.generation.path
        yield short, held, config
    finally:
        held.close()
        short.close()


def conformance(category: str) -> dict:
    """One category of ``../shared/conformance/upstream-cases.json``."""
    data = json.loads((SHARED / "conformance" / "upstream-cases.json").read_text())
    return data[category]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own empty HOME, so ~/.ra.toml of the developer never leaks in."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    # a `ra search` process must not leave a daemon behind: tests/test_autostart.py
    # starts them on purpose, and stops them
    monkeypatch.setenv("RA_DAEMON_AUTOSTART", "0")
    return home


def running_daemons(folder: Path) -> dict[Path, int]:
    """Daemons alive with a HOME one or two levels under ``folder`` (a test's home, or a
    home inside a test's folder): their lock files, each with the pid written in it. A
    daemon holds ``~/.ra/run/daemon.lock`` from its start to its very end."""
    import fcntl
    import os

    alive = {}
    for lock in [*folder.glob("*/.ra/run/daemon.lock"), *folder.glob("*/*/.ra/run/daemon.lock")]:
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            alive[lock] = int(lock.read_text().strip() or 0)
        finally:
            os.close(fd)
    return alive


@pytest.fixture(scope="session", autouse=True)
def no_daemon_left_behind(tmp_path_factory) -> Iterator[None]:
    """After the last test, no ``ra daemon`` of a test still runs: a test that leaves one
    is a test whose daemons would pile up on a developer's machine. The leftovers are
    stopped, and the session fails."""
    import os
    import signal
    import time

    yield
    base = tmp_path_factory.getbasetemp()
    deadline = time.monotonic() + 15  # a daemon told to stop closes its indexes first
    while (left := running_daemons(base)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left.values():
        if pid > 0:
            os.kill(pid, signal.SIGTERM)
    assert not left, f"ra daemons left running: {left}"


# --- the semantic marker: deselected where the extra is not run, and said so -------------------

_deselected_semantic: list[str] = []


def pytest_deselected(items) -> None:
    _deselected_semantic.extend(i.nodeid for i in items if "semantic" in i.keywords)


def pytest_terminal_summary(terminalreporter) -> None:
    if _deselected_semantic:
        terminalreporter.write_line(
            f"{len(_deselected_semantic)} tests marked 'semantic' deselected: they run the "
            "real embedding models (the semantic extras); `make test-semantic` installs "
            "and runs them")
