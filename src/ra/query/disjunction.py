"""BM25F for a weighted OR of exact words, fast and equal bit for bit to ``bm25f_sql``.

``ra context`` asks one kind of question: ``word^boost OR …`` with fuzzy matching off, so
every clause is a term with a single alternative and every chunk holding any of them
answers. ``bm25f_sql`` answers any query shape and pays for that here: it pivots each
chunk's clause scores into one column per clause and evaluates the boolean expression per
chunk: ~50 ms of DuckDB time for the 15 words of the C++ file of
``benchmarks/context_speed.py`` over the 24,000 cpp-docs chunks holding one of them.
``disjunction_sql`` asks in two passes, in one statement:

1. ``approx``: per chunk, the sum of its clauses' BM25F scores in whatever order DuckDB
   adds them (a plain ``GROUP BY`` per level: clause, then chunk), times ``local_boost``;
   ``near`` keeps the chunks scoring at least ``KEEP`` times the ``limit``-th best. This
   score and the exact one differ by rounding only (a few units in the last place per
   operation: under 10⁻¹³ relative even for 256 clauses), so ``KEEP`` = 1 − 10⁻⁹ keeps
   every chunk the exact order can put in the top ``limit``, ties included;
2. the postings of those few chunks (about ``limit``) and the ords of all their
   ancestors, so that ranking climbs the chunk tree without asking again.

``score`` then reads the metadata of those chunks (by ord, in a second query: joined in the
first, DuckDB read every column of every chunk from Parquet, ~100 ms more on cpp-docs for
a short-lived reader) and ``rescore`` computes each kept chunk's score in Python with the
very operations, in the very order, of ``bm25f_sql`` (a clause's fields in field order,
then the clauses in clause order; a missing one adds 0, which changes nothing), so scores,
order and ties are bit-identical; ``tests/test_context.py`` compares the two scorers on
real queries. The rows have ``bm25f_sql``'s shape with ``ancestors=True``.

Measured on cpp-docs for that file's query (CPU time, medians, a busy 2-core machine):
with resident relations (``keep_vocabulary``) 25 ms for both queries against 80 ms for
``bm25f_sql`` with ancestors; the whole ``context_search`` 51 ms against 94 ms, and with a
short-lived reader over Parquet 320 ms against 540 ms (``benchmarks/context_speed.py``).
"""

from __future__ import annotations

from ra.index.chunkstore import META_COLUMNS
from ra.query.bm25f import Filters, Sql, Weights, idf
from ra.query.plan import AnyOf, Plan, Ref
from ra.store.layout import FIELDS

KEEP = 1.0 - 1e-9  # relative margin of the approximate pass (see the module docstring)
_GLOBAL = META_COLUMNS.index("is_global")


def applies(plan: Plan) -> bool:
    """Whether ``plan`` is an OR of exact single-term clauses (what this module scores)."""
    refs = plan.expr.items if isinstance(plan.expr, AnyOf) else (plan.expr,)
    return (bool(plan.clauses) and not plan.negative
            and all(isinstance(r, Ref) for r in refs)
            and sorted(r.index for r in refs) == list(range(len(plan.clauses)))
            and all(c.kind == "term" and len(c.alts) == 1 and c.alts[0].term_id is not None
                    for c in plan.clauses))


def score(reader, plan: Plan, weights: Weights, filters: Filters, limit: int
          ) -> tuple[list[tuple], Sql]:
    """``bm25f_sql``'s rows with ``ancestors=True`` for ``plan`` (see ``rescore``), and the
    SQL of the first of the two queries asked."""
    n, avg = reader.stats.chunks, reader.stats.avg_length
    sql = disjunction_sql(plan, n, avg, weights, filters, limit)
    rows = reader.query(sql.text, sql.params)
    metas = reader.query(META_SQL, {"ords": [r[1] for r in rows]}) if rows else []
    return rescore(rows, metas, plan, n, avg, weights, limit), sql


#: The metadata of chunks by ord, asked apart: joined in ``disjunction_sql``, it made
#: DuckDB read every column of all chunks from Parquet (cpp-docs: ~100 ms more, cold).
META_SQL = f"SELECT {', '.join(META_COLUMNS)} FROM meta WHERE ord = ANY($ords::INTEGER[])"


def disjunction_sql(plan: Plan, n_chunks: int, avg_length: dict[str, float], weights: Weights,
                    filters: Filters, limit: int) -> Sql:
    """Rows ``(total, ord, clauses, fields, tfs, lens)``: each chunk that may rank in the
    top ``limit`` with its postings (four parallel lists), and each of their ancestors not
    among them (NULL lists); ``total`` counts the chunks that match."""
    sql = Sql("")
    clause = sql.bind([c.index for c in plan.clauses])
    term = sql.bind([c.alts[0].term_id for c in plan.clauses])
    weight = sql.bind([c.alts[0].weight * c.boost * idf(n_chunks, c.alts[0].df)
                       for c in plan.clauses])
    mask = sql.bind([c.field_mask for c in plan.clauses])
    boosts = sql.bind([float(x) for x in weights.boosts])
    avg = sql.bind([avg_length.get(name) or 1.0 for name in FIELDS])
    b, k1 = sql.bind(weights.b), sql.bind(weights.k1)
    where = " AND ".join(["true", *filters.conditions(sql)])
    local, lim, keep = sql.bind(weights.local_boost), sql.bind(int(limit)), sql.bind(KEEP)
    sql.text = f"""\
WITH alts AS (SELECT unnest({clause}::INTEGER[]) AS clause, unnest({term}::INTEGER[]) AS \
term_id, unnest({weight}::DOUBLE[]) AS weight, unnest({mask}::INTEGER[]) AS mask),
hits AS MATERIALIZED (SELECT a.clause, p.ord, p.field, p.tf, p.len FROM tf_postings p \
JOIN alts a ON p.term_id = a.term_id WHERE (a.mask >> p.field) & 1 = 1),
norm AS (SELECT clause, ord, sum(tf * (list_extract({boosts}, field + 1) / (1 - {b} + {b} \
* len / list_extract({avg}, field + 1)))) AS tfn FROM hits GROUP BY clause, ord),
approx AS (SELECT n.ord, sum(a.weight * n.tfn * ({k1} + 1) / ({k1} + n.tfn)) AS score \
FROM norm n JOIN alts a ON a.clause = n.clause GROUP BY n.ord),
cand AS MATERIALIZED (SELECT x.ord, m.doc_ord, x.score * CASE WHEN m.is_global THEN 1.0 \
ELSE {local} END AS score FROM approx x JOIN meta m ON m.ord = x.ord WHERE {where}),
near AS MATERIALIZED (SELECT ord, doc_ord FROM cand WHERE score >= (SELECT min(score) FROM \
(SELECT score FROM cand ORDER BY score DESC LIMIT {lim})) * {keep}),
lineage AS (SELECT ord FROM near UNION SELECT a.ord FROM near t JOIN meta a ON a.doc_ord = \
t.doc_ord AND a.ord < t.ord AND t.ord <= a.ord + a.descendants),
found AS (SELECT ord, list(clause) AS clauses, list(field) AS fields, list(tf) AS tfs, \
list(len) AS lens FROM hits WHERE ord IN (SELECT ord FROM near) GROUP BY ord)
SELECT (SELECT count(*) FROM cand) AS total, l.ord, f.clauses, f.fields, f.tfs, f.lens
FROM lineage l LEFT JOIN found f ON f.ord = l.ord"""
    return sql


def rescore(rows: list[tuple], metas: list[tuple], plan: Plan, n_chunks: int,
            avg_length: dict[str, float], weights: Weights, limit: int) -> list[tuple]:
    """``bm25f_sql``'s rows (``ancestors=True``) from ``disjunction_sql``'s and the
    ``META_COLUMNS`` of their chunks: the best ``limit`` chunks ``(score, matched, complete,
    total, tainted, *META_COLUMNS)`` by score, then id; then the other chunks read
    (ancestors) with NULL in the first five columns."""
    k1, b, boosts = weights.k1, weights.b, weights.boosts
    avg = [avg_length.get(name) or 1.0 for name in FIELDS]
    factors = {c.index: (c.alts[0].weight * c.boost, idf(n_chunks, c.alts[0].df))
               for c in plan.clauses}
    by_ord = {m[0]: m for m in metas}
    scored, others = [], []
    for total, ord_, clauses, fields, tfs, lens in rows:
        meta = by_ord[ord_]
        if clauses is None:
            others.append((None, None, None, None, None, *meta))
            continue
        per: dict[int, list[float]] = {}
        for c, f, tf, length in zip(clauses, fields, tfs, lens, strict=True):
            per.setdefault(c, [0.0, 0.0, 0.0, 0.0])[f] = tf * (
                boosts[f] / (1 - b + b * length / avg[f]))
        chunk_score = 0.0
        for c in sorted(per):  # clause order; within a clause, field order
            t = per[c]
            tfn = t[0] + t[1] + t[2] + t[3]
            weight, term_idf = factors[c]
            chunk_score += weight * term_idf * tfn * (k1 + 1) / (k1 + tfn)
        chunk_score *= 1.0 if meta[_GLOBAL] else weights.local_boost
        scored.append((chunk_score, len(per), True, total, None, *meta))
    scored.sort(key=lambda r: (-r[0], r[6]))  # r[6]: the chunk id
    others += [(None, None, None, None, None, *r[5:]) for r in scored[limit:]]
    return scored[:limit] + others
