"""Freshness: is the published index the index of the files as they are now?

Every reading command calls ``open_index``, which compares the current files' fingerprints
(size, mtime_ns, ctime_ns: a restored mtime does not restore the ctime) and the
configuration hash with the current generation, rebuilds when they differ, and returns a
reader pinned to an up-to-date generation. A second process
that finds a rebuild under way waits for the writer lock, then re-checks and reuses the
fresh generation instead of building it again.

The check is one stat walk of the trees (``ra.pipeline.discover.scan``) and, when nothing
changed, one comparison: the manifest holds a digest of every file's fingerprint, so the
per-file record (``fingerprints.json``) is read only to name what changed. A stale state
carries its walk and that record to the update, which then walks nothing again and
opens only the changed files.

A process that watches the trees with inotify (``ra.index.warm``) knows more: the files were
those of a generation it checked, and since then only the files its events named may
have changed. ``refresh_watched`` takes that as a ``Hint`` and stats only those files
instead of walking (about 90 ms on 10,000 files, on the path of the next answer). A hint
is used only for the generation it was made for, and never when that generation
recorded unreadable entries (a walk's finding that the hint cannot reproduce).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from stat import S_ISREG

from ra.errors import IndexStateError
from ra.pipeline.discover import Scan, scan, utf8_name
from ra.store import generations
from ra.store.layout import RA_UPGRADED, config_hash, why_rebuilt


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
            return f"stale ({self.detail or 'config changed'})"
        return self.state + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Hint:
    """What a watcher knows: the files were those of generation ``generation`` (a
    generation name) when it last checked, and since then only the files ``keys``
    (``tree:path``, added, changed or gone) may have changed."""

    generation: str
    keys: frozenset[str]


def fingerprints(config) -> dict[str, tuple[int, int, int]]:
    """``tree:path → (size, mtime_ns, ctime_ns)`` of the files the configuration selects now.

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


def check_state(config, hint: Hint | None = None) -> IndexState:
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
        return _state_of(config, gen, hint)
    finally:
        gen.close()


def _state_of(config, gen: generations.Generation, hint: Hint | None = None
              ) -> IndexState:
    """The state of pinned generation ``gen``. One stat walk (or the stats of a hint's
    files); when its digest equals the manifest's, nothing changed and the per-file
    fingerprints are never read."""
    manifest, name = gen.manifest, gen.path.name
    if manifest.get("config_hash") != config_hash(config):
        return IndexState("config-changed", detail=why_rebuilt(manifest, config))
    if hint is not None and hint.generation == name and not any(
            ": unreadable (" in p for p in manifest.get("problems", ())):
        state = _hinted_state(config, gen, hint.keys)
        if state is not None:
            return state
    now = scan(config.trees)
    if manifest.get("fingerprint") == now.digest():
        return IndexState("current", generation=name)
    try:
        record = generations.read_fingerprints(gen.path)
    except IndexStateError as exc:
        return IndexState("damaged", detail=str(exc))
    added, modified, removed = diff({**record.files, **record.binary}, now.files)
    if added or modified or removed:
        return IndexState("stale", added, modified, removed, scan=now, record=record,
                          generation=name)
    return IndexState("current", generation=name)


def _hinted_state(config, gen: generations.Generation, keys: frozenset[str]
                  ) -> IndexState | None:
    """The state of ``gen`` when only the files ``keys`` may differ from its record: the
    record with those files stat'ed again stands for the walk. None (walk instead) when a
    stat fails otherwise than by the file being gone (the walk reports it), or a file
    has other hard links (a write through one changes them all, and names only one)."""
    try:
        record = generations.read_fingerprints(gen.path)
    except IndexStateError as exc:
        return IndexState("damaged", detail=str(exc))
    before = {**record.files, **record.binary}
    now: dict[str, tuple[int, int, int]] = {}  # the files of ``keys`` that are files now
    trees = {t.name: t for t in config.trees}
    for key in keys:
        if not utf8_name(key):
            return None  # a name ra cannot store: the walk reports it
        tree_name, _, rel = key.partition(":")
        tree = trees.get(tree_name)
        if tree is None or tree.hidden(rel) or not tree.matches(rel):
            continue  # not a file any tree selects (the walk would skip it)
        path = os.path.join(tree.path, rel)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            if os.path.lexists(path):  # a dangling symlink: the walk reports it
                return None
            continue
        except OSError:
            return None
        if S_ISREG(st.st_mode) and st.st_nlink > 1:
            return None  # its other names may be in the trees, and no event named them
        if S_ISREG(st.st_mode):
            now[key] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    added, modified, removed = diff({k: before[k] for k in keys if k in before}, now)
    if not (added or modified or removed):
        return IndexState("current", generation=gen.path.name)
    files = before  # a copy of the record's: the files now
    for k in removed:
        del files[k]
    files.update((k, now[k]) for k in added + modified)
    return IndexState("stale", added, modified, removed, scan=Scan(files=files),
                      record=record, generation=gen.path.name)


def open_index(config, *, refresh: bool = True, progress=None):
    """A reader of an up-to-date index, plus a status line when it had to be updated."""
    from ra.index.reader import IndexReader

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
    from ra.index.reader import IndexReader

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
    configuration, a missing or damaged index, ``force``, or most of the files changed
    (``FULL_BUILD_SHARE``) rebuild everything. Without
    ``tidy`` an incremental update leaves the generation it replaced for the caller to
    remove (``ra.store.generations.collect_garbage``; the next update does it anyway).
    """
    state = check_state(config)
    if state.state == "current" and not force:
        return None
    return _refresh(config, state, progress=progress, force=force, tidy=tidy)


def refresh_watched(config, hint: Hint | None, *, tidy: bool = True
                    ) -> tuple[str | None, str | None]:
    """``refresh_index`` for a process that watches the files: with a ``hint`` only its
    files are stat'ed. Returns the status and the name of the generation that matches
    the files as they were checked (the base of the next hint)."""
    state = check_state(config, hint)
    if state.state == "current":
        return None, state.generation
    return _refreshed(config, state, tidy=tidy)


def _refresh(config, state: IndexState, *, progress=None, force: bool = False,
             tidy: bool = True) -> str | None:
    return _refreshed(config, state, progress=progress, force=force, tidy=tidy)[0]


def _refreshed(config, state: IndexState, *, progress=None, force: bool = False,
               tidy: bool = True) -> tuple[str | None, str | None]:
    """Act on ``state``, found without the writer lock. Under the lock it still holds
    when no other writer published since (the same generation is current): its walk is
    then a snapshot of the files taken after that generation, and is not repeated.
    Returns the status and the generation now current and checked."""
    from ra.pipeline.run import build  # the writer needs pyarrow: import it only to write

    with generations.writer_lock(config.index_dir):
        if force or state.generation is None or state.state != "stale" or (
                generations.current_name(config.index_dir) != state.generation):
            state = check_state(config)  # another process may have done it meanwhile
        if state.state == "current" and not force:
            return None, state.generation
        if state.state == "stale" and not force and not _mostly_changed(state):
            report = _incremental(config, state, tidy)
        else:
            report = build(config, progress=progress, locked=True)
    return _status_line(state, report), report.generation


#: An update that changes at least this share of the files, and at least
#: ``FULL_BUILD_MIN`` of them, is a full build. Every file of cpp-docs touched (a
#: checkout, a copy that kept no times): incremental 36.4 s and 1.72 GB at peak, leaving
#: every partition's compact artifacts stale (readers then score by the formula, and a
#: warm reader computes its impacts: 1.3 s and 100 MB more to open), against a full
#: build's 30.9 s and 380 MB (one core). An update holds the new rows of every changed
#: file at once, and the partitions it rewrites are read whole.
FULL_BUILD_SHARE = 0.5
FULL_BUILD_MIN = 250  # files: a partition's worth (``ra.pipeline.partitions.PART_FILES``)


def _mostly_changed(state: IndexState) -> bool:
    """Whether the update of ``state`` is better done as a full build."""
    known = len(state.record.files) if state.record is not None else 0
    return state.changed >= max(FULL_BUILD_MIN, FULL_BUILD_SHARE * known)


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
        what = (RA_UPGRADED if state.detail == RA_UPGRADED else "configuration changed"
                ) + ": rebuilt the index"
    elif state.state == "damaged":
        what = f"index was damaged ({state.detail}): rebuilt it"
    else:
        what = "built the index"
    files, chunks = report.files, report.chunks
    return (f"{what} ({files} file{'s' * (files != 1)}, {chunks} chunk{'s' * (chunks != 1)}, "
            f"{report.seconds:.1f}s)")
