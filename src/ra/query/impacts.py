"""Plain queries scored from impacts (``ra.pipeline.impacts``): one multiplication per
posting and a sum per chunk.

A reader reads each term's quantized BM25F weight in each chunk from the build's
``hot_impacts`` (as relation ``impacts``: a view, or a table in a long-lived reader)
when they hold for the configured weights (``IndexReader.impacts``). ``top_sql``
scores a plain plan (``is_plain``) from them: an alternative contributes
``factor(weight, idf, k1) · impact``, so a clause's score is within ``bound`` of
``bm25f_sql``'s, and matching, the matched groups, ``complete`` and ``total`` are
``bm25f_sql``'s exactly.
"""

from __future__ import annotations

from ra.pipeline.impacts import SCALE
from ra.query.bm25f import (
    Filters,
    Sql,
    Weights,
    _all_words,
    _answers,
    _expr,
    _matched,
    alternative_idf,
)
from ra.query.plan import Plan
from ra.store.layout import FIELDS


def factor(weight: float, idf: float, k1: float) -> float:
    """What an alternative multiplies an impact by: its weight and idf, and the scale."""
    return weight * idf * (k1 + 1) / SCALE


def bound(weight: float, idf: float, k1: float) -> float:
    """The most a clause's score over impacts differs from the exact BM25F: half a step
    (plus the float error of the two computations, far below it)."""
    return factor(weight, idf, k1) / 2


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
    ``term_id, ord, impact, is_global, archived``, as a reader holds them):
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
