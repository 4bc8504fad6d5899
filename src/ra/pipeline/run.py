"""The thin runner: reads inputs, calls the pure stages, writes artifacts, publishes.

Three ways through the same stage functions:

- ``build`` (``ra update``, ``make index``, first use): discover, then chunk and analyze
  partitions of files on every core (a partition is read, chunked, analysed and its
  terms counted in one worker, so texts never cross process boundaries twice), then the
  terms and words (sums of the workers' counts), then each partition's postings on the
  same workers (each reads its partition's analysed rows back and writes its postings)
  while this process writes the chunk store, then one atomic publication of the new
  generation.
- ``ra.pipeline.update`` (every reading command, when files changed): re-process only the
  changed files and rewrite only their partitions (see ``ra.pipeline.partitions``).
- ``ra.pipeline.stages`` (``dvc repro``): one stage at a time over staged Parquet files,
  then ``publish`` writes the same partitioned generation as ``build``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ra.errors import IndexStateError
from ra.pipeline.analyze import analyze
from ra.pipeline.chunk import SourceDoc, chunk_docs
from ra.pipeline.compact import text_bytes, write_compact, write_store
from ra.pipeline.discover import Discovery, FoundFile, discover, read_document
from ra.pipeline.impacts import parameters
from ra.pipeline.links import links_table
from ra.pipeline.lookups import forget as forget_lookups
from ra.pipeline.partitions import (
    PART_FILES,
    SPILLED,
    Part,
    Writer,
    files_rows,
    forget_written,
    read_table,
    write_globals,
    write_manifest,
    write_part,
)
from ra.pipeline.postings import (
    field_chunks,
    indexed_chunks,
    length_sums,
    postings_of,
    statistics,
    term_counts,
    terms_of_counts,
    words_of,
)
from ra.pipeline.typed import int64
from ra.store import generations
from ra.store.layout import PARTITIONED, config_hash, part_name

Progress = Callable[[int, int], None]


@dataclass
class BuildReport:
    """What a build or update did, for the summary line and the manifest."""

    files: int = 0
    chunks: int = 0
    terms: int = 0
    postings: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    oversized: list[tuple[str, int]] = field(default_factory=list)  # id, chars
    generation: str = ""
    kind: str = "full"  # full | incremental
    changed: int = 0  # files re-processed by an incremental update


def index_settings(config) -> dict:
    """The settings the workers need (picklable)."""
    return {"chunk_at_headings": config.settings.chunk_at_headings,
            "language": config.search.stemmer}


# --- stage work --------------------------------------------------------------------------

def read_sources(files: Sequence[FoundFile]) -> tuple[list[SourceDoc], list[str]]:
    """Decode ``files``; unreadable ones are reported and left out."""
    docs, problems = [], []
    for f in files:
        try:
            text, issues = read_document(f.abspath)
        except OSError as exc:
            problems.append(f"{f.tree}:{f.path}: unreadable ({exc.strerror})")
            continue
        problems += [f"{f.tree}:{f.path}: {p}" for p in issues]
        docs.append(SourceDoc(f.tree, f.path, text, f.mtime_ns, f.is_global, tuple(issues)))
    return docs, problems


def process_files(files: Sequence[FoundFile], settings: dict, first_ord: int = 0
                  ) -> tuple[Part, list[str]]:
    """Read, chunk and analyze ``files`` into the tables of a partition (no postings);
    the chunk stage's parse also gives the links, and the code of each markdown body,
    set aside once, serves its links and its plain text."""
    docs, problems = read_sources(files)
    chunks, parsed, asides, bodies = chunk_docs(
        docs, chunk_at_headings=settings["chunk_at_headings"], first_ord=first_ord)
    for doc in parsed:
        problems += [f"{doc.tree}:{doc.path}: {p}" for p in doc.problems]
    links = links_table(parsed, first_ord, asides)
    if not settings.get("analyze", True):
        empty = Part.empty(-1)
        return Part(-1, files_rows(files), chunks, empty.analyzed, empty.lengths,
                    empty.surface, links=links), problems
    analyzed, lengths, surface = analyze(chunks, settings["language"], bodies)
    return Part(-1, files_rows(files), chunks, analyzed, lengths, surface,
                links=links), problems


def _process(args: tuple) -> tuple[Part | Shipped, list[str]]:
    """A partition's tables made from ``(files, settings)``, or, given a third item (a
    path: ``run_parts`` on a pool's worker), written there (``ship``)."""
    files, settings, *to = args
    with collector_paused():
        part, problems = process_files(files, settings)
        part.term_counts = term_counts(part.analyzed)
    return (ship(part, to[0]) if to else part), problems


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off in the block (a partition's work), back on
    after it. Reference counts free what a partition makes as it goes; the collector,
    which runs each time 700 more containers are alive, walked all of them again and
    again (the parsed documents; in a build's worker also every object of the parent it
    was forked from): 1.2 s of the 19.7 s cpp-docs took on one core, for cycles of at
    most a hundred objects per partition, which its next run after the block frees."""
    if not gc.isenabled():  # paused already (another thread's partition)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: The tables of a partition a worker writes for the main process (``ship``)
SHIPPED = ("files", "chunks", "analyzed", "lengths", "surface", "links", "term_counts")
#: The folder of a build folder where its workers leave their partitions (``ship``),
#: each file gone once read and the folder before the build is published
INCOMING = ".incoming"


@dataclass(frozen=True)
class Shipped:
    """A partition a worker wrote to ``path``: each table an Arrow IPC stream at an
    offset of the file (``layout``: name, offset, bytes)."""

    path: str
    layout: tuple[tuple[str, int, int], ...]


def ship(part: Part, path: Path) -> Shipped:
    """Write the tables of ``part`` (``SHIPPED``) to ``path`` for the main process
    (``unship``). A partition sent back through the pool's pipe (pickled, 9 MB on average
    on cpp-docs) came through in pieces of the pipe's 64 KB, each read into a fresh
    buffer of the whole message's size: the main process's share was 0.8 s of CPU, on
    the two cores the workers need, and a worker waited on each piece."""
    layout = []
    with pa.OSFile(str(path), "wb") as sink:
        for name in SHIPPED:
            table, start = getattr(part, name), sink.tell()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            layout.append((name, start, sink.tell() - start))
    return Shipped(str(path), tuple(layout))


def unship(shipped: Shipped) -> Part:
    """The partition a worker wrote (``ship``); its file is removed. Each table is read
    into a buffer of its own, which a part of it kept holds alive (``Spill`` keeps the
    lengths, not the chunks)."""
    tables = {}
    with pa.OSFile(shipped.path) as source:
        for name, start, size in shipped.layout:
            source.seek(start)
            tables[name] = pa.ipc.open_stream(source.read_buffer(size)).read_all()
    os.unlink(shipped.path)
    return Part(-1, tables["files"], tables["chunks"], tables["analyzed"], tables["lengths"],
                tables["surface"], links=tables["links"], term_counts=tables["term_counts"])


def shift(table: pa.Table, offset: int) -> pa.Table:
    """``table`` with ``offset`` added to its ``ord`` column."""
    if not offset or "ord" not in table.column_names:
        return table
    col = table.schema.get_field_index("ord")
    moved = pc.add(table["ord"], pa.scalar(offset, pa.int32()))
    return table.set_column(col, table.schema.field("ord"), moved)


def run_parts(files: list[FoundFile], settings: dict, workers: int,
              progress: Progress | None = None, size: int | None = None,
              keep: Callable[[Part], Part] | None = None, executor=None,
              incoming: Path | None = None) -> tuple[list[Part], list[str]]:
    """Process ``files`` in partitions of ``size`` (default ``PART_FILES``) on
    ``workers`` processes (those of ``executor`` when given: a ``build_pool``);
    chunk numbers follow file order across partitions. ``keep`` gets each partition as
    it arrives, numbered, and returns what to hold of it (a build writes it at once and
    holds little: ``Spill``). ``incoming``: a folder where the pool's workers leave the
    partitions (``ship``)."""
    size = size or PART_FILES
    groups = [files[i:i + size] for i in range(0, len(files), size)] or [[]]
    jobs = [(g, settings) for g in groups]

    def collect(results) -> tuple[list[Part], list[str]]:
        parts, problems, offset, done = [], [], 0, 0
        for pid, (group, (part, issues)) in enumerate(zip(groups, results, strict=True)):
            if isinstance(part, Shipped):
                part = unship(part)
            numbered = Part(pid, part.files, shift(part.chunks, offset),
                            shift(part.analyzed, offset), shift(part.lengths, offset),
                            part.surface, links=shift(part.links, offset),
                            term_counts=part.term_counts)
            offset += part.chunks.num_rows
            parts.append(keep(numbered) if keep else numbered)
            problems += issues
            done += len(group)
            if progress:
                progress(done, len(files))
        return parts, problems

    if executor is not None and len(groups) > 1:
        if incoming is None:
            return collect(executor.map(_process, jobs))
        incoming.mkdir(exist_ok=True)
        return collect(executor.map(_process, [
            (*job, incoming / f"part-{pid:04d}.arrow") for pid, job in enumerate(jobs)]))
    if workers > 1 and len(groups) > 1:
        from ra.pipeline.workers import pool

        with pool(workers) as executor:  # workers that die with this process
            return collect(executor.map(_process, jobs))
    return collect(map(_process, jobs))


class Spill:
    """What a full build holds of a partition once it is written: its analysed rows
    go to disk (read back one partition at a time for the postings), its chunks are
    reduced to their ords (``ra.pipeline.compact.write_store`` reads the rest back), its
    surface words are counted over the partition."""

    def __init__(self, out: Path, max_chunk_size: int) -> None:
        self.out, self.limit = out, max_chunk_size
        self.oversized: list[tuple[str, int]] = []

    def __call__(self, part: Part) -> Part:
        write_part(self.out, part, names=SPILLED)
        self.oversized += oversized(part.chunks, self.limit)
        # the words of the partition, counted: all that words_of needs of them
        words = (part.surface.group_by(["word", "term"], use_threads=False)
                 .aggregate([("freq", "sum")]).rename_columns(["word", "term", "freq"]))
        kept = Part(part.id, part.files, own_column(part.chunks, "ord"), None,
                    part.lengths, words, links=None, text_bytes=text_bytes(part.chunks),
                    term_counts=part.term_counts)
        pa.default_memory_pool().release_unused()  # else the allocator holds on to it
        return kept


def own_column(table: pa.Table, name: str) -> pa.Table:
    """The column ``name`` of ``table`` as a table, copied into buffers of its own: a
    column of a partition read from a worker's file shares the buffer of its table
    (``unship``), and the ords kept of each partition held every chunk's text alive."""
    column = table.select([name])
    chunks = column[name].chunks
    copied = pa.concat_arrays(chunks) if chunks else pa.array([], column.schema.field(0).type)
    return pa.Table.from_arrays([copied], schema=column.schema)


def oversized(chunks: pa.Table, limit: int) -> list[tuple[str, int]]:
    """``(id, chars)`` of chunks whose own text (heading and body, without subsections,
    which are chunks of their own) is over ``max_chunk_size`` characters."""
    own = pc.add(pc.utf8_length(chunks["heading"]), pc.utf8_length(chunks["body"]))
    big = pc.greater(own, int64(limit))
    return list(zip(chunks["id"].filter(big).to_pylist(), own.filter(big).to_pylist(),
                    strict=True))


# --- full build --------------------------------------------------------------------------

def build(config, *, progress: Progress | None = None, workers: int | None = None,
          locked: bool = False) -> BuildReport:
    """Full build of the index of ``config``, published atomically.

    Takes the writer lock unless the caller already holds it (``locked``).
    """
    index_dir = config.index_dir
    if index_dir is None:
        raise IndexStateError("no configuration found: run `ra init` to create .ra.toml")
    with contextlib.nullcontext() if locked else generations.writer_lock(index_dir):
        return publish_with(index_dir, lambda out: build_into(
            out, config, progress=progress, workers=workers))


def publish_with(index_dir: Path, fill: Callable[[Path], BuildReport], *,
                 tidy: bool = True) -> BuildReport:
    """Fill a fresh build folder with ``fill`` and publish it (writer lock held). Old
    generations are removed before, and after unless ``tidy`` is off (the caller
    removes them later: ``ra.index.warm`` does, off the path of the answer it owes)."""
    generations.collect_garbage(index_dir)
    out = generations.new_build_dir(index_dir)
    try:
        report = fill(out)
        report.generation = generations.publish(index_dir, out).name
    except BaseException as exc:
        shutil.rmtree(out, ignore_errors=True)  # first: the space it held is free again
        problem = generations.write_problem(index_dir, exc)
        if problem:
            raise IndexStateError(problem) from exc
        raise
    if tidy:
        generations.collect_garbage(index_dir)
    return report


def build_into(out: Path, config, *, progress: Progress | None = None,
               workers: int | None = None) -> BuildReport:
    """Run every stage over every file and write a complete generation into ``out``."""
    start = time.perf_counter()
    found = discover(config.trees)
    t_disc = time.perf_counter()
    workers = workers or min(2, os.cpu_count() or 1)
    spill = Spill(out, config.settings.max_chunk_size)
    with build_pool(workers, len(found.files)) as executor:
        parts, problems = run_parts(found.files, index_settings(config), workers, progress,
                                    keep=spill, executor=executor, incoming=out / INCOMING)
        with contextlib.suppress(FileNotFoundError):  # no pool, nothing shipped
            (out / INCOMING).rmdir()
        t_chunk = time.perf_counter()
        return write_generation(out, config, found, parts, found.problems() + problems,
                                spilled=spill.oversized, started=start,
                                stages={"discover": t_disc - start,
                                        "chunk+analyze": t_chunk - t_disc},
                                executor=executor)


def build_pool(workers: int, files: int):
    """The worker processes of a full build (``ra.pipeline.workers.pool``), kept for
    both of its parallel stages: chunk+analyze and the postings. None (a null context)
    on one core or for one partition's worth of files, which one process does faster
    than it would hand them over."""
    if workers < 2 or files <= PART_FILES:
        return contextlib.nullcontext()
    from ra.pipeline.workers import pool

    return pool(workers)


def write_generation(out: Path, config, found: Discovery, parts: list[Part],
                     problems: list[str], spilled: list | None = None, *,
                     started: float | None = None, stages: dict | None = None,
                     executor=None) -> BuildReport:
    """Terms, words and postings of complete partitions, written with their manifest.
    ``started`` (``time.perf_counter()``) and ``stages`` (seconds of the stages before):
    when the build began and what it did, for the report and the manifest.
    A partition without ``analyzed`` was written already by ``Spill`` (which found the
    oversized chunks, ``spilled``): its analysed rows are read back one at a time, on
    the workers of ``executor`` when given (``build_pool``; each writes the postings of
    a partition while this process writes the chunk store)."""
    t0 = time.perf_counter()
    forget_written()
    forget_lookups()

    def analyzed() -> Iterator[pa.Table]:
        for p in parts:
            yield p.analyzed if p.analyzed is not None else read_table(
                out / "analyzed" / part_name(p.id))
            pa.default_memory_pool().release_unused()

    # partitions share no chunk: their terms are the sums of their counts
    terms = terms_of_counts(p.term_counts if p.term_counts is not None
                            else term_counts(p.analyzed) for p in parts)
    for p in parts:
        p.term_counts = None
    t1 = time.perf_counter()
    n_postings = 0
    pooled = executor is not None and all(p.analyzed is None for p in parts)
    if pooled:  # the workers write the postings while this process writes the store
        ids = terms.select(["term_id", "term"])
        futures = [executor.submit(write_postings, out, p.id, ids) for p in parts]
    # first, while the build holds least: it reads every chunk back (ra.pipeline.compact)
    write_store(out, parts)
    words = words_of(pa.concat_tables([p.surface for p in parts]), terms)
    with Writer() as writer:  # a partition is written while the next one's postings are made
        write_globals(out, terms, words, writer=writer)
        if pooled:
            n_postings = sum(f.result() for f in futures)
        else:
            for part, rows in zip(parts, analyzed(), strict=True):
                postings = postings_of(rows, terms)
                n_postings += postings.num_rows
                part.postings = postings
                write_part(out, part, names=PARTITIONED if part.analyzed is not None
                           else ("postings",), writer=writer)
                part.postings = None  # write_compact reads them back from their files
    t2 = time.perf_counter()
    lengths = pa.concat_tables([p.lengths for p in parts])
    stats = statistics(indexed_chunks(lengths), length_sums(lengths), field_chunks(lengths))
    compact = write_compact(out, parts, terms, parameters(config), stats["avg_length"])
    chunks = pa.concat_tables([p.chunks for p in parts])
    report = BuildReport(
        files=len(found.files), chunks=chunks.num_rows, terms=terms.num_rows,
        postings=n_postings, problems=sorted(problems),
        oversized=spilled if spilled is not None else oversized(
            chunks, config.settings.max_chunk_size))
    report.stage_seconds = {**(stages or {}), "terms": t1 - t0, "postings+write": t2 - t1,
                            "compact": time.perf_counter() - t2}
    report.seconds = time.perf_counter() - (t0 if started is None else started)
    finish_manifest(out, config, report, fingerprints_of(found.files),
                    fingerprints_of(found.binary), sorted(p.id for p in parts),
                    {k: p.id for p in parts for k in p.keys()}, stats,
                    next_ord=chunks.num_rows, update={"kind": "full"}, compact=compact)
    return report


def write_postings(out: Path, pid: int, terms: pa.Table) -> int:
    """Write the postings of partition ``pid`` of the build in ``out`` from its analysed
    rows, read back from their file, and ``terms`` (``term_id``, ``term``); the number of
    postings. A build's worker runs it (``write_generation``)."""
    postings = postings_of(read_table(out / "analyzed" / part_name(pid)), terms)
    write_part(out, Part(pid, *(None,) * 5, postings=postings), names=("postings",))
    return postings.num_rows


def finish_manifest(out: Path, config, report: BuildReport, files: dict, binary: dict,
                    partitions: list[int], where: dict[str, int], stats: dict, *, next_ord: int,
                    update: dict, digest: str | None = None,
                    compact: dict | None = None) -> dict:
    """Write the manifest and the per-file record; ``files`` and ``binary`` map
    ``tree:path`` to ``(size, mtime_ns, ctime_ns)``, ``where`` each indexed file to its
    partition, one of ``partitions``; ``digest`` is their fingerprint digest when
    the caller has it. With ``[semantic] enabled`` the generation also gets every chunk
    vector it can have without embedding (``ra.pipeline.vectors.carry``)."""
    manifest = write_manifest(
        out, config_hash=config_hash(config), stats=stats, files=files, binary=binary,
        partitions=partitions, where=where, next_ord=next_ord, digest=digest, compact=compact,
        counts={"files": report.files, "chunks": report.chunks, "terms": report.terms,
                "postings": report.postings},
        problems=report.problems, update=update, seconds=report.seconds,
        stage_seconds=report.stage_seconds, trees=sorted({t.name for t in config.trees}))
    if config.semantic.enabled:
        from ra.pipeline.vectors import carry, previous

        manifest["vectors"] = carry(out, previous(out), config.semantic.model_id())
    return manifest


def fingerprints_of(files: Sequence[FoundFile]) -> dict[str, tuple[int, int, int]]:
    """``tree:path → (size, mtime_ns, ctime_ns)`` of discovered files."""
    return {f"{f.tree}:{f.path}": f.fingerprint for f in files}
