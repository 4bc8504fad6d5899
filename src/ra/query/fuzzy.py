"""Typo tolerance: expand a query word to vocabulary terms within an edit distance.

The typed word is compared with the indexed *surface* words (lowercased, unstemmed),
each of which maps to its term, rather than stem with stem: a typo often changes the stem
(``installde`` stems to ``installd``, two edits from ``instal``), and stem-only matching
misses about one typo in six on real queries. Distance is optimal string alignment
(rapidfuzz's OSA: an adjacent transposition counts as one edit). Only words longer than
``MIN_FUZZY_LENGTH`` characters are expanded; short words match exactly, as typos in them
collide with too many real words.

A long-lived reader narrows the surface vocabulary to the words that can be within one
edit first (``ra.index.vocabulary``), so rapidfuzz scores a few dozen words, not twenty
thousand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MIN_FUZZY_LENGTH = 4  # words of this length or shorter match exactly


@dataclass(frozen=True)
class Expansion:
    """A vocabulary term reached from a typed word."""

    term_id: int
    word: str  # the surface word that matched
    distance: int


def expand(word: str, vocabulary: list[tuple[str, int]], max_distance: int
           ) -> list[Expansion]:
    """Terms whose surface words lie within ``max_distance`` OSA edits of ``word``.

    ``vocabulary`` holds ``(surface word, term_id)``; the closest surface word of each
    term wins. Exact matches (distance 0) are included.
    """
    if max_distance <= 0 or len(word) <= MIN_FUZZY_LENGTH or not vocabulary:
        return []
    from rapidfuzz.distance import OSA
    from rapidfuzz.process import extract

    words = [w for w, _ in vocabulary]
    hits = extract(word, words, scorer=OSA.distance, score_cutoff=max_distance,
                   limit=None)
    return closest((matched, distance, vocabulary[index][1])
                   for matched, distance, index in sorted(hits, key=lambda h: h[2]))


def closest(hits: Iterable[tuple[str, float, int]]) -> list[Expansion]:
    """The expansions of ``(surface word, distance, term_id)`` hits given in vocabulary
    order: the closest word of each term (the first of equals), nearest first, then by
    word."""
    best: dict[int, Expansion] = {}
    for matched, distance, term_id in hits:
        if term_id not in best or distance < best[term_id].distance:
            best[term_id] = Expansion(term_id, matched, int(distance))
    return sorted(best.values(), key=lambda e: (e.distance, e.word))


def expansions(reader, words: list[str], max_distance: int) -> dict[str, list[Expansion]]:
    """``expand`` for each of ``words`` against ``reader``'s vocabulary: a long-lived
    reader finds the words within reach in place (``IndexReader.near_hits``), a
    short-lived one lists the candidates first (``near_words``)."""
    words = [w for w in words if len(w) > MIN_FUZZY_LENGTH] if max_distance > 0 else []
    out: dict[str, list[Expansion]] = {}
    hits = reader.near_hits(words, max_distance)
    if hits is not None:
        out = {w: closest(hits[w]) for w in words}
    elif words:
        near = reader.near_words(words, max_distance)
        out = {w: expand(w, near.get(w, []), max_distance) for w in words}
    return out
