"""Pseudo-relevance feedback: words the best chunks share, added to a long query (RM3).

A claim or a task description often names its subject in other words than the page that
answers it. Relevance-model feedback (RM3: Lavrenko & Croft, "Relevance-Based Language
Models", SIGIR 2001; Abdul-Jaleel et al., "UMass at TREC 2004") takes the first ranking's
best ``FB_CHUNKS`` chunks as relevant and weighs each of their terms by

    P(t | R) = Σ_d P(t | d) · P(d | q),   P(t | d) = tf(t, d) / |d|,   P(d | q) ∝ score(d)

(tf over all fields, |d| the chunk's tokens). The ``FB_TERMS`` heaviest terms that were not
typed, are not stopwords and are in at most ``MAX_DF_SHARE`` of the chunks join the query
as optional term clauses (``Clause.feedback``): they add score, never decide whether a
chunk answers, are not counted by coordination and are not highlighted. The heaviest gets
the boost ``FB_WEIGHT`` and the others proportionally less, so an expansion term always
weighs below a typed word (boost 1). The query is then scored again.

It runs only for ranked (long) queries and only when ``[search] feedback = true``: it is
off by default because it did not win where it was measured (``docs/ranking.md``): on
SciFact train it raised Recall@100 (0.9229 → 0.9303) but lowered nDCG@10 (0.6920 →
0.6872), and it cost every known-item set but the task descriptions MRR@10.

``feedback_sql`` is pure (golden-tested like the scoring SQL); ``expand`` reads the
vocabulary to name the terms and returns a new plan.
"""

from __future__ import annotations

from dataclasses import replace

from ra.query.bm25f import Sql
from ra.query.plan import ALL_FIELDS, Alt, Clause, Plan

FB_CHUNKS = 10  # chunks of the first ranking taken as relevant
FB_TERMS = 10  # expansion terms added
FB_WEIGHT = 0.5  # boost of the heaviest expansion term (a typed word has 1)
MAX_DF_SHARE = 0.1  # terms in more of the chunks than this say nothing specific
CANDIDATES = 5  # terms read per term kept, so that filtering leaves enough


def feedback_sql(ords: list[int], weights: list[float], limit: int) -> Sql:
    """Rows ``(term_id, P(t|R))`` of the chunks ``ords`` with ``weights`` (P(d|q)), heaviest
    first, at most ``limit``."""
    sql = Sql("")
    o, w = sql.bind([int(x) for x in ords]), sql.bind([float(x) for x in weights])
    lim = sql.bind(int(limit))
    sql.text = (
        f"WITH fb AS (SELECT unnest({o}::INTEGER[]) AS ord, unnest({w}::DOUBLE[]) AS w),\n"
        "tf AS (SELECT p.ord, p.term_id, sum(p.tf) AS tf FROM tf_postings p "
        "WHERE p.ord IN (SELECT ord FROM fb) GROUP BY p.ord, p.term_id),\n"
        "len AS (SELECT ord, sum(tf) AS n FROM tf GROUP BY ord)\n"
        "SELECT tf.term_id, sum(fb.w * tf.tf / len.n) AS weight FROM tf "
        "JOIN len ON len.ord = tf.ord JOIN fb ON fb.ord = tf.ord "
        f"GROUP BY tf.term_id ORDER BY weight DESC, tf.term_id LIMIT {lim}")
    return sql


def expand(plan: Plan, reader, analyzer, top: list[tuple[int, float]]) -> Plan:
    """``plan`` with the expansion terms of the chunks ``top`` (``(ord, score)``, best
    first) added as feedback clauses; ``plan`` itself when none qualify."""
    from ra.text.stopwords import ENGLISH

    top = [(o, s) for o, s in top[:FB_CHUNKS] if s > 0]
    total = sum(s for _, s in top)
    if not top or total <= 0:
        return plan
    sql = feedback_sql([o for o, _ in top], [s / total for _, s in top],
                       FB_TERMS * CANDIDATES)
    rows = reader.query(sql.text, sql.params)
    typed = {a.term_id for c in plan.clauses for a in c.alts if a.term_id is not None}
    stop = {analyzer.stem(w) for w in ENGLISH}
    info = reader.term_info([t for t, _ in rows])
    limit = MAX_DF_SHARE * reader.stats.chunks
    chosen = []
    for term_id, weight in rows:
        term, df = info.get(term_id, ("", 0))
        if (term_id in typed or term in stop or df > limit or len(term) < 3
                or term.isdecimal()):
            continue
        chosen.append((term, term_id, df, weight))
        if len(chosen) == FB_TERMS:
            break
    if not chosen:
        return plan
    heaviest = chosen[0][3]
    start = len(plan.clauses)
    extra = [Clause(index=start + i, kind="term", text=term, fields=ALL_FIELDS,
                    alts=(Alt(term, term_id, df, word=term),),
                    boost=FB_WEIGHT * weight / heaviest, feedback=True)
             for i, (term, term_id, df, weight) in enumerate(chosen)]
    return replace(plan, clauses=plan.clauses + extra,
                   positive=plan.positive + tuple(c.index for c in extra))
