"""Freshness: is the published index the index of the files as they are now?

Every reading command calls ``open_index``, which compares the current files' fingerprints
(size, mtime_ns) and the configuration hash with the current generation, rebuilds when
they differ, and returns a reader pinned to an up-to-date generation. A second process
that finds a rebuild under way waits for the writer lock, then re-checks and reuses the
fresh generation instead of building it again.

The check is one stat walk of the trees (``ra.pipeline.discover.scan``) and, when nothing
changed, one comparison: the manifest holds a digest of every file's fingerprint, so the
per-file record (``fingerprints.json``) is read only to name what changed. A stale state
carries its walk and that record to the update, which then walks nothing again and
opens only the changed files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from ra import generations
from ra.errors import IndexStateError
from ra.layout import SCHEMA_VERSION
from ra.pipeline.discover import Scan, scan


@dataclass
class IndexState:
    """How the published index relates to the files and configuration."""

    state: str  # current | stale | config-changed | missing | damaged
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    detail: str = ""
    # A stale state also keeps the walk it compared and the generation it compared it
    # with, so that the update that follows does not walk again.
    scan: Scan | None = field(default=None, repr=False, compare=False)
    record: generations.FileRecord | None = field(default=None, repr=False, compare=False)
    generation: str | None = field(default=None, compare=False)

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


def fingerprints(config) -> dict[str, tuple[int, int]]:
    """``tree:path → (size, mtime_ns)`` of the files the configuration selects now.

    Only ``stat``s files: binary files are included here and matched against the
    manifest's record of skipped binaries, so no file is opened to check freshness. The
    walk is discover's (``scan_tree``); a test holds the two to the same files.
    """
    return scan(config.trees).files


def diff(manifest_files: dict, current: dict) -> tuple[list[str], list[str], list[str]]:
    """``(added, modified, removed)`` keys between a manifest and the files now."""
    added = sorted(current.keys() - manifest_files.keys())
    removed = sorted(manifest_files.keys() - current.keys())
    modified = sorted(k for k, fp in current.items()
                      if (old := manifest_files.get(k, fp)) != fp and list(old) != list(fp))
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
        return _state_of(config, gen)
    finally:
        gen.close()


def _state_of(config, gen: generations.Generation) -> IndexState:
    """The state of pinned generation ``gen``. One stat walk; when its digest equals the
    manifest's, nothing changed and the per-file fingerprints are never read."""
    manifest = gen.manifest
    if manifest.get("config_hash") != config_hash(config):
        return IndexState("config-changed")
    now = scan(config.trees)
    if manifest.get("fingerprint") == now.digest():
        return IndexState("current")
    try:
        record = generations.read_fingerprints(gen.path)
    except IndexStateError as exc:
        return IndexState("damaged", detail=str(exc))
    added, modified, removed = diff({**record.files, **record.binary}, now.files)
    if added or modified or removed:
        return IndexState("stale", added, modified, removed, scan=now, record=record,
                          generation=gen.path.name)
    return IndexState("current")


def open_index(config, *, refresh: bool = True, progress=None):
    """A reader of an up-to-date index, plus a status line when it had to be updated."""
    from ra.query.index import IndexReader

    if config.index_dir is None:
        raise IndexStateError("no configuration found: run `ra init` to create .ra.toml, "
                              "then add a [tree.NAME] with a path")
    status = None
    if refresh:
        reader, state = _current_reader(config)
        if reader is not None:
            return reader, None
        status = _refresh(config, state, progress=progress)
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
    """``(reader, None)`` of the published generation when it is up to date, else
    ``(None, state)``: the generation is pinned once, and its manifest read once for
    the check and the reader."""
    from ra.query.index import IndexReader

    try:
        gen = generations.open_current(config.index_dir)
    except IndexStateError as exc:
        return None, IndexState("damaged", detail=str(exc))
    if gen is None:
        return None, IndexState("missing")
    state = _state_of(config, gen)
    if state.state != "current":
        gen.close()
        return None, state
    try:
        return IndexReader(gen), None
    except IndexStateError as exc:  # damaged: IndexReader released the pin; refresh rebuilds
        return None, IndexState("damaged", detail=str(exc))


def refresh_index(config, *, progress=None, force: bool = False, tidy: bool = True
                  ) -> str | None:
    """Bring the index up to date; returns what was done, or None when it was current.

    Changed files are re-indexed incrementally (``ra.pipeline.update``); a changed
    configuration, a missing or damaged index, or ``force`` rebuild everything. Without
    ``tidy`` an incremental update leaves the generation it replaced for the caller to
    remove (``ra.generations.collect_garbage``; the next update does it anyway).
    """
    state = check_state(config)
    if state.state == "current" and not force:
        return None
    return _refresh(config, state, progress=progress, force=force, tidy=tidy)


def _refresh(config, state: IndexState, *, progress=None, force: bool = False,
             tidy: bool = True) -> str | None:
    """Act on ``state``, found without the writer lock. Under the lock it still holds
    when no other writer published since (the same generation is current): its walk is
    then a snapshot of the files taken after that generation, and is not repeated."""
    from ra.pipeline.run import build  # the writer needs pyarrow: import it only to write

    with generations.writer_lock(config.index_dir):
        if force or state.generation is None or (
                generations.current_name(config.index_dir) != state.generation):
            state = check_state(config)  # another process may have done it meanwhile
        if state.state == "current" and not force:
            return None
        if state.state == "stale" and not force:
            report = _incremental(config, state, tidy)
        else:
            report = build(config, progress=progress, locked=True)
    return _status_line(state, report)


def _incremental(config, state: IndexState, tidy: bool = True):
    """Re-index only the changed files into a new generation (writer lock held)."""
    from ra.pipeline.run import publish_with
    from ra.pipeline.update import changes_since, update_into

    prev = config.index_dir / state.generation  # no pin: the writer lock protects it
    changes = changes_since(state.record, config.trees, state.scan, state.added,
                            state.modified, state.removed)
    return publish_with(config.index_dir,
                        lambda out: update_into(out, prev, config, changes), tidy=tidy)


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
