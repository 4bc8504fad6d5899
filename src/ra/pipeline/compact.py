"""The compact artifacts: what a one-shot reader scores from, in two files.

A fresh ``ra search`` asks DuckDB one BM25F question over ``tf_postings`` (postings with
the length of their field) and ``meta`` (the chunk metadata ranking and output need). Read
from the partitioned artifacts, that is a join of two artifacts over every partition,
opening three folders of files (39 partitions on cpp-docs) to score a few terms: 56 of the
62 ms that query took in a fresh process. A full build therefore also writes, once per
generation (``ra.store.layout.COMPACT``):

- ``hot_postings.parquet``: ``term_id, ord, field, tf, len, part``, sorted by term and
  chunk in small row groups, so a query's terms are a few row groups of one file;
- ``hot_chunks.parquet``: every chunk row without its texts (heading, body,
  description), with its ``part``, sorted by ``ord``.

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
from pathlib import Path

from ra.store.layout import COMPACT, FIELDS, artifact_path

#: Rows per row group of ``hot_postings``: 16,384 scored a fresh query on cpp-docs in
#: 17 ms (4,096: about the same; one group per partition file: 35 ms).
ROW_GROUP = 16_384
#: Rows per row group of ``hot_chunks``: the metadata of a page of results is looked up
#: by ``ord`` (4,096, as the ``chunks`` partitions: 9 ms on cpp-docs; one group: 32 ms).
CHUNK_ROW_GROUP = 4_096
#: The chunk columns the compact chunk table leaves out: the texts, which search reads
#: for a page of results only.
TEXTS = ("heading", "body", "description")


def _sql_path(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def field_len(lengths: str, field: str) -> str:
    """SQL for the length of field ``field`` (a field code expression) in ``lengths``."""
    whens = " ".join(f"WHEN {code} THEN {lengths}.{name}" for code, name in enumerate(FIELDS))
    return f"CASE {field} {whens} END"


def write_compact(out: Path) -> dict:
    """Write the compact artifacts of the complete generation in ``out`` (its partitions
    written); returns the manifest's ``compact`` entry (nothing stale)."""
    import duckdb

    part = r"regexp_extract({}filename, 'part-(\d+)\.parquet$', 1)::INTEGER"
    glob = {name: _sql_path(out / artifact_path(name) / "*.parquet")
            for name in ("postings", "lengths", "chunks")}
    postings, chunks = (out / artifact_path(name) for name in COMPACT)
    with duckdb.connect() as con:
        con.execute("SET enable_progress_bar = false")
        con.execute(
            f"COPY (SELECT p.term_id, p.ord, p.field, p.tf, {field_len('l', 'p.field')} AS len, "
            f"{part.format('p.')} AS part FROM read_parquet({glob['postings']}, filename = true) p "
            f"JOIN read_parquet({glob['lengths']}) l ON l.ord = p.ord "
            f"ORDER BY p.term_id, p.ord, p.field) TO {_sql_path(postings)} "
            f"(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP})")
        con.execute(
            f"COPY (SELECT * EXCLUDE ({', '.join(TEXTS)}, filename), {part.format('')} AS part "
            f"FROM read_parquet({glob['chunks']}, filename = true) ORDER BY ord) "
            f"TO {_sql_path(chunks)} (FORMAT parquet, COMPRESSION zstd, "
            f"ROW_GROUP_SIZE {CHUNK_ROW_GROUP})")
    return {"stale": []}


def carry_compact(prev: Path, out: Path, entry: dict | None, touched: list[int]
                  ) -> dict | None:
    """Hard-link the compact artifacts of ``prev`` (manifest entry ``entry``) into
    ``out``; the entry of the new generation, whose stale partitions add ``touched``.
    None when ``prev`` had none."""
    if entry is None:
        return None
    for name in COMPACT:
        os.link(prev / artifact_path(name), out / artifact_path(name))
    return {"stale": sorted({*entry["stale"], *touched})}
