"""Stage 4, postings: analysed rows → vocabulary, postings and statistics.

Terms are numbered in sorted order and postings are sorted by (term_id, ord, field) and
written in small row groups, so a query that filters ``term_id`` reads only the row
groups holding its terms (Parquet min/max statistics let DuckDB skip the rest).
Document frequency counts chunks, over all fields: BM25F's IDF is per term, not per
field. The grouping runs in DuckDB over the Arrow tables, on every core.
"""

from __future__ import annotations

import pyarrow as pa

from ra.artifacts import POSTINGS, TERMS, WORDS
from ra.layout import FIELDS

POSTINGS_ROW_GROUP = 16_384


def postings(analyzed: pa.Table, words: pa.Table) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``(terms, postings, words)`` with term ids assigned."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("analyzed", analyzed)
        con.register("words_in", words)
        con.sql("""
            CREATE TEMP TABLE terms AS
            SELECT (row_number() OVER (ORDER BY term) - 1)::INTEGER AS term_id, term,
                   count(DISTINCT ord)::INTEGER AS df, sum(tf)::BIGINT AS cf
            FROM analyzed GROUP BY term""")
        terms = con.sql("SELECT * FROM terms ORDER BY term_id").to_arrow_table()
        post = con.sql("""
            SELECT t.term_id, a.ord, a.field, a.tf, a.positions
            FROM analyzed a JOIN terms t USING (term)
            ORDER BY t.term_id, a.ord, a.field""").to_arrow_table()
        vocab = con.sql("""
            SELECT w.word, w.term, t.term_id, sum(w.freq)::BIGINT AS freq
            FROM words_in w JOIN terms t USING (term)
            GROUP BY ALL ORDER BY w.word""").to_arrow_table()
    finally:
        con.close()
    return terms.cast(TERMS), post.cast(POSTINGS), vocab.cast(WORDS)


def statistics(lengths: pa.Table) -> dict:
    """Collection statistics BM25F needs: chunk count and average length per field."""
    import pyarrow.compute as pc

    n = lengths.num_rows
    avg = {f: (pc.mean(lengths[f]).as_py() or 0.0) if n else 0.0 for f in FIELDS}
    return {"chunks": n, "avg_length": avg}
