"""Stage 4, postings: analysed rows → vocabulary, postings and statistics.

Terms are numbered and postings are sorted by (term_id, ord, field) and written in small
row groups, so a query that filters ``term_id`` reads only the row groups holding its
terms (Parquet min/max statistics let DuckDB skip the rest). Document frequency counts
chunks, over all fields: BM25F's IDF is per term, not per field. The collection-wide
grouping of a full build runs in DuckDB over Arrow tables, on every core; postings (a
hash lookup of each row's term and a sort) and an update's adjustments run in Arrow
compute, which needs no DuckDB connection (opening one costs 20-35 ms) and is three times
faster on a partition.

A full build numbers terms in sorted order (``terms_of``). An update keeps every existing
term id and adjusts df/cf by exactly what the changed files removed and added
(``updated_terms``), numbering new terms after the largest id, so the partitions it does
not rewrite stay valid and statistics stay those of a full build.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from ra.store.artifacts import POSTINGS, TERMS, WORDS
from ra.store.layout import FIELDS

POSTINGS_ROW_GROUP = 16_384
#: The order of postings rows: by term, so that a query's terms are a few row groups.
POSTINGS_ORDER = [("term_id", "ascending"), ("ord", "ascending"), ("field", "ascending")]


def _duck(**tables: pa.Table):
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for name, table in tables.items():
        con.register(name, table)
    return con


def terms_of(analyzed: pa.Table | Iterable[pa.Table]) -> pa.Table:
    """Every term of ``analyzed`` with df (distinct chunks) and cf, numbered in sorted
    order. ``analyzed`` may be tables that share no chunk (a build's partitions, read
    one at a time): each is counted alone and the counts added, so no table of the whole
    collection is held at once (DuckDB's count of the concatenation took 250 MB more on
    cpp-docs)."""
    tables = [analyzed] if isinstance(analyzed, pa.Table) else analyzed
    return terms_of_counts(term_counts(t) for t in tables)


def term_counts(analyzed: pa.Table) -> pa.Table:
    """``(term, df, cf)`` of the analysed rows of chunks no other table holds: what
    ``terms_of_counts`` adds up. A full build's workers count their own partitions, so
    the main process never reads the analysed rows back for the vocabulary."""
    return (analyzed.select(["term", "ord", "tf"]).group_by("term", use_threads=False)
            .aggregate([("ord", "count_distinct"), ("tf", "sum")])
            .rename_columns(["term", "df", "cf"]))


def terms_of_counts(counts: Iterable[pa.Table]) -> pa.Table:
    """The terms (``terms_of``) of tables of ``term_counts`` that share no chunk."""
    counts = [c for c in counts if c.num_rows]
    if not counts:
        return TERMS.empty_table()
    g = (pa.concat_tables(counts).group_by("term", use_threads=False)
         .aggregate([("df", "sum"), ("cf", "sum")]).sort_by("term"))
    return pa.table({"term_id": pa.array(range(g.num_rows), pa.int32()), "term": g["term"],
                     "df": g["df_sum"], "cf": g["cf_sum"]}).cast(TERMS)


def term_delta(removed: pa.Table, added: pa.Table) -> pa.Table:
    """``(term, df, cf)``: what ``added`` analysed rows contribute to each term minus what
    ``removed`` rows did (df counts distinct chunks, as ``terms_of`` does)."""
    import pyarrow.compute as pc

    pieces = []
    for sign, rows in ((-1, removed), (1, added)):
        if rows.num_rows:
            g = rows.group_by("term").aggregate([("ord", "count_distinct"), ("tf", "sum")])
            pieces.append(pa.table({
                "term": g["term"],
                "df": pc.multiply(g["ord_count_distinct"].cast(pa.int64()), sign),
                "cf": pc.multiply(g["tf_sum"].cast(pa.int64()), sign)}))
    if not pieces:
        return pa.table({"term": pa.array([], pa.string()), "df": pa.array([], pa.int64()),
                         "cf": pa.array([], pa.int64())})
    summed = pa.concat_tables(pieces).group_by("term").aggregate([("df", "sum"),
                                                                 ("cf", "sum")])
    return pa.table({"term": summed["term"], "df": summed["df_sum"], "cf": summed["cf_sum"]})


def updated_terms(old: pa.Table, removed: pa.Table, added: pa.Table) -> pa.Table:
    """``old`` terms minus the contribution of ``removed`` rows plus that of ``added``;
    terms whose df falls to zero are dropped, new terms numbered after the largest id in
    term order. Existing terms keep their ids, so postings that are not rewritten stay
    valid. Plain arithmetic on the few terms that changed: no table is joined."""
    import pyarrow.compute as pc

    delta = term_delta(removed, added)
    known = pc.is_in(delta["term"], value_set=old["term"])
    df = _plus(old["df"], old["term"], delta["term"], delta["df"])
    cf = _plus(old["cf"], old["term"], delta["term"], delta["cf"])
    fresh = delta.filter(pc.invert(known)).sort_by("term")
    last = pc.max(old["term_id"]).as_py()  # None when there are no terms yet
    first = -1 if last is None else last
    terms = pa.concat_tables([
        pa.table({"term_id": old["term_id"], "term": old["term"], "df": df, "cf": cf}
                 ).cast(TERMS),
        pa.table({"term_id": pa.array(range(first + 1, first + 1 + fresh.num_rows),
                                      pa.int32()),
                  "term": fresh["term"], "df": fresh["df"], "cf": fresh["cf"]}).cast(TERMS),
    ])
    return terms.filter(pc.greater(terms["df"], 0))


def postings_of(analyzed: pa.Table, terms: pa.Table) -> pa.Table:
    """Postings of ``analyzed`` rows with ``terms``' ids, sorted for row-group pruning."""
    import pyarrow.compute as pc

    at = pc.index_in(analyzed["term"], value_set=terms["term"])
    table = pa.table({"term_id": terms["term_id"].take(at), "ord": analyzed["ord"],
                      "field": analyzed["field"], "tf": analyzed["tf"],
                      "positions": analyzed["positions"]})
    return table.sort_by(POSTINGS_ORDER).cast(POSTINGS)


def words_of(surface: pa.Table, terms: pa.Table) -> pa.Table:
    """The surface vocabulary: each word with its term, term id and total frequency."""
    with _duck(surface=surface, terms=terms) as con:
        return con.sql("""
            SELECT s.word, s.term, t.term_id, sum(s.freq)::BIGINT AS freq
            FROM surface s JOIN terms t USING (term)
            GROUP BY ALL ORDER BY s.word""").to_arrow_table().cast(WORDS)


def updated_words(old: pa.Table, removed: pa.Table, added: pa.Table,
                  terms: pa.Table) -> pa.Table:
    """``old`` words with the frequencies of ``removed`` surface rows subtracted and those
    of ``added`` added; words no longer present are dropped, new ones take their term's
    id. A word always stems to the same term, so the word alone is the key."""
    import pyarrow.compute as pc

    delta = pa.concat_tables([
        pa.table({"word": t["word"], "term": t["term"],
                  "freq": pc.multiply(t["freq"].cast(pa.int64()), sign)})
        for sign, t in ((-1, removed), (1, added))
    ]).group_by(["word", "term"]).aggregate([("freq", "sum")])
    known = pc.is_in(delta["word"], value_set=old["word"])
    freq = _plus(old["freq"], old["word"], delta["word"], delta["freq_sum"])
    fresh = delta.filter(pc.invert(known))
    term_at = pc.index_in(fresh["term"], value_set=terms["term"])
    fresh = fresh.filter(pc.is_valid(term_at))  # as the join of ``words_of``
    ids = terms["term_id"].take(term_at.filter(pc.is_valid(term_at)))
    words = pa.concat_tables([
        pa.table({"word": old["word"], "term": old["term"], "term_id": old["term_id"],
                  "freq": freq}).cast(WORDS),
        pa.table({"word": fresh["word"], "term": fresh["term"], "term_id": ids,
                  "freq": fresh["freq_sum"]}).cast(WORDS),
    ])
    words = words.filter(pc.greater(words["freq"], 0))
    return words.sort_by("word") if fresh.num_rows else words


def _plus(values: pa.ChunkedArray, keys: pa.ChunkedArray, delta_keys: pa.ChunkedArray,
          delta: pa.ChunkedArray) -> pa.ChunkedArray:
    """``values`` (int64) plus ``delta`` where ``keys`` equal ``delta_keys`` (distinct),
    plus 0 elsewhere. Arrow compute only: NumPy is not a dependency of ra (pyarrow does
    not need it, and ``to_numpy`` fails without it)."""
    import pyarrow.compute as pc

    extra = pc.fill_null(delta.cast(pa.int64()).take(pc.index_in(keys, value_set=delta_keys)),
                         0)
    return pc.add(values.cast(pa.int64()), extra)


def postings(analyzed: pa.Table, surface: pa.Table) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``(terms, postings, words)`` of a whole collection (a full build)."""
    terms = terms_of(analyzed)
    return terms, postings_of(analyzed, terms), words_of(surface, terms)


def length_sums(lengths: pa.Table) -> dict[str, int]:
    """Total analysed length of each field over ``lengths`` rows."""
    import pyarrow.compute as pc

    return {f: int(pc.sum(lengths[f]).as_py() or 0) for f in FIELDS}


def field_chunks(lengths: pa.Table) -> dict[str, int]:
    """How many ``lengths`` rows hold at least one token in each field."""
    import pyarrow.compute as pc

    return {f: int(pc.sum(pc.greater(lengths[f], 0)).as_py() or 0) for f in FIELDS}


def indexed_chunks(lengths: pa.Table) -> int:
    """How many ``lengths`` rows hold at least one token in some field: the chunks that
    are indexed (``analyze`` leaves out those with no words of their own)."""
    import pyarrow.compute as pc

    total = lengths[FIELDS[0]]
    for f in FIELDS[1:]:
        total = pc.add(total, lengths[f])
    return int(pc.sum(pc.greater(total, 0)).as_py() or 0)


def statistics(chunks: int, sums: dict[str, int], present: dict[str, int]) -> dict:
    """Collection statistics BM25F needs: the number of indexed chunks (N), length sums
    and averages.

    A field's average length is over the chunks that have the field (``present``), as
    Lucene's is (sumTotalTermFreq / docCount): most chunks have no tags, and averaging
    over them would make every tag list look long and damp it."""
    avg = {f: (sums.get(f, 0) / present[f] if present.get(f) else 0.0) for f in FIELDS}
    return {"chunks": chunks, "length_sums": sums, "field_chunks": present,
            "avg_length": avg}
