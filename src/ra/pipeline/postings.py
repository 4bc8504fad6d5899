"""Stage 4, postings: analysed rows → vocabulary, postings and statistics.

Terms are numbered and postings are sorted by (term_id, ord, field) and written in small
row groups, so a query that filters ``term_id`` reads only the row groups holding its
terms (Parquet min/max statistics let DuckDB skip the rest). Document frequency counts
chunks, over all fields: BM25F's IDF is per term, not per field. The collection-wide
grouping of a full build runs in DuckDB over Arrow tables, on every core; postings (a
hash lookup of each row's term and a sort) run in Arrow compute, which needs no DuckDB
connection (opening one costs 20-35 ms) and is three times faster on a partition. An
update's adjustments touch only the rows of its terms and words, found through lookups
kept with the global tables (``ra.pipeline.lookups``) and changed in NumPy.

A full build numbers terms in sorted order (``terms_of``). An update keeps every existing
term id and adjusts df/cf by exactly what the changed files removed and added
(``updated_terms``), numbering new terms after the largest id, so the partitions it does
not rewrite stay valid and statistics stay those of a full build.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

import pyarrow as pa

from ra.pipeline.typed import int64
from ra.store.artifacts import POSTINGS, TERMS, WORDS
from ra.store.layout import FIELDS

POSTINGS_ROW_GROUP = 16_384
#: Words an update adds or drops beyond which it lists the new words table afresh rather
#: than insert and delete them in a copy of the old list (``updated_words``).
LIST_EDITS = 64
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
                "df": pc.multiply(g["ord_count_distinct"].cast(pa.int64()), int64(sign)),
                "cf": pc.multiply(g["tf_sum"].cast(pa.int64()), int64(sign))}))
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
    valid. Plain arithmetic on the few terms that changed, found by their ids
    (``ra.pipeline.lookups``): no table is joined or hashed."""
    import numpy as np

    from ra.pipeline.lookups import keep, term_ids

    delta = term_delta(removed, added)
    ids = term_ids(old)
    id_col = _numbers(old["term_id"])
    if (np.diff(id_col) <= 0).any():
        raise ValueError("the terms table is not in term_id order")
    names = delta["term"].to_pylist()
    found = np.fromiter((ids.get(t, -1) for t in names), np.int64, len(names))
    known = found >= 0
    at = np.searchsorted(id_col, found[known])
    df, cf = _numbers(old["df"], copy=True), _numbers(old["cf"], copy=True)
    df[at] += _numbers(delta["df"])[known]
    cf[at] += _numbers(delta["cf"])[known]
    fresh = sorted(np.flatnonzero(~known).tolist(), key=names.__getitem__)
    first = int(id_col[-1]) + 1 if len(id_col) else 0
    new_ids = np.arange(first, first + len(fresh), dtype=np.int64)
    terms = pa.Table.from_arrays([
        pa.array(np.concatenate([id_col, new_ids]), pa.int32()),
        pa.concat_arrays([*old["term"].chunks, pa.array([names[i] for i in fresh], pa.string())]),
        pa.array(np.concatenate([df, _numbers(delta["df"])[fresh]]), pa.int32()),
        pa.array(np.concatenate([cf, _numbers(delta["cf"])[fresh]]), pa.int64()),
    ], schema=TERMS)
    gone = at[df[at] <= 0]
    if len(gone):
        keep_rows = np.ones(terms.num_rows, dtype=bool)
        keep_rows[gone] = False
        terms = terms.filter(pa.array(keep_rows))
    if len(fresh) or len(gone):
        ids = dict(ids)
        ids.update((names[i], int(n)) for i, n in zip(fresh, new_ids, strict=True))
        for i in gone.tolist():
            del ids[old["term"][i].as_py()]
    keep(terms, "terms", ids)
    return terms


def postings_of(analyzed: pa.Table, terms: pa.Table, *, looked_up: bool = False) -> pa.Table:
    """Postings of ``analyzed`` rows with ``terms``' ids, sorted for row-group pruning.
    ``looked_up``: find each row's term in ``terms``' kept lookup (``ra.pipeline.lookups``)
    rather than hashing every term (an update's few rows)."""
    import pyarrow.compute as pc

    if looked_up:
        from ra.pipeline.lookups import term_ids

        ids = term_ids(terms)
        term_id = pa.array([ids.get(t) for t in analyzed["term"].to_pylist()], pa.int32())
    else:
        term_id = terms["term_id"].take(pc.index_in(analyzed["term"], value_set=terms["term"]))
    table = pa.table({"term_id": term_id, "ord": analyzed["ord"],
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
    id and their place in word order. A word always stems to the same term, so the word
    alone is the key; it is found by bisecting the sorted words (``ra.pipeline.lookups``)."""
    import numpy as np
    import pyarrow.compute as pc

    from ra.pipeline.lookups import keep, term_ids, word_list

    delta = pa.concat_tables([
        pa.table({"word": t["word"], "term": t["term"],
                  "freq": pc.multiply(t["freq"].cast(pa.int64()), int64(sign))})
        for sign, t in ((-1, removed), (1, added))
    ]).group_by(["word", "term"]).aggregate([("freq", "sum")])
    words = word_list(old)
    names, stems = delta["word"].to_pylist(), delta["term"].to_pylist()
    change = _numbers(delta["freq_sum"])
    at = np.array([bisect_left(words, w) for w in names], dtype=np.int64)
    known = np.array([a < len(words) and words[a] == w for a, w in zip(at, names, strict=True)],
                     dtype=bool)
    freq = _numbers(old["freq"], copy=True)
    freq[at[known]] += change[known]
    gone = at[known][freq[at[known]] <= 0]
    ids = term_ids(terms)
    fresh = sorted((names[i], i) for i in np.flatnonzero(~known).tolist()
                   if stems[i] in ids)  # as the join of ``words_of``
    table = old.set_column(old.schema.get_field_index("freq"), WORDS.field("freq"),
                           pa.array(freq, pa.int64()))
    if not fresh and not len(gone):
        keep(table, "words", words)
        return table
    rows = [i for _, i in fresh]
    new = pa.Table.from_arrays([
        pa.array([names[i] for i in rows], pa.string()),
        pa.array([stems[i] for i in rows], pa.string()),
        pa.array([ids[stems[i]] for i in rows], pa.int32()),
        pa.array(change[rows], pa.int64())], schema=WORDS)
    where = [bisect_left(words, names[i]) for i in rows]
    order = np.insert(np.arange(len(words)), where, np.arange(len(words), len(words) + len(rows)))
    alive = np.concatenate([freq > 0, np.ones(len(rows), dtype=bool)])[order]
    table = pa.concat_tables([table, new]).take(pa.array(order[alive]))
    if len(rows) + len(gone) > LIST_EDITS:
        listed = table["word"].to_pylist()
    else:  # a few changes: made to a copy of the list
        listed = list(words)
        for i in reversed(rows):
            listed.insert(bisect_left(listed, names[i]), names[i])
        for i in sorted(gone.tolist(), reverse=True):
            del listed[bisect_left(listed, words[i])]
    keep(table, "words", listed)
    return table


def _numbers(column, *, copy: bool = False):
    """An integer column (ChunkedArray or Array) as an int64 NumPy array; ``copy``: one
    that may be changed."""
    import numpy as np

    return column.to_numpy().astype(np.int64, copy=copy)



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

    return {f: int(pc.sum(pc.greater(lengths[f], int64(0))).as_py() or 0) for f in FIELDS}


def indexed_chunks(lengths: pa.Table) -> int:
    """How many ``lengths`` rows hold at least one token in some field: the chunks that
    are indexed (``analyze`` leaves out those with no words of their own)."""
    import pyarrow.compute as pc

    total = lengths[FIELDS[0]]
    for f in FIELDS[1:]:
        total = pc.add(total, lengths[f])
    return int(pc.sum(pc.greater(total, int64(0))).as_py() or 0)


def statistics(chunks: int, sums: dict[str, int], present: dict[str, int]) -> dict:
    """Collection statistics BM25F needs: the number of indexed chunks (N), length sums
    and averages.

    A field's average length is over the chunks that have the field (``present``), as
    Lucene's is (sumTotalTermFreq / docCount): most chunks have no tags, and averaging
    over them would make every tag list look long and damp it."""
    avg = {f: (sums.get(f, 0) / present[f] if present.get(f) else 0.0) for f in FIELDS}
    return {"chunks": chunks, "length_sums": sums, "field_chunks": present,
            "avg_length": avg}
