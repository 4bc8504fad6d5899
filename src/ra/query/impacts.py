"""Impacts: the query-independent part of BM25F, computed once and quantized.

With fixed field weights, k1 and b, the saturated term frequency of a term t in a chunk d

    u(t, d) = tf~ · (k1 + 1) / (k1 + tf~)        in [0, k1 + 1)

(``ra.query.bm25f``: tf~ is the field-weighted, length-normalised tf) does not depend on
the query, which only multiplies it by the weight and idf of the alternative it matches.
A full build stores it per term and chunk as a 16-bit integer

    impact(t, d) = round(u / (k1 + 1) · SCALE)

in ``hot_impacts.parquet`` (``ra.pipeline.compact``), and ``top_sql`` (a plain query on a
long-lived reader) scores an alternative as ``weight · idf · (k1 + 1) / SCALE · impact``
(``factor``): one multiplication per posting instead of the saturation formula, from a
table of two ints and a short instead of one row per field.

Why 16 bits: the error of a clause's score is at most half a step, ``weight · idf ·
(k1 + 1) / (2 · SCALE)`` (``bound``): with SCALE = 65,535 about 2e-4 for a word of idf 10,
well below the score gaps that order results, so every ranking of the quality benchmarks
is kept (``docs/ranking.md``). Eight bits (tantivy's and Lucene's norms) would put a step
of 0.009·idf between scores: a single occurrence in a long body (u ≈ 0.3) off by 3%,
and many near-ties collapsed into ties broken by id.

The impacts are valid for the weights and collection statistics they were computed
under, which the manifest's ``compact.impacts`` records (``record``). A reader whose
configuration differs (``[search] k1``, ``b``, ``[search.boosts]``), or whose generation
an incremental update changed (the averages move, ``compact.stale``), computes them at
load with the same SQL (``impacts_sql``) from its postings instead; the scores are the
same either way, to the bit.
"""

from __future__ import annotations

from ra.query.bm25f import (
    Filters,
    Sql,
    Weights,
    _all_words,
    _answers,
    _expr,
    _matched,
    alternative_idf,
    tf_norm_sql,
)
from ra.query.plan import Plan
from ra.store.layout import FIELDS

#: The largest impact: u = k1 + 1 (never reached: u < k1 + 1).
SCALE = 65_535


def impacts_sql(source: str, avg_length: dict[str, float], weights: Weights,
                terms: tuple[int, int] = (0, 2**31 - 1)) -> Sql:
    """Rows ``(term_id, ord, impact)`` of the postings in relation ``source`` (columns
    ``term_id, ord, field, tf, len``) with a term id in ``[terms[0], terms[1])``,
    ordered by term and chunk. tf~ is ``bm25f_sql``'s, the very arithmetic."""
    sql = Sql("")
    tfn = tf_norm_sql(sql, avg_length, weights)
    k1 = sql.bind(float(weights.k1))
    low, high = sql.bind(terms[0]), sql.bind(terms[1])
    scale = sql.bind(float(SCALE))
    sql.text = (f"SELECT term_id, ord, round(tfn * ({k1} + 1) / ({k1} + tfn) / ({k1} + 1) "
                f"* {scale})::USMALLINT AS impact FROM (SELECT term_id, ord, {tfn} AS tfn "
                f"FROM {source} WHERE term_id >= {low} AND term_id < {high} "
                "GROUP BY term_id, ord) ORDER BY term_id, ord")
    return sql


def factor(weight: float, idf: float, k1: float) -> float:
    """What an alternative multiplies an impact by: its weight and idf, and the scale."""
    return weight * idf * (k1 + 1) / SCALE


def bound(weight: float, idf: float, k1: float) -> float:
    """The most a clause's score over impacts differs from the exact BM25F: half a step
    (plus the float error of the two computations, far below it)."""
    return factor(weight, idf, k1) / 2


def record(weights: Weights, avg_length: dict[str, float]) -> dict:
    """What impacts depend on, as the manifest keeps it (JSON: lists, floats)."""
    return {"scale": SCALE, "k1": float(weights.k1), "b": float(weights.b),
            "boosts": [float(x) for x in weights.boosts],
            "avg_length": {f: float(avg_length.get(f) or 0.0) for f in FIELDS}}


# --- plain queries over impacts ---------------------------------------------------------

def is_plain(plan: Plan, filters: Filters) -> bool:
    """Whether ``top_sql`` can score ``plan``: AND/OR of words over every field (no
    phrase, field restriction, tree clause or negation), no filter but ``archived``."""
    every = (1 << len(FIELDS)) - 1
    return (bool(plan.clauses) and not plan.negative
            and all(c.kind == "term" and c.field_mask == every for c in plan.clauses)
            and filters == Filters(include_archived=filters.include_archived))


def top_sql(plan: Plan, n_chunks: int, weights: Weights, filters: Filters,
            limit: int) -> Sql:
    """The scoring query of a plain plan (``is_plain``) over relation ``impacts`` (rows
    ``term_id, ord, impact, is_global, archived``, as a long-lived reader holds them):
    the rows of ``bm25f_sql(..., metadata=False)``, ``(score, matched, complete, total,
    tainted, ord)`` of every chunk scoring at least the ``limit``-th best, in no order.
    Matching, ``matched``, ``complete`` and ``total`` are ``bm25f_sql``'s exactly; each
    clause's score is within ``bound`` of it.

    Plain plans need none of ``bm25f_sql``'s stages for phrases, fields, negations and
    filters, and nothing of ``meta`` (``impacts`` carries the chunk flags), so the query
    is one aggregation per chunk and a window.
    """
    sql = Sql("")
    alts = _factors(plan, sql, n_chunks, weights.k1)
    cols = "".join(f", max(a.factor * p.impact) FILTER (WHERE a.clause = {c.index}) AS "
                   f"c{c.index}" for c in plan.clauses)
    archived = "" if filters.include_archived else " WHERE NOT p.archived"
    score = " + ".join(f"coalesce(c{c.index}, 0)" for c in plan.clauses)
    boost = sql.bind(weights.local_boost)
    lim = sql.bind(int(limit))
    sql.text = (
        f"WITH cand AS (SELECT ord, ({score}) * CASE WHEN is_global THEN 1.0 ELSE {boost} "
        f"END AS score, {_matched(plan, sql, n_chunks)} AS matched, "
        f"{_expr(plan.expr, plan, sql)} AS ok FROM (SELECT p.ord, bool_or(p.is_global) AS "
        f"is_global{cols} FROM impacts p JOIN ({alts}) a ON p.term_id = a.term_id{archived} "
        "GROUP BY p.ord)),\n"
        "totals AS (SELECT bool_or(ok) AS any_ok, count(*) FILTER (WHERE ok) AS n_ok, "
        f"count(*){'' if _all_words(plan) else ' FILTER (WHERE matched > 0)'} AS n_partial "
        "FROM cand)\n"
        "SELECT score, matched, complete, total, NULL::INTEGER[] AS tainted, ord FROM ("
        f"{_answers(plan, sql, weights, n_chunks, plain=True)}) "
        # outside the answers, where ``score`` is their final (coordinated) score
        f"QUALIFY rank() OVER (ORDER BY score DESC) <= {lim}")
    return sql


def _factors(plan: Plan, sql: Sql, n_chunks: int, k1: float) -> str:
    """One row per term alternative: its clause, term and ``factor``, bound as parallel
    lists, so the text depends on the plan's shape only."""
    clauses, terms, factors = [], [], []
    for c in plan.clauses:
        for a in c.alts:
            if a.term_id is not None:
                clauses.append(c.index)
                terms.append(a.term_id)
                factors.append(factor(a.weight * c.boost, alternative_idf(n_chunks, c, a), k1))
    return (f"SELECT unnest({sql.bind(clauses)}::INTEGER[]) AS clause, "
            f"unnest({sql.bind(terms)}::INTEGER[]) AS term_id, "
            f"unnest({sql.bind(factors)}::DOUBLE[]) AS factor")
