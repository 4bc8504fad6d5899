"""Carrying a long-lived reader over to the incremental update of its generation.

``carry_over``: instead of loading the new generation (seconds on a large corpus), the
held reader's memory is patched by the rows that changed: the chunks of the update's
partitions that are gone are deleted from its in-memory tables and its ``ChunkStore``
(whose Arrow batches are sliced around them),
those numbered from the old ``next_ord`` on are added (to the ``ChunkStore`` from the
rows the update handed over when this process made it, ``relations.store_rows``; else,
and to the tables it holds, read from the new partitions),
and the changed terms and surface words are read again (handed over by the update when
this process made it, ``ra.pipeline.update.Delta``; else found in the files: ords, terms
and words of the update's partitions before and after). Chunk numbers are never reused
and a changed file's chunks are numbered anew, so the tables change by rows: tens of
milliseconds where loading takes seconds. The successor takes over the reader's DuckDB
connection; the old reader is closed. ``tests/test_successor.py`` holds a carried-over
reader equal to one loaded afresh.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ra.index.integrity import check_files
from ra.index.reader import IndexReader, _stats_of
from ra.index.relations import (
    RELATIONS,
    RESIDENT,
    VIEWS,
    define_relations,
    quote,
    register_store,
    store_rows,
    store_sql,
    view_name,
)
from ra.store import generations
from ra.store.layout import PARTITIONED, part_name

if TYPE_CHECKING:
    from ra.pipeline.update import Delta


def carry_over(held: IndexReader, generation: generations.Generation) -> IndexReader | None:
    """A long-lived reader of ``generation`` made from ``held``'s memory, or None.

    Possible when ``generation`` is the incremental update (``ra.pipeline.update``) of the
    one ``held`` reads; ``held`` is closed then: its connection moves to the successor.
    ``impacts`` were computed under the old length averages, so they are dropped: the
    successor computes those of the terms its plain queries ask about, when they first
    do, under the averages now (``impact_arrays.TermImpacts``), and scores other queries
    with ``bm25f_sql`` over ``tf_postings``: the same scores as a reader loaded afresh,
    until one replaces it (``ra.index.warm``).

    None, and nothing changed, when this cannot be done: ``held`` is not in memory,
    another thread holds it, or ``generation`` follows another generation. A failure
    midway closes ``held`` and raises."""
    update = generation.manifest.get("update") or {}
    if (held._vocab is None or update.get("base") != held.generation.path.name
            or generation.manifest.get("config_hash") != held.manifest.get("config_hash")):
        return None
    if not held.lock.acquire(blocking=False):
        return None
    try:
        touched = [p for p in update.get("partitions", [])
                   if p in generation.manifest["partitions"]]
        check_files(generation, touched)  # the others are links to checked files
        new = IndexReader.__new__(IndexReader)
        new.__dict__.update(held.__dict__)
        new.lock, new.generation = threading.RLock(), generation
        new.manifest, new.stats = generation.manifest, _stats_of(generation.manifest)
        from ra.pipeline.update import take_delta

        delta = take_delta(generation.path, held.generation.path.name)
        try:
            _patch(new, held.generation, held.manifest, update.get("partitions", []), delta)
        except BaseException:
            held.con.close()
            raise
        held.con = _ClosedConnection()
        held.generation.close()
        held._vocab, held._store = None, None
        return new
    finally:
        held.lock.release()


def _patch(new: IndexReader, old: generations.Generation, old_manifest: dict,
           touched: list[int], delta: Delta | None = None) -> None:
    """Turn the tables of ``old`` into those of ``new.generation``; ``delta``: what the
    update changed, when this process made it (else it is read from the files)."""
    since = int(old_manifest["next_ord"])
    after = _part_files(new.generation, new.manifest, touched)
    gone = set(delta.gone) if delta else _gone(new, old, old_manifest, touched, after)
    tables = [name for name in RESIDENT if name in new._held]  # the rest are views
    if delta is None or tables:
        new.con.execute("CREATE OR REPLACE TEMP TABLE gone AS "
                        "SELECT unnest($o::INTEGER[]) AS ord", {"o": sorted(gone)})
    if delta is None:
        changed_terms = {i for (i,) in new.con.execute(
            "SELECT DISTINCT term_id FROM tf_postings WHERE ord IN (SELECT ord FROM gone)"
        ).fetchall()}
        gone_files = [k for (k,) in new.con.execute(
            f"SELECT DISTINCT {_FILE_KEY} FROM meta WHERE ord IN (SELECT ord FROM gone)"
        ).fetchall()]
    for name in tables:
        new.con.execute(f"DELETE FROM {name} WHERE ord IN (SELECT ord FROM gone)")
    if delta is None or tables:
        new.con.execute("DROP TABLE gone")
    new.drop_impacts()
    new.patched = True
    new._store.drop(gone)  # first: a changed file's chunks come back with their ids
    if after and (tables or delta is None):  # the new rows: from the update's partitions
        _point_views(new, touched, names=("chunks", "lengths", "postings"))  # RELATIONS read
        for name, body, order in RELATIONS:
            if name in tables:
                new.con.execute(f"INSERT INTO {name} SELECT * FROM ({body}) "
                                f"WHERE ord >= $since ORDER BY {order}", {"since": since})
    if after:  # the new chunks: handed over by the update, else read back
        if delta is not None:
            new._store.add(store_rows(delta.chunks))
        else:
            bodies = {name: body for name, body, _ in RELATIONS}
            new._store.add(new.con.sql(store_sql(bodies["meta"], bodies["texts"])
                                       + f" WHERE m.ord >= {since} ORDER BY m.ord"
                                       ).to_arrow_table())
    # the relations not loaded yet are views over the old generation's files: now over
    # the new one's (loading them to patch them cost the first edit after a load 0.4 s
    # on cpp-docs, 2 s at five times its size); ``texts`` is the store's, next
    define_relations(new.con, new.generation, [n for n, _, _ in RELATIONS if n not in tables])
    register_store(new.con, new._store)
    _point_views(new)
    if delta is None:
        new_words = _added_words(new, since, changed_terms) if after else set()
        old_surface = _part_files(old, old_manifest, touched, "surface")
        old_words = {w for (w,) in new.con.execute(
            f"SELECT DISTINCT word FROM read_parquet([{old_surface}]) "
            f"WHERE {_FILE_KEY} = ANY($keys)", {"keys": gone_files}).fetchall()
        } if old_surface and gone_files else set()
        words, rows, present = old_words | new_words, None, None
    else:
        changed_terms, words = set(delta.term_ids), set(delta.words)
        rows, present = delta.terms, delta.present
    new._near = {}
    _patch_vocabulary(new, changed_terms, words, rows, present)


def _gone(new: IndexReader, old: generations.Generation, old_manifest: dict,
          touched: list[int], after: str) -> set[int]:
    """The ords of the update's partitions before it that are not there after it."""
    before = _part_files(old, old_manifest, touched)
    ords = "SELECT ord FROM read_parquet([{}])"
    gone = {o for (o,) in new.con.execute(ords.format(before)).fetchall()} if before else set()
    if after:
        gone -= {o for (o,) in new.con.execute(ords.format(after)).fetchall()}
    return gone


def _added_words(new: IndexReader, since: int, changed_terms: set[int]) -> set[str]:
    """The surface words of the files of the chunks numbered from ``since`` on (the
    update's new chunks); their terms are added to ``changed_terms``."""
    changed_terms.update(i for (i,) in new.con.execute(
        "SELECT DISTINCT term_id FROM tf_postings WHERE ord >= $since",
        {"since": since}).fetchall())
    fresh_files = [k for (k,) in new.con.execute(
        f"SELECT DISTINCT {_FILE_KEY} FROM meta WHERE ord >= $since",
        {"since": since}).fetchall()]
    return {w for (w,) in new.con.execute(
        f"SELECT DISTINCT word FROM surface WHERE {_FILE_KEY} = ANY($keys)",
        {"keys": fresh_files}).fetchall()}


def _patch_vocabulary(new: IndexReader, term_ids: set[int], words: set[str],
                      rows=None, present=None) -> None:
    """Read again the terms ``term_ids`` (their df changed, or they are new or gone)
    and the surface words ``words`` (of the files gone and added); ``rows`` and
    ``present``: those still there, when known (``Delta``)."""
    if rows is None:
        rows = new.con.execute("SELECT term, term_id, df FROM terms WHERE term_id = "
                               "ANY($ids::INTEGER[])", {"ids": sorted(term_ids)}).fetchall()
    for i in term_ids:
        term, _ = new._term_info.pop(i, (None, 0))
        if term is not None:
            new._terms.pop(term, None)
    for term, i, df in rows:
        new._terms[term] = (i, df)
        new._term_info[i] = (term, df)
    if present is None:
        present = new.con.execute("SELECT word, term_id FROM words WHERE word = "
                                  "ANY($w::VARCHAR[])", {"w": sorted(words)}).fetchall()
    new._vocab.replace(words, present)


def _point_views(reader: IndexReader, parts: list[int] | None = None,
                 names: tuple[str, ...] = VIEWS) -> None:
    """Point the artifact views ``names`` at the reader's generation; with ``parts``, the
    partitioned ones at those partitions only."""
    for name in names:
        if parts is not None and name in PARTITIONED:
            files = ", ".join(quote(reader.generation.path / name / part_name(p))
                              for p in parts if p in reader.manifest["partitions"])
            source = f"[{files}]"
        else:
            source = quote(reader.generation.scan(name))
        reader.con.execute(f"CREATE OR REPLACE VIEW {view_name(name)} AS SELECT * FROM "
                           f"read_parquet({source})")


def _part_files(generation: generations.Generation, manifest: dict, parts: list[int],
                artifact: str = "chunks") -> str:
    """The quoted ``artifact`` files of those of ``parts`` that ``generation`` has."""
    held = set(manifest.get("partitions") or ())
    return ", ".join(quote(generation.path / artifact / part_name(p)) for p in parts
                     if p in held)


_FILE_KEY = "tree || ':' || path"  # a file of the knowledge base, as a chunk row names it


class _ClosedConnection:
    """What a reader whose connection moved to its successor holds: every use fails as
    on a closed DuckDB connection; closing it again does nothing. (A real connection,
    opened and closed, costs a DuckDB instance: about 35 ms on the edit path.)"""

    def close(self) -> None:
        pass

    def interrupt(self) -> None:
        pass

    def __getattr__(self, name: str):
        import duckdb

        raise duckdb.ConnectionException("Connection already closed!")
