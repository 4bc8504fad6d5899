"""The compact artifacts: what a one-shot reader scores from, in two files.

A fresh ``ra search`` asks DuckDB one BM25F question over ``tf_postings`` (postings with
the length of their field) and ``meta`` (the chunk metadata ranking and output need). Read
from the partitioned artifacts, that is a join of two artifacts over every partition,
opening three folders of files (39 partitions on cpp-docs) to score a few terms: 56 of the
62 ms that query took in a fresh process. A full build therefore also writes, once per
generation (``ra.store.layout.COMPACT``):

- ``hot_postings.parquet``: ``term_id, ord, field, tf, len, part, positions``, sorted by
  term and chunk in small row groups, so a query's terms are a few row groups of one
  file (a phrase's positions too: over the partitions' files, a few chunks' positions
  of six terms took 25 ms, 9 ms from here);
- ``hot_chunks.parquet``: every chunk row without its texts (heading, body,
  description), with its ``part``, sorted by ``ord``;
- ``hot_store.arrow``: what a long-lived reader holds of every chunk
  (``ra.index.chunkstore``: its metadata, parent's ord and text), uncompressed Arrow IPC
  that the reader memory-maps instead of loading: record batches of whole partitions,
  each with the order of its ids (``id_order``), and each row with its ``part``
  (``write_store``, with ``hot_chunks``; a build writes them first, before it holds the
  postings).

An incremental update does not rewrite them (that would cost a full pass over the
postings on every edit): it hard-links them into the new generation and records the
partitions it rewrote, added or emptied as ``stale`` in the manifest's ``compact``
entry. A reader then takes the rows of the other partitions from the compact files and
those of the stale ones from their partition files (``ra.index.reader``), so the scores
are those of the partitioned artifacts, to the last bit of each row. The next full build
writes fresh compact files. A long-lived reader loads its in-memory ``meta`` and
``tf_postings`` from the same definitions (already in order: about 0.3 s of a 1.3 s load
on cpp-docs).
"""

from __future__ import annotations

import os
from bisect import bisect_left
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ra.pipeline.impacts import ImpactWriter, record
from ra.store.artifacts import HOT_STORE, POSTINGS, SCHEMAS
from ra.store.layout import COMPACT, FIELDS, artifact_path, part_name

#: Rows per row group of ``hot_postings``: 16,384 scored a fresh query on cpp-docs in
#: 17 ms (one group per partition file: 35 ms).
ROW_GROUP = 16_384
#: Rows per row group of ``hot_chunks``: the metadata of a page of results is looked up
#: by ``ord`` (4,096, as the ``chunks`` partitions: 9 ms on cpp-docs; one group: 32 ms).
CHUNK_ROW_GROUP = 4_096
#: The chunk columns the compact chunk table leaves out: the texts, which search reads
#: for a page of results only.
TEXTS = ("heading", "body", "plain", "description")


def write_compact(out: Path, parts: list, terms: pa.Table, weights, avg_length: dict
                  ) -> dict:
    """Write the compact artifacts of the generation in ``out`` but ``hot_store`` and
    ``hot_chunks`` (``write_store``, which a build writes first) from its complete
    partitions ``parts`` (``ra.pipeline.partitions.Part``, in ``ord`` order, their
    postings written in ``out``) and its ``terms``, and their impacts under ``weights``
    (``k1``, ``b``, ``boosts``: ``ra.pipeline.impacts``) and the collection's
    ``avg_length``; returns the manifest's ``compact`` entry (nothing stale, and what the
    impacts were computed under: ``ra.pipeline.impacts.record``).

    Each partition's postings are sorted by term, so the rows of a range of terms are one
    slice of each partition's file: ``hot_postings`` is written a range of about
    ``BATCH`` rows at a time, each partition's file read a row group at a time as the
    ranges reach it (``_Postings``). A build holds no copy of its postings (DuckDB's sort
    of the whole table took 300 MB more on cpp-docs; holding every partition's, 250 MB
    more at five times cpp-docs)."""
    import pyarrow.parquet as pq

    impacts = ImpactWriter(out, weights, avg_length, ROW_GROUP)
    # no dictionary encoding (nor in hot_impacts, hot_chunks): their columns are numbers,
    # whose dictionaries cost more than they saved (cpp-docs: hot_postings 0.47 -> 0.34 s
    # of CPU, 28.4 -> 23.2 MB; hot_impacts 0.18 -> 0.07 s, 19.0 -> 14.0 MB)
    with pq.ParquetWriter(out / artifact_path("hot_postings"), HOT_POSTINGS,
                          compression="zstd", use_dictionary=False) as writer, impacts, \
            ThreadPoolExecutor(1) as postings_out, ThreadPoolExecutor(1) as impacts_out:
        lengths = _field_lengths(parts)
        sources = [_Postings(out / "postings" / part_name(p.id)) for p in parts]
        pending: list = []
        for _, hi in _term_ranges(terms):
            pieces = []
            for part, source in zip(parts, sources, strict=True):
                rows = source.below(hi)
                if rows.num_rows:
                    pieces.append(rows.append_column("part", pa.repeat(
                        pa.scalar(part.id, pa.int32()), rows.num_rows)))
            if pieces:
                # each piece is in (term, ord, field) order and the partitions in ord
                # order: a stable sort by term alone orders the batch
                batch = pa.concat_tables(pieces).sort_by("term_id")
                batch = batch.append_column("len", lengths(batch["ord"], batch["field"]))
                batch = batch.select(HOT_POSTINGS.names).cast(HOT_POSTINGS)
                # written and weighed on threads of their own while the next batch is
                # made (Parquet, zstd and NumPy release the GIL); two batches at most
                done = [postings_out.submit(writer.write_table, batch,
                                            row_group_size=ROW_GROUP),
                        impacts_out.submit(impacts.write, batch)]
                for f in pending:
                    f.result()
                pending = done
        for f in pending:
            f.result()
    return {"stale": [], "impacts": record(weights, avg_length)}


class _Postings:
    """One partition's ``postings`` file (sorted by term), read in term order a row
    group at a time: ``below`` reads the row groups whose smallest term is under its
    bound and holds what they have beyond it for the next call (a row group at most)."""

    COLUMNS = ["term_id", "ord", "field", "tf", "positions"]

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.meta = pq.read_metadata(path)
        term = self.meta.schema.to_arrow_schema().get_field_index("term_id")
        self.lows = [_low(self.meta.row_group(i).column(term))
                     for i in range(self.meta.num_row_groups)]
        self.next = 0  # the first row group not read
        self.rows = POSTINGS.empty_table().select(self.COLUMNS)  # read, from ``at`` on
        self.ids, self.at = _sorted_ids(self.rows["term_id"]), 0

    def below(self, hi: int) -> pa.Table:
        """The rows not returned yet whose term id is under ``hi``."""
        import pyarrow.parquet as pq

        first = self.next
        while self.next < len(self.lows) and (self.lows[self.next] is None
                                              or self.lows[self.next] < hi):
            self.next += 1
        if self.next > first:
            with pq.ParquetFile(self.path, metadata=self.meta) as file:
                read = file.read_row_groups(range(first, self.next), columns=self.COLUMNS)
            self.rows = pa.concat_tables([self.rows.slice(self.at), read]).combine_chunks()
            self.ids, self.at = _sorted_ids(self.rows["term_id"]), 0
        end = bisect_left(self.ids, hi, self.at)
        taken, self.at = self.rows.slice(self.at, end - self.at), end
        return taken


def _low(column) -> int | None:
    """The smallest value of a row group's column (``ColumnChunkMetaData``), if known."""
    stats = column.statistics
    return stats.min if stats is not None and stats.has_min_max else None


def write_store(out: Path, parts: list) -> None:
    """Write ``hot_store.arrow`` (``ra.store.artifacts.HOT_STORE``) and ``hot_chunks``
    from each partition's chunks, read back from its ``chunks`` file when the build
    dropped them (``ra.pipeline.run.Spill`` keeps their ords alone: their metadata was
    some 230 MB at five times cpp-docs), one partition at a time. ``hot_store`` holds the rows of
    ``hot_chunks`` with the chunk's text (``heading || body``) and its document's and
    its parent's ord (documents are whole in a partition), in record batches of whole
    partitions up to ``STORE_BATCH`` rows, each with the sort order of its ids, which the
    reader searches ids in. Few batches: the reader reads the metadata of a search's
    chunks with one Arrow ``take`` per batch (50 µs each).

    A batch's texts are copied into one buffer of their final size a partition at a
    time (``_Texts``), so a build holds them once (85 MB on the C++ docs), not as the
    partitions' arrays and their concatenation besides."""
    import pyarrow.parquet as pq

    schema, hot = HOT_STORE, _hot_chunks_schema()
    with pa.OSFile(str(out / artifact_path("hot_store")), "wb") as sink, \
            pa.ipc.new_file(sink, schema) as writer, \
            pq.ParquetWriter(out / artifact_path("hot_chunks"), hot,
                             compression="zstd", use_dictionary=False) as hot_chunks:
        for group in _store_groups(parts):
            n = sum(p.chunks.num_rows for p in group)
            sizes = [_text_bytes(p) for p in group]
            texts = (_Texts(n, sum(m for m, _ in sizes)), _Texts(n, sum(t for _, t in sizes)))
            rows = []
            for part in group:
                chunks = _chunks_of(out, part)
                hot_chunks.write_table(_hot_chunk_rows(chunks, part.id, hot),
                                       row_group_size=CHUNK_ROW_GROUP)
                rows.append(_store_rows(chunks, part.id, schema, texts))
                del chunks
            if texts[0].row:
                writer.write_batch(_store_batch(rows, texts, schema))


#: Rows per record batch of ``hot_store`` at most (unless one partition has more).
STORE_BATCH = 131_072


def _store_groups(parts: list) -> list[list]:
    """The partitions of each record batch: whole partitions, up to ``STORE_BATCH``
    rows (one partition with more is a batch of its own)."""
    groups: list[list] = [[]]
    rows = 0  # of the last group
    for part in parts:
        if groups[-1] and rows + part.chunks.num_rows > STORE_BATCH:
            groups.append([])
            rows = 0
        groups[-1].append(part)
        rows += part.chunks.num_rows
    return groups


def _text_bytes(part) -> tuple[int, int]:
    """The bytes of a partition's texts (``text_bytes``): counted by ``Spill`` when it
    dropped them, else counted now."""
    return part.text_bytes if part.text_bytes is not None else text_bytes(part.chunks)


def text_bytes(chunks: pa.Table) -> tuple[int, int]:
    """UTF-8 bytes of the ``heading`` and ``body`` columns of ``chunks``, and of their
    ``plain`` column."""
    def size(c: str) -> int:
        return pc.sum(pc.binary_length(chunks[c])).as_py() or 0
    return size("heading") + size("body"), size("plain")


def _chunks_of(out: Path, part) -> pa.Table:
    """The chunks of ``part``: its own, or read from its ``chunks`` file (all but the
    description) when the build dropped them."""
    import pyarrow.parquet as pq

    if "body" in part.chunks.column_names:
        return part.chunks
    names = [n for n in SCHEMAS["chunks"].names if n != "description"]
    chunks = pq.read_table(out / "chunks" / part_name(part.id), columns=names)
    if not chunks["ord"].equals(part.chunks["ord"]):
        raise ValueError(f"partition {part.id}: chunks out of order")
    return chunks


def _hot_chunk_rows(chunks: pa.Table, pid: int, schema: pa.Schema) -> pa.Table:
    """The rows of ``hot_chunks`` (``schema``) of a partition's ``chunks``."""
    texts = [t for t in TEXTS if t in chunks.column_names]
    rows = chunks.drop_columns(texts).cast(schema.remove(len(schema) - 1))
    return rows.append_column("part", pa.repeat(pa.scalar(pid, pa.int32()), rows.num_rows))


class _Texts:
    """A string column of ``rows`` values and ``size`` bytes, filled in order (Arrow
    buffers and ``bytearray``s)."""

    def __init__(self, rows: int, size: int) -> None:
        self.offsets = bytearray(4 * (rows + 1))  # int32, the first 0
        self.data = bytearray(size)
        self.row = self.at = 0

    def add(self, values: pa.Array) -> None:
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        n = len(values)
        if not n:
            return
        offsets = pa.Array.from_buffers(pa.int32(), n + 1, [None, values.buffers()[1]],
                                        offset=values.offset)
        first, last = offsets[0].as_py(), offsets[n].as_py()
        moved = pc.add(offsets.slice(1), pa.scalar(self.at - first, pa.int32()))
        start = 4 * (self.row + 1)
        self.offsets[start:start + 4 * n] = memoryview(moved.buffers()[1])[
            4 * moved.offset:4 * (moved.offset + n)]
        self.data[self.at:self.at + last - first] = memoryview(values.buffers()[2])[first:last]
        self.row, self.at = self.row + n, self.at + last - first

    def array(self) -> pa.Array:
        if 4 * (self.row + 1) != len(self.offsets) or self.at != len(self.data):
            raise ValueError("hot_store: texts of another size than counted")
        return pa.StringArray.from_buffers(self.row, pa.py_buffer(self.offsets),
                                           pa.py_buffer(self.data))


def _store_rows(chunks: pa.Table, pid: int, schema: pa.Schema,
                texts: tuple[_Texts, _Texts]) -> pa.Table:
    """The rows of ``hot_store`` of one partition's ``chunks`` but their text and plain
    text, which go to ``texts``, and their ``id_order``."""
    texts[0].add(pc.binary_join_element_wise(chunks["heading"], chunks["body"], ""))
    texts[1].add(chunks["plain"])
    parent = pc.index_in(chunks["parent_id"], value_set=chunks["id"])
    columns = {name: chunks[name] for name in schema.names if name in chunks.column_names}
    columns.update(
        doc_ord=pc.subtract(chunks["ord"], chunks["position"]),
        parent_ord=pc.take(chunks["ord"], parent),
        part=pa.repeat(pa.scalar(pid, pa.int32()), chunks.num_rows))
    names = [n for n in schema.names if n not in ("text", "plain", "id_order")]
    return pa.table([columns[n] for n in names], names=names)


def _store_batch(tables: list[pa.Table], texts: tuple[_Texts, _Texts], schema: pa.Schema
                 ) -> pa.RecordBatch:
    """One record batch of the rows ``tables`` and their ``texts``, with the sort order
    of their ids."""
    table = pa.concat_tables(tables).combine_chunks()
    order = pc.sort_indices(table["id"]).cast(pa.int32())
    columns = {**{n: table[n] for n in table.column_names}, "text": texts[0].array(),
               "plain": texts[1].array(), "id_order": order}
    return pa.table([columns[n] for n in schema.names], names=schema.names).cast(
        schema).combine_chunks().to_batches()[0]


#: The schema of ``hot_postings``.
HOT_POSTINGS = pa.schema([("term_id", pa.int32()), ("ord", pa.int32()), ("field", pa.int8()),
                          ("tf", pa.int32()), ("len", pa.int32()), ("part", pa.int32()),
                          POSTINGS.field("positions")])
#: Chunk counts (df) of the terms of ``hot_postings`` sorted at a time.
BATCH = 131_072


def _hot_chunks_schema() -> pa.Schema:
    schema = SCHEMAS["chunks"]
    for name in TEXTS:
        schema = schema.remove(schema.get_field_index(name))
    return schema.append(pa.field("part", pa.int32()))


def _field_lengths(parts: list):
    """A function from the ``ord`` and ``field`` columns of postings to the length of
    their fields: a lookup by position when the chunks are numbered 0..n-1 in order (a
    full build), else a join."""
    lengths = pa.concat_tables([p.lengths.cast(SCHEMAS["lengths"]) for p in parts])
    n = lengths.num_rows
    if lengths["ord"].equals(pa.chunked_array([pa.array(range(n), pa.int32())])):
        flat = pa.chunked_array([c for name in FIELDS for c in lengths[name].chunks],
                                pa.int32()).combine_chunks()

        def by_position(ords, fields):
            return flat.take(pc.add(pc.multiply(fields.cast(pa.int32()), n), ords))
        return by_position
    rows = pa.concat_tables([pa.table({
        "ord": lengths["ord"], "field": pa.repeat(pa.scalar(code, pa.int8()), n),
        "len": lengths[name]}) for code, name in enumerate(FIELDS)])

    def by_join(ords, fields):
        keys = pa.table({"ord": ords, "field": fields, "i": pa.array(range(len(ords)))})
        return keys.join(rows, ["ord", "field"]).sort_by("i")["len"]
    return by_join


def _term_ranges(terms: pa.Table) -> list[tuple[int, int]]:
    """Ranges ``[lo, hi)`` of term ids (``terms`` numbers them 0..n-1) whose chunk counts
    add up to about ``BATCH``: a term has a posting per field of each chunk it is in, so
    a range holds one to four times as many postings."""
    ranges, lo, rows = [], 0, 0
    for term, df in enumerate(terms["df"].to_pylist()):
        rows += df
        if rows >= BATCH:
            ranges.append((lo, term + 1))
            lo, rows = term + 1, 0
    if lo < terms.num_rows:
        ranges.append((lo, terms.num_rows))
    return ranges


def _sorted_ids(column) -> memoryview:
    """A sorted int32 column of term ids as a sequence ``bisect`` searches in place."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not len(array):
        return memoryview(b"").cast("i")
    ints = memoryview(array.buffers()[1]).cast("i")
    return ints[array.offset:array.offset + len(array)]


def carry_compact(prev: Path, out: Path, entry: dict | None, touched: list[int]
                  ) -> dict | None:
    """Hard-link the compact artifacts of ``prev`` (manifest entry ``entry``) into
    ``out``; the entry of the new generation, whose stale partitions add ``touched``
    (its impacts then no longer match its statistics: readers score with the formula
    until the next full build, see ``ra.index.reader``). None when ``prev`` had none."""
    if entry is None:
        return None
    for name in COMPACT:
        os.link(prev / artifact_path(name), out / artifact_path(name))
    return {**entry, "stale": sorted({*entry["stale"], *touched})}
