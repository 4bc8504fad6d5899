"""Scoring vectors in DuckDB, beside BM25F: a pure SQL builder.

``semantic_sql`` returns the best ``k`` chunks by inner product with the query vector
(the vectors are unit length, so it is their cosine), under the same filters as the
keyword query (``ra.query.bm25f.Filters``) and the same rule for words the query
excludes: no chunk whose subtree holds one (``bm25f.BLOCKED``). It reads the relations
a reader holds for it (``ra.index.vector_tables``): ``sem_vectors`` (ord, vector
``FLOAT[dims]``) and, for long-lived readers of large indexes, ``sem_coarse`` (every
vector projected on its ``COARSE_DIMS`` principal components).

Why the second: an exact scan of 113,000 chunks of 384 floats costs about 62 ms on this
hardware, ten times a whole keyword search. A scan of 32-float projections costs about
4 ms; its best ``coarse_limit(k)`` chunks held 99.7% of the exact best 10 and 98.9% of
the best 100 on SciFact (``docs/semantic.md``), and only those are scored exactly, in
about 4 ms more. Filtered queries (trees, tags, paths, dates) scan exactly the chunks
that pass the filters.
"""

from __future__ import annotations

from ra.index.vector_tables import COARSE_DIMS
from ra.query.bm25f import BLOCKED, Filters, Sql

COARSE_FACTOR = 10  # coarse candidates per exact one


def coarse_limit(k: int) -> int:
    return max(COARSE_FACTOR * k, 1000)


def semantic_sql(dims: int, filters: Filters, negated: list[int], k: int, *,
                 coarse: bool = False) -> Sql:
    """The best ``k`` chunks for the query vector ``$q`` (and ``$qc``, its projection,
    when ``coarse``; both bound by the caller, ``query_params``): rows ``(ord, sim)``,
    best first, ties by ord. ``negated``: term ids of words the query excludes."""
    sql = Sql("")
    parts = []
    if negated:
        parts.append("tainted AS (SELECT DISTINCT ord FROM tf_postings WHERE term_id = "
                     f"ANY({sql.bind(sorted(negated))}::INTEGER[]))")
        parts.append(f"blocked AS ({BLOCKED})")
    where = filters.conditions(sql)
    if negated:
        where.append("v.ord NOT IN (SELECT ord FROM blocked)")
    if coarse:
        archived = "" if filters.include_archived else " WHERE NOT archived"
        parts.append(f"coarse AS (SELECT ord FROM sem_coarse{archived} ORDER BY "
                     f"array_inner_product(c, $qc::FLOAT[{COARSE_DIMS}]) DESC LIMIT "
                     f"{sql.bind(coarse_limit(k))})")
        source, where = "sem_vectors v", ["v.ord IN (SELECT ord FROM coarse)"]
    else:
        source = "sem_vectors v JOIN meta m ON m.ord = v.ord"
    head = ("WITH " + ",\n".join(parts) + "\n") if parts else ""
    sql.text = (f"{head}SELECT v.ord, array_inner_product(v.vector, $q::FLOAT[{dims}]) AS sim "
                f"FROM {source}" + (f" WHERE {' AND '.join(where)}" if where else "")
                + f" ORDER BY sim DESC, v.ord LIMIT {sql.bind(int(k))}")
    return sql


def plain(filters: Filters, negated: list[int]) -> bool:
    """Whether the coarse stage may serve: no filter but ``archived``, no exclusion."""
    return not negated and filters == Filters(include_archived=filters.include_archived)
