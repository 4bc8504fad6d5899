"""Ranking after retrieval: hierarchical aggregation, elbow cutoff, limit.

The phases run in DESIGN's order: candidates → aggregation → elbow cutoff → limit, with
one step of ours after the elbow (a result named for a short query scores more:
``ra.query.named``). 001 lists the elbow before aggregation, but the original
implementation's own pipeline aggregates first, and for a reason: siblings must merge
before relevance filtering, so that a parent whose root-sum-square score rises above
each child's competes with that score (two children at 10 make a parent at 14.1, which
may push the rest under the elbow).

Aggregation follows the original's adaptive algorithm. Candidates are taken best first;
one whose ancestor is already a result is claimed (and counts in its score); one that
arrives after some of its descendants subsumes them; one whose parent already has
matched children among the results merges with them into the parent when the matched
share of the parent's children reaches the threshold; a merged parent may in turn merge
with its own matched siblings (the cascade). Two choices differ from the original, both
so that no result ever nests inside another without relying on a later filter:

- Ancestry follows the parent chain (DESIGN deviation 3). The original compared slug
  prefixes, which makes ``#intro-details`` a child of ``#intro`` even when both are h2.
- A parent that enters the results absorbs every result beneath it, not only the
  siblings that triggered the merge.

An aggregated result carries the parent's identity, the ids of the matched chunks it
stands for, and their root-sum-square score, two more choices of ours (2026-11-27):

- Every matched chunk a result stands for counts, its own included. The original
  discarded the parent's own match (its span held its children, so its score counted
  their words); a chunk here is its own text, without its subsections. And a chunk
  claimed by a result above it counted for nothing: a page whose introduction matched
  first scored that alone, while a page whose introduction did not match scored all its
  sections. "ownership" on the Rust book put "What Is Ownership?" (an introduction at 6.0
  and eleven sections that match) fourth, behind the iterators page (three sections).
- The k-th best of them weighs ``LEAF_DECAY ** k`` (0.85): plain RSS grows with the
  square root of their number, and a page of ten sections that each say a query's word
  once (92) outranked the one section about it (79).

Known items, the 88 topics of ``benchmarks.known_items.TOPICS`` first: see
docs/ranking.md for the numbers.

All functions are pure; ``lookup`` is the only window onto the chunk tree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

#: An aggregate's score is the root of the sum of squares of its matched chunks' scores,
#: the k-th best (from 0) weighed ``LEAF_DECAY ** k`` (see the module docstring).
LEAF_DECAY = 0.85

#: Finds a chunk by id (for parents that did not match the query), or None.
Lookup = Callable[[str], "Candidate | None"]


class Candidate(NamedTuple):
    """A scored chunk, or an aggregated parent standing for the chunks it merged.

    A named tuple, not a frozen dataclass, whose ``__init__`` sets each field through
    ``object.__setattr__``: 1.7-2.6 µs a candidate against 0.6-1.1 (with its keyword),
    and a warm search on cpp-docs makes 28 (median) to 75 (mean) of them, its candidates
    and the parents ranking looks up."""

    id: str
    doc_id: str
    parent_id: str | None
    score: float
    sibling_count: int  # children of the parent, this one included
    depth: int
    tree: str = ""
    constituents: tuple[str, ...] = ()  # ids of the matched chunks merged into it
    tokens: int | None = None  # its content's tokens, subsections included (None: unknown)

    @property
    def aggregated(self) -> bool:
        """Whether this result stands for merged descendants."""
        return bool(self.constituents)


@dataclass(frozen=True)
class RankStats:
    """How many results survived each phase (for ``--explain``)."""

    candidates: int
    aggregated: int
    elbow: int
    final: int


def best_first(c: Candidate) -> tuple[float, str]:
    """Sort key: score descending, ties by id."""
    return (-c.score, c.id)


def rss(scores: Iterable[float]) -> float:
    """Root sum of squares: rewards several matching sections over one."""
    return math.sqrt(sum(s * s for s in scores))


def decayed_rss(scores: Iterable[float]) -> float:
    """Root sum of squares of ``scores``, the k-th best (from 0) weighed ``LEAF_DECAY ** k``:
    several matching sections rank above one, and above one that matches as well as the
    best of them, but a page of many sections that each say a query's word once does not
    outrank the section that is about it (ten sections at 29 made 92 against 79)."""
    ranked = sorted(scores, reverse=True)
    return rss(s * LEAF_DECAY ** k for k, s in enumerate(ranked))


def most_aggregated(best: float) -> float:
    """The most a result standing for chunks that score at most ``best`` can score: the
    decayed root sum of squares of ever more chunks at ``best`` tends to ``best /
    sqrt(1 - LEAF_DECAY ** 2)`` (1.9 times ``best``)."""
    return best / math.sqrt(1 - LEAF_DECAY ** 2)


def aggregated(parent: Candidate, constituents: Sequence[Candidate]) -> Candidate:
    """``parent`` standing for ``constituents``: their RSS score, their leaf ids in order.

    An aggregated constituent contributes its leaves; its score is already their RSS, and
    the RSS of RSSs equals the RSS of all leaves.
    """
    return parent._replace(score=rss(c.score for c in constituents),
                           constituents=leaves_of(constituents))


def leaves_of(constituents: Sequence[Candidate]) -> tuple[str, ...]:
    """The ids of the matched chunks ``constituents`` stand for, in their order."""
    return tuple(i for c in constituents for i in (c.constituents or (c.id,)))


def elbow_cutoff(cands: Sequence[Candidate], ratio: float,
                 max_results: int) -> list[Candidate]:
    """The leading results before relevance drops (``cands`` sorted by score, best first).

    Cut before the first non-positive score and before the first score less than
    ``ratio`` times its predecessor (a ratio exactly at ``ratio`` is no elbow), then keep at
    most ``max_results``. The original returns a single candidate even when
    ``max_results`` is 0; here the cap always holds.
    """
    cut = len(cands)
    if cut >= 2:
        for i in range(len(cands) - 1):
            here, after = cands[i].score, cands[i + 1].score
            if here <= 0:
                cut = i
                break
            if after <= 0 or after / here < ratio:
                cut = i + 1
                break
    return list(cands[:max(0, min(cut, max_results))])


class _Lineage:
    """Ancestor ids by the parent chain, cached; knows candidates and asks ``lookup``."""

    def __init__(self, lookup: Lookup | None, known: Iterable[Candidate] = ()) -> None:
        self.lookup = lookup
        self.known = {c.id: c for c in known}
        self._cache: dict[str, tuple[str, ...]] = {}
        self._looked_up: dict[str, Candidate | None] = {}  # lookup asks once per id

    def node(self, chunk_id: str) -> Candidate | None:
        """A candidate or result seen so far, else whatever ``lookup`` finds."""
        found = self.known.get(chunk_id)
        if found is None and self.lookup is not None:
            if chunk_id not in self._looked_up:
                self._looked_up[chunk_id] = self.lookup(chunk_id)
            found = self._looked_up[chunk_id]
        return found

    def ancestors(self, c: Candidate) -> tuple[str, ...]:
        """Proper ancestors of ``c``, nearest first.

        Where the chain breaks (``lookup`` does not know a parent) the document node is
        still an ancestor: it is the root of every chunk of its document.
        """
        cached = self._cache.get(c.id)
        if cached is not None:
            return cached
        chain: list[str] = []
        pid = c.parent_id
        while pid is not None and pid not in chain and pid != c.id:
            chain.append(pid)
            parent = self.node(pid)
            pid = parent.parent_id if parent is not None else None
        if c.doc_id and c.id != c.doc_id and c.doc_id not in chain:
            chain.append(c.doc_id)
        self._cache[c.id] = result = tuple(chain)
        return result


def ancestors(c: Candidate, lookup: Lookup | None = None) -> tuple[str, ...]:
    """Ids of the proper ancestors of ``c`` by the parent chain, nearest first."""
    return _Lineage(lookup).ancestors(c)


def is_ancestor(a: Candidate, b: Candidate, lookup: Lookup | None = None) -> bool:
    """Whether ``a`` is a proper ancestor of ``b`` (parent chain, not slug prefixes)."""
    return a.id in ancestors(b, lookup)


def drop_nested(cands: Sequence[Candidate], lookup: Lookup | None = None) -> list[Candidate]:
    """``cands`` without those whose ancestor is also among them (order kept).

    The ancestor shows the dropped chunk's text too (a result includes its subsections),
    so it keeps the best score found in its subtree: a document node matching only by
    its title must not push its best section's score down.
    """
    lineage = _Lineage(lookup, cands)
    ids = {c.id for c in cands}
    best: dict[str, float] = {}
    for c in cands:
        for a in ids.intersection(lineage.ancestors(c)):
            best[a] = max(best.get(a, 0.0), c.score)
    return [c._replace(score=max(c.score, best.get(c.id, c.score))) if c.id in best else c
            for c in cands if not ids.intersection(lineage.ancestors(c))]


class Aggregator:
    """The adaptive aggregation state: results so far, keyed by id in insertion order,
    indexed by parent and by ancestor so that finding a candidate's matched siblings or
    the results beneath it does not walk every result's ancestors again."""

    def __init__(self, threshold: float, lookup: Lookup | None,
                 known: Iterable[Candidate] = ()) -> None:
        self.threshold = threshold
        self.lineage = _Lineage(lookup, known)
        self.own = {c.id: c.score for c in self.lineage.known.values()}  # match scores
        self.floor: dict[str, float] = {}  # result id → the least score of its leaves
        self.results: dict[str, Candidate] = {}
        self._children: dict[str | None, dict[str, None]] = {}  # parent id → result ids
        self._beneath: dict[str, dict[str, None]] = {}  # ancestor id → result ids

    def is_claimed(self, c: Candidate) -> bool:
        """Whether an ancestor of ``c`` is already a result."""
        return self.claimer(c) is not None

    def claimer(self, c: Candidate) -> str | None:
        """The id of the result above ``c``, if there is one."""
        results = self.results
        return next((a for a in self.lineage.ancestors(c) if a in results), None)

    def siblings(self, c: Candidate) -> list[Candidate]:
        """Results other than ``c`` with the same parent."""
        if c.parent_id is None:
            return []
        return [self.results[i] for i in self._children.get(c.parent_id, ()) if i != c.id]

    def descendants(self, c: Candidate) -> list[Candidate]:
        """Results beneath ``c``."""
        return [self.results[i] for i in self._beneath.get(c.id, ())]

    def _put(self, c: Candidate) -> None:
        self.results[c.id] = c
        self._children.setdefault(c.parent_id, {})[c.id] = None
        for a in self.lineage.ancestors(c):
            self._beneath.setdefault(a, {})[c.id] = None

    def should_aggregate(self, c: Candidate, siblings: Sequence[Candidate]) -> bool:
        """Whether ``c`` and its matched ``siblings`` are a large enough share of the family.

        At least one sibling must have matched: a lone match stays the focused result.
        """
        if not siblings or c.parent_id is None or c.sibling_count <= 0:
            return False
        return (len(siblings) + 1) / c.sibling_count >= self.threshold

    def add_single(self, c: Candidate) -> None:
        """Keep ``c`` as a result of its own."""
        self.lineage.known.setdefault(c.id, c)
        self._put(c)

    def remove(self, ids: Iterable[str]) -> list[Candidate]:
        """Take the results with these ids out, returning them."""
        out = []
        for i in ids:
            c = self.results.pop(i, None)
            if c is not None:
                del self._children[c.parent_id][i]
                for a in self.lineage.ancestors(c):
                    del self._beneath[a][i]
                out.append(c)
        return out

    def add(self, c: Candidate) -> None:
        """Process one candidate (candidates must come best first)."""
        if c.id in self.results:
            return
        top = self.claimer(c)
        if top is not None:
            self.fold(c, top)
            return
        self.lineage.known.setdefault(c.id, c)
        if self.descendants(c):
            self.merge(c)
            return
        parent = None
        if c.parent_id is not None and self.should_aggregate(c, self.siblings(c)):
            parent = self.lineage.node(c.parent_id)
        if parent is None:
            self.add_single(c)
        else:
            self.merge(parent, [c])

    def fold(self, c: Candidate, top: str) -> None:
        """``c``, claimed by the result ``top`` above it, counts in its score. Candidates
        come best first, so ``c`` is nearly always the least of the result's leaves: it
        then adds its decayed square (``decayed_rss`` without sorting them again; a page
        of 300 sections folds 100 candidates)."""
        result = self.results[top]
        leaves = result.constituents or ((top,) if self.own.get(top, 0) > 0 else ())
        if c.score > self.floor.get(top, self.own.get(top, math.inf)):  # a parent's own
            self.results[top] = self.scored(result, (*leaves, c.id))  # match was lower
            return
        added = c.score * LEAF_DECAY ** len(leaves)
        self.floor[top] = c.score
        self.results[top] = result._replace(score=math.sqrt(result.score ** 2 + added ** 2),
                                            constituents=(*leaves, c.id))

    def scored(self, result: Candidate, leaves: tuple[str, ...]) -> Candidate:
        """``result`` standing for the matched chunks ``leaves``: their decayed root sum
        of squares (``decayed_rss``) from their own match scores."""
        scores = [self.own.get(i, 0.0) for i in leaves]
        self.floor[result.id] = min(scores, default=0.0)
        return result._replace(score=decayed_rss(scores), constituents=leaves)

    def merge(self, parent: Candidate, members: Sequence[Candidate] = ()) -> Candidate:
        """Replace every result beneath ``parent``, plus ``members``, by ``parent``.

        Then cascade: the new result may merge with its own matched siblings.
        """
        for m in members:  # candidates given here (not through ``add``) count as matched
            if not m.constituents:
                self.own.setdefault(m.id, m.score)
        beneath = self.remove([parent.id, *(r.id for r in self.descendants(parent))])
        pool = {m.id: m for m in [*beneath, *members] if m.id != parent.id}
        own = (parent.id,) if self.own.get(parent.id, 0) > 0 else ()  # its own text matched
        merged = self.scored(parent, (*own, *leaves_of(sorted(pool.values(), key=best_first))))
        self.lineage.known[merged.id] = merged
        self._put(merged)
        self._cascade(merged)
        return self.results.get(merged.id, merged)

    def _cascade(self, node: Candidate) -> None:
        if node.parent_id is None:
            return
        siblings = self.siblings(node)
        if not self.should_aggregate(node, siblings):
            return
        grandparent = self.lineage.node(node.parent_id)
        if grandparent is not None:
            self.merge(grandparent)

    def ranked(self) -> list[Candidate]:
        """The results, score descending, ties by id."""
        return sorted(self.results.values(), key=best_first)


def aggregate(cands: Sequence[Candidate], threshold: float,
              lookup: Lookup | None) -> list[Candidate]:
    """Merge matched siblings into their parents, cascading upwards; no result nests.

    Candidates are processed best first whatever their input order.
    """
    agg = Aggregator(threshold, lookup, cands)
    for c in sorted(cands, key=best_first):
        agg.add(c)
    return agg.ranked()


def fit_parts(results: Sequence[Candidate], cands: Sequence[Candidate],
              max_tokens: int | None, lookup: Lookup | None = None,
              threshold: float | None = None,
              reweigh: Callable[[Sequence[Candidate]], list[Candidate]] | None = None,
              heads: Callable[[Candidate], bool] | None = None) -> list[Candidate]:
    """``results`` with each one too large for the token budget ``max_tokens`` that has
    matched chunks beneath it (an aggregate's, or those an ancestor claimed) given as
    the best of those that fits, in its place and with its score: the page ranks where
    it ranked, and what an agent reads in full is the part of it that matched best.

    Without it, a page whose sections aggregate, or whose front matter or introduction
    matches, is the result, and under a budget it comes as a list entry while the
    section that answers the query would fit: on the hand-written tasks and questions
    over the Rust book and the C++ docs, 31 of 100 top results did not fit the MCP
    server's default budget (4,000 tokens).

    With aggregation (``threshold``), the parts beneath a large result aggregate as the
    results do, up to the largest sections that fit, and are re-weighed as they are
    (``reweigh``: a section named for the query scores more); the best of them is the
    part, one whose own heading holds each of the query's words first (``heads``).
    The best single chunk had been given: on the System Design Primer a section's short
    list of further reading, whose links repeat its title ("Latency numbers every
    programmer should know - 1"), where the section holding it fits and matched too; on
    Sourcegraph's handbook the FAQ of its page on "parental leave", repeating the words,
    where sections' headings name it (the page's title, the query's words, is in every
    section's breadcrumb). A part that scores less than ``PART_SHARE`` of a large
    section's own text does not stand for it.
    """
    large = {r.id for r in results if too_large(r, max_tokens)}
    if not large:
        return list(results)
    lineage = _Lineage(lookup, cands)
    best: dict[str, Candidate] = {}  # a large result's id → its best part that fits
    if threshold is None:
        for c in sorted(cands, key=best_first):
            if not too_large(c, max_tokens):
                for a in large.intersection(lineage.ancestors(c)):
                    best.setdefault(a, c)
    else:
        for a in large:
            if parts := [c for c in cands if not too_large(c, max_tokens)
                         and a in lineage.ancestors(c)]:
                ranked = aggregate(parts, threshold, _within(lineage, a, max_tokens))
                if reweigh is not None:
                    ranked = reweigh(ranked)
                if heads is not None:
                    ranked = [c for c in ranked if heads(c)] or ranked
                best[a] = ranked[0]
    own = {c.id: c.score for c in cands if c.id in large and c.parent_id is not None}
    raw = {c.id: c.score for c in cands}
    for a, part in list(best.items()):
        matched = max((raw.get(i, 0.0) for i in (part.id, *part.constituents)), default=0.0)
        if matched < PART_SHARE * own.get(a, 0.0):
            del best[a]  # its own text matched, the part hardly: it stays, as a snippet
    return [best[r.id]._replace(score=r.score) if r.id in best else r for r in results]


#: How much of what a large section's own text scores its best part that fits must score
#: to stand for it (the best of the chunks it holds, or merged): a section of 7,273 tokens
#: whose first paragraph held "adaptive KL controller init_kl_coef" was given as its
#: 20-token subsection on Adam that says "KL", in --list too; the answer went unseen. Not
#: a page's: its own text is its title and front matter, which name what its sections say
PART_SHARE = 0.25


def _within(lineage: _Lineage, top: str, max_tokens: int | None) -> Lookup:
    """A lookup of the chunks beneath ``top`` that fit ``max_tokens``: aggregation of the
    parts of a large result stops below it."""
    def node(chunk_id: str) -> Candidate | None:
        found = lineage.node(chunk_id)
        if found is None or too_large(found, max_tokens) or top not in lineage.ancestors(found):
            return None
        return found._replace(score=0.0, constituents=())
    return node


def too_large(c: Candidate, max_tokens: int | None) -> bool:
    """Whether ``c``'s content cannot be given in full within ``max_tokens``."""
    return max_tokens is not None and c.tokens is not None and c.tokens > max_tokens


def rank_with_stats(cands: Sequence[Candidate], *, threshold: float, cutoff_ratio: float,
                    limit: int | None, lookup: Lookup | None, aggregation: bool = True,
                    max_tokens: int | None = None,
                    reweigh: Callable[[Sequence[Candidate]], list[Candidate]] | None = None,
                    heads: Callable[[Candidate], bool] | None = None,
                    ) -> tuple[list[Candidate], RankStats]:
    """:func:`rank`, plus how many results each phase kept. With a token budget
    (``max_tokens``), a result too large for it is given as its best matched part that
    fits (``fit_parts``; ``heads``: the parts headed for the query first), once the
    ranking is done. ``reweigh`` re-scores the results the elbow kept
    (``ra.query.named``), and returns them best first."""
    if aggregation:
        merged = aggregate(cands, threshold, lookup)
    else:
        merged = sorted(drop_nested(cands, lookup), key=best_first)
    kept = elbow_cutoff(merged, cutoff_ratio, len(merged))
    if reweigh is not None:  # reorders what the elbow kept: boosting the first result
        kept = reweigh(kept)  # before it cut "const generics" on the RFCs to one
    relevant = fit_parts(kept, cands, max_tokens, lookup,
                         threshold if aggregation else None, reweigh, heads)
    final = relevant if limit is None else relevant[:max(0, limit)]
    return final, RankStats(len(cands), len(merged), len(relevant), len(final))


def rank(cands: Sequence[Candidate], *, threshold: float, cutoff_ratio: float,
         limit: int | None, lookup: Lookup | None, aggregation: bool = True,
         max_tokens: int | None = None) -> list[Candidate]:
    """Candidates → aggregation (or, without it, nested results dropped) → elbow → parts
    that fit the budget → limit."""
    return rank_with_stats(cands, threshold=threshold, cutoff_ratio=cutoff_ratio,
                           limit=limit, lookup=lookup, aggregation=aggregation,
                           max_tokens=max_tokens)[0]
