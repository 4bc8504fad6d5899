"""Stage 4, postings: analysed rows → vocabulary, postings and statistics.

Terms are numbered and postings are sorted by (term_id, ord, field) and written in small
row groups, so a query that filters ``term_id`` reads only the row groups holding its
terms (Parquet min/max statistics let DuckDB skip the rest). Document frequency counts
chunks, over all fields: BM25F's IDF is per term, not per field. The grouping runs in
DuckDB over Arrow tables, on every core.

A full build numbers terms in sorted order (``terms_of``). An update keeps every existing
term id and adjusts df/cf by exactly what the changed files removed and added
(``updated_terms``), numbering new terms after the largest id, so the partitions it does
not rewrite stay valid and statistics stay those of a full build.
"""

from __future__ import annotations

import pyarrow as pa

from ra.artifacts import POSTINGS, TERMS, WORDS
from ra.layout import FIELDS

POSTINGS_ROW_GROUP = 16_384


def _duck(**tables: pa.Table):
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for name, table in tables.items():
        con.register(name, table)
    return con


def terms_of(analyzed: pa.Table) -> pa.Table:
    """Every term of ``analyzed`` with df (distinct chunks) and cf, numbered in order."""
    with _duck(analyzed=analyzed) as con:
        return con.sql("""
            SELECT (row_number() OVER (ORDER BY term) - 1)::INTEGER AS term_id, term,
                   count(DISTINCT ord)::INTEGER AS df, sum(tf)::BIGINT AS cf
            FROM analyzed GROUP BY term ORDER BY term_id""").to_arrow_table().cast(TERMS)


def term_delta(analyzed: pa.Table) -> pa.Table:
    """What ``analyzed`` rows contribute to each term: ``(term, df, cf)``."""
    with _duck(analyzed=analyzed) as con:
        return con.sql("SELECT term, count(DISTINCT ord)::BIGINT AS df, "
                       "sum(tf)::BIGINT AS cf FROM analyzed GROUP BY term").to_arrow_table()


def updated_terms(old: pa.Table, removed: pa.Table, added: pa.Table) -> pa.Table:
    """``old`` terms minus the contribution of ``removed`` rows plus that of ``added``;
    terms whose df falls to zero are dropped, new terms numbered after the largest id."""
    with _duck(old=old, rem=term_delta(removed), add=term_delta(added)) as con:
        return con.sql("""
            WITH merged AS (
                SELECT coalesce(o.term, a.term, r.term) AS term, o.term_id,
                       coalesce(o.df, 0) - coalesce(r.df, 0) + coalesce(a.df, 0) AS df,
                       coalesce(o.cf, 0) - coalesce(r.cf, 0) + coalesce(a.cf, 0) AS cf
                FROM old o FULL JOIN rem r ON r.term = o.term
                           FULL JOIN add a ON a.term = coalesce(o.term, r.term))
            SELECT coalesce(term_id, (SELECT coalesce(max(term_id), -1) FROM old)
                   + row_number() OVER (PARTITION BY term_id IS NULL ORDER BY term)
                   )::INTEGER AS term_id, term, df::INTEGER AS df, cf::BIGINT AS cf
            FROM merged WHERE df > 0 ORDER BY term_id""").to_arrow_table().cast(TERMS)


def postings_of(analyzed: pa.Table, terms: pa.Table) -> pa.Table:
    """Postings of ``analyzed`` rows with ``terms``' ids, sorted for row-group pruning."""
    with _duck(analyzed=analyzed, terms=terms) as con:
        return con.sql("""
            SELECT t.term_id, a.ord, a.field, a.tf, a.positions
            FROM analyzed a JOIN terms t USING (term)
            ORDER BY t.term_id, a.ord, a.field""").to_arrow_table().cast(POSTINGS)


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
    of ``added`` added; words no longer present are dropped."""
    with _duck(old=old, rem=removed, add=added, terms=terms) as con:
        return con.sql("""
            WITH delta AS (
                SELECT word, term, freq FROM old
                UNION ALL SELECT word, term, -freq FROM rem
                UNION ALL SELECT word, term, freq FROM add),
            summed AS (SELECT word, term, sum(freq) AS freq FROM delta GROUP BY ALL)
            SELECT s.word, s.term, t.term_id, s.freq::BIGINT AS freq
            FROM summed s JOIN terms t USING (term)
            WHERE s.freq > 0 ORDER BY s.word""").to_arrow_table().cast(WORDS)


def postings(analyzed: pa.Table, surface: pa.Table) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``(terms, postings, words)`` of a whole collection (a full build)."""
    terms = terms_of(analyzed)
    return terms, postings_of(analyzed, terms), words_of(surface, terms)


def length_sums(lengths: pa.Table) -> dict[str, int]:
    """Total analysed length of each field over ``lengths`` rows."""
    import pyarrow.compute as pc

    return {f: int(pc.sum(lengths[f]).as_py() or 0) for f in FIELDS}


def statistics(chunks: int, sums: dict[str, int]) -> dict:
    """Collection statistics BM25F needs: chunk count, length sums and averages."""
    avg = {f: (sums.get(f, 0) / chunks if chunks else 0.0) for f in FIELDS}
    return {"chunks": chunks, "length_sums": sums, "avg_length": avg}
