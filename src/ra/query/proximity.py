"""Term proximity: a bonus for chunks where the query's words stand close together.

BM25F scores each word of a query on its own: a chunk that says "regulatory T cells"
and one that says "regulatory" in its first line and "cells" in its last score alike.
This module re-ranks the best ``CANDIDATES`` chunks of the first ranking with the
proximity bonus of Büttcher, Clarke and Lushman ("Term proximity scoring for ad-hoc
retrieval on very large text collections", SIGIR 2006):

1. the chunk's own text (heading and body, as the reader holds it) is read for the
   occurrences of the query's terms, in order, each with its token position and the
   clause (typed word) it belongs to; a fuzzy expansion counts as its word;
2. for each two consecutive occurrences of *different* words at most ``WINDOW`` tokens
   apart (``ORDERED``: only when they come in the order typed; ``QUERY_PAIRS``: only
   words typed next to each other), each word accumulates the other's weight divided
   by the squared distance: ``acc(a) += w(b) / d²``, ``acc(b) += w(a) / d²``, where
   ``w`` is the word's idf;
3. the bonus is ``Σ_t min(1, w(t)) · acc(t) · (k1 + 1) / (acc(t) + k1)``, a BM25
   saturation of the accumulators, times the ``[search] proximity`` weight, added to
   the chunk's score.

The bonus is never negative and only the first ``CANDIDATES`` rows get one, so a chunk
below them stays below: the candidates are re-sorted among themselves. It runs after
the first ranking whichever reader scored it (DuckDB or NumPy), on the text both read
alike, so both give the same order. Positions are counted in the raw markdown
(``[^\\W_]+`` words, as the analyser splits them), not the analysed fields: reading the
index's positions would cost a DuckDB query, more than scanning a hundred short texts.

Off by default (``proximity = 0``) because it did not win where it was measured
(``docs/ranking.md``, "Proximity: tried, not kept"): SciFact train nDCG@10 0.6932 →
0.6963 at best, against a goal of 0.72; the tldr, rust-book and task sets gained,
cpp-docs lost (compiler messages whose pages share a template: the words in order
favour a sibling as often as the page); and a warm cpp-docs search's p95 rose from 3.8
to 12 ms (5.3 with 30 candidates), long chunks being read in full. With ``[semantic]``
on, the bonus is added before fusion, so a keyword score can exceed the bound it is
normalised by (``ra.query.semantic.keyword_bound``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ra.query.bm25f import alternative_idf
from ra.query.plan import Plan
from ra.query.snippets import TermKey, match_spans
from ra.text.analysis import Analyzer

CANDIDATES = 100  # rows of the first ranking re-ranked
WINDOW = 5  # tokens: pairs further apart add nothing
ORDERED = False  # count a pair only when its words come in the order typed
QUERY_PAIRS = False  # count only pairs of words typed next to each other
STOPWORDS = False  # whether English stopwords take part (True: SciFact 0.6942, not 0.6963)
CAP = 1.0  # a word's own weight in the bonus: min(CAP, idf)

_WORD = re.compile(r"[^\W_]+")
#: ``(position, clause)`` of one occurrence of a query word in a text.
Occurrence = tuple[int, int]


def query_words(plan: Plan, n_chunks: int, analyzer: Analyzer,
                stopwords: bool = True) -> dict[str, tuple[int, float]]:
    """``term → (clause, idf)`` of the typed words of ``plan`` (positive term clauses,
    not feedback), each alternative in the vocabulary mapped to its clause; without
    ``stopwords``, clauses whose word is an English stopword are left out."""
    from ra.text.stopwords import ENGLISH

    out: dict[str, tuple[int, float]] = {}
    stop = set() if stopwords else {analyzer.stem(w) for w in ENGLISH}
    for i in plan.positive:
        c = plan.clauses[i]
        if c.kind != "term" or c.feedback or any(a.term in stop for a in c.alts[:1]):
            continue
        for a in c.alts:
            if a.term_id is not None and a.term not in out:
                out[a.term] = (c.index, alternative_idf(n_chunks, c, a))
    return out


def occurrences(text: str, key: TermKey, clauses: dict[str, int]) -> list[Occurrence]:
    """The query words of ``text`` in order, as ``(token position, clause)``; positions
    count words between matches only, so they are exact as distances."""
    out: list[Occurrence] = []
    pos, end = 0, None
    for start, stop, term in match_spans(text, key):
        if end is not None:
            pos += 1 + len(_WORD.findall(text, end, start))
        out.append((pos, clauses[term]))
        end = stop
    return out


def accumulators(occ: Sequence[Occurrence], weight: dict[int, float], window: int,
                 ordered: bool = False, next_to: dict[int, int] | None = None
                 ) -> dict[int, float]:
    """Per clause, Σ of the other words' weights / d² over consecutive occurrences of
    different words at most ``window`` apart (``ordered``: in the query's order;
    ``next_to``: only a clause and the one typed after it)."""
    acc: dict[int, float] = {}
    for (p, a), (q, b) in pairwise(occ):
        d = q - p
        if a == b or d > window or d < 1:
            continue
        if ordered and a > b:
            continue
        if next_to is not None and next_to.get(min(a, b)) != max(a, b):
            continue
        acc[a] = acc.get(a, 0.0) + weight[b] / (d * d)
        acc[b] = acc.get(b, 0.0) + weight[a] / (d * d)
    return acc


def bonus(acc: dict[int, float], weight: dict[int, float], k1: float,
          cap: float = 1.0) -> float:
    """``Σ_t min(cap, w(t)) · acc(t) · (k1 + 1) / (acc(t) + k1)`` (Büttcher et al.:
    ``cap`` 1)."""
    return sum(min(cap, weight[t]) * a * (k1 + 1) / (a + k1) for t, a in acc.items())


def rerank(rows: list[tuple], metas: list, plan: Plan, reader, analyzer: Analyzer,
           k1: float, scale: float) -> tuple[list[tuple], list]:
    """``(rows, metas)`` with the proximity bonus times ``scale`` added to the scores of
    the first ``CANDIDATES`` rows, which are re-sorted (score, then id); the rest as
    given. Rows are ``(score, ...)`` as ``Searcher._score`` returns them."""
    words = query_words(plan, reader.stats.chunks, analyzer, STOPWORDS)
    clauses = {term: c for term, (c, _) in words.items()}
    weight = {c: w for c, w in words.values()}
    if len(weight) < 2 or scale <= 0 or not rows:
        return rows, metas
    order = sorted(weight)
    next_to = dict(pairwise(order)) if QUERY_PAIRS else None
    head = min(CANDIDATES, len(rows))
    texts = reader.contents([(m.ord, 0) for m in metas[:head]])
    key = TermKey(frozenset(clauses), analyzer)
    scored = []
    for row, meta in zip(rows[:head], metas[:head], strict=True):
        occ = occurrences(texts.get(meta.ord, ""), key, clauses)
        acc = accumulators(occ, weight, WINDOW, ORDERED, next_to)
        extra = scale * bonus(acc, weight, k1, CAP) if acc else 0.0
        scored.append(((row[0] + extra, *row[1:]), meta))
    scored.sort(key=lambda x: (-x[0][0], x[1].id))
    return ([r for r, _ in scored] + rows[head:], [m for _, m in scored] + metas[head:])
