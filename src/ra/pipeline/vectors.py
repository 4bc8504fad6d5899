"""The ``vectors/`` artifact: one row per embedded chunk, partitioned like the chunks.

    vectors/part-NNNN.parquet   ord, hash, model, vector (FLOAT[dims], unit length)

A generation's ``vectors/part-NNNN.parquet`` holds the vectors of the chunks of its
``chunks/part-NNNN.parquet``. The manifest's ``vectors`` entry says which model made
them, their width, and per partition how many chunks have a vector and how many still
lack one; a reader trusts vectors only when the model is the configured one and none is
missing (``readiness``).

Vectors cost seconds to minutes of CPU where the keyword index costs milliseconds, so
they never hold up a build. ``carry`` runs as a build or update writes its generation
(writer lock held) and gives the new generation every vector it can have without a
model: a partition whose chunks file is a hard link of the previous generation's keeps
its vectors file the same way; any other partition gets, for each of its chunks, the
vector of an earlier chunk with the same text (``ra.text.embedding_text``: keyed by content
hash, so a re-indexed file numbered anew, or a full rebuild, embeds nothing again) from
the previous generation and from the embedding cache (``ra.pipeline.vector_cache``). Chunks
left without a vector are counted as missing; ``ra.index.embedding`` embeds them and
publishes a generation that holds them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ra.store import generations
from ra.store.layout import MANIFEST, VECTORS, part_name


def schema(dims: int) -> pa.Schema:
    """The artifact's schema for vectors of ``dims`` floats (described columns)."""
    def f(name, type_, doc):
        return pa.field(name, type_, nullable=False, metadata={"description": doc})

    return pa.schema([
        f("ord", pa.int32(), "chunk number (chunks.ord)"),
        f("hash", pa.binary(16), "blake2b-128 of the text embedded (ra.text.embedding_text)"),
        f("model", pa.string(), "id of the model that made the vector"),
        f("vector", pa.list_(pa.float32(), dims), "unit-length embedding of the chunk"),
    ])


def vector_array(rows: list[list[float]], dims: int) -> pa.FixedSizeListArray:
    """Vectors (lists of floats, or arrays with ``tolist``) as a fixed-size list array."""
    flat = pa.array([x for v in rows for x in v], pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, dims)


@dataclass
class Pool:
    """Vectors available by content hash: ``table`` (hash, vector) and its index."""

    table: pa.Table | None = None
    where: dict[bytes, int] = field(default_factory=dict)

    def add(self, table: pa.Table) -> None:
        """Add rows ``(hash, vector)``; a hash already present keeps its first vector."""
        dims = table.schema.field("vector").type.list_size
        table = table.select(["hash", "vector"]).cast(pa.schema([
            ("hash", pa.binary(16)), ("vector", pa.list_(pa.float32(), dims))]))
        base = 0 if self.table is None else self.table.num_rows
        for i, h in enumerate(table["hash"].to_pylist()):
            self.where.setdefault(h, base + i)
        self.table = table if self.table is None else pa.concat_tables([self.table, table])

    @property
    def dims(self) -> int | None:
        return None if self.table is None else self.table.schema.field("vector").type.list_size


def _read(path: Path) -> pa.Table:
    return pq.ParquetFile(path).read()


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samestat(os.stat(a), os.stat(b))
    except OSError:
        return False


def carry(out: Path, prev: Path | None, model: str, extra: Pool | None = None) -> dict:
    """Give generation ``out`` (being written) the vectors of model ``model`` that it can
    have from generation ``prev`` and the pool ``extra``; record them in its manifest.
    Returns the manifest's ``vectors`` entry."""
    manifest = generations.read_manifest(out)
    before = _entry(prev, model)
    pool, pooled = Pool(), False
    dims = before.get("dims") or (extra.dims if extra else None)
    parts: dict[str, list] = {}
    for pid in manifest["partitions"]:
        key = str(pid)
        old = before.get("parts", {}).get(key)
        if old is not None and (old[1] == 0 or not extra) and _same_file(
                prev / "chunks" / part_name(pid), out / "chunks" / part_name(pid)):
            _link(prev, out, pid)
            parts[key] = old
            continue
        if not pooled:  # every vector the rebuilt partitions may reuse, read once
            pool = _pool(prev, before, manifest["partitions"], out, extra)
            dims, pooled = dims or pool.dims, True
        parts[key] = _rebuild(out, pid, model, pool, dims)
    entry = {"model": model, "dims": dims, "count": sum(p[0] for p in parts.values()),
             "missing": sum(p[1] for p in parts.values()), "parts": parts}
    manifest["vectors"] = entry
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return entry


def _entry(gen: Path | None, model: str) -> dict:
    """The manifest's vectors entry of ``gen`` when its vectors are of ``model``."""
    if gen is None:
        return {}
    try:
        entry = generations.read_manifest(gen).get("vectors") or {}
    except Exception:  # a damaged previous generation: nothing to reuse
        return {}
    return entry if entry.get("model") == model and entry.get("dims") else {}


def _link(prev: Path, out: Path, pid: int) -> None:
    (out / VECTORS).mkdir(exist_ok=True)
    os.link(prev / VECTORS / part_name(pid), out / VECTORS / part_name(pid))


def _pool(prev: Path | None, before: dict, pids: Iterable[int], out: Path,
          extra: Pool | None) -> Pool:
    """The previous generation's vectors of the partitions ``out`` does not link (a
    full build links none; an update, all but its own), then ``extra``'s."""
    pool = Pool()
    for key in before.get("parts", {}):
        pid = int(key)
        same = pid in pids and _same_file(prev / "chunks" / part_name(pid),
                                          out / "chunks" / part_name(pid))
        if not same or before["parts"][key][1]:
            pool.add(_read(prev / VECTORS / part_name(pid)))
    if extra is not None and extra.table is not None:
        pool.add(extra.table)
    return pool


def _rebuild(out: Path, pid: int, model: str, pool: Pool, dims: int | None) -> list:
    """Write the vectors of partition ``pid`` of ``out`` found in ``pool``; returns
    ``[vectors, chunks still missing one, the name of out]`` (without the name when no
    file is written). The name tells a reader holding the vectors in memory that the
    file was written anew (``ra.index.vector_tables``); a linked file keeps the entry it
    had. Its inode could not tell: the file system gives a new file the number of one
    just deleted, and a long-lived reader kept the vectors of a file it had replaced."""
    from ra.text.embedding_text import chunk_rows

    chunks = pq.ParquetFile(out / "chunks" / part_name(pid)).read(
        columns=["ord", "breadcrumb", "body", "descendants"])
    ords, _, hashes = chunk_rows(chunks)
    found = [(o, h, pool.where[h]) for o, h in zip(ords, hashes, strict=True)
             if h in pool.where]
    if dims is None:  # no vector of this model exists anywhere yet
        return [0, len(ords)]
    vectors = (pool.table["vector"].take([i for _, _, i in found]) if found
               else vector_array([], dims))
    table = pa.table([pa.array([o for o, _, _ in found], pa.int32()),
                      pa.array([h for _, h, _ in found], pa.binary(16)),
                      pa.array([model] * len(found), pa.string()), vectors],
                     schema=schema(dims))
    write(out / VECTORS / part_name(pid), table)
    return [len(found), len(ords) - len(found), out.name]


def write(path: Path, table: pa.Table) -> None:
    """One vectors file (no dictionary for the floats and hashes: they are all
    distinct)."""
    from ra.pipeline.partitions import write_table

    write_table(table, path, row_group=8192, dictionary=["model"])


# --- what is missing --------------------------------------------------------------------------

def missing_rows(gen: Path, model: str) -> tuple[list[bytes], list[str]]:
    """``(hashes, texts)`` of the chunks of generation ``gen`` that have no vector of
    ``model``, each distinct text once."""
    from ra.text.embedding_text import chunk_rows

    manifest = generations.read_manifest(gen)
    entry = _entry(gen, model)
    seen: dict[bytes, str] = {}
    for pid in manifest["partitions"]:
        old = entry.get("parts", {}).get(str(pid))
        if old is not None and old[1] == 0:
            continue
        chunks = pq.ParquetFile(gen / "chunks" / part_name(pid)).read(
            columns=["ord", "breadcrumb", "body", "descendants"])
        ords, texts, hashes = chunk_rows(chunks)
        have: set[int] = set()
        if old is not None:
            have = set(_read(gen / VECTORS / part_name(pid))["ord"].to_pylist())
        for o, t, h in zip(ords, texts, hashes, strict=True):
            if o not in have:
                seen.setdefault(h, t)
    return list(seen), list(seen.values())


def previous(out: Path) -> Path | None:
    """The generation a build folder follows: the current one of its index (the writer
    lock is held while it is written)."""
    name = generations.current_name(out.parent)
    return None if name is None else out.parent / name
