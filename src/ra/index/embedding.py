"""Embedding the chunks that have no vector, then publishing a generation that holds them.

``embed_index`` is what ``ra update`` runs after the keyword build, what the daemon and
the MCP server run on a thread, and what a command line update of a few changed files
runs before it answers:

1. read the current generation's chunks that lack a vector of the configured model
   (``vectors.missing_rows``; each distinct text once);
2. leave out those the embedding cache already holds (batches of an earlier run that
   was interrupted: ``ra.pipeline.vector_cache``);
3. embed the rest in batches of ``[semantic] batch_size``, saving each batch as it is
   done, reporting progress, and stopping between batches when asked to;
4. under the writer lock, publish a generation made of hard links to the current one's
   files (which may be newer than the one read in step 1: vectors are keyed by text,
   so that does not matter) plus the vectors files of the partitions that gained
   vectors (``vectors.carry``); then empty the cache.

Only one process embeds an index at a time (``.embed.lock``); another one finds it busy
and answers with keywords alone meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ra.store import generations

EMBED_LOCK = ".embed.lock"
Progress = Callable[[int, int], None]


@dataclass
class EmbedReport:
    """What one run did."""

    embedded: int = 0  # texts embedded by this run
    resumed: int = 0  # texts an interrupted run had embedded already
    missing: int = 0  # chunks still without a vector afterwards
    seconds: float = 0.0
    generation: str | None = None  # published, when anything was
    busy: bool = False  # another process is embedding this index
    stopped: bool = False  # asked to stop before the end

    def describe(self) -> str:
        if self.busy:
            return "semantic: another process is embedding this index"
        done = f"embedded {self.embedded:,} chunks in {self.seconds:.1f}s"
        if self.resumed:
            done += f" (and {self.resumed:,} an interrupted run had embedded)"
        if self.stopped:
            done += f"; stopped with {self.missing:,} to go"
        return "semantic: " + done


@contextlib.contextmanager
def embed_lock(index_dir: Path) -> Iterator[bool]:
    """Hold the index's embedding lock if no other process does; yields whether held."""
    index_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(index_dir / EMBED_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def embed_index(config, load: Callable[[], object], *, progress: Progress | None = None,
                stop: Callable[[], bool] | None = None) -> EmbedReport:
    """Embed what the current generation of ``config``'s index lacks and publish it.
    ``load()`` gives the embedder, called only when there is something to embed."""
    from ra.pipeline.vector_cache import Cache
    from ra.pipeline.vectors import missing_rows

    start, report = time.perf_counter(), EmbedReport()
    index_dir, model = config.index_dir, config.semantic.model_id()
    with embed_lock(index_dir) as held:
        if not held:
            report.busy = True
            return report
        gen = generations.open_current(index_dir)
        if gen is None:
            return report
        try:
            hashes, texts = missing_rows(gen.path, model)
        finally:
            gen.close()
        cache = Cache(index_dir, model)
        pool = cache.load()
        todo = [(h, t) for h, t in zip(hashes, texts, strict=True) if h not in pool.where]
        report.resumed = len(hashes) - len(todo)
        if todo:
            report.stopped = _embed(todo, load(), cache, pool, config.semantic.batch_size,
                                    progress, stop)
            report.embedded = len(pool.where) - report.resumed
            report.missing = len(hashes) - len(pool.where)
        if hashes and pool.table is not None and not report.stopped:
            report.generation, report.missing = publish(config, pool)
            cache.clear()
    report.seconds = time.perf_counter() - start
    return report


def _embed(todo: list[tuple[bytes, str]], embedder, cache, pool, size: int,
           progress: Progress | None, stop) -> bool:
    """Embed ``todo`` in batches into ``cache`` and ``pool``; True when stopped early."""
    for i in range(0, len(todo), size):
        if stop is not None and stop():
            return True
        batch = todo[i:i + size]
        vectors = embedder.embed_documents([t for _, t in batch])
        pool.add(cache.save([h for h, _ in batch], vectors, embedder.dims))
        if progress:
            progress(min(i + size, len(todo)), len(todo))
    return False


def publish(config, pool) -> tuple[str | None, int]:
    """Publish the current generation again with the vectors of ``pool`` added; returns
    the generation's name and how many chunks still lack a vector (its files are links
    to the current generation's, its manifest says it follows it)."""
    from ra.pipeline.run import BuildReport, publish_with
    from ra.pipeline.vectors import carry

    index_dir, model = config.index_dir, config.semantic.model_id()
    with generations.writer_lock(index_dir):
        name = generations.current_name(index_dir)
        if name is None:
            return None, 0
        prev = index_dir / name
        entry: dict = {}

        def fill(out: Path) -> BuildReport:
            _link_generation(prev, out)
            entry.update(carry(out, prev, model, pool))
            return BuildReport(kind="vectors")

        report = publish_with(index_dir, fill)
    return report.generation, int(entry.get("missing", 0))


def _link_generation(prev: Path, out: Path) -> None:
    """Every file of ``prev`` linked into ``out`` except its vectors (``carry`` links or
    writes them), with a manifest that says ``out`` follows ``prev`` and changed no
    partition of the keyword index."""
    import json

    from ra.store.layout import MANIFEST, VECTORS

    for root, _dirs, files in os.walk(prev):
        rel = Path(root).relative_to(prev)
        if rel.parts[:1] == (VECTORS,):
            continue
        (out / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            if name not in (MANIFEST, generations.PIN):
                os.link(Path(root) / name, out / rel / name)
    manifest = generations.read_manifest(prev)
    manifest["update"] = {"kind": "vectors", "base": prev.name, "partitions": []}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))


#: Chunks a command line search embeds before it answers, when the files it found
#: changed lack vectors: a few seconds at most. More is left to ``ra update`` (with
#: progress) or the daemon (in the background), and the search uses keywords alone.
INLINE = 256


def catch_up(config, reader, progress: Progress | None = None):
    """For a search in its own process: when the current generation lacks vectors for at
    most ``INLINE`` chunks, embed them now and return a reader of the generation that
    has them (``reader`` is closed); else ``reader`` itself. A model that cannot be
    loaded changes nothing here: the search says why it used keywords alone."""
    from ra.index.reader import IndexReader
    from ra.store.vector_state import readiness
    from ra.text import embedder_runtime as runtime
    from ra.text import embedders
    from ra.text.embedders import EmbedderError

    state = readiness(reader.manifest, config.semantic.model_id())
    if state.ready or state.missing > INLINE:
        return reader
    if ":" not in config.semantic.backend and not embedders.available():
        return reader  # the search says how to install it
    try:
        report = embed_index(config, lambda: runtime.embedder(config.semantic),
                             progress=progress)
    except EmbedderError:
        return reader
    if report.generation is None:
        return reader
    fresh = IndexReader.open(config.index_dir)
    if fresh is None:
        return reader
    reader.close()
    return fresh
