"""The thin runner: reads inputs, calls the pure stages, writes artifacts, publishes.

Two ways through the same stage functions:

- ``build`` (``ra update``, ``make index``, freshness rebuilds): discover, then chunk and
  analyze file batches on every core (a batch is read, chunked and analysed in one worker
  so texts never cross process boundaries twice), then postings, then one atomic
  publication of the new generation.
- ``run_stage`` (``dvc repro``, ``python -m ra.pipeline.run STAGE``): one stage at a time
  over the Parquet files of a staging folder, then ``publish`` turns the staging folder
  into a generation. Both paths write identical artifacts.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ra import __version__, generations
from ra.artifacts import FILES, SCHEMAS
from ra.errors import IndexStateError
from ra.layout import MANIFEST, SCHEMA_VERSION
from ra.pipeline.analyze import analyze
from ra.pipeline.chunk import SourceDoc, chunk, docs_table
from ra.pipeline.discover import Discovery, FoundFile, discover, read_document
from ra.pipeline.postings import POSTINGS_ROW_GROUP, postings, statistics

BATCH_FILES = 256
Progress = Callable[[int, int], None]


@dataclass
class BuildReport:
    """What a build did, for the summary line and the manifest."""

    files: int = 0
    chunks: int = 0
    terms: int = 0
    postings: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    oversized: list[tuple[str, int]] = field(default_factory=list)  # id, chars
    generation: str = ""


@dataclass
class Batch:
    """What one worker returns for a batch of files."""

    chunks: pa.Table
    analyzed: pa.Table | None  # None when the batch was only chunked
    lengths: pa.Table | None
    words: pa.Table | None
    problems: list[str]


def index_settings(config) -> dict:
    """The settings the workers need (picklable)."""
    return {"chunk_at_headings": config.settings.chunk_at_headings,
            "language": config.search.stemmer}


def config_hash(config) -> str:
    """Hash of everything that shapes the index, schema version included."""
    import hashlib

    from ra.analysis import ANALYZER_VERSION

    shape = {"schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION,
             "config": config.config_hash()}
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


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


def process_batch(files: Sequence[FoundFile], settings: dict) -> Batch:
    """Read, chunk and analyze one batch of files (runs in a worker process)."""
    docs, problems = read_sources(files)
    chunks, parsed = chunk(docs_table(docs), chunk_at_headings=settings["chunk_at_headings"])
    for doc in parsed:
        problems += [f"{doc.tree}:{doc.path}: {p}" for p in doc.problems]
    if not settings.get("analyze", True):
        return Batch(chunks, None, None, None, problems)
    analyzed, lengths, words = analyze(chunks, settings["language"])
    return Batch(chunks, analyzed, lengths, words, problems)


def _shift(table: pa.Table, offset: int) -> pa.Table:
    if not offset:
        return table
    col = table.schema.get_field_index("ord")
    shifted = pc.add(table["ord"], pa.scalar(offset, pa.int32()))
    return table.set_column(col, table.schema.field("ord"), shifted)


def run_batches(files: list[FoundFile], settings: dict, workers: int,
                progress: Progress | None = None) -> Batch:
    """Process ``files`` in batches on ``workers`` processes; ords stay in file order."""
    batches = [files[i:i + BATCH_FILES] for i in range(0, len(files), BATCH_FILES)]
    results: list[Batch] = []
    done = 0
    if workers > 1 and len(batches) > 1:
        with ProcessPoolExecutor(workers) as pool:
            for batch, result in zip(batches, pool.map(process_batch, batches,
                                                       [settings] * len(batches)),
                                     strict=True):
                results.append(result)
                done += len(batch)
                if progress:
                    progress(done, len(files))
    else:
        for batch in batches:
            results.append(process_batch(batch, settings))
            done += len(batch)
            if progress:
                progress(done, len(files))
    return _concat(results)


def _concat(results: list[Batch]) -> Batch:
    offset, parts = 0, {"chunks": [], "analyzed": [], "lengths": [], "words": []}
    problems: list[str] = []
    for r in results:
        parts["chunks"].append(_shift(r.chunks, offset))
        if r.analyzed is not None:
            parts["analyzed"].append(_shift(r.analyzed, offset))
            parts["lengths"].append(_shift(r.lengths, offset))
            parts["words"].append(r.words)
        offset += r.chunks.num_rows
        problems += r.problems
    tables = {k: pa.concat_tables(v) if v else SCHEMAS[k].empty_table()
              for k, v in parts.items() if k != "words"}
    words = pa.concat_tables(parts["words"]) if parts["words"] else pa.table(
        {"word": pa.array([], pa.string()), "term": pa.array([], pa.string()),
         "freq": pa.array([], pa.int64())})
    return Batch(tables["chunks"], tables["analyzed"], tables["lengths"], words, problems)


def files_table(found: Discovery) -> pa.Table:
    """The discover stage's artifact."""
    rows = [asdict(f) for f in found.files]
    return pa.Table.from_pylist(rows, schema=FILES)


# --- writing -----------------------------------------------------------------------------

def write(table: pa.Table, path: Path, row_group: int | None = None) -> None:
    """Write one artifact; its column descriptions go into the file's key/value metadata
    (``ra.columns``), where plain DuckDB sees them: ``parquet_kv_metadata(file)``."""
    docs = {f.name: (f.metadata or {}).get(b"description", b"").decode()
            for f in table.schema}
    meta = {**(table.schema.metadata or {}), b"ra.columns": json.dumps(docs).encode()}
    pq.write_table(table.replace_schema_metadata(meta), path, compression="zstd",
                   row_group_size=row_group)


def write_manifest(path: Path, config, report: BuildReport, found: Discovery,
                   stats: dict) -> None:
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "ra_version": __version__,
        "config_hash": config_hash(config),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(report.seconds, 3),
        "stage_seconds": {k: round(v, 3) for k, v in report.stage_seconds.items()},
        "counts": {"files": report.files, "chunks": report.chunks, "terms": report.terms,
                   "postings": report.postings},
        "stats": stats,
        "trees": sorted({t.name for t in config.trees}),
        "files": {f"{f.tree}:{f.path}": [f.size, f.mtime_ns] for f in found.files},
        "binary": {f"{f.tree}:{f.path}": [f.size, f.mtime_ns] for f in found.binary},
        "problems": report.problems,
    }
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))


def write_artifacts(out: Path, found: Discovery, batch: Batch) -> dict[str, float]:
    """Postings from the batch, then every artifact into ``out``; returns stage times."""
    t0 = time.perf_counter()
    terms, post, words = postings(batch.analyzed, batch.words)
    t1 = time.perf_counter()
    write(files_table(found), out / "files.parquet")
    write(batch.chunks, out / "chunks.parquet", row_group=8192)
    write(batch.analyzed, out / "analyzed.parquet", row_group=POSTINGS_ROW_GROUP * 8)
    write(batch.lengths, out / "lengths.parquet")
    write(words, out / "words.parquet")
    write(terms, out / "terms.parquet")
    write(post, out / "postings.parquet", row_group=POSTINGS_ROW_GROUP)
    return {"postings": t1 - t0, "write": time.perf_counter() - t1,
            "_terms": terms.num_rows, "_postings": post.num_rows}


def build(config, *, progress: Progress | None = None, workers: int | None = None,
          locked: bool = False) -> BuildReport:
    """Full build of the index of ``config``, published atomically.

    Takes the writer lock unless the caller already holds it (``locked``).
    """
    index_dir = config.index_dir
    if index_dir is None:
        raise IndexStateError("no configuration found: run `ra init` to create .ra.toml")
    with contextlib.nullcontext() if locked else generations.writer_lock(index_dir):
        generations.collect_garbage(index_dir)
        out = generations.new_build_dir(index_dir)
        try:
            report = build_into(out, config, progress=progress, workers=workers)
            report.generation = generations.publish(index_dir, out).name
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
        generations.collect_garbage(index_dir)
    return report


def build_into(out: Path, config, *, progress: Progress | None = None,
               workers: int | None = None) -> BuildReport:
    """Run every stage and write a complete generation into ``out``."""
    start = time.perf_counter()
    report = BuildReport()
    found = discover(config.trees)
    t_disc = time.perf_counter()
    workers = workers or min(2, os.cpu_count() or 1)
    batch = run_batches(found.files, index_settings(config), workers, progress)
    t_chunk = time.perf_counter()
    times = write_artifacts(out, found, batch)
    report.files, report.chunks = len(found.files), batch.chunks.num_rows
    report.terms, report.postings = times.pop("_terms"), times.pop("_postings")
    report.problems = found.problems() + batch.problems
    report.oversized = oversized(batch.chunks, config.settings.max_chunk_size)
    report.stage_seconds = {"discover": t_disc - start, "chunk+analyze": t_chunk - t_disc,
                            **times}
    report.seconds = time.perf_counter() - start
    write_manifest(out, config, report, found, statistics(batch.lengths))
    return report


def oversized(chunks: pa.Table, limit: int) -> list[tuple[str, int]]:
    """``(id, chars)`` of chunks whose own text (heading and body, without subsections,
    which are chunks of their own) is over ``max_chunk_size`` characters."""
    own = pc.add(pc.utf8_length(chunks["heading"]), pc.utf8_length(chunks["body"]))
    ids = chunks["id"].filter(pc.greater(own, limit)).to_pylist()
    sizes = own.filter(pc.greater(own, limit)).to_pylist()
    return list(zip(ids, sizes, strict=True))

