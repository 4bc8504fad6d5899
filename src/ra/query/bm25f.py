"""BM25F as one DuckDB query: a pure SQL builder.

``bm25f_sql(plan, ...)`` returns SQL text and its bound parameters; nothing here touches
a database, so the SQL is golden-tested and ``--explain`` prints it. Everything derived
from the user's query (term ids, weights, tree names) is a bound parameter; the only
things written into the text are clause numbers the planner generated.

Scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009, §3.7). For a term t and chunk d:

    tf~(t, d) = Σ_f  w_f · tf_f(t, d) / (1 − b + b · len_f(d) / avglen_f)
    s(t, d)   = idf(t) · tf~ · (k1 + 1) / (k1 + tf~)
    idf(t)    = ln(1 + (N − df + 0.5) / (df + 0.5))          (Lucene's non-negative idf)

Field weights and length normalisation combine *before* saturation, so a common word in
a short title cannot outscore a body that matches the whole query. A clause scores the
best of its alternatives (exact term, or a fuzzy expansion times its weight); a phrase
scores like a term whose tf is the number of phrase occurrences and whose idf is the sum
of its words'. A chunk's score is the sum of its matching positive clauses, times
``local_boost`` for local trees.

When no chunk satisfies the whole boolean expression the same query answers *partially*:
chunks that match some positive clauses (and no negated one), ranked by score times the
share of clauses they match (``coord``, as in Lucene's classic similarity), so chunks
with more of the words come first unless a rarer word outweighs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ra.layout import FIELDS
from ra.query.index import META_COLUMNS
from ra.query.plan import AllOf, AnyOf, NoneOf, Plan, Ref


@dataclass(frozen=True)
class Weights:
    """BM25F parameters."""

    k1: float = 1.2
    b: float = 0.75
    boosts: tuple[float, ...] = (3.0, 2.5, 2.0, 1.0)  # in FIELDS order
    local_boost: float = 1.5
    coord: float = 1.0  # partial answers: score × (matched / positive clauses) ** coord


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside the query, before ranking and limits."""

    trees: tuple[str, ...] = ()
    include_archived: bool = False
    exclude_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # any of them, case-insensitive
    path_regex: str | None = None  # a tree-relative path glob, translated (ra.globs)
    since_ns: int | None = None  # file mtime >= since
    until_ns: int | None = None  # file mtime < until

    def conditions(self, sql: Sql, m: str = "m") -> list[str]:
        """SQL conditions over the chunk metadata table aliased ``m``."""
        where = []
        if self.trees:
            where.append(f"{m}.tree IN ({', '.join(sql.bind(t) for t in self.trees)})")
        if not self.include_archived:
            where.append(f"{m}.status IS DISTINCT FROM 'archived'")
        if self.exclude_ids:
            where.append(f"{m}.id NOT IN ({', '.join(sql.bind(i) for i in self.exclude_ids)})")
        if self.tags:
            wanted = sql.bind([t.lower() for t in self.tags])
            where.append(f"list_has_any(list_transform({m}.tags, lambda t: lower(t)), "
                         f"{wanted})")
        if self.path_regex is not None:
            where.append(f"regexp_full_match({m}.path, {sql.bind(self.path_regex)})")
        if self.since_ns is not None:
            where.append(f"{m}.mtime_ns >= {sql.bind(self.since_ns)}")
        if self.until_ns is not None:
            where.append(f"{m}.mtime_ns < {sql.bind(self.until_ns)}")
        return where


@dataclass
class Sql:
    """SQL text plus its named parameters."""

    text: str
    params: dict = field(default_factory=dict)

    def bind(self, value) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"${name}"


def idf(n_chunks: int, df: int) -> float:
    """Lucene's BM25 idf: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n_chunks - df + 0.5) / (df + 0.5))


def bm25f_sql(plan: Plan, n_chunks: int, avg_length: dict[str, float], weights: Weights,
              filters: Filters, limit: int) -> Sql:
    """The scoring query of ``plan``: rows ``(score, matched, complete, total, tainted,
    *META_COLUMNS)``, best first; ``tainted`` lists the chunks that hold a word the query
    excludes (no result may contain one, see ``top_negations``)."""
    sql = Sql("")
    ctes = [_term_hits(plan, sql, n_chunks)]
    ctes += [_phrase_hits(plan, c.index, sql, n_chunks)
             for c in plan.clauses if c.kind == "phrase"]
    hits = " UNION ALL ".join(f"SELECT * FROM {name}" for name, _ in ctes)
    parts = [f"{name} AS ({body})" for name, body in ctes]
    parts.append(f"hits AS ({hits})")
    parts.append("norm AS (" + _normalised(sql, avg_length, weights) + ")")
    parts.append("clause_scores AS (" + _saturated(sql, weights) + ")")
    parts.append("per_chunk AS (" + _pivot(plan) + ")")
    parts.append("tainted AS (" + _tainted(plan) + ")")
    parts.append("cand AS (" + _candidates(plan, sql, weights, filters) + ")")
    parts.append("flagged AS (SELECT *, bool_or(ok) OVER () AS any_ok FROM cand)")
    n_pos = max(len(plan.positive), 1)
    ranked = (f"CASE WHEN any_ok THEN score ELSE score * pow(matched / {n_pos}, "
              f"{sql.bind(weights.coord)}) END")
    sql.text = ("WITH " + ",\n".join(parts) + "\n"
                f"SELECT {ranked} AS score, matched, any_ok AS complete, "
                "count(*) OVER () AS total, (SELECT list(ord) FROM tainted) AS tainted, "
                f"{', '.join(META_COLUMNS)}\n"
                "FROM flagged\n"
                "WHERE CASE WHEN any_ok THEN ok ELSE neg_ok AND matched > 0 END\n"
                f"ORDER BY 1 DESC, id\nLIMIT {sql.bind(int(limit))}")
    return sql


def _term_hits(plan: Plan, sql: Sql, n: int) -> tuple[str, str]:
    rows, ids = [], set()
    for c in plan.clauses:
        if c.kind != "term":
            continue
        for a in c.alts:
            if a.term_id is None:
                continue
            ids.add(a.term_id)
            rows.append(f"({c.index}, {sql.bind(a.term_id)}, {sql.bind(a.weight * c.boost)}, "
                        f"{sql.bind(idf(n, a.df))}, {c.field_mask})")
    if not rows:
        return "term_hits", ("SELECT NULL::INTEGER AS clause, NULL::INTEGER AS ord, "
                             "NULL::TINYINT AS field, NULL::INTEGER AS tf, "
                             "NULL::DOUBLE AS weight, NULL::DOUBLE AS idf, "
                             "NULL::INTEGER AS alt WHERE false")
    id_list = ", ".join(sql.bind(i) for i in sorted(ids))
    body = (f"WITH q(clause, term_id, weight, idf, mask) AS (VALUES {', '.join(rows)}) "
            "SELECT q.clause, p.ord, p.field, p.tf, q.weight, q.idf, q.term_id AS alt "
            "FROM postings p JOIN q ON p.term_id = q.term_id "
            f"WHERE p.term_id IN ({id_list}) AND (q.mask >> p.field) & 1 = 1")
    return "term_hits", body


def _phrase_hits(plan: Plan, index: int, sql: Sql, n: int) -> tuple[str, str]:
    clause = plan.clauses[index]
    name = f"phrase_{index}"
    if any(a.term_id is None for a in clause.alts):
        return name, ("SELECT NULL::INTEGER AS clause, NULL::INTEGER AS ord, "
                      "NULL::TINYINT AS field, NULL::INTEGER AS tf, NULL::DOUBLE AS weight, "
                      "NULL::DOUBLE AS idf, NULL::INTEGER AS alt WHERE false")
    slop = sql.bind(int(clause.slop))
    joins, where, checks = [], [], []
    for i, alt in enumerate(clause.alts):
        where.append(f"w{i}.term_id = {sql.bind(alt.term_id)}")
        if i:
            joins.append(f"JOIN postings w{i} ON w{i}.ord = w0.ord AND w{i}.field = w0.field")
            checks.append(f"len(list_filter(w{i}.positions, lambda y: "
                          f"abs(y - x - {i}) <= {slop})) > 0")
    phrase_idf = sum(idf(n, a.df) for a in clause.alts)
    tf = f"len(list_filter(w0.positions, lambda x: {' AND '.join(checks)}))"
    body = (f"SELECT {index} AS clause, w0.ord, w0.field, {tf}::INTEGER AS tf, "
            f"{sql.bind(clause.boost)} AS weight, {sql.bind(phrase_idf)} AS idf, "
            "-1 AS alt "
            f"FROM postings w0 {' '.join(joins)} "
            f"WHERE {' AND '.join(where)} AND ({clause.field_mask} >> w0.field) & 1 = 1")
    return name, f"SELECT * FROM ({body}) WHERE tf > 0"


def _normalised(sql: Sql, avg_length: dict[str, float], w: Weights) -> str:
    b = sql.bind(w.b)
    cases = []
    for code, name in enumerate(FIELDS):
        avg = sql.bind(avg_length.get(name) or 1.0)
        cases.append(f"WHEN {code} THEN {sql.bind(w.boosts[code])} / "
                     f"(1 - {b} + {b} * m.len_{name} / {avg})")
    return ("SELECT h.clause, h.alt, h.ord, any_value(h.weight) AS weight, "
            "any_value(h.idf) AS idf, "
            f"sum(h.tf * CASE h.field {' '.join(cases)} END) AS tfn "
            "FROM hits h JOIN meta m ON m.ord = h.ord GROUP BY h.clause, h.alt, h.ord")


def _saturated(sql: Sql, w: Weights) -> str:
    k1 = sql.bind(w.k1)
    return (f"SELECT clause, ord, max(weight * idf * tfn * ({k1} + 1) / ({k1} + tfn)) AS s "
            "FROM norm GROUP BY clause, ord")


def _pivot(plan: Plan) -> str:
    cols = [f"sum(s) FILTER (WHERE clause = {c.index}) AS c{c.index}"
            for c in plan.clauses if c.kind != "tree"]
    return f"SELECT ord{''.join(', ' + c for c in cols)} FROM clause_scores GROUP BY ord"


def _expr(expr, plan: Plan, sql: Sql) -> str:
    match expr:
        case Ref(i):
            clause = plan.clauses[i]
            if clause.kind == "tree":
                return f"(m.tree = {sql.bind(clause.tree)})"
            return f"(c{i} IS NOT NULL)"
        case AllOf(items):
            return "(" + " AND ".join(_expr(e, plan, sql) for e in items) + ")"
        case AnyOf(items):
            return "(" + " OR ".join(_expr(e, plan, sql) for e in items) + ")"
        case NoneOf(inner):
            return f"(NOT {_expr(inner, plan, sql)})"
    raise TypeError(f"unknown expression {expr!r}")  # pragma: no cover


def top_negations(plan: Plan) -> list[int]:
    """Clauses negated at the top level of the query (``a -b``, ``NOT b``).

    A result is shown with its subsections, so such a word must not occur anywhere in its
    subtree, not only in its own text; negations nested inside OR keep their plain
    per-chunk meaning.
    """
    items = plan.expr.items if isinstance(plan.expr, AllOf) else (plan.expr,)
    out: list[int] = []
    for item in items:
        if isinstance(item, NoneOf):
            out += sorted(_refs(item.expr))
    return [i for i in out if plan.clauses[i].kind != "tree"]


def _refs(expr) -> set[int]:
    match expr:
        case Ref(i):
            return {i}
        case NoneOf(inner):
            return _refs(inner)
        case AllOf(items) | AnyOf(items):
            return set().union(*(_refs(e) for e in items))
    return set()  # pragma: no cover


def _tainted(plan: Plan) -> str:
    clauses = top_negations(plan)
    if not clauses:
        return "SELECT NULL::INTEGER AS ord WHERE false"
    return ("SELECT DISTINCT ord FROM clause_scores WHERE clause IN "
            f"({', '.join(str(c) for c in clauses)})")


def _candidates(plan: Plan, sql: Sql, w: Weights, f: Filters) -> str:
    score = " + ".join(f"coalesce(c{i}, 0)" for i in plan.positive) or "0"
    matched = " + ".join(f"(c{i} IS NOT NULL)::INTEGER" for i in plan.positive) or "0"
    neg_ok = " AND ".join(f"c{i} IS NULL" for i in plan.negative) or "true"
    where = ["true", *f.conditions(sql)]
    if top_negations(plan):
        where.append("NOT EXISTS (SELECT 1 FROM tainted t WHERE t.ord BETWEEN m.ord AND "
                     "m.ord + m.descendants)")
    boost = sql.bind(w.local_boost)
    tree_ok = _tree_only(plan, sql)
    meta = ", ".join(f"m.{c}" for c in META_COLUMNS if c not in ("ord", "id"))
    return (f"SELECT pc.ord, m.id, {meta}, ({score}) * CASE WHEN m.is_global THEN 1.0 ELSE {boost} "
            f"END AS score, {matched} AS matched, {_expr(plan.expr, plan, sql)} AS ok, "
            f"({neg_ok}) AND {tree_ok} AS neg_ok "
            f"FROM per_chunk pc JOIN meta m ON m.ord = pc.ord WHERE {' AND '.join(where)}")


def _tree_only(plan: Plan, sql: Sql) -> str:
    """Tree clauses outside any NOT/OR still restrict partial answers."""
    if not isinstance(plan.expr, AllOf | Ref):
        return "true"
    items = plan.expr.items if isinstance(plan.expr, AllOf) else (plan.expr,)
    trees = [plan.clauses[i.index].tree for i in items
             if isinstance(i, Ref) and plan.clauses[i.index].kind == "tree"]
    if not trees:
        return "true"
    return "(" + " AND ".join(f"m.tree = {sql.bind(t)}" for t in trees) + ")"
