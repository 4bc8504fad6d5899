"""Freshness: is the published index the index of the files as they are now?

Every reading command calls ``open_index``, which compares the current files' fingerprints
(size, mtime_ns) and the configuration hash with the manifest of the current generation,
rebuilds when they differ, and returns a reader pinned to an up-to-date generation. A
second process that finds a rebuild under way waits for the writer lock, then re-checks
and reuses the fresh generation instead of building it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field

from ra import generations
from ra.errors import IndexStateError
from ra.layout import SCHEMA_VERSION
from ra.pipeline.discover import discover, walk_tree


@dataclass
class IndexState:
    """How the published index relates to the files and configuration."""

    state: str  # current | stale | config-changed | missing | damaged
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed)

    def describe(self) -> str:
        if self.state == "stale":
            return f"stale ({self.changed} file{'s' * (self.changed != 1)} changed)"
        if self.state == "config-changed":
            return "stale (config changed)"
        return self.state + (f" ({self.detail})" if self.detail else "")


def config_hash(config) -> str:
    """Hash of everything that shapes the index: schema, analyzer and configuration.

    It lives here, not with the index writer, so that checking freshness imports
    nothing heavy (the writer needs pyarrow)."""
    from ra.analysis import ANALYZER_VERSION

    shape = {"schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION,
             "config": config.config_hash()}
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


def fingerprints(config) -> dict[str, list[int]]:
    """``tree:path → [size, mtime_ns]`` of the files the configuration selects now.

    Only ``stat``s files: binary files are included here and matched against the
    manifest's record of skipped binaries, so no file is opened to check freshness. The
    walk is discover's (``walk_tree``); a test holds the two to the same files.
    """
    out: dict[str, list[int]] = {}
    for tree in config.trees:
        for rel, abspath in walk_tree(tree.path):
            if not tree.matches(rel):
                continue
            try:
                st = os.stat(abspath)  # follows a file symlink, as discover does
            except OSError:
                continue  # unreadable: discover skips it too
            if stat.S_ISREG(st.st_mode):
                out[f"{tree.name}:{rel}"] = [st.st_size, st.st_mtime_ns]
    return out


def diff(manifest_files: dict, current: dict) -> tuple[list[str], list[str], list[str]]:
    """``(added, modified, removed)`` keys between a manifest and the files now."""
    added = sorted(k for k in current if k not in manifest_files)
    removed = sorted(k for k in manifest_files if k not in current)
    modified = sorted(k for k, fp in current.items()
                      if k in manifest_files and list(manifest_files[k]) != list(fp))
    return added, modified, removed


def check_state(config) -> IndexState:
    """Compare the current generation with the files and configuration."""
    index_dir = config.index_dir
    if index_dir is None:
        return IndexState("missing", detail="no configuration")
    try:
        gen = generations.open_current(index_dir)
    except IndexStateError as exc:
        return IndexState("damaged", detail=str(exc))
    if gen is None:
        return IndexState("missing")
    try:
        return _state_of(config, gen.manifest)
    finally:
        gen.close()


def _state_of(config, manifest: dict) -> IndexState:
    if manifest.get("config_hash") != config_hash(config):
        return IndexState("config-changed")
    known = {**manifest.get("files", {}), **manifest.get("binary", {})}
    added, modified, removed = diff(known, fingerprints(config))
    if added or modified or removed:
        return IndexState("stale", added, modified, removed)
    return IndexState("current")


def open_index(config, *, refresh: bool = True, progress=None):
    """A reader of an up-to-date index, plus a status line when it had to be updated."""
    from ra.query.index import IndexReader

    if config.index_dir is None:
        raise IndexStateError("no configuration found: run `ra init` to create .ra.toml, "
                              "then add a [tree.NAME] with a path")
    status = None
    if refresh:
        reader = _current_reader(config)
        if reader is not None:
            return reader, None
        status = refresh_index(config, progress=progress)
    try:
        reader = IndexReader.open(config.index_dir)
    except IndexStateError:
        if not refresh:
            raise
        status = refresh_index(config, progress=progress, force=True)
        reader = IndexReader.open(config.index_dir)
    if reader is None:
        raise IndexStateError("no index yet: run `ra update`")
    return reader, status


def _current_reader(config):
    """A reader of the published generation when it is up to date, else None: the
    generation is pinned once and its manifest read once for the check and the reader."""
    from ra.query.index import IndexReader

    try:
        gen = generations.open_current(config.index_dir)
    except IndexStateError:
        return None
    if gen is None:
        return None
    if _state_of(config, gen.manifest).state != "current":
        gen.close()
        return None
    try:
        return IndexReader(gen)
    except IndexStateError:  # damaged: IndexReader released the pin; refresh rebuilds
        return None


def refresh_index(config, *, progress=None, force: bool = False) -> str | None:
    """Bring the index up to date; returns what was done, or None when it was current.

    Changed files are re-indexed incrementally (``ra.pipeline.update``); a changed
    configuration, a missing or damaged index, or ``force`` rebuild everything.
    """
    if check_state(config).state == "current" and not force:
        return None
    from ra.pipeline.run import build  # the writer needs pyarrow: import it only to write

    with generations.writer_lock(config.index_dir):
        state = check_state(config)  # again: another process may have done it meanwhile
        if state.state == "current" and not force:
            return None
        if state.state == "stale" and not force:
            report = _incremental(config, state)
        else:
            report = build(config, progress=progress, locked=True)
    return _status_line(state, report)


def _incremental(config, state: IndexState):
    """Re-index only the changed files into a new generation (writer lock held)."""
    from ra.pipeline.run import publish_with
    from ra.pipeline.update import update_into

    prev = config.index_dir / generations.current_name(config.index_dir)
    manifest = generations.read_manifest(prev)  # no pin: the writer lock protects it
    found = discover(config.trees)
    return publish_with(config.index_dir, lambda out: update_into(
        out, prev, manifest, config, found, state.added, state.modified, state.removed))


def _status_line(state: IndexState, report) -> str:
    if state.state == "stale":
        what = f"indexed {state.changed} changed file{'s' * (state.changed != 1)}"
        if state.removed:
            what += f" ({len(state.removed)} removed)"
    elif state.state == "config-changed":
        what = "configuration changed: rebuilt the index"
    elif state.state == "damaged":
        what = f"index was damaged ({state.detail}): rebuilt it"
    else:
        what = "built the index"
    return f"{what} ({report.files} files, {report.chunks} chunks, {report.seconds:.1f}s)"
