"""Snippets, highlighting and matching lines for list and matches output.

A snippet is a ~150-character window of plain text (markdown syntax lightly stripped)
around the densest cluster of matching words, with matches marked and ``…`` where the
text was cut. "Densest" means the window covering the most distinct query terms, then
the most matches, then the earliest: a window showing both ``error`` and ``handling``
beats one repeating ``error`` three times.

A word matches when the analyser turns it into one of the query's index terms (so
``Installing`` matches the term ``instal``), or when a caller-supplied predicate accepts
its lowercased surface form (for fuzzy expansions). Words are found as the analyser
finds them: runs of letters and digits, CJK runs split into bigrams, words of 40 bytes
or more ignored. Everything is one pass over the text plus a sliding window over the
matches, so a snippet costs time linear in the chunk; a long text is read in blocks,
up to the first that holds every term (``SCAN_CHARS``, ``SCAN_LIMIT``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet

from ra.text.analysis import MAX_TOKEN_BYTES, Analyzer, analyzer_for, split_words

#: Which words match: a set of index terms (or its ``TermKey``, made once for several
#: texts), or a predicate on a lowercased surface word.
Matches = Callable[[str], bool] | AbstractSet[str]
#: A match as (start, end, key): ``key`` tells distinct query terms apart.
Span = tuple[int, int, str]

DEFAULT_MARK = ("**", "**")
#: A snippet is looked for in blocks of this size (see ``snippet``). 8,000 rather than
#: 20,000 characters: on cpp-docs, in-process search p50 6.9 -> 6.7 ms, p95 12.1 -> 11.4
#: ms (3 alternating runs of 100 queries), and 6 of 344 snippets changed (a long
#: section's match came from its first 8,000 characters instead of a denser cluster
#: further into the first 20,000).
SCAN_CHARS = 8_000
#: How far into a text a snippet looks for a block holding more of the query's terms
#: than one found (for a first match, to the end)
SCAN_LIMIT = 200_000
ELLIPSIS = "…"

_WORD = re.compile(r"[^\W_]+")  # the analyser's word pattern (ra.text.analysis.split_words)
def merge_ranges(a: Sequence[Sequence[int]],
                 b: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """The union of two lists of ``[start, end)`` ranges: sorted, overlapping or touching
    ranges combined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted((int(r[0]), int(r[1])) for r in [*a, *b]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def strip_markdown(text: str, markdown: bool = True) -> str:
    """``text`` as one line of plain text: what a reader sees of it (``ra.text.markup``:
    comments, attribute lists, admonition and shortcode syntax, HTML tags and the like
    removed), then heading hashes, emphasis, link targets, code fences, quote and list
    markers removed; whitespace collapsed. ``markdown=False`` (a plain text file) only
    collapses whitespace."""
    from ra.text.markup import plain_held, reader_line, set_code_aside  # 15 ms to import:
    # a search cuts its snippets from the stored lines and never pays for it
    if not markdown:
        return reader_line(None, text, markdown)
    prepared, codes = set_code_aside(text)
    return reader_line(None, plain_held(prepared), markdown, codes)


#: Stemmers that never change the first character of an ASCII word (or leave nothing of
#: it): a word can only stem to a term that begins as it does. Checked over every ASCII
#: word of the five corpora and 200,000 random ones; Dutch (``ge-``), Indonesian,
#: Irish, Esperanto and Serbian rewrite word starts, and the others are not listed
#: because nothing here needs them to be (tests/test_snippets.py holds them to it).
FIRST_LETTER_KEPT = frozenset({"english", "porter", "none"})


class TermKey:
    """A word's match key when matches are index terms: its term if that is one of them.

    Called on a lowercased word, like any key. When the analyser keeps first letters
    (``FIRST_LETTER_KEPT``), ``spans`` finds an ASCII text's matches among the distinct
    words that begin with a term's first letter only, listed by one regex: the stemmer
    and the dictionary see a few words, not every one, and the few that match are then
    found with ``str.find``. A key remembers the words it has looked at, so the results
    of one search (``snippet`` given the same key) look at each word once."""

    __slots__ = ("stem", "stems", "terms", "aliases", "_starts", "_keys")

    def __init__(self, terms: AbstractSet[str], analyzer: Analyzer,
                 aliases: Mapping[str, str] | None = None) -> None:
        self.stem, self.stems, self.terms = analyzer.stem, analyzer.cached_stems, terms
        self.aliases = aliases or {}  # a typo's expansion -> its word's key (``VARIANT``)
        self._starts: re.Pattern | None = None
        self._keys: dict[str, str | None] = {}  # surface word (as written) -> its key
        if analyzer.language in FIRST_LETTER_KEPT:
            firsts = {t[0] for t in terms if t and t[0].isascii() and t[0].isalnum()}
            letters = re.escape("".join(sorted(firsts | {c.upper() for c in firsts})))
            # the letter first, then a look back at the character before it: the regex
            # engine skips straight to the letters (a look-behind first would not)
            self._starts = re.compile(
                f"[{letters}](?<![A-Za-z0-9][{letters}])[A-Za-z0-9]*") if firsts else _NOTHING

    def __call__(self, word: str) -> str | None:
        term = self.stems.get(word) or self.stem(word)  # the cache first: one call saved
        return self.aliases.get(term, term) if term in self.terms else None

    def spans(self, text: str) -> list[Span] | None:
        """``match_spans(text, self)`` by the candidate words alone, or None when this key
        cannot tell which words those are (a text with a word character that is not ASCII,
        another stemmer). Other characters beyond ASCII (curly quotes, dashes, box
        drawing) split words as a space does: in the Rust book 111 of 112 pages hold a
        ``’``, and its snippets scanned every word for it."""
        if self._starts is None or not text.isascii() and _WIDE_WORD.search(text):
            return None
        keys, hits = self._keys, []
        for word in set(self._starts.findall(text)):
            k = keys.get(word, _UNSEEN)
            if k is _UNSEEN:
                k = keys[word] = self(word.lower()) if len(word) < MAX_TOKEN_BYTES else None
            if k:
                hits.append((word, k))
        if len(hits) == 1:  # in order already
            word, k = hits[0]
            return [(i, i + len(word), k) for i in _whole_word_at(text, word)]
        return sorted((i, i + len(word), k) for word, k in hits
                      for i in _whole_word_at(text, word))


_UNSEEN = object()
_WIDE_WORD = re.compile(r"[^\W\x00-\x7f]")  # a word character beyond ASCII
_NOTHING = re.compile(r"(?!)")


def matcher(matches: Matches, analyzer: Analyzer | None = None,
            variants: Mapping[str, str] | None = None) -> Callable[[str], str | None]:
    """A function from a lowercased word to its match key (its term), or None.
    ``variants``: the terms that stand for a word typed, by that word's term (a typo's
    expansions, ``Plan.variants``): their key is the word's, marked ``VARIANT``."""
    if isinstance(matches, TermKey):
        return matches
    if callable(matches):
        accept = matches
        return lambda word: word if accept(word) else None
    aliases = {v: f"{w}{VARIANT}" for v, w in (variants or {}).items() if v != w}
    return TermKey(matches, analyzer or analyzer_for("english"), aliases)


#: The end of a match key that stands for another word (a typo's expansion): a window
#: counts it as that word, and prefers the word as typed. "protection warning" centred
#: its snippets on "project" (a near miss 17 times as common), marked as a second word.
VARIANT = "\0"


def _word_key(key: str) -> str:
    return key[:-1] if key.endswith(VARIANT) else key


def _pieces(word: str) -> list[tuple[int, int, str]]:
    """The analyser's words inside one regex word, with offsets into it."""
    low = word.lower()
    if low.isascii():  # the common case: one piece, unless too long to index
        return [(0, len(word), low)] if len(low) < MAX_TOKEN_BYTES else []
    parts = split_words(word)
    if len(low) != len(word):  # lowercasing changed the length: offsets are lost
        return [(0, len(word), p) for p in parts]
    found, cursor = [], 0
    for part in parts:  # CJK bigrams overlap: each starts one past the previous
        at = max(low.find(part, cursor), cursor)
        found.append((at, at + len(part), part))
        cursor = at + 1
    return found


def match_spans(text: str, key: Callable[[str], str | None]) -> list[Span]:
    """Every match in ``text`` as ``(start, end, key)``, in order.

    Each distinct word is looked at once; the occurrences of the few that match are then
    found with ``str.find`` (whole words only: no word character either side, as
    ``_WORD`` finds words), so no Python loop runs over every word of a long text."""
    if isinstance(key, TermKey) and (spans := key.spans(text)) is not None:
        return spans
    hits: dict[str, list[tuple[int, int, str]]] = {}
    for word in set(_WORD.findall(text)):
        if word.isascii():  # the common case: one piece (``_pieces``), looked at directly
            if len(word) < MAX_TOKEN_BYTES and (k := key(word.lower())):
                hits[word] = [(0, len(word), k)]
            continue
        found = [(a, b, k) for a, b, p in _pieces(word) if (k := key(p))]
        if found:
            hits[word] = found
    at = sorted((i, word) for word in hits for i in _whole_word_at(text, word))
    return [(i + a, i + b, k) for i, word in at for a, b, k in hits[word]]


def _whole_word_at(text: str, word: str) -> list[int]:
    """Offsets of ``word`` in ``text`` where it is a whole word (``[^\\W_]`` is
    ``str.isalnum``)."""
    out, n = [], len(text)
    i = text.find(word)
    while i >= 0:
        end = i + len(word)
        if (i == 0 or not text[i - 1].isalnum()) and (end == n or not text[end].isalnum()):
            out.append(i)
        i = text.find(word, i + 1)
    return out


def _densest(spans: Sequence[Span], width: int) -> tuple[int, int]:
    """Start and end of the run of matches fitting ``width`` with the most distinct words
    (a ``VARIANT`` counting as its word), then the most matches as typed, then the most
    matches; the earliest wins ties. ``(0, 0)`` when nothing matched."""
    best, best_rank = (0, 0), (0, 0, 0)
    counts: Counter[str] = Counter()
    typed = 0
    i = 0
    for j, (_, end, k) in enumerate(spans):
        counts[_word_key(k)] += 1
        typed += not k.endswith(VARIANT)
        while i < j and end - spans[i][0] > width:
            gone = spans[i][2]
            counts[_word_key(gone)] -= 1
            if not counts[_word_key(gone)]:
                del counts[_word_key(gone)]
            typed -= not gone.endswith(VARIANT)
            i += 1
        rank = (len(counts), typed, j - i + 1)
        if rank > best_rank:
            best, best_rank = (spans[i][0], end), rank
    return best


def _joined(ch: str) -> bool:
    """Whether a cut next to ``ch`` could split a word (CJK text may be cut anywhere)."""
    return ch.isalnum() and ord(ch) < 0x2E80


def _at_space(text: str, p: int) -> bool:
    return p == 0 or p == len(text) or text[p - 1] == " " or text[p] == " "


def _between_words(text: str, p: int) -> bool:
    return p == 0 or p == len(text) or not (_joined(text[p - 1]) and _joined(text[p]))


def _cut(text: str, pos: int, limit: int, slack: int, inner: int) -> int:
    """The nearest cut from ``pos`` towards ``limit`` (inclusive): at a space within
    ``slack`` characters, else between words; else the nearest between words from
    ``pos`` towards ``inner`` (the matches' side: the window shrinks rather than cut a
    word, as "…it hash_multiset(" cut "explicit"), else ``pos`` itself."""
    step = 1 if limit >= pos else -1
    near = pos + step * min(slack, abs(limit - pos))
    for clean, stop, way in ((_at_space, near, step), (_between_words, limit, step),
                             (_between_words, inner, -step)):
        p = pos
        while p != stop and not clean(text, p):
            p += way
        if clean(text, p):
            return p
    return pos


def _window(text: str, start: int, end: int, width: int) -> tuple[int, int]:
    """About ``width`` characters around ``[start, end)``, centred, not cutting words."""
    n, slack = len(text), max(1, width // 5)
    left = max(0, min(start - (width - (end - start)) // 2, n - width))
    # back, keeping the span
    left = _cut(text, left, min(left, max(0, end - width)), slack, max(left, start))
    right = min(n, left + width)
    right = _cut(text, right, min(right, max(end, left + 1)), slack, min(right, end))
    while left < right and text[left] == " ":
        left += 1
    while right > left and text[right - 1] == " ":
        right -= 1
    return left, right


def _marked(text: str, spans: Sequence[Span], left: int, right: int,
            mark: tuple[str, str]) -> str:
    """``text[left:right]`` with the matches inside it wrapped in ``mark``."""
    ranges = merge_ranges([(a, b) for a, b, _ in spans if left <= a and b <= right], [])
    out, pos = [], left
    for a, b in ranges:
        out += [text[pos:a], mark[0], text[a:b], mark[1]]
        pos = b
    out.append(text[pos:right])
    return "".join(out)


def snippet(text: str, matches: Matches, analyzer: Analyzer | None = None, width: int = 150,
            mark: tuple[str, str] = DEFAULT_MARK, markdown: bool = True) -> str:
    """About ``width`` characters of plain text around the densest cluster of matches,
    matches wrapped in ``mark``, ``…`` where the text was cut: ``snippet_of`` the text a
    reader sees of ``text`` (``strip_markdown``). A search cuts its snippets from the
    text the index stored instead."""
    return snippet_of(strip_markdown(text, markdown), matches, analyzer, width, mark)


def snippet_of(plain: str, matches: Matches, analyzer: Analyzer | None = None,
               width: int = 150, mark: tuple[str, str] = DEFAULT_MARK) -> str:
    """``snippet`` of a text as a reader sees it already, on one line (a chunk's
    ``plain``, made when it was indexed: ``ra.text.markup.reader_line``): nothing is
    stripped at query time, which was half of a snippet's cost (on cpp-docs, a query's
    snippets 0.71 → 0.31 ms). A text longer than ``SCAN_CHARS`` is read in blocks of
    about that size, cut at spaces, and the snippet comes from the first block holding
    every term of the query, else the one holding most of them, first (a result of
    150,000 characters cost 40 ms to scan in full; the first block with any match had
    been taken: "roblox 73 hour outage consul" showed an AWS paragraph of the
    post-mortems' 45,000-character "Uncategorized" section, whose Roblox entry holds
    all five words); for more of them, no further than ``SCAN_LIMIT`` characters.
    Without a match, the text's opening."""
    key = matcher(matches, analyzer)
    wanted = (len({_word_key(key.aliases.get(t, t)) for t in key.terms})
              if isinstance(key, TermKey) else 1)
    best: tuple | None = None
    for start, end in _blocks(plain, SCAN_CHARS):
        block = plain[start:end]
        spans = match_spans(block, key)
        found = len({_word_key(k) for _, _, k in spans})
        if spans and (best is None or found > best[0]):
            best = (found, start, end, block, spans)
        if found >= wanted or best is not None and end >= SCAN_LIMIT:
            break
    if best is not None:
        _, start, end, block, spans = best
        return _render(block, spans, width, mark, start > 0, end < len(plain))
    return _render(plain, [], width, mark, False, False)


def _render(plain: str, spans: list[Span], width: int, mark: tuple[str, str],
            cut_before: bool, cut_after: bool) -> str:
    left, right = _window(plain, *_densest(spans, width), width)
    body = _marked(plain, spans, left, right, mark)
    before = ELLIPSIS if left > 0 or cut_before else ""
    after = ELLIPSIS if right < len(plain) or cut_after else ""
    return f"{before}{body}{after}"


def _blocks(text: str, size: int) -> Iterator[tuple[int, int]]:
    """``text`` as consecutive ``[start, end)`` ranges of about ``size`` characters, each
    ending after a space where there is one (no word is cut in two)."""
    start = 0
    while True:
        end = len(text) if len(text) - start <= size else (
            text.rfind(" ", start, start + size) + 1 or start + size)
        yield start, end
        if end >= len(text):
            return
        start = end


def highlight(text: str, matches: Matches, analyzer: Analyzer | None = None,
              mark: tuple[str, str] = DEFAULT_MARK) -> str:
    """``text`` unchanged but for ``mark`` around each match."""
    spans = match_spans(text, matcher(matches, analyzer))
    return _marked(text, spans, 0, len(text), mark)


def matching_lines(text: str, is_match: Matches,
                   analyzer: Analyzer | None = None) -> list[tuple[int, str]]:
    """``(line number from 1, line)`` for each line of ``text`` holding a match."""
    key = matcher(is_match, analyzer)
    return [(number, line) for number, line in enumerate(text.splitlines(), 1)
            if match_spans(line, key)]
