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

where N counts the indexed chunks and avglen_f averages over the chunks that have field f
(``pipeline.postings.statistics``; ``pipeline.analyze`` says which chunks are indexed).

Field weights and length normalisation combine *before* saturation, so a common word in
a short title cannot outscore a body that matches the whole query. A clause scores the
best of its alternatives (exact term, or a fuzzy expansion times its weight, with an idf
no higher than the typed word's when that is in the vocabulary: ``alternative_idf``); a
phrase scores like a term whose tf is the number of phrase occurrences and whose idf is
the sum of its words'. A chunk's score is the sum of its matching positive clauses, times
``local_boost`` for local trees.

A *ranked* plan (a long query, ``ra.query.plan``) answers with every chunk that matches
one of the plan's groups (its words, with their compound alternatives) and no negated
word, scored

    score × (Σ idf of the groups it matches / Σ idf of all groups) ** coord

(``Weights.coord``, the ``[search] coordination`` setting; a group weighs the idf it
scores with, ``group_idf``), so chunks with more of the words, and of the rarer ones,
rank higher while near-misses still appear. Any other plan answers with the chunks that
satisfy its whole boolean expression; when none does, it answers *partially*, with the
chunks matching some group, scored the same way. ``docs/ranking.md`` has the numbers
behind the idf weighting and the exponent.

Most agent queries are *plain*: a few words, AND/OR, no phrase, field, tree or negation.
When the index's precomputed, quantized impacts hold for the configured weights, every
reader scores those from them instead (``ra.query.impacts.top_sql``): the same answers,
scores within the quantization step. So are those whose only phrases are a compound's,
which only add score: their words from the impacts, the phrases from positions in the
chunks they could lift to the best (``ra.query.impacts.with_phrases``).
"""

from __future__ import annotations

import math
from dataclasses import astuple, dataclass, field

from ra.config.settings import FieldBoosts, SearchSettings, Settings
from ra.index.chunkstore import META_COLUMNS
from ra.pipeline.impacts import parameters, tf_norm_sql
from ra.query.plan import Abbreviated, AllOf, Alt, AnyOf, Clause, NoneOf, Plan, Ref, refs


@dataclass(frozen=True)
class Weights:
    """BM25F parameters; the defaults are the configuration's (``ra.config.settings``)."""

    k1: float = SearchSettings.k1
    b: float = SearchSettings.b
    boosts: tuple[float, ...] = tuple(astuple(FieldBoosts()))  # in FIELDS order
    local_boost: float = Settings.local_boost
    coord: float = 0.0  # partial answers: score × (matched / positive clauses) ** coord


def weights_of(config) -> Weights:
    """The BM25F parameters a configuration (``ra.config.settings.Config``) sets."""
    p = parameters(config)
    return Weights(p.k1, p.b, p.boosts, config.settings.local_boost, config.search.coordination)


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside the query, before ranking and limits."""

    trees: tuple[str, ...] = ()
    include_archived: bool = False
    exclude_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # any of them, case-insensitive
    path_regex: str | None = None  # a tree-relative path glob, translated (ra.config.globs)
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


def phrase_idf(n_chunks: int, clause: Clause) -> float:
    """The idf a phrase scores with: the sum of its words'."""
    return sum(idf(n_chunks, a.df) for a in clause.alts)


def alternative_idf(n_chunks: int, clause: Clause, alt: Alt) -> float:
    """The idf ``alt`` scores with: its own, except that a fuzzy expansion of a word that
    is itself in the vocabulary is never rarer than that word (its df is at least the
    word's). An expansion stands in for the word typed; were it scored with its own idf,
    a rare near-miss (``store`` → ``score``) would outscore the word itself even at half
    weight. Lucene's fuzzy queries blend the df of their terms for the same reason."""
    if alt.distance == 0:
        return idf(n_chunks, alt.df)
    typed = next((a.df for a in clause.alts if a.distance == 0 and a.term_id is not None), 0)
    return idf(n_chunks, max(alt.df, typed))


def bm25f_sql(plan: Plan, n_chunks: int, avg_length: dict[str, float], weights: Weights,
              filters: Filters, limit: int, *, ancestors: bool = False,
              metadata: bool = True, every_tainted: bool = False) -> Sql:
    """The scoring query of ``plan``: rows ``(score, matched, complete, total, tainted,
    *META_COLUMNS)``, best first; ``tainted`` lists the chunks that hold a word the query
    excludes (no result may contain one, see ``top_negations``) in the documents of the
    rows, or in every document with ``every_tainted``. With ``ancestors``, the
    rows of every ancestor of those chunks (and of any chunk tied with the last of them)
    follow, with NULL in the first five columns, so ranking climbs the chunk tree without
    asking again (all rows' metadata comes from one pass over ``meta``).

    Without ``metadata`` a row ends with the chunk's ``ord`` instead of its metadata, and
    the rows are those of every chunk scoring at least the ``limit``-th best, ties
    included, in no order: the caller reads the metadata (``IndexReader.lineage``) and
    breaks ties by id. Over Parquet that is the faster way: a join of the few rows with
    ``meta`` makes DuckDB hash every chunk's metadata (it misjudges which side is small),
    while a list of ords lets the reader skip most row groups.

    The stages, each a CTE: ``hits`` (one row per matching posting: term alternatives
    from ``tf_postings``, phrase occurrences from ``phrase_postings``), ``norm`` (per clause,
    alternative and chunk, the field-weighted length-normalised tf), ``per_chunk`` (one
    column per clause: its best alternative's saturated score), ``cand`` (chunks that
    pass the filters, with score, matched clauses and whether they satisfy the whole
    expression), ``totals`` (whether any chunk does, and how many chunks answer),
    ``ranked`` (the answering chunks with their final score) and ``near`` (those scoring
    at least the ``limit``-th best: the best ``limit`` plus any ties, broken by id once
    the metadata is joined). Chunk metadata is read for ``near`` only (and its
    ancestors), so no text column is read for the thousands of other candidates.
    """
    sql = Sql("")
    parts, sources = [], []
    if any(a.term_id is not None for c in plan.clauses if c.kind == "term" for a in c.alts):
        parts.append("alts AS (" + _alternatives(plan, sql, n_chunks) + ")")
        sources.append(TERM_HITS)
    for c in plan.clauses:
        if c.kind == "phrase":
            name, body = _phrase_hits(plan, c.index, sql, n_chunks)
            parts.append(f"{name} AS ({body})")
            sources.append(f"SELECT * FROM {name}")
    parts.append(f"hits AS ({' UNION ALL '.join(sources or [NO_HITS])})")
    parts.append("norm AS (" + _normalised(sql, avg_length, weights) + ")")
    tainted = _tainted(plan)
    shared = " MATERIALIZED" if tainted else ""  # read by tainted and cand: compute once
    parts.append(f"per_chunk AS{shared} (" + _pivot(plan, sql, weights) + ")")
    if tainted:
        parts.append(f"tainted AS MATERIALIZED ({tainted})")
        parts.append(f"blocked AS ({BLOCKED})")
    parts.append("cand AS MATERIALIZED ("
                 + _candidates(plan, sql, weights, filters, n_chunks) + ")")
    parts.append("totals AS (SELECT bool_or(ok) AS any_ok, count(*) FILTER (WHERE ok) AS "
                 "n_ok, count(*) FILTER (WHERE neg_ok AND matched > 0) AS n_partial "
                 "FROM cand)")
    parts.append("ranked AS MATERIALIZED (" + _ranked(plan, sql, weights, n_chunks) + ")")
    lim = sql.bind(int(limit))
    near = ("SELECT * FROM ranked WHERE score >= (SELECT min(score) FROM (SELECT score "
            f"FROM ranked ORDER BY score DESC LIMIT {lim}))")
    # the tainted chunks of the answers' documents only: ranking asks whether an answer
    # or one of its ancestors holds one (``Searcher._rank``), and every ancestor is of its
    # document (cpp-docs, 'template -class': the whole list, 63,841 ords in each of 101
    # rows, took 0.85 of the query's 0.99 s); all of them with ``every_tainted``, for
    # answers fused with chunks of other documents ([semantic])
    listed = "NULL::INTEGER[]"
    if tainted:
        listed = ("(SELECT list(ord) FROM tainted)" if every_tainted else
                  "(SELECT list(x.ord) FROM tainted x JOIN meta xm ON xm.ord = x.ord "
                  "WHERE xm.doc_ord IN (SELECT doc_ord FROM near))")
    cols = ", ".join("m." + c for c in META_COLUMNS)
    if not metadata:
        if ancestors:
            parts += [f"near AS MATERIALIZED ({near})", f"lineage AS ({LINEAGE})"]
            listed = f"CASE WHEN t.score IS NOT NULL THEN {listed} END"
        else:
            parts.append(f"near AS ({near})")
        sql.text = ("WITH " + ",\n".join(parts) + "\n"
                    f"SELECT t.score, t.matched, t.complete, t.total, {listed} AS tainted, "
                    f"t.ord FROM {'lineage' if ancestors else 'near'} t")
    elif ancestors:
        parts.append(f"near AS MATERIALIZED ({near})")
        parts.append(f"lineage AS ({LINEAGE})")
        sql.text = ("WITH " + ",\n".join(parts) + "\n"
                    "SELECT t.score, t.matched, t.complete, t.total, "
                    f"CASE WHEN t.score IS NOT NULL THEN {listed} END AS tainted, {cols}\n"
                    "FROM lineage t JOIN meta m ON m.ord = t.ord\n"
                    "QUALIFY t.score IS NULL OR row_number() OVER (PARTITION BY t.score IS "
                    f"NULL ORDER BY t.score DESC, m.id) <= {lim}\n"
                    "ORDER BY t.score DESC NULLS LAST, m.id")
    else:
        parts.append(f"near AS ({near})")
        sql.text = ("WITH " + ",\n".join(parts) + "\n"
                    f"SELECT t.score, t.matched, t.complete, t.total, {listed} AS tainted, "
                    f"{cols}\nFROM near t JOIN meta m ON m.ord = t.ord\n"
                    f"ORDER BY t.score DESC, m.id LIMIT {lim}")
    return sql


#: Chunks whose subtree holds a tainted chunk: each tainted chunk and its ancestors (the
#: chunks of its document whose subtree range holds it), found by an equi-join on the
#: document rather than a range test of every candidate against every tainted chunk.
BLOCKED = ("SELECT DISTINCT a.ord FROM tainted t JOIN meta mt ON mt.ord = t.ord "
           "JOIN meta a ON a.doc_ord = mt.doc_ord AND a.ord <= t.ord "
           "AND t.ord <= a.ord + a.descendants")
#: The ``near`` chunks, then (score NULL) each distinct proper ancestor of one of them: a
#: chunk of the same document (``doc_ord``) whose subtree range holds it.
LINEAGE = ("SELECT ord, score, matched, complete, total FROM near UNION ALL "
           "SELECT DISTINCT a.ord, NULL, NULL, NULL, NULL FROM near t "
           "JOIN meta a ON a.doc_ord = t.doc_ord AND a.ord < t.ord "
           "AND t.ord <= a.ord + a.descendants")


#: Postings of the term alternatives, restricted to each clause's fields.
TERM_HITS = ("SELECT a.clause, a.term_id AS alt, p.ord, p.field, p.tf, p.len, a.weight, "
             "a.idf FROM tf_postings p JOIN alts a ON p.term_id = a.term_id "
             "WHERE (a.mask >> p.field) & 1 = 1")
NO_HITS = ("SELECT NULL::INTEGER AS clause, NULL::INTEGER AS alt, NULL::INTEGER AS ord, "
           "NULL::TINYINT AS field, NULL::INTEGER AS tf, NULL::INTEGER AS len, "
           "NULL::DOUBLE AS weight, NULL::DOUBLE AS idf WHERE false")


def _alternatives(plan: Plan, sql: Sql, n: int, *, masks: bool = True) -> str:
    """One row per term alternative: its clause, term, weight, idf and (with ``masks``)
    field mask, bound as parallel lists, so the text depends on the plan's shape only."""
    cols: dict[str, list] = {"clause": [], "term_id": [], "weight": [], "idf": [], "mask": []}
    for c in plan.clauses:
        if c.kind != "term":
            continue
        for a in c.alts:
            if a.term_id is not None:
                for name, value in zip(cols, (c.index, a.term_id, a.weight * c.boost,
                                              alternative_idf(n, c, a), c.field_mask),
                                       strict=True):
                    cols[name].append(value)
    if not masks:
        del cols["mask"]
    types = {"clause": "INTEGER", "term_id": "INTEGER", "weight": "DOUBLE", "idf": "DOUBLE",
             "mask": "INTEGER"}
    return "SELECT " + ", ".join(f"unnest({sql.bind(values)}::{types[name]}[]) AS {name}"
                                 for name, values in cols.items())


def _phrase_hits(plan: Plan, index: int, sql: Sql, n: int) -> tuple[str, str]:
    """The phrase clause ``index``'s hits: per chunk and field, the occurrences of its
    words in order (within its slop), from ``phrase_postings`` (one file, sorted by
    term: ``ra.pipeline.compact``)."""
    clause = plan.clauses[index]
    name = f"phrase_{index}"
    if any(a.term_id is None for a in clause.alts):
        return name, NO_HITS
    slop = sql.bind(int(clause.slop))
    joins, where, checks = [], [], []
    for i, alt in enumerate(clause.alts):
        where.append(f"w{i}.term_id = {sql.bind(alt.term_id)}")
        if i:
            joins.append(f"JOIN phrase_postings w{i} ON w{i}.ord = w0.ord "
                         f"AND w{i}.field = w0.field")
            checks.append(f"len(list_filter(w{i}.positions, lambda y: "
                          f"abs(y - x - {i}) <= {slop})) > 0")
    tf = f"len(list_filter(w0.positions, lambda x: {' AND '.join(checks)}))"
    body = (f"SELECT {index} AS clause, -1 AS alt, w0.ord, w0.field, {tf}::INTEGER AS tf, "
            f"w0.len, {sql.bind(clause.boost)} AS weight, {sql.bind(phrase_idf(n, clause))} AS idf "
            f"FROM phrase_postings w0 {' '.join(joins)} "
            f"WHERE {' AND '.join(where)} AND ({clause.field_mask} >> w0.field) & 1 = 1")
    return name, f"SELECT * FROM ({body}) WHERE tf > 0"


def _normalised(sql: Sql, avg_length: dict[str, float], w: Weights) -> str:
    """Per clause, alternative and chunk: tf~ (``tf_norm_sql``)."""
    return ("SELECT clause, alt, ord, any_value(weight) AS weight, any_value(idf) AS idf, "
            f"{tf_norm_sql(sql.bind, avg_length, w)} AS tfn FROM hits GROUP BY clause, alt, "
            "ord")


def _pivot(plan: Plan, sql: Sql, w: Weights) -> str:
    """Per chunk, each clause's score: its best alternative, saturated."""
    k1 = sql.bind(w.k1)
    cols = [f"max(s) FILTER (WHERE clause = {c.index}) AS c{c.index}"
            for c in plan.clauses if c.kind != "tree"]
    return (f"SELECT ord{''.join(', ' + c for c in cols)} FROM (SELECT clause, ord, "
            f"weight * idf * tfn * ({k1} + 1) / ({k1} + tfn) AS s FROM norm) GROUP BY ord")


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
            out += sorted(refs(item.expr))
    return [i for i in out if plan.clauses[i].kind != "tree"]


def _tainted(plan: Plan) -> str:
    """Chunks holding a word negated at the top level ('' when there is none)."""
    clauses = top_negations(plan)
    if not clauses:
        return ""
    return ("SELECT ord FROM per_chunk WHERE "
            + " OR ".join(f"c{c} IS NOT NULL" for c in sorted(set(clauses))))


def _candidates(plan: Plan, sql: Sql, w: Weights, f: Filters, n_chunks: int) -> str:
    score = " + ".join(f"coalesce(c{i}, 0)" for i in plan.positive) or "0"
    matched = _matched(plan, sql, n_chunks)
    neg_ok = " AND ".join(_unmatched(plan.clauses[i], sql) for i in plan.negative) or "true"
    where = ["true", *f.conditions(sql)]
    if top_negations(plan):
        where.append("pc.ord NOT IN (SELECT ord FROM blocked)")
    boost = sql.bind(w.local_boost)
    tree_ok = _tree_only(plan, sql)
    return (f"SELECT pc.ord, m.doc_ord, ({score}) * CASE WHEN m.is_global THEN 1.0 ELSE "
            f"{boost} END AS score, {matched} AS matched, {_expr(plan.expr, plan, sql)} AS ok, "
            f"({neg_ok}) AND {tree_ok} AS neg_ok "
            f"FROM per_chunk pc JOIN meta m ON m.ord = pc.ord WHERE {' AND '.join(where)}")


def _unmatched(clause: Clause, sql: Sql) -> str:
    """The condition that a chunk does not match ``clause`` (a negated one): a tree
    clause is a condition on the chunk's tree, not a score column (``-tree:NAME``)."""
    if clause.kind == "tree":
        return f"m.tree <> {sql.bind(clause.tree)}"
    return f"c{clause.index} IS NULL"


def _matched(plan: Plan, sql: Sql, n_chunks: int) -> str:
    """SQL for the weight of the plan's groups a chunk matches (``group_idf``): what the
    coordination factor counts."""
    return " + ".join(f"{_expr(g, plan, sql)}::INTEGER * "
                      f"{sql.bind(group_idf(plan, g, n_chunks))}"
                      for g in plan.counted()) or "0"


def _all_words(plan: Plan) -> bool:
    """Whether every clause is a group of its own, so every chunk with a hit matches a
    group (no compound's part, no expansion term alone): counting needs no filter."""
    groups = plan.counted()
    return (all(isinstance(g, Ref) for g in groups)
            and sorted(g.index for g in groups) == [c.index for c in plan.clauses])


def group_idf(plan: Plan, group, n_chunks: int) -> float:
    """A group's weight in coordination: the idf it scores with when matched. A word:
    the highest idf among its alternatives in the vocabulary (``alternative_idf``), 0
    when it has none (no chunk can match it); a phrase: the sum of its words'; all of
    several (a compound's parts): their sum; any of several: the highest."""
    match group:
        case Ref(i):
            c = plan.clauses[i]
            found = [a for a in c.alts if a.term_id is not None]
            if c.kind == "phrase":
                return phrase_idf(n_chunks, c) if len(found) == len(
                    c.alts) else 0.0
            return max((alternative_idf(n_chunks, c, a) for a in found), default=0.0)
        case AllOf(items):
            return sum(group_idf(plan, g, n_chunks) for g in items)
        case Abbreviated(items):
            return group_idf(plan, items[0], n_chunks)
        case AnyOf(items):
            return max(group_idf(plan, g, n_chunks) for g in items)
    return 0.0


def _ranked(plan: Plan, sql: Sql, weights: Weights, n_chunks: int) -> str:
    return _answers(plan, sql, weights, n_chunks, plain=False)


def _answers(plan: Plan, sql: Sql, w: Weights, n_chunks: int, *, plain: bool,
             reach: bool = False) -> str:
    """The answering candidates with their final score. A ranked plan: every candidate
    matching a group (and no excluded word), its score × (weight of the groups it
    matches / weight of all groups) ** coord (``group_idf``). Otherwise those satisfying
    the whole expression when any does, else the partial answer, scored the same way.
    ``plain``: for ``top_sql``, whose candidates have no ``doc_ord`` and no negation;
    ``reach``: also what a candidate's ``local`` boost becomes (``scale``: what a score
    added to its words' is multiplied by) and its ``reach`` (the most its phrases may
    add: ``ra.query.impacts.top_sql``) so multiplied."""
    extra = "" if plain else "c.doc_ord, "
    total = sql.bind(max(sum(group_idf(plan, g, n_chunks) for g in plan.counted()), 1e-9))
    coord = sql.bind(w.coord)

    def coordinated(column: str) -> str:
        return f"{column} * pow(c.matched / {total}, {coord})"

    def final(column: str) -> str:
        if plan.ranked:
            return coordinated(column)
        return f"CASE WHEN t.any_ok THEN {column} ELSE {coordinated(column)} END"

    if reach:
        extra += f"c.reach * {final('c.local')} AS reach, {final('c.local')} AS scale, "
    # with a group per clause, every candidate of a plain plan matches one
    partial = ("c.neg_ok AND c.matched > 0" if not plain else
               "true" if _all_words(plan) else "c.matched > 0")
    if plan.ranked:
        return (f"SELECT c.ord, {extra}{final('c.score')} AS score, c.matched, t.any_ok AS "
                "complete, t.n_partial AS total FROM cand c, totals t WHERE " + partial)
    where = (f"CASE WHEN t.any_ok THEN c.ok ELSE {partial} END" if partial != "true"
             else "c.ok OR NOT t.any_ok")
    return (f"SELECT c.ord, {extra}{final('c.score')} "
            "AS score, c.matched, t.any_ok AS complete, CASE WHEN t.any_ok THEN t.n_ok ELSE "
            f"t.n_partial END AS total FROM cand c, totals t WHERE {where}")


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
