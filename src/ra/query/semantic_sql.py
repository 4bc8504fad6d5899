"""Scoring vectors in DuckDB, beside BM25F: a pure SQL builder.

``semantic_sql`` returns the best ``k`` chunks by inner product with the query vector
(the vectors are unit length, so it is their cosine), under the same filters as the
keyword query (``ra.query.bm25f.Filters``) and the same rule for words the query
excludes: no chunk whose subtree holds one (``bm25f.BLOCKED``). It reads the relations
a reader holds for it (``ra.index.vector_tables``): ``sem_vectors`` (ord,
vector ``FLOAT[dims]``), a view over the vectors artifact, or, in a long-lived reader,
an Arrow table over the vectors it holds in memory, scored here for a topic with filters
or excluded words (a plain topic is scored in memory: ``vector_tables.nearest``).
An exact scan of the 102,000 vectors of the C++ docs costs about 62 ms on this hardware
(a filter that passes few chunks, a few ms).
"""

from __future__ import annotations

from ra.query.bm25f import BLOCKED, Filters, Sql


def semantic_sql(dims: int, filters: Filters, negated: list[int], k: int) -> Sql:
    """The best ``k`` chunks for the query vector ``$q`` (bound by the caller): rows
    ``(ord, sim)``, best first, ties by ord. ``negated``: term ids of words the query
    excludes."""
    sql = Sql("")
    parts = []
    if negated:
        parts.append("tainted AS (SELECT DISTINCT ord FROM tf_postings WHERE term_id = "
                     f"ANY({sql.bind(sorted(negated))}::INTEGER[]))")
        parts.append(f"blocked AS ({BLOCKED})")
    where = filters.conditions(sql)
    if negated:
        where.append("v.ord NOT IN (SELECT ord FROM blocked)")
    source = "sem_vectors v JOIN meta m ON m.ord = v.ord"
    head = ("WITH " + ",\n".join(parts) + "\n") if parts else ""
    sql.text = (f"{head}SELECT v.ord, array_inner_product(v.vector, $q::FLOAT[{dims}]) AS sim "
                f"FROM {source}" + (f" WHERE {' AND '.join(where)}" if where else "")
                + f" ORDER BY sim DESC, v.ord LIMIT {sql.bind(int(k))}")
    return sql


def plain(filters: Filters, negated: list[int]) -> bool:
    """Whether a long-lived reader scores the topic in memory: no filter but
    ``archived``, no excluded word."""
    return not negated and filters == Filters(include_archived=filters.include_archived)
