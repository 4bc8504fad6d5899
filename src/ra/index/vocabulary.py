"""The surface vocabulary a long-lived reader keeps in memory for typo expansion.

A ``SurfaceIndex`` hands ``ra.query.fuzzy.expand`` only the words that can be within one
edit instead of every word of a similar length: one edit leaves the first or the last
third of a word untouched (a transposition touches two neighbouring characters, and the
middle third keeps them apart), so a word within distance 1 shares that anchored prefix
or suffix. Both are found by bisection in sorted lists, and rapidfuzz then scores a few
dozen words, not twenty thousand.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from itertools import pairwise


class TermTable(MutableMapping):
    """``term → (term_id, df)`` of a long-lived reader, as a dict of term ids and an
    array of document frequencies by id. The dict of tuples it replaces held a tuple and
    an int per term beyond the dict itself (cpp-docs, 48,000 terms: 4 MB). It reads and
    writes as that dict did, a pair made when asked for; a term held as None (looked up
    and not in the index) stays None."""

    __slots__ = ("_ids", "_df")

    def __init__(self, terms: Iterable[str] = (), ids: Iterable[int] = (),
                 dfs: Iterable[int] = ()) -> None:
        """The table of the columns ``terms``, ``ids`` and ``dfs`` of ``terms.parquet``."""
        ids = list(ids)
        self._ids: dict[str, int | None] = dict(zip(terms, ids, strict=True))
        self._df = array("q", bytes(8 * (max(ids, default=-1) + 1)))
        for i, df in zip(ids, dfs, strict=True):
            self._df[i] = df

    def ids(self) -> Iterator[tuple[str, int]]:
        """``(term, term_id)`` of every term held (not those held as None)."""
        return ((t, i) for t, i in self._ids.items() if i is not None)

    def __getitem__(self, term: str) -> tuple[int, int] | None:
        i = self._ids[term]
        return None if i is None else (i, self._df[i])

    def get(self, term: str, default=None):
        i = self._ids.get(term, -1)
        return default if i == -1 else None if i is None else (i, self._df[i])

    def __setitem__(self, term: str, pair: tuple[int, int] | None) -> None:
        if pair is None:
            self._ids[term] = None
            return
        i, df = pair
        if i >= len(self._df):
            self._df.frombytes(bytes(8 * (i + 1 - len(self._df))))
        self._df[i] = df
        self._ids[term] = i

    def __delitem__(self, term: str) -> None:
        del self._ids[term]

    def __contains__(self, term: object) -> bool:
        return term in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class TermsById(Mapping):
    """``term_id → (term, df)`` of a long-lived reader, over its ``term → (term_id,
    df)`` dict: a list of the terms by id instead of a second dict of tuples (cpp-docs,
    48,000 terms: 5 MB less). Written as a dict is (``[i] = (term, df)``, ``pop``,
    ``update``); a pair that the terms dict does not hold is kept aside as given."""

    def __init__(self, terms: Mapping[str, tuple[int, int]]) -> None:
        self._terms = terms
        pairs = list(terms.ids() if isinstance(terms, TermTable) else
                     ((t, i) for t, (i, _) in terms.items()))
        self._names: list[str | None] = [None] * (max((i for _, i in pairs), default=-1) + 1)
        for term, i in pairs:
            self._names[i] = term
        self._other: dict[int, tuple[str, int]] = {}

    def get(self, i: int, default=None):
        if (pair := self._other.get(i)) is not None:
            return pair
        term = self._names[i] if 0 <= i < len(self._names) else None
        held = self._terms.get(term) if term is not None else None
        return (term, held[1]) if held is not None and held[0] == i else default

    def __getitem__(self, i: int) -> tuple[str, int]:
        if (pair := self.get(i)) is None:
            raise KeyError(i)
        return pair

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and self.get(i) is not None

    def __iter__(self):
        n = len(self._names)
        yield from (i for i in range(n) if i in self)
        yield from (i for i in self._other if not 0 <= i < n)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def end(self) -> int:
        """One more than the highest term id held (0 when none): ``max(self) + 1``
        without a pass over every id (cpp-docs: 12 ms of a reader's load)."""
        top = max(self._other, default=-1)  # each is held
        for i in range(len(self._names) - 1, top, -1):
            if i in self:
                return i + 1
        return top + 1

    def __setitem__(self, i: int, pair: tuple[str, int]) -> None:
        term, df = pair
        if self._terms.get(term) == (i, df):
            if i >= len(self._names):
                self._names += [None] * (i + 1 - len(self._names))
            self._names[i] = term
            self._other.pop(i, None)
        else:
            self._other[i] = (term, df)

    def update(self, pairs: dict[int, tuple[str, int]]) -> None:
        for i, pair in pairs.items():
            self[i] = pair

    _MISSING = object()

    def pop(self, i: int, default=_MISSING):
        pair = self.get(i)
        self._other.pop(i, None)
        if 0 <= i < len(self._names):
            self._names[i] = None
        if pair is None:
            if default is self._MISSING:
                raise KeyError(i)
            return default
        return pair


def surface_words(words, terms, texts: list[str], ids: list[int]
                  ) -> Iterator[tuple[str, int]]:
    """``(word, term_id)`` of each row of ``words`` (an Arrow table of ``word`` and
    ``term_id``, as ``words.parquet``), in order, made of the very objects of its term's
    row in ``terms`` (a table of ``term`` and ``term_id``) as ``texts`` and ``ids`` (its
    columns as lists) hold them: the id, and the text when the word is its term's (35,000
    of cpp-docs' 54,000 words). A word gets a str of its own only when it differs, and an
    int only when its term is not there: none is made to be dropped, whose holes the
    allocator would keep (3.5 MB on cpp-docs)."""
    import pyarrow.compute as pc

    word, term_id = words.column("word"), words.column("term_id")
    at = pc.index_in(term_id, value_set=terms.column("term_id").combine_chunks())
    same = pc.fill_null(pc.equal(word, pc.take(terms.column("term"), at)), False)
    others = iter(pc.filter(word, pc.invert(same)).to_pylist())
    lost = iter(pc.filter(term_id, pc.is_null(at)).to_pylist())
    # read through memoryviews: one int or bool at a time, none kept
    rows = memoryview(pc.fill_null(at, -1).to_numpy())  # int32, as index_in gives
    for k, held in zip(rows, memoryview(same.to_numpy(zero_copy_only=False)), strict=True):
        yield texts[k] if held else next(others), ids[k] if k >= 0 else next(lost)


def anchors(word: str, distance: int) -> tuple[str, str]:
    """The prefix and suffix one of which every word within ``distance`` edits of
    ``word`` shares: its first and last third for distance 1, else nothing (empty)."""
    third = len(word) // 3 if distance == 1 else 0
    return (word[:third], word[len(word) - third:]) if third else ("", "")


def _held(bucket: Bucket, words: list[str]) -> dict[str, int]:
    """The term ids ``bucket`` (sorted by word) holds for ``words``, by bisection."""
    out = {}
    for word in words:
        i = bisect_left(bucket.words, word)
        if i < len(bucket) and bucket.words[i] == word:
            out[word] = bucket.ids[i]
    return out


class Bucket:
    """The surface words of one length, in vocabulary order, and their term ids: two
    lists, where a ``(word, term_id)`` tuple per word took 2.5 MB more on cpp-docs.
    ``bucket[k]`` and iteration give those pairs."""

    __slots__ = ("words", "ids")

    def __init__(self, pairs: Iterable[tuple[str, int]] = ()) -> None:
        self.words: list[str] = []
        self.ids: list[int] = []
        for word, term_id in pairs:
            self.words.append(word)
            self.ids.append(term_id)

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, k: int) -> tuple[str, int]:
        return self.words[k], self.ids[k]

    def __iter__(self):
        return zip(self.words, self.ids, strict=True)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Bucket):
            return self.words == other.words and self.ids == other.ids
        return list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Bucket({list(self)!r})"


class SurfaceIndex:
    """Surface words by length, with sorted prefix and suffix views for distance 1."""

    def __init__(self, vocabulary: Iterable[tuple[str, int]]) -> None:
        self.by_length: dict[int, Bucket] = {}
        for word, term_id in vocabulary:
            bucket = self.by_length.get(len(word))
            if bucket is None:
                bucket = self.by_length[len(word)] = Bucket()
            bucket.words.append(word)
            bucket.ids.append(term_id)
        self._sorted: dict[int, tuple[list[str], Sequence[int], list[str], Sequence[int]]] = {}
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
            old = self.by_length.get(n, Bucket())
            mine = added.pop(n, [])
            if _held(old, [w for w in gone if len(w) == n]) == dict(mine):
                continue  # most often: the words of an edited file are still there
            bucket = Bucket(sorted([p for p in old if p[0] not in gone] + mine))
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
                words, ids = bucket.words, bucket.ids
                out += [(words[i], ids[i]) for i in self._anchored(n, prefix, suffix)]
        return out

    def within(self, word: str, distance: int) -> list[tuple[str, float, int]]:
        """``(surface word, OSA distance, term_id)`` of the words of ``near(word,
        distance)`` within ``distance`` of ``word``, in its order, without building that
        list: rapidfuzz reads the ranges of the sorted views that share the anchored
        prefix, and those of the reversed views that share the reversed suffix (an OSA
        distance is that of the reversed strings), in place."""
        from rapidfuzz.distance import OSA
        from rapidfuzz.process import extract

        prefix, suffix = anchors(word, distance)
        hits: list[tuple[str, float, int]] = []
        for n in range(max(len(word) - distance, 1), len(word) + distance + 1):
            bucket = self.by_length.get(n)
            if not bucket:
                continue
            words, order, reversed_words, reversed_order = self._views(n)
            found: dict[int, float] = {}
            for typed, view, positions, start in ((word, words, order, prefix),
                                                  (word[::-1], reversed_words,
                                                   reversed_order, suffix[::-1])):
                i, j = _range(view, start)
                for _, d, k in extract(typed, view[i:j], scorer=OSA.distance,
                                       score_cutoff=distance, limit=None):
                    found[positions[i + k]] = d
                if not start:
                    break  # no anchors: the prefix range held every word
            hits += [(bucket.words[p], d, bucket.ids[p]) for p, d in sorted(found.items())]
        return hits

    def _anchored(self, n: int, prefix: str, suffix: str) -> list[int]:
        """Positions in bucket ``n`` of the words starting with ``prefix`` or ending with
        ``suffix``, ascending."""
        words, order, reversed_words, reversed_order = self._views(n)
        found = set(_starting_with(words, order, prefix))
        found.update(_starting_with(reversed_words, reversed_order, suffix[::-1]))
        return sorted(found)

    def _views(self, n: int) -> tuple[list[str], Sequence[int], list[str], Sequence[int]]:
        views = self._sorted.get(n)
        if views is None:
            bucket = self.by_length[n].words
            rev = [w[::-1] for w in bucket]
            # positions as an array: 4 bytes each, where a list held an int object of 28
            # and a pointer (cpp-docs: 1 MB after a few searches, 2 once every length)
            rorder = array("i", sorted(range(len(rev)), key=rev.__getitem__))
            if all(a <= b for a, b in pairwise(bucket)):  # as words.parquet is: no copy
                words, order = bucket, range(len(bucket))
            else:
                order = array("i", sorted(range(len(bucket)), key=bucket.__getitem__))
                words = [bucket[i] for i in order]
            views = self._sorted[n] = (words, order, [rev[i] for i in rorder], rorder)
        return views


def _starting_with(words: list[str], order: Sequence[int], prefix: str) -> Sequence[int]:
    """``order[i]`` for each ``words[i]`` (sorted) that starts with ``prefix``."""
    i, j = _range(words, prefix)
    return order[i:j]


def _range(words: list[str], prefix: str) -> tuple[int, int]:
    """The range of ``words`` (sorted) that start with ``prefix``: from ``prefix`` up to
    the least string above every word starting with it."""
    i = bisect_left(words, prefix)
    if not prefix:
        return 0, len(words)
    if ord(prefix[-1]) == sys.maxunicode:
        j = i
        while j < len(words) and words[j].startswith(prefix):
            j += 1
        return i, j
    return i, bisect_left(words, prefix[:-1] + chr(ord(prefix[-1]) + 1), i)
