"""Plain queries scored from impacts (``ra.pipeline.impacts``): one multiplication per
posting and a sum per chunk.

A reader reads each term's quantized BM25F weight in each chunk from the build's
``hot_impacts`` (as relation ``impacts``: a view, or a table in a long-lived reader)
when they hold for the configured weights (``IndexReader.impacts``). ``top_sql``
scores a plain plan (``is_plain``) from them: an alternative contributes
``factor(weight, idf, k1) · impact``, so a clause's score is within ``bound`` of
``bm25f_sql``'s, and matching, the matched groups, ``complete`` and ``total`` are
``bm25f_sql``'s exactly. A long-lived reader holds the same rows as arrays
(``ra.index.impact_arrays``) and ``top_rows`` computes ``top_sql``'s rows from them in
NumPy, without DuckDB's fixed cost of a query.

A plan whose only phrases are a compound's (``bonus_phrases``: they only add score) is
scored in two steps by both: its words so, with the most each chunk's phrases could add;
then ``with_phrases`` scores the phrases from positions (``ra.query.phrases``) in the
chunks they could lift to the ``limit``-th best only, and applies the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    group_idf,
    phrase_idf,
)
from ra.query.plan import AllOf, AnyOf, Clause, NoneOf, Plan, Ref
from ra.store.layout import FIELDS


def factor(weight: float, idf: float, k1: float) -> float:
    """What an alternative multiplies an impact by: its weight and idf, and the scale."""
    return weight * idf * (k1 + 1) / SCALE


def bound(weight: float, idf: float, k1: float) -> float:
    """The most a clause's score over impacts differs from the exact BM25F: half a step
    (plus the float error of the two computations, far below it)."""
    return factor(weight, idf, k1) / 2


# --- plain queries over impacts ---------------------------------------------------------

def is_plain(plan: Plan, filters: Filters, *, phrases: bool = False) -> bool:
    """Whether ``top_sql`` can score ``plan``: AND/OR of words over every field (no
    phrase, field restriction, tree clause or negation), no filter but ``archived``.
    With ``phrases``, whether ``top_rows`` can: the same, but for the phrases that only
    add score (``bonus_phrases``: a compound's, a path's, a run of CJK text's)."""
    every = (1 << len(FIELDS)) - 1
    bonus = set(bonus_phrases(plan)) if phrases else set()
    return (bool(plan.clauses) and not plan.negative
            and all((c.kind == "term" or c.index in bonus) and c.field_mask == every
                    for c in plan.clauses)
            and filters == Filters(include_archived=filters.include_archived))


def bonus_phrases(plan: Plan) -> list[int]:
    """The phrase clauses of ``plan`` that only add score (``Plan.score_only``), over
    every field, their words adjacent: those whose score in a chunk is at most that of
    the least of its words there (each occurrence of the phrase is one of each word's,
    in the same field), so impacts bound it (``top_rows``)."""
    score_only = plan.score_only()
    return [c.index for c in plan.clauses
            if c.kind == "phrase" and c.index in score_only and c.slop == 0]


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

    A plan with phrases that only add score (``is_plain(..., phrases=True)``) gets the
    first of ``top_rows``' two steps: the rows of the chunks whose words' score plus
    ``reach``, the most their phrases may add (each phrase's factor times the least of
    its words' impacts there, as ``top_rows`` bounds it), scaled as the score is
    (``scale``), reaches the ``limit``-th best words' score; ``with_phrases`` adds the
    phrases' scores to them and applies the limit.
    """
    sql = Sql("")
    bonus = bonus_phrases(plan)
    alts = _factors(plan, sql, n_chunks, weights.k1, bonus)
    terms = [c for c in plan.clauses if c.kind == "term"]
    cols = "".join(f", max(a.factor * p.impact) FILTER (WHERE a.clause = {c.index}) AS "
                   f"c{c.index}" for c in terms)
    reach = []
    for i in bonus:
        c = plan.clauses[i]
        words = {a.term_id for a in c.alts}
        if None in words:
            continue
        cols += (f", count(DISTINCT p.term_id) FILTER (WHERE a.clause = {i}) AS n{i}, "
                 f"min(p.impact) FILTER (WHERE a.clause = {i}) AS m{i}")
        most = factor(c.boost, phrase_idf(n_chunks, c), weights.k1)
        reach.append(f"CASE WHEN n{i} = {len(words)} THEN (m{i} + 0.5) * {sql.bind(most)} "
                     "ELSE 0 END")
    archived = "" if filters.include_archived else " WHERE NOT p.archived"
    score = " + ".join(f"coalesce(c{c.index}, 0)" for c in terms)
    boost = sql.bind(weights.local_boost)
    lim = sql.bind(int(limit))
    local = f"CASE WHEN is_global THEN 1.0 ELSE {boost} END"
    bounds = (f"{local} AS local, ({' + '.join(reach) or '0'}) * {sql.bind(1 + 1e-9)} "
              "AS reach, " if bonus else "")
    sql.text = (
        f"WITH cand AS (SELECT ord, {bounds}({score}) * {local} AS score, "
        f"{_matched(plan, sql, n_chunks)} AS matched, "
        f"{_expr(plan.expr, plan, sql)} AS ok FROM (SELECT p.ord, bool_or(p.is_global) AS "
        f"is_global{cols} FROM impacts p JOIN ({alts}) a ON p.term_id = a.term_id{archived} "
        "GROUP BY p.ord)),\n"
        "totals AS (SELECT bool_or(ok) AS any_ok, count(*) FILTER (WHERE ok) AS n_ok, "
        f"count(*){'' if _all_words(plan) else ' FILTER (WHERE matched > 0)'} AS n_partial "
        "FROM cand)")
    answers = _answers(plan, sql, weights, n_chunks, plain=True, reach=bool(bonus))
    if bonus:
        sql.text += (
            f",\nanswers AS MATERIALIZED ({answers}),\n"
            "kth AS (SELECT min(score) AS score FROM (SELECT score FROM answers ORDER BY "
            f"score DESC LIMIT {lim}))\n"
            "SELECT a.score, a.matched, a.complete, a.total, NULL::INTEGER[] AS tainted, "
            "a.ord, a.reach, a.scale FROM answers a, kth WHERE a.score + a.reach >= kth.score")
    else:
        sql.text += (
            "\nSELECT score, matched, complete, total, NULL::INTEGER[] AS tainted, ord FROM ("
            f"{answers}) "
            # outside the answers, where ``score`` is their final (coordinated) score
            f"QUALIFY rank() OVER (ORDER BY score DESC) <= {lim}")
    return sql


def with_phrases(rows: list[tuple], plan: Plan, limit: int, phrases: PhraseScores
                 ) -> list[tuple]:
    """The second of ``top_rows``' two steps (and ``top_sql``'s for a plan with phrases
    that only add score): ``rows`` ``(score, matched, complete, total, tainted, ord,
    reach, scale)`` of the chunks whose words' score plus ``reach`` may reach the
    ``limit``-th best, as ``top_sql``'s rows; ``phrases`` scores the phrases in those
    with a ``reach``, each added times the row's ``scale``, then the limit is applied
    (ties stay)."""
    clauses = [plan.clauses[i] for i in bonus_phrases(plan)]
    need = sorted(r[5] for r in rows if r[6] > 0)
    added = dict(zip(need, phrases(clauses, need), strict=True)) if need else {}
    out = [(r[0] + added[r[5]] * r[7] if r[5] in added else r[0], *r[1:6]) for r in rows]
    if len(out) > limit:
        kth = sorted((r[0] for r in out), reverse=True)[limit - 1]
        out = [r for r in out if r[0] >= kth]
    return out


def top_rows(plan: Plan, arrays, n_chunks: int, weights: Weights, filters: Filters,
             limit: int, phrases: PhraseScores | None = None) -> list[tuple]:
    """``top_sql``'s rows, computed from a long-lived reader's ``ImpactArrays``: the same
    chunks, ``matched``, ``complete`` and ``total``, and the same scores up to the order
    of float operations (each step is the SQL's, in its order). The candidates are the
    chunks with a posting of any alternative (not archived, unless asked); each clause
    becomes a column over them, its best alternative's ``factor · impact``, ``-inf``
    where it has none. A filtered plan (not ``ranked``) whose answers must hold some
    clauses is scored among the chunks that hold them when there are any
    (``_every_word``): the others cannot be answers, and only when none holds them all do
    they count (the partial answers then ranked). A ranked plan skips the chunks that
    hold only words too common to lift them to the ``limit``-th best (``_pruned``).

    A plan with phrases that only add score (``is_plain(..., phrases=True)``) is scored
    in two steps, as MaxScore skips what cannot win: its words first, as above; then a
    phrase's largest possible score in each candidate holding all of its words, its
    ``factor`` times the least of their impacts (``bonus_phrases``), tells which chunks
    it could lift to the ``limit``-th best, and ``phrases(clauses, ords)`` gives
    their score (``bm25f_sql``'s, from the positions) in those only. The other chunks keep
    their words' score: their phrase score is nothing, or too little to matter."""
    bonus = bonus_phrases(plan) if phrases is not None else []
    arrays.load(a.term_id for c in plan.clauses for a in c.alts)  # computed ones: at once
    alts = []
    for k, c in enumerate(plan.clauses):
        if c.kind == "phrase":
            continue
        for a in c.alts:
            if a.term_id is not None and len((posted := arrays.postings(a.term_id))[0]):
                alts.append((k, factor(a.weight * c.boost, alternative_idf(n_chunks, c, a),
                                       weights.k1), *posted))
    if not alts or limit < 1:
        return []
    hit = arrays.scratch()[0]
    archived = arrays.any_archived and not filters.include_archived
    if not plan.ranked and (every := _every_word(plan, alts, hit)) is not None:
        if archived:
            every = every[~arrays.archived[every]]
        if len(every):  # a chunk holds every word: the others cannot be answers
            return _scored(plan, alts, every, arrays, n_chunks, weights, limit, phrases,
                           bonus, True)
    if plan.ranked and (pruned := _pruned(plan, alts, arrays, n_chunks, weights, limit,
                                          archived, hit, bonus)):
        return _scored(plan, alts, pruned[0], arrays, n_chunks, weights, limit, phrases,
                       bonus, True, pruned[1])
    cand = _union([alt[2] for alt in alts], hit)
    if archived:
        cand = cand[~arrays.archived[cand]]
    return _scored(plan, alts, cand, arrays, n_chunks, weights, limit, phrases, bonus,
                   archived)


#: A ranked query's first guess at the ``limit``-th best score (``_pruned``) comes from
#: the chunks of its most telling words, taken until they hold ``SEED`` times ``limit``.
SEED = 2
#: ``_pruned`` looks for what to skip in queries with at least this many postings: below,
#: the first guess costs more than scoring every candidate.
PRUNE_POSTINGS = 50_000


def _pruned(plan: Plan, alts: list, arrays, n_chunks: int, weights: Weights, limit: int,
            archived: bool, hit, bonus: Sequence[int] = ()) -> tuple | None:
    """``(candidates, total)`` of a ranked plan, skipping the chunks that cannot reach the
    ``limit``-th best score (MaxScore, Turtle and Flood 1995); None when nothing can be
    skipped.

    A chunk's final score is its clauses' sum times its local boost times coordination,
    ``(matched / total_idf) ** coord``, plus what the phrases of ``bonus`` add. Holding
    only clauses of a set S, it is at most the sum of their largest contributions
    (``factor`` times the largest impact of each alternative) plus the most each phrase
    can add (``_most``'s bound at the largest impacts), times the largest boost, times
    ``(m / total_idf) ** coord`` where m sums the idf of the groups S may hold (those
    whose needed clauses are all in S): both grow with S. The clauses sorted by their
    largest contribution, the longest prefix whose bound stays under a words' score some
    ``limit`` chunks reach (those of the clauses that can add most, scored in full)
    cannot lift a chunk to the answers alone: only the chunks holding one of the other
    clauses are candidates, and they hold every chunk that satisfies the plan (else
    nothing is skipped, so that ``complete`` stays exact). Common words are that prefix:
    a long question's "the", "for", "is" hold most chunks, and its rare words few.
    ``total`` (the chunks matching a group, not archived) is counted from the postings,
    as it would be over every candidate. ``hit``: ``top_rows``' by-chunk scratch (all
    False), left as found."""
    import numpy as np

    if weights.coord < 0 or sum(len(alt[2]) for alt in alts) < PRUNE_POSTINGS:
        return None
    by_clause = _postings(plan, alts)
    if len(by_clause) < 2:
        return None
    most: dict[int, float] = {}
    for k, f, _, impacts in alts:
        i = plan.clauses[k].index
        most[i] = max(most.get(i, 0.0), f * float(impacts.max()))
    order = sorted(by_clause, key=lambda k: most[k])  # least first
    seed_clauses, size = [], 0
    for k in reversed(order):
        seed_clauses.append(k)
        size += sum(len(o) for o in by_clause[k])
        if size >= SEED * limit:
            break
    if len(seed_clauses) == len(order):
        return None  # the first guess would score every candidate
    seed = _union([o for k in seed_clauses for o in by_clause[k]], hit)
    if archived:
        seed = seed[~arrays.archived[seed]]
    if len(seed) < limit:
        return None
    final = _finals(plan, alts, seed, arrays, n_chunks, weights, True)[0]
    kth = float(np.partition(final, len(final) - limit)[len(final) - limit])
    ceiling = _ceiling(plan, most, arrays, n_chunks, weights, bonus)
    alone, inside = 0, set()
    for i in order:
        inside.add(i)
        if ceiling(inside) >= kth:
            break
        alone += 1
    essential = set(order[alone:])
    if not alone or not essential or not _needed(plan.expr) & essential:
        return None  # nothing to skip; or answers might be skipped
    total = _matching(plan, by_clause, hit, arrays.archived if archived else None)
    if total is None:
        return None
    cand = _union([o for k in order[alone:] for o in by_clause[k]], hit)
    if archived:
        cand = cand[~arrays.archived[cand]]
    return cand, total


def _ceiling(plan: Plan, most: dict[int, float], arrays, n_chunks: int, weights: Weights,
             bonus: Sequence[int] = ()) -> Callable[[set[int]], float]:
    """The most a ranked plan's final score can be in a chunk holding no clause but those
    of a set (clause indexes), its phrases of ``bonus`` included (``_pruned``); ``most``:
    each term clause's largest contribution, by clause index."""
    groups = [(_needed(g), group_idf(plan, g, n_chunks)) for g in plan.counted()]
    total_idf = max(sum(idf for _, idf in groups), 1e-9)
    boost = max(1.0, weights.local_boost)
    phrases = sum(_phrase_most(plan.clauses[i], arrays, n_chunks, weights.k1) for i in bonus)

    def ceiling(inside: set[int]) -> float:
        added = phrases + sum(most.get(i, 0.0) for i in inside)
        held = sum(idf for needed, idf in groups if needed <= inside)
        return added * boost * (held / total_idf) ** weights.coord * (1 + 1e-9)

    return ceiling


def _phrase_most(clause: Clause, arrays, n_chunks: int, k1: float) -> float:
    """The most a phrase of ``bonus_phrases`` adds to any chunk: ``_most`` at its words'
    largest impacts."""
    least = None
    for a in clause.alts:
        if a.term_id is None or not len(impacts := arrays.postings(a.term_id)[1]):
            return 0.0  # a word no chunk has: the phrase is nowhere
        least = float(impacts.max()) if least is None else min(least, float(impacts.max()))
    if least is None:
        return 0.0
    return (least + 0.5) * factor(clause.boost, phrase_idf(n_chunks, clause), k1) * (1 + 1e-9)


def _matching(plan: Plan, postings: dict[int, list], hit, archived) -> int | None:
    """How many chunks match one of the plan's counted groups (not ``archived``, a by-ord
    mask, when given), from ``postings`` (``_postings``); None for a group under a
    negation."""
    import numpy as np

    found = [_chunks(g, postings, hit) for g in plan.counted()]
    if any(f is None for f in found):
        return None
    for ords in found:
        hit[ords] = True
    total = int(np.count_nonzero(hit & ~archived if archived is not None else hit))
    hit.fill(False)
    return total


def _every_word(plan: Plan, alts: list, hit) -> object | None:
    """The chunks holding an alternative of each clause an answer must hold (``_needed``),
    sorted, or None when no clause is needed. ``hit`` (all False) is left as found.

    A filtered plan's answers hold those clauses, so when some chunk does, scoring the
    others is work for nothing: the union of two common words' postings is about ten
    times their intersection ("Example implementation": 85,000 chunks against 5,000 at
    five times cpp-docs), and every column of ``top_rows`` is as long as its candidates."""
    needed = _needed(plan.expr)
    if not needed:
        return None
    return _chunks(AllOf(tuple(Ref(i) for i in sorted(needed))), _postings(plan, alts), hit)


def _postings(plan: Plan, alts: list) -> dict[int, list]:
    """The postings (ords) of each term clause's alternatives, by clause index."""
    out: dict[int, list] = {}
    for k, _, ords, _ in alts:
        out.setdefault(plan.clauses[k].index, []).append(ords)
    return out


def _chunks(expr, postings: dict[int, list], hit):
    """The chunks satisfying ``expr`` by ``postings`` (``_postings``), sorted; None under
    a negation. ``hit`` (all False) is left as found. A conjunction starts from the
    clause with the fewest postings, and each other part keeps what it holds (a clause
    by its alternatives' postings, without uniting them)."""
    match expr:
        case Ref(i):
            return _union(postings.get(i, []), hit)
        case AllOf(items):
            def size(item) -> float:
                return (sum(len(o) for o in postings.get(item.index, []))
                        if isinstance(item, Ref) else float("inf"))

            first, *rest = sorted(items, key=size)
            every = _chunks(first, postings, hit)
            for item in rest:
                if every is None or not len(every):
                    return every
                held = (postings.get(item.index, []) if isinstance(item, Ref)
                        else [_chunks(item, postings, hit)])
                if any(h is None for h in held):
                    return None
                every = every[_held(every, held, hit)]
            return every
        case AnyOf(items):
            parts = [_chunks(item, postings, hit) for item in items]
            if any(p is None for p in parts):
                return None
            return _union([p for p in parts if len(p)], hit)
    return None


#: A few chunks are looked up in a term's postings by binary search (``searchsorted``),
#: many by marking the postings (one pass over them): binary search wins while the chunks
#: are fewer than the postings over ``SEARCH_RATIO``.
SEARCH_RATIO = 8


def _union(ords_list: list, hit):
    """The sorted, distinct ords of several terms' postings (each sorted): one term's as
    they are, few sorted together, else marked in ``hit`` (left all False) and read
    back in order."""
    import numpy as np

    if len(ords_list) < 2:
        return ords_list[0] if ords_list else np.zeros(0, dtype=np.int32)
    if sum(len(o) for o in ords_list) * SORT_RATIO < len(hit):
        every = np.sort(np.concatenate(ords_list))
        return every[np.concatenate(([True], every[1:] != every[:-1]))]
    for ords in ords_list:
        hit[ords] = True
    every = np.flatnonzero(hit)
    hit[every] = False
    return every


#: Postings are sorted together (``_union``) while they are fewer than the chunks over
#: ``SORT_RATIO``, else marked in a by-chunk array that is then read back in order.
SORT_RATIO = 32


def _held(every, ords_list: list, hit):
    """Which of the chunks ``every`` (sorted) are in one of the postings ``ords_list``
    (each sorted, as a term's are), as a boolean array; ``hit`` is left all False."""
    import numpy as np

    if len(every) * SEARCH_RATIO < sum(len(o) for o in ords_list):
        held = np.zeros(len(every), dtype=bool)
        for ords in ords_list:
            if len(ords):
                held |= ords[_positions(ords, every)] == every
        return held
    for ords in ords_list:
        hit[ords] = True
    held = hit[every]
    for ords in ords_list:
        hit[ords] = False
    return held


def _positions(ords, wanted):
    """Where each of ``wanted`` is, or would be, in the sorted ``ords`` (never past its
    end: the entry there is then another chunk's)."""
    import numpy as np

    at = np.searchsorted(ords, wanted)
    return np.minimum(at, len(ords) - 1, out=at)


def _needed(expr) -> set[int]:
    """The clauses every chunk satisfying ``expr`` holds."""
    match expr:
        case Ref(i):
            return {i}
        case AllOf(items):
            return set().union(*map(_needed, items))
        case AnyOf(items):
            return set.intersection(*map(_needed, items))
    return set()


def _scored(plan: Plan, alts: list, cand, arrays, n_chunks: int, weights: Weights,
            limit: int, phrases: PhraseScores | None, bonus: list[int], some: bool,
            total: int | None = None) -> list[tuple]:
    """``top_rows``' rows among the candidates ``cand`` (sorted ords); ``some``: they are
    not every chunk with a posting of ``alts`` (the others' postings are left out);
    ``total``: the count of partial answers, when the candidates are not all of them."""
    import numpy as np

    if not len(cand):
        return []
    final, matched, ok, scale, most = _finals(plan, alts, cand, arrays, n_chunks, weights,
                                              some, bonus)
    any_ok = bool(ok.any())
    if plan.ranked or not any_ok:
        keep = np.ones(len(cand), dtype=bool) if _all_words(plan) else matched > 0
        total = int(keep.sum()) if total is None else total
    else:
        keep, total = ok, int(ok.sum())
    rows = np.flatnonzero(keep)
    if bonus:  # the chunks whose words' score plus the most their phrases add may win
        reach = np.zeros(len(cand))
        for column in most:
            reach = reach + column
        reach = reach * scale
        best = final[rows]
        kth = (np.partition(best, len(rows) - limit)[len(rows) - limit]
               if len(rows) > limit else -np.inf)
        rows = rows[best + reach[rows] >= kth]
        return with_phrases([(float(final[i]), float(matched[i]), any_ok, total, None,
                              int(cand[i]), float(reach[i]), float(scale[i]))
                             for i in rows.tolist()], plan, limit, phrases)
    best = final[rows]
    if len(rows) > limit:  # every row scoring at least the limit-th best: ties stay
        kth = np.partition(best, len(rows) - limit)[len(rows) - limit]
        rows = rows[best >= kth]
    return [(float(final[i]), float(matched[i]), any_ok, total, None, int(cand[i]))
            for i in rows.tolist()]


def _finals(plan: Plan, alts: list, cand, arrays, n_chunks: int, weights: Weights,
            some: bool, bonus: Sequence[int] = ()) -> tuple:
    """``(final, matched, ok, scale, most)`` of the candidates ``cand``: their final
    score (coordinated when the plan is ranked or none satisfies it), the idf of the
    groups they match, whether each satisfies the plan, what a phrase's score is
    multiplied by, and the most each phrase of ``bonus`` may add."""
    import numpy as np

    _, slot = arrays.scratch()
    slot[cand] = np.arange(len(cand), dtype=np.int32)
    try:
        columns = [None] * len(plan.clauses)
        for k, f, ords, impacts in alts:
            if some and len(cand) * SEARCH_RATIO < len(ords):  # a few of many postings
                found = _positions(ords, cand)
                at = np.flatnonzero(ords[found] == cand)
                values = impacts[found[at]] * f
            else:
                at, values = slot[ords], impacts * f
                if some:
                    keep = at >= 0
                    at, values = at[keep], values[keep]
            if columns[k] is None:
                columns[k] = np.full(len(cand), -np.inf)
                columns[k][at] = values
            else:
                columns[k][at] = np.maximum(columns[k][at], values)
        most = [_most(plan.clauses[i], arrays, slot, len(cand), n_chunks, weights.k1)
                for i in bonus]
    finally:
        slot[cand] = -1
    found, score = {}, np.zeros(len(cand))
    for c, column in zip(plan.clauses, columns, strict=True):
        values = column if column is not None else np.full(len(cand), -np.inf)
        found[c.index] = values > -np.inf
        score = score + np.where(found[c.index], values, 0.0)
    local = np.where(arrays.is_global[cand], 1.0, weights.local_boost)
    score = score * local
    matched = np.zeros(len(cand))
    for g in plan.counted():
        matched = matched + _holds(g, found) * group_idf(plan, g, n_chunks)
    ok = _holds(plan.expr, found)
    total_idf = max(sum(group_idf(plan, g, n_chunks) for g in plan.counted()), 1e-9)
    if plan.ranked or not ok.any():
        coordination = np.power(matched / total_idf, weights.coord)
        return score * coordination, matched, ok, local * coordination, most
    return score, matched, ok, local, most


#: ``phrases(clauses, ords)``: the score of the phrase clauses in each of the chunks
#: ``ords`` (sorted), summed, a sequence in their order (0 where none occurs).
PhraseScores = Callable[[list[Clause], list[int]], Sequence[float]]


def _most(clause: Clause, arrays, slot, size: int, n_chunks: int, k1: float):
    """A bonus phrase's largest possible score in each candidate (``slot``: a chunk's
    place among them, -1 for others): its factor times the least of its words' impacts,
    plus half a step (the rounding), 0 where a word is missing."""
    import numpy as np

    if any(a.term_id is None for a in clause.alts):
        return np.zeros(size)
    least = None
    for a in clause.alts:
        ords, impacts = arrays.postings(a.term_id)
        at = slot[ords]
        mine = at >= 0
        column = np.zeros(size)
        column[at[mine]] = impacts[mine] + 0.5
        least = column if least is None else np.minimum(least, column)
    return least * factor(clause.boost, phrase_idf(n_chunks, clause), k1) * (1 + 1e-9)


def _holds(expr, found: dict):
    """Which candidates satisfy ``expr`` (``_expr``'s condition), as a boolean array."""
    match expr:
        case Ref(i):
            return found[i]
        case AllOf(items):
            out = _holds(items[0], found)
            for item in items[1:]:
                out = out & _holds(item, found)
            return out
        case AnyOf(items):
            out = _holds(items[0], found)
            for item in items[1:]:
                out = out | _holds(item, found)
            return out
        case NoneOf(inner):
            return ~_holds(inner, found)
    raise TypeError(f"unknown expression {expr!r}")  # pragma: no cover


def _factors(plan: Plan, sql: Sql, n_chunks: int, k1: float, bonus: list[int] = ()) -> str:
    """One row per term alternative: its clause, term and ``factor``, bound as parallel
    lists, so the text depends on the plan's shape only; and per word of each phrase of
    ``bonus``, its clause and term (factor 0: ``top_sql`` reads their impacts only)."""
    clauses, terms, factors = [], [], []
    for c in plan.clauses:
        if c.kind == "phrase" and c.index not in bonus:
            continue
        for a in c.alts:
            if a.term_id is not None:
                clauses.append(c.index)
                terms.append(a.term_id)
                factors.append(0.0 if c.kind == "phrase" else factor(
                    a.weight * c.boost, alternative_idf(n_chunks, c, a), k1))
    return (f"SELECT unnest({sql.bind(clauses)}::INTEGER[]) AS clause, "
            f"unnest({sql.bind(terms)}::INTEGER[]) AS term_id, "
            f"unnest({sql.bind(factors)}::DOUBLE[]) AS factor")
