"""Typo tolerance: expand a query word to vocabulary terms within an edit distance.

The typed word is compared with the indexed *surface* words (lowercased, unstemmed),
each of which maps to its term, rather than stem with stem: a typo often changes the stem
(``installde`` stems to ``installd``, two edits from ``instal``), and stem-only matching
misses about one typo in six on real queries. Distance is optimal string alignment
(rapidfuzz's OSA: an adjacent transposition counts as one edit). Only words longer than
``MIN_FUZZY_LENGTH`` characters are expanded; short words match exactly, as typos in them
collide with too many real words.

A long-lived reader keeps the surface vocabulary in memory as a ``SurfaceIndex``, which
hands ``expand`` only the words that can be within one edit instead of every word of a
similar length: one edit leaves the first or the last third of a word untouched (a
transposition touches two neighbouring characters, and the middle third keeps them
apart), so a word within distance 1 shares that anchored prefix or suffix. Both are
found by bisection in sorted lists, and rapidfuzz then scores a few dozen words, not
twenty thousand.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
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
    best: dict[int, Expansion] = {}
    for matched, distance, index in hits:
        term_id = vocabulary[index][1]
        if term_id not in best or distance < best[term_id].distance:
            best[term_id] = Expansion(term_id, matched, int(distance))
    return sorted(best.values(), key=lambda e: (e.distance, e.word))


def anchors(word: str, distance: int) -> tuple[str, str]:
    """The prefix and suffix one of which every word within ``distance`` edits of
    ``word`` shares: its first and last third for distance 1, else nothing (empty)."""
    third = len(word) // 3 if distance == 1 else 0
    return (word[:third], word[len(word) - third:]) if third else ("", "")


class SurfaceIndex:
    """Surface words by length, with sorted prefix and suffix views for distance 1."""

    def __init__(self, vocabulary: Iterable[tuple[str, int]]) -> None:
        self.by_length: dict[int, list[tuple[str, int]]] = {}
        for word, term_id in vocabulary:
            self.by_length.setdefault(len(word), []).append((word, term_id))
        self._sorted: dict[int, tuple[list[str], list[int], list[str], list[int]]] = {}
        self._all: tuple[list[str], list[int]] | None = None

    def replace(self, words: Iterable[str], present: Iterable[tuple[str, int]]) -> None:
        """Forget ``words``, then hold those of them that are ``present`` (``(word,
        term_id)``): what a vocabulary read afresh would hold, in the same order (each
        bucket sorted by word, as ``words.parquet`` is)."""
        gone = set(words)
        if not gone:
            return
        added: dict[int, list[tuple[str, int]]] = {}
        for word, term_id in present:
            added.setdefault(len(word), []).append((word, term_id))
        for n in {len(w) for w in gone}:
            old = self.by_length.get(n, [])
            bucket = sorted([p for p in old if p[0] not in gone] + added.pop(n, []))
            if bucket == old:
                continue  # most often: the words of an edited file are still there
            if bucket:
                self.by_length[n] = bucket
            else:
                self.by_length.pop(n, None)
            self._sorted.pop(n, None)
            self._all = None

    def with_prefix(self, prefix: str) -> set[int]:
        """Term ids of the surface words that start with ``prefix``."""
        if self._all is None:
            pairs = sorted(w for bucket in self.by_length.values() for w in bucket)
            self._all = ([w for w, _ in pairs], [i for _, i in pairs])
        return set(_starting_with(*self._all, prefix))

    def near(self, word: str, distance: int) -> list[tuple[str, int]]:
        """``(surface word, term_id)`` that may lie within ``distance`` edits of ``word``.

        A superset of the words ``expand`` accepts, in vocabulary order within each
        length (the order ``expand`` breaks ties by), shortest length first.
        """
        lengths = range(max(len(word) - distance, 1), len(word) + distance + 1)
        prefix, suffix = anchors(word, distance)
        if not prefix:
            return [w for n in lengths for w in self.by_length.get(n, ())]
        out: list[tuple[str, int]] = []
        for n in lengths:
            bucket = self.by_length.get(n)
            if bucket:
                out += [bucket[i] for i in self._anchored(n, prefix, suffix)]
        return out

    def _anchored(self, n: int, prefix: str, suffix: str) -> list[int]:
        """Positions in bucket ``n`` of the words starting with ``prefix`` or ending with
        ``suffix``, ascending."""
        words, order, reversed_words, reversed_order = self._views(n)
        found = set(_starting_with(words, order, prefix))
        found.update(_starting_with(reversed_words, reversed_order, suffix[::-1]))
        return sorted(found)

    def _views(self, n: int) -> tuple[list[str], list[int], list[str], list[int]]:
        views = self._sorted.get(n)
        if views is None:
            bucket = [w for w, _ in self.by_length[n]]
            order = sorted(range(len(bucket)), key=bucket.__getitem__)
            rev = [w[::-1] for w in bucket]
            rorder = sorted(range(len(rev)), key=rev.__getitem__)
            views = self._sorted[n] = ([bucket[i] for i in order], order,
                                       [rev[i] for i in rorder], rorder)
        return views


def _starting_with(words: list[str], order: list[int], prefix: str) -> list[int]:
    """``order[i]`` for each ``words[i]`` (sorted) that starts with ``prefix``: the range
    from ``prefix`` up to the least string above every word starting with it."""
    i = bisect_left(words, prefix)
    if not prefix or ord(prefix[-1]) == sys.maxunicode:
        return [order[j] for j in range(i, len(words)) if words[j].startswith(prefix)]
    return order[i:bisect_left(words, prefix[:-1] + chr(ord(prefix[-1]) + 1), i)]
