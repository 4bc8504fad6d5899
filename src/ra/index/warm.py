"""Always-current index readers for long-lived processes (the MCP server, ``ra daemon``).

A command line process checks freshness once: it stats every file of every tree and
compares the fingerprints with the manifest (``ra.index.freshness``), about 70 ms on 10,000
files. A process answering many calls would pay that on every call; ``WarmIndex`` learns
of changes from the kernel instead (``ra.index.watch``: inotify watches on every folder the
discovery walk reads, the configuration files, the index's ``CURRENT`` pointer). A call
drains the event queue without blocking (one ``ioctl`` when it is empty): no relevant
event, and the held reader is current. The kernel queues an event inside the writing
system call, so a write that returned before the call is seen by it. Any relevant event
runs the normal refresh (``refresh_index``: the stat walk, an incremental update).

One update, each step before the next so that no change falls between them:

1. drain the events; they stay pending until the update succeeds, so a failure retries;
2. configuration files changed: (re)watch them, then read the configuration again;
3. folders appeared or vanished: re-sync the watches *before* the walk of step 4, so a
   change after a folder is watched is queued and one before it is seen by the walk;
4. files changed, or another process published a generation: ``refresh_index``, and a
   new reader when the published generation is not the one held.

Without inotify (not Linux, the watch limit reached, a folder that cannot be watched)
every call runs step 4 and compares the configuration files' ``stat``, as the command
line does.

Following: ``follow()`` (``start()`` does it) also runs that update on a thread as soon
as an event arrives (after ``FOLLOW_SETTLE``), so the index is usually current before the
next call comes: an agent that edits a note and then searches finds the update done or
under way. Calls still drain the queue themselves, so they never answer from before a
write that returned before them; they wait on the lock for an update in progress.

Cold, then warm: a reader that holds the index in memory (``keep_vocabulary``) answers a
search in milliseconds but loads for seconds on a large corpus. A new generation is
first served by a plain reader over the Parquet files (what ``ra search`` uses) while a
second reader of the same generation loads on a thread and takes over when ready, if
that generation is still the current one. A generation that is the incremental update
of the one held in memory is not served cold: the held reader is carried over to it
(``IndexReader.successor``: its tables patched by the changed rows, tens of
milliseconds), and the load afresh that restores the fastest scoring waits until no newer
generation has come for ``SUCCESSOR_QUIET`` seconds. A replaced reader is closed once
nobody holds it: ``use()`` holds its reader for the block, and ``reader()``'s result
stays open until that caller's next call.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ra.errors import ConfigError
from ra.index.watch import CONFIG, EVERYTHING, FILES, FOLDERS, GENERATION, Watcher, plan_watches

log = logging.getLogger("ra.index.warm")

#: Seconds without a newer generation before a reader carried over from memory
#: (``IndexReader.successor``) is replaced by one loaded afresh: while files are being
#: edited, each edit is carried over in milliseconds, and the load, seconds of CPU that
#: would compete with the next searches, waits until the editing pauses.
SUCCESSOR_QUIET = 5.0

#: Seconds ``start`` waits before loading the index in memory. The load is seconds of
#: CPU, partly under the GIL; started at once it competed with the MCP SDK's import and
#: the first (cold) answer: start to first answer over stdio on cpp-docs, 4 interleaved
#: starts each, 2,535 ms median loading at once, 1,613 ms waiting 2 s (1,938 ms when the
#: wait was also spent priming the cold reader with a search).
START_DELAY = 2.0

#: Seconds a following WarmIndex waits after the first event of a change before updating,
#: so that a file written in a few system calls (truncate, write, rename), microseconds
#: apart, is one update. The wait is on the path of every edit → search: cpp-docs, a warm
#: ``ra daemon``, one edit then ``ra search`` as a process, 5 alternating rounds of 7
#: (2026-11-27, a machine 3× slower than idle): median 223–239 ms at 20 ms, 213–219 at 5.
FOLLOW_SETTLE = 0.005

#: Seconds a follower blocks in ``select`` before looking again whether it should stop.
FOLLOW_POLL = 0.5

#: Every open WarmIndex, closed at exit: a thread still inside DuckDB when the interpreter
#: finalizes aborts the process ("terminate called ... exception not rethrown").
_open: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for index in list(_open):
        index.close()


@dataclass
class _Warming:
    """A reader of ``path`` loading its tables on ``thread``."""

    path: Path
    thread: threading.Thread | None = None
    reader: object | None = None
    cancelled: bool = False
    delay: float = 0.0  # seconds to wait first (a successor serves meanwhile)
    woken: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self.cancelled = True
        self.woken.set()
        if self.reader is not None:
            with contextlib.suppress(Exception):
                self.reader.interrupt()


class WarmIndex:
    """An up-to-date reader of the index of ``config``, for a process that lives long.

    ``cwd`` (where the configuration was discovered) lets a changed or new ``.ra.toml``
    be read again from there; without it the same files are read again. ``watch=False``
    checks every file on every call instead of watching (what happens anyway where
    inotify is unavailable). ``last_status`` is the status line of the latest refresh
    that changed the index (a consumer may reset it to None).
    """

    def __init__(self, config, *, cwd: Path | None = None, watch: bool = True) -> None:
        self.config = config
        self.cwd = None if cwd is None else Path(cwd)
        self.last_status: str | None = None
        #: why the configuration on disk could not be read (``use(lenient=True)``), if so
        self.config_error: ConfigError | None = None
        self.watcher: Watcher | None = None
        self._watch = self._want_watch = watch
        self._lock = threading.RLock()
        self._warmed = threading.Condition(self._lock)
        self._pending = EVERYTHING  # what the next update must do, beyond new events
        self._stamp: tuple | None = None  # the configuration files' stat (no inotify)
        self._reader = None
        # The generation last checked against the files, and the files events named since
        # (None: not known, the next check walks every file): ``ra.index.freshness.Hint``.
        self._verified: str | None = None
        self._keys: set[str] | None = None
        self._retired: list = []  # replaced readers, closed once nobody holds them
        self._warming: _Warming | None = None
        self._follower: threading.Thread | None = None
        self._follow_lock = threading.Lock()
        self._tidying: threading.Thread | None = None
        self._embedding = None  # [semantic]: the embedding thread (ra.index.embedding_thread)
        self._closed = threading.Event()
        _open.add(self)

    @classmethod
    def at(cls, cwd: Path, **options) -> WarmIndex:
        """The WarmIndex of the configuration discovered from ``cwd`` (ConfigError if it
        cannot be read)."""
        from ra.config.settings import load_config

        return cls(load_config(cwd), cwd=cwd, **options)

    # --- the interface --------------------------------------------------------------------

    def start(self) -> WarmIndex:
        """Check freshness and open the reader on a thread; the first call waits only for
        what is left of it."""
        threading.Thread(target=self._start, name="ra-warm-start", daemon=True).start()
        return self.follow()

    def follow(self) -> WarmIndex:
        """Bring the index up to date on a thread as soon as files change, not only on
        the next call (while watching with inotify; without it, calls check as before)."""
        with self._follow_lock:  # not self._lock: an update may hold it for seconds
            if self._want_watch and (self._follower is None or not self._follower.is_alive()):
                self._closed.clear()
                self._follower = threading.Thread(target=self._follow, name="ra-follow",
                                                  daemon=True)
                self._follower.start()
        return self

    def reader(self):
        """The reader of the current index, refreshed first if anything changed. It stays
        open until this caller's next call; concurrent callers use ``use``."""
        with self._lock:
            self._reap()
            self._update()
            return self._reader

    @contextlib.contextmanager
    def use(self, *, lenient: bool = False) -> Iterator:
        """The reader of the current index, held (its lock) for the block. ``lenient``: a
        configuration that cannot be read is kept in ``config_error`` and the last one
        that could serves (its files still followed), where it raises otherwise."""
        with self._lock:
            self._reap()
            self._update(lenient)
            reader = self._reader
            reader.lock.acquire()
        try:
            yield reader
        finally:
            reader.lock.release()
            with self._lock:
                self._reap()

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait until the held reader holds the index in memory; False on timeout."""
        with self._warmed:
            return self._warmed.wait_for(lambda: getattr(self._reader, "keep_vocabulary",
                                                         False), timeout)

    def close(self) -> None:
        """Close every reader and stop watching (a later call starts over)."""
        if not self._lock.acquire(timeout=5):  # a build still running: the process exits
            return
        try:
            job, self._warming = self._warming, None
            if job is not None:
                job.cancel()
            self._retire()
            for reader in self._retired:
                reader.close()
            self._retired.clear()
            self._stop_watching()
            self._watch = self._want_watch
            self._closed.set()
            with self._follow_lock:
                follower, self._follower = self._follower, None
        finally:
            self._lock.release()
        if self._embedding is not None:
            self._embedding.stop()
        if job is not None and job.thread is not None:
            job.thread.join(timeout=5)
        if follower is not None and follower is not threading.current_thread():
            follower.join(timeout=5)

    # --- following ----------------------------------------------------------------------------

    def _follow(self) -> None:
        import select

        while not self._closed.is_set():
            watcher = self.watcher
            if watcher is None:  # not watching yet (or any more): calls check for now
                self._closed.wait(FOLLOW_POLL)
                continue
            try:
                ready = select.select([watcher.inotify], [], [], FOLLOW_POLL)[0]
            except (OSError, ValueError):  # closed meanwhile by an update or close()
                continue
            if not ready or self._closed.wait(FOLLOW_SETTLE):
                continue
            try:
                with self._lock:
                    if not self._closed.is_set() and self.watcher is watcher:
                        self._update()
            except Exception as exc:  # the next call meets it again and reports it
                log.info("following a change: %s", exc)
                self._closed.wait(FOLLOW_POLL)  # not in a loop while it persists

    # --- one update (lock held) -------------------------------------------------------------

    def _start(self) -> None:
        try:
            with self._lock:
                published = self.config.index_dir and self._published()
                if published:  # most often current: load it once start-up is over
                    self._warm_later(published, delay=START_DELAY)
                self._update()
        except Exception as exc:  # the first call meets it again and reports it
            log.info("warm-up: %s", exc)

    def _update(self, lenient: bool = False) -> None:
        self._pending |= self._changes()
        if self._reader is not None and not self._pending:
            return
        effects, after = self._pending, 0
        if effects & CONFIG:
            after |= self._sync()  # the files first: a change from now on is queued
            try:
                changed = self._reload_config()
            except ConfigError as exc:
                if not lenient:
                    raise
                self.config_error = exc  # read again next time; this one serves meanwhile
                effects, after, changed = effects & ~CONFIG, after | CONFIG, False
            else:
                self.config_error = None
            if changed:
                effects |= FOLDERS | FILES
            else:
                effects &= ~FOLDERS  # just synced, for this configuration
        if effects & CONFIG or effects & FOLDERS and effects & FILES:
            self._keys = None  # files may have come or gone unnamed: walk them all
        if effects & FOLDERS:
            after |= self._sync()
        self._refresh(effects | self._pending)  # _pending: watching failed meanwhile
        self._pending = after

    def _changes(self) -> int:
        if self.watcher is not None:
            effects = self.watcher.drain()
            keys = self.watcher.take_keys()
            self._keys = None if keys is None or self._keys is None else self._keys | keys
            return effects
        if self._watch:  # not watching yet: the first update does everything
            return 0
        stamp = self._config_stamp()
        return FILES | GENERATION | (CONFIG if stamp != self._stamp else 0)

    def _sync(self) -> int:
        if not self._watch:
            return 0
        try:
            if self.watcher is None:
                self.watcher = Watcher()
            return self.watcher.sync(plan_watches(self.config, self.cwd))
        except (OSError, ImportError) as exc:
            log.warning("cannot watch the knowledge base (%s); checking every file on "
                        "every call instead", exc)
            self._stop_watching()
            self._watch = False
            self._pending = EVERYTHING
            return 0

    def _stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._pending, self._stamp, self._keys = EVERYTHING, None, None

    def _config_stamp(self) -> tuple:
        from ra.config.settings import discover_config_files

        files = self.config.files if self.cwd is None else discover_config_files(self.cwd)
        stamp = []
        for path in files:
            try:
                st = os.stat(path)
                stamp.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                stamp.append((str(path), None))
        return tuple(stamp)

    def _reload_config(self) -> bool:
        """Read the configuration again; True when it changed."""
        from ra.config.settings import load_config, load_config_files

        stamp = None if self._watch else self._config_stamp()  # before reading: no gap
        config = (load_config(self.cwd) if self.cwd is not None
                  else load_config_files(self.config.files))
        self._stamp = stamp
        if config == self.config:
            return False
        log.info("configuration changed: %s", ", ".join(map(str, config.files)) or "none")
        for warning in config.warnings:
            log.warning("%s", warning)
        self.config = config
        return True

    def _refresh(self, effects: int) -> None:
        from ra.index.freshness import Hint, open_index, refresh_watched

        held, index_dir = self._reader, self.config.index_dir
        if held is not None and (index_dir is None or held.generation.path.parent != index_dir):
            self._retire()  # the configuration moved the index
            held = None
        if held is None:
            reader, status = open_index(self.config)
            verified = reader.generation.path.name
        else:
            moved = effects & GENERATION and self._published() != held.generation.path
            if not (effects & FILES or moved):
                return
            hint = (None if self._keys is None or self._verified is None
                    else Hint(self._verified, frozenset(self._keys)))
            status, verified = refresh_watched(self.config, hint, tidy=False)  # tidied below
            reader = (None if self._published() == held.generation.path
                      else self._successor(held) or open_index(self.config, refresh=False)[0])
        # Checked: from here on, only files named by events not drained yet can differ.
        self._verified, self._keys = verified, (set() if self.watcher is not None else None)
        if status:  # kept until a consumer takes it, so a follower's update is told too
            self.last_status = status if not self.last_status else f"{self.last_status}; {status}"
            log.info("%s", status)
        if reader is not None:
            self._retire()
            self._reader = reader
            self._warm_later(reader.generation.path,
                             delay=SUCCESSOR_QUIET if reader.patched else 0.0)
        if status and held is not None:
            self._tidy_soon(index_dir)
        if self.config.semantic.enabled and self._reader is not None:
            from ra.index.embedding_thread import embed_soon  # [semantic], on a thread

            self._embedding = embed_soon(self, self._embedding, self._reader.manifest)

    def _tidy_soon(self, index_dir: Path) -> None:
        """Remove the generation just replaced on a thread, now that nobody pins it (the
        successor released it), rather than at the start of the next update (about 40 ms
        on its path)."""
        tidying = self._tidying
        if tidying is None or not tidying.is_alive():
            self._tidying = threading.Thread(target=_tidy, args=(index_dir,),
                                             name="ra-tidy", daemon=True)
            self._tidying.start()

    def _successor(self, held):
        """The held reader carried over to the generation just published, when that
        generation is its incremental update (``IndexReader.successor``: from memory, in
        milliseconds); None when it is not."""
        from ra.index.successor import carry_over
        from ra.store.generations import open_current

        if not held.keep_vocabulary:
            return None
        generation = open_current(self.config.index_dir)
        if generation is None:
            return None
        try:
            reader = carry_over(held, generation)
        except Exception as exc:  # the held reader is closed: a cold one takes over
            log.warning("carrying the index over to the new generation failed: %s", exc)
            reader = None
        if reader is None:
            generation.close()
        return reader

    def _published(self) -> Path | None:
        from ra.store.generations import current_name

        name = current_name(self.config.index_dir)
        return None if name is None else self.config.index_dir / name

    def _retire(self) -> None:
        if self._reader is not None:
            self._retired.append(self._reader)
            self._reader = None

    def _reap(self) -> None:
        for reader in list(self._retired):
            if reader.lock.acquire(blocking=False):
                try:
                    reader.close()
                finally:
                    reader.lock.release()
                self._retired.remove(reader)

    # --- cold, then warm ---------------------------------------------------------------------

    def _warm_later(self, path: Path, delay: float = 0.0) -> None:
        """Load a reader of generation ``path`` in memory, on a thread, after ``delay``
        seconds."""
        if self._warming is not None:
            if self._warming.path == path:
                return
            self._warming.cancel()  # another generation: not worth finishing
        job = self._warming = _Warming(path, delay=delay)
        job.thread = threading.Thread(target=self._warm, args=(job,), name="ra-warm",
                                      daemon=True)
        job.thread.start()

    def _warm(self, job: _Warming) -> None:
        from ra.index.reader import IndexReader, release_unused
        from ra.store.generations import read_fingerprints

        reader = None
        try:
            if job.delay and job.woken.wait(job.delay):
                return  # cancelled while waiting
            _tidy(job.path.parent)
            reader = IndexReader.open(job.path.parent, keep_vocabulary=True)
            if reader is None or reader.generation.path != job.path:
                return  # published over meanwhile: that generation's reader warms itself
            with self._lock:
                if job.cancelled:
                    return
                job.reader = reader
            reader.near_words(["warm"], 1)  # loads the tables and the vocabulary
            if self.config.semantic.enabled:  # and the vectors ([semantic])
                from ra.index.vector_tables import preload

                preload(reader, self.config.semantic)
            with self._lock:  # held None: not checked yet, and _pending still says so
                held = self._reader
                if not job.cancelled and (held is None or (
                        held.generation.path == job.path
                        and (not held.keep_vocabulary or held.patched))):
                    self._retire()
                    self._reader, reader = reader, None
                    self._warmed.notify_all()
            _prepare_writer(job.path)
            read_fingerprints(job.path)  # kept: the first hinted check compares with it
            release_unused()  # after the rehearsal, or the update this reader follows
        except Exception as exc:  # cold readers go on answering
            if not job.cancelled:
                log.warning("loading the index in memory failed: %s", exc)
        finally:
            with self._lock:
                if self._warming is job:
                    self._warming = None
            if reader is not None:
                reader.close()


def _tidy(index_dir: Path) -> None:
    """Remove the generations nobody reads any more, unless a writer is at work (it
    does so itself)."""
    from ra.store.generations import collect_garbage, writer_lock

    try:
        with writer_lock(index_dir, wait=False) as locked:
            if locked:
                collect_garbage(index_dir)
    except OSError as exc:  # the index folder went meanwhile: the next update sees to it
        log.info("removing old generations: %s", exc)


_writer_ready = False


def _prepare_writer(generation: Path | None = None) -> None:
    """Import and initialise what an update runs (pyarrow and its dataset reader,
    mistletoe and its tables, YAML, the cl100k ranks: about a second), and rehearse an
    update of ``generation`` (``ra.pipeline.update.rehearse``: pyarrow's first Parquet
    read and write), once per process and while it is idle, so that the first edit is
    indexed as fast as the next ones."""
    global _writer_ready
    if _writer_ready:
        return
    _writer_ready = True
    import numpy.ma  # noqa: F401  (pa.table looks at it)
    import pyarrow.acero  # noqa: F401  (table joins and group-bys run on it)
    import pyarrow.dataset  # noqa: F401  (pyarrow.parquet reads a table through it)

    import ra.pipeline.update  # pyarrow and the stages
    from ra.text.document import parse_document
    from ra.text.tokens import count_tokens

    parse_document("---\ntitle: Warm\n---\n# Warm\n\nSome *text*.\n", "warm", "warm.md")
    count_tokens("warm")
    if generation is not None:
        try:
            ra.pipeline.update.rehearse(generation)
        except Exception as exc:  # e.g. published over and removed meanwhile: harmless
            log.info("rehearsing an update: %s", exc)

