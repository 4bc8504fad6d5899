"""Fusing the keyword and the semantic candidate lists into one ranking (pure).

Each side gives its best candidates with a score: BM25F (non-negative, unbounded, 0
for a chunk without a query word) and cosine similarity (in [-1, 1]). Two ways to join
them:

- ``convex`` (the default): each side's scores normalised to [0, 1], then
  ``(1 − w) · keyword + w · semantic``. Keyword scores are divided by the highest score
  the query can give (``keyword_bound``: BM25 saturates, so a clause scores at most
  weight · idf · (k1 + 1), times ``local_boost``), not by the best score found: a chunk
  that matches only "the" of an eight-word question is then weak evidence, where the
  best-found scale made it 1.0 whenever nothing matched more (BM25 has a natural zero:
  a chunk the words miss scores 0, as do chunks outside the keyword list);
  similarities are min-max scaled over the semantic list, whose last
  candidate then scores 0 like every chunk outside it (cosines have no natural zero:
  unrelated texts score around 0.1 to 0.3 with MiniLM). Measured on SciFact train
  (``benchmarks/semantic.py``), this beat min-max on both sides and rank fusion.
- ``rrf``, reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009):
  ``Σ 1 / (k + rank)`` over the lists that hold a chunk; scale-free, so nothing to
  normalise, but it throws away how much better the first candidates are.

A chunk in neither list is not a candidate, nor is one that only the semantic list
holds and whose fused score is below ``FLOOR`` times the best (see there). The fused
score replaces the keyword score for everything after (aggregation, elbow cutoff,
limits, token budgets, multi-topic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Scored = Sequence[tuple[int, float]]  # (ord, score), any order


@dataclass(frozen=True)
class Fused:
    """One candidate after fusion, with both sides' raw scores (None: not in that
    list)."""

    ord: int
    score: float
    keyword: float | None
    semantic: float | None


#: A chunk that only meaning finds stays a candidate when its fused score is at least
#: this share of the best. Without it, the many weak candidates of the semantic list
#: fed aggregation (a parent scores the root of its sections' summed squares), and a
#: chapter of ten faintly related sections outranked the section that holds the words:
#: rust-book known items MRR@10 .929 alone, .922 fused at weight 0.4, .944 fused with
#: the floor (0.5 and 0.7 the same; the tests' tldr set unchanged at its best, .985).
FLOOR = 0.5


def fuse(keyword: Scored, semantic: Scored, *, method: str = "convex",
         weight: float = 0.5, rrf_k: int = 60, keyword_bound: float | None = None,
         floor: float | None = None) -> list[Fused]:
    """The union of both lists with fused scores, best first (ties by ord).
    ``keyword_bound``: the highest score the keyword query can give (``convex`` divides
    by it; without it, by the best score found). ``floor`` (default ``FLOOR``; none for
    ``rrf``): the share of the best fused score below which a chunk only meaning found
    is dropped."""
    kw, sem = dict(keyword), dict(semantic)
    if method == "rrf":
        a, b = _ranks(kw), _ranks(sem)
        score = {o: (1 - weight) * _rrf(a.get(o), rrf_k) + weight * _rrf(b.get(o), rrf_k)
                 for o in kw.keys() | sem.keys()}
    elif method == "convex":
        a, b = scale_by_max(kw, keyword_bound), min_max(sem)
        score = {o: (1 - weight) * a.get(o, 0.0) + weight * b.get(o, 0.0)
                 for o in kw.keys() | sem.keys()}
    else:
        raise ValueError(f"unknown fusion {method!r}")
    if method == "rrf":
        floor = 0.0  # ranks have no scale to take a share of: the standard union
    least = (FLOOR if floor is None else floor) * max(score.values(), default=0.0)
    out = [Fused(o, s, kw.get(o), sem.get(o)) for o, s in score.items()
           if o in kw or (s > 0 and s >= least)]
    return sorted(out, key=lambda f: (-f.score, f.ord))


def scale_by_max(scores: dict[int, float], bound: float | None = None) -> dict[int, float]:
    """``s / bound`` (scores whose zero means "no evidence"); ``bound`` defaults to the
    best score."""
    top = bound if bound is not None else max(scores.values(), default=0.0)
    return {o: (min(s / top, 1.0) if top > 0 else 0.0) for o, s in scores.items()}


def min_max(scores: dict[int, float]) -> dict[int, float]:
    """``(s − min) / (max − min)``; all 1 when every score is equal."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    return {o: ((s - lo) / (hi - lo) if hi > lo else 1.0) for o, s in scores.items()}


def _ranks(scores: dict[int, float]) -> dict[int, int]:
    """1-based rank of each candidate, best first, ties by ord."""
    order = sorted(scores, key=lambda o: (-scores[o], o))
    return {o: i + 1 for i, o in enumerate(order)}


def _rrf(rank: int | None, k: int) -> float:
    return 0.0 if rank is None else 1.0 / (k + rank)
