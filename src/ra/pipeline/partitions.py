"""Partitions: per-file artifacts grouped so that an update rewrites only what changed.

A generation stores the rows of each group of up to ``PART_FILES`` source files in one
partition: ``files/``, ``chunks/``, ``analyzed/``, ``lengths/``, ``surface/``,
``postings/`` and ``links/`` each hold one ``part-NNNN.parquet`` per partition.
Collection-wide tables (``terms.parquet``, ``words.parquet``) and the statistics in
``manifest.json`` are exact sums over the partitions, so scoring reads the partitions as
one collection.

Why partitions rather than one file per artifact: when one file changes, an update reads
that file's partition, drops the file's old rows, adds its new ones, and writes that
partition again; every other partition is hard-linked from the previous generation
unchanged. The work is proportional to the change (one partition and the global term
table), and no tombstones or merges are ever needed: every row of every partition is live.
Chunk numbers (``ord``) are never reused within a lineage of updates; a file's chunks get
fresh consecutive numbers when it is re-indexed, so a chunk's subtree stays the
contiguous range ``ord .. ord + descendants``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ra import __version__
from ra.pipeline import lookups
from ra.pipeline.discover import fingerprint_digest
from ra.store.artifacts import SCHEMAS
from ra.store.generations import FileRecord, generation_id, remember_fingerprints
from ra.store.layout import FINGERPRINTS, GLOBAL, MANIFEST, PARTITIONED, SCHEMA_VERSION, part_name

PART_FILES = 256
ROW_GROUPS = {"chunks": 4096, "analyzed": 65_536, "postings": 16_384}
#: The partitioned artifacts written with dictionary encoding: the analysed rows and the
#: surface words, whose terms and words repeat. The others' columns are numbers, unique
#: texts and a few names that zstd compresses as well without it, and building the
#: dictionaries cost more than they saved: a cpp-docs build's chunks 0.33 -> 0.28 s,
#: postings 0.35 -> 0.28 s, links 0.07 -> 0.06 s, and all of them smaller without
#: (chunks 24.1 -> 23.0 MB, postings 18.3 -> 16.3 MB; the analysed rows would be 13.8
#: -> 16.8 MB, the surface words slower and larger).
DICTIONARY = frozenset({"analyzed", "surface"})


@dataclass
class Part:
    """The per-file tables of one partition (``postings`` once term ids are known),
    fields in the order of ``ra.store.layout.PARTITIONED``."""

    id: int
    files: pa.Table
    chunks: pa.Table
    analyzed: pa.Table
    lengths: pa.Table
    surface: pa.Table
    postings: pa.Table | None = None
    links: pa.Table = field(default_factory=lambda: SCHEMAS["links"].empty_table())
    text_bytes: tuple[int, int] | None = None  # of its texts and plain texts (dropped)
    term_counts: pa.Table | None = None  # ``ra.pipeline.postings.term_counts`` of analyzed

    def keys(self) -> list[str]:
        """``tree:path`` of the files in this partition."""
        return [f"{t}:{p}" for t, p in zip(self.files["tree"].to_pylist(),
                                          self.files["path"].to_pylist(), strict=True)]

    @classmethod
    def empty(cls, pid: int) -> Part:
        return cls(pid, *(SCHEMAS[n].empty_table() for n in PARTITIONED))


def write_table(table: pa.Table, path: Path, row_group: int | None = None,
                dictionary: bool = True, *, keep: bool = False,
                compression: str = "zstd") -> None:
    """Write one Parquet file; column descriptions go into its key/value metadata
    (``ra.columns``), where plain DuckDB sees them: ``parquet_kv_metadata(file)``.
    ``keep``: remember the table for ``read_table`` of the generation (``_WRITTEN``)."""
    docs = {f.name: (f.metadata or {}).get(b"description", b"").decode()
            for f in table.schema}
    meta = {**(table.schema.metadata or {}), b"ra.columns": json.dumps(docs).encode()}
    described = table.replace_schema_metadata(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(described, path, compression=compression, row_group_size=row_group,
                   use_dictionary=dictionary)
    if keep:
        lookups.carry(table, described)  # the same rows
        _remember(path, described)


#: What a full build writes of a partition as soon as it has it (``ra.pipeline.run.Spill``):
#: all but the postings, which need every partition's terms.
SPILLED = tuple(name for name in PARTITIONED if name != "postings")


class Writer:
    """Parquet files written on up to ``workers`` threads (one per core, at most
    ``MAX_WRITERS``): pyarrow encodes and compresses a file without holding the GIL, so
    the nine files of a one-file update take about half as long on two cores, and a full
    build computes a partition's postings while the previous one is written. With one
    worker, each write happens at once, in the caller's thread.

    At most ``2 × workers`` writes wait at a time (``submit`` waits for the oldest), so a
    producer faster than the disk does not pile up tables in memory. Leaving the ``with``
    block waits for every write and raises the first error; nothing is published before
    it (the files go into a build folder)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or min(MAX_WRITERS, available_cores())
        self._pool = (ThreadPoolExecutor(self.workers, thread_name_prefix="ra-write")
                      if self.workers > 1 else None)
        self._pending: deque[Future] = deque()

    def submit(self, fn, *args, **kwargs) -> None:
        if self._pool is None:
            fn(*args, **kwargs)
            return
        while len(self._pending) >= 2 * self.workers:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(fn, *args, **kwargs))

    def wait(self) -> None:
        """Wait for every write submitted; raises the first error."""
        while self._pending:
            self._pending.popleft().result()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind, *_) -> None:
        try:
            if kind is None:
                self.wait()
        finally:
            for f in self._pending:
                f.cancel()
            if self._pool is not None:
                self._pool.shutdown(wait=True)


#: Threads a ``Writer`` uses at most.
MAX_WRITERS = 4


def available_cores() -> int:
    """The cores this process may run on (its affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def write_part(out: Path, part: Part, *, keep: bool = False,
               names: tuple[str, ...] = PARTITIONED, writer: Writer | None = None) -> None:
    """The tables ``names`` of ``part``, largest first (on ``writer``'s threads)."""
    tables = sorted(((name, getattr(part, name)) for name in names),
                    key=lambda t: -t[1].nbytes)
    for name, table in tables:
        (writer.submit if writer else _now)(
            _write_cast, table, name, out / name / part_name(part.id), keep)


def _write_cast(table: pa.Table, name: str, path: Path, keep: bool) -> None:
    write_table(table.cast(SCHEMAS[name]), path, ROW_GROUPS.get(name), name in DICTIONARY,
                keep=keep)


def _now(fn, *args, **kwargs) -> None:
    fn(*args, **kwargs)


#: The tables the last incremental update wrote, by generation id and file within the
#: generation: the next update reads them again (the partition of a file edited twice,
#: the global term and word tables), and a long-lived process (``ra.index.warm``) then takes
#: them from memory instead of decoding Parquet, about 90 ms of a one-file update on
#: cpp-docs (``ra.pipeline.update.rehearse`` keeps the global tables of a generation
#: loaded afresh). Generations never change, so a table kept is the file's content; only
#: the newest generation's are kept (a full build keeps none: it would hold the index).
_WRITTEN: dict[tuple[str, str], pa.Table] = {}
_WRITTEN_LOCK = threading.Lock()  # an update and a rehearsal may run on two threads


def _remember(path: Path, table: pa.Table) -> None:
    key = _key(path)
    with _WRITTEN_LOCK:
        for old in [k for k in _WRITTEN if k[0] != key[0]]:
            del _WRITTEN[old]
        _WRITTEN[key] = table


def forget_written() -> None:
    """Drop the tables kept (a full build starts a new lineage of generations)."""
    with _WRITTEN_LOCK:
        _WRITTEN.clear()


def _key(path: Path) -> tuple[str, str]:
    """``(generation id, file within the generation)`` of an artifact file."""
    if path.parent.name in PARTITIONED:  # gen/chunks/part-0003.parquet
        return generation_id(path.parent.parent), f"{path.parent.name}/{path.name}"
    return generation_id(path.parent), path.name  # gen/terms.parquet


def read_table(path: Path, *, keep: bool = False) -> pa.Table:
    """One whole Parquet file (a generation's, from memory if this process wrote it:
    ``_WRITTEN``; ``keep``: remember it too). (``pq.read_table`` goes through
    ``pyarrow.dataset``, whose import alone costs a fresh process 30 ms.)"""
    table = _WRITTEN.get(_key(path))
    if table is None:
        table = pq.ParquetFile(path).read()
        if keep:
            _remember(path, table)
    return table


def read_part(gen: Path, pid: int) -> Part:
    return Part(pid, *(read_table(gen / name / part_name(pid)) for name in PARTITIONED))


def link_parts(src: Path, out: Path, pids: list[int]) -> None:
    """Reuse unchanged partitions of the previous generation (hard links, no copy)."""
    for name in PARTITIONED:
        source, target = os.path.join(src, name), os.path.join(out, name)
        os.makedirs(target, exist_ok=True)
        for pid in pids:
            file = part_name(pid)
            os.link(os.path.join(source, file), os.path.join(target, file))


def write_globals(out: Path, terms: pa.Table, words: pa.Table, *, keep: bool = False,
                  writer: Writer | None = None) -> None:
    """The global tables, without dictionary encoding or compression: every update
    rewrites them whole. Their strings are all distinct (terms, words) or nearly so, and
    building the dictionaries took half the time of writing them, for files 10% larger;
    zstd took more than half of what was left (cpp-docs, one core: terms 8.6 -> 3.8 ms,
    words 19.7 -> 7.7 ms, for 1.1 MB more each, 3.4 MB together), and DuckDB reads the
    plain files a little faster (a term lookup 6.9 -> 6.6 ms, a fuzzy scan of the words
    30.7 -> 28.0 ms)."""
    for name, table in zip(GLOBAL, (terms, words), strict=True):
        (writer.submit if writer else _now)(
            write_table, table, out / f"{name}.parquet", dictionary=False, keep=keep,
            compression="none")


def write_manifest(out: Path, *, config_hash: str, stats: dict, files: dict, binary: dict,
                   partitions: list[int], where: dict[str, int], next_ord: int, counts: dict,
                   problems: list[str], update: dict, seconds: float,
                   stage_seconds: dict, trees: list[str], digest: str | None = None,
                   compact: dict | None = None) -> dict:
    """Write ``manifest.json`` (small: every reading command reads it) and
    ``fingerprints.json`` (each file's fingerprint and partition: read only when files
    changed). The manifest's ``fingerprint`` is the digest of every file's fingerprint,
    so an unchanged tree is recognised without reading the second file. ``partitions``:
    every partition id; ``where``: the one holding each indexed file."""
    record = FileRecord(files, binary, where)
    (out / FINGERPRINTS).write_text(record.to_text())
    remember_fingerprints(out, record)
    manifest = {
        "schema_version": SCHEMA_VERSION, "ra_version": __version__,
        "config_hash": config_hash, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(seconds, 3),
        "stage_seconds": {k: round(v, 3) for k, v in stage_seconds.items()},
        "update": update, "counts": counts, "stats": stats, "trees": trees,
        "next_ord": next_ord, "partitions": sorted(partitions),
        "fingerprint": digest or fingerprint_digest({**files, **binary}),
        "problems": problems,
    }
    if compact is not None:  # the compact artifacts' stale partitions (ra.pipeline.compact)
        manifest["compact"] = compact
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return manifest


def split_by_files(files: list, chunks: pa.Table, analyzed: pa.Table, lengths: pa.Table,
                   surface: pa.Table, links: pa.Table, size: int = PART_FILES) -> list[Part]:
    """Cut whole-collection tables into partitions of ``size`` files, in file order."""
    import pyarrow.compute as pc

    parts = []
    for pid, start in enumerate(range(0, max(len(files), 1), size)):
        group = files[start:start + size]
        trees, paths = [f.tree for f in group], [f.path for f in group]
        keys = pa.array([f"{t}:{p}" for t, p in zip(trees, paths, strict=True)])

        def rows_of(table: pa.Table, keys=keys) -> pa.Table:
            key = pc.binary_join_element_wise(table["tree"], table["path"], ":")
            return table.filter(pc.is_in(key, value_set=keys))

        part_chunks = rows_of(chunks)
        ords = part_chunks["ord"]
        parts.append(Part(pid, files_rows(group), part_chunks,
                          analyzed.filter(pc.is_in(analyzed["ord"], value_set=ords)),
                          lengths.filter(pc.is_in(lengths["ord"], value_set=ords)),
                          rows_of(surface), links=rows_of(links)))
    return parts


def files_rows(files: list) -> pa.Table:
    """The ``files`` artifact rows of discovered files."""
    from dataclasses import asdict

    return pa.Table.from_pylist([asdict(f) for f in files], schema=SCHEMAS["files"])
