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
matches, so a snippet costs time linear in the chunk.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

from ra.analysis import MAX_TOKEN_BYTES, Analyzer, analyzer_for, split_words

#: Which words match: a set of index terms, or a predicate on a lowercased surface word.
Matches = Callable[[str], bool] | AbstractSet[str]
#: A match as (start, end, key): ``key`` tells distinct query terms apart.
Span = tuple[int, int, str]

DEFAULT_MARK = ("**", "**")
ELLIPSIS = "…"

_WORD = re.compile(r"[^\W_]+")  # the analyser's word pattern (ra.analysis.split_words)
_MARKDOWN = [  # (pattern, replacement), applied in order
    (re.compile(r"^[ \t]*(?:```|~~~).*$", re.M), ""),  # code fence lines
    (re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.M), ""),  # heading hashes
    (re.compile(r"^[ \t]*>[ \t]?", re.M), ""),  # blockquote markers
    (re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+", re.M), ""),  # list bullets
    (re.compile(r"!?\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])"), r"\1"),  # link targets
    (re.compile(r"\*+|~~|`+|(?<![^\W_])_+|_+(?![^\W_])"), ""),  # emphasis, inline code
    (re.compile(r"\s+"), " "),
]


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


def strip_markdown(text: str) -> str:
    """``text`` as one line of plain text: heading hashes, emphasis, link targets, code
    fences, quote and list markers removed; whitespace collapsed."""
    for pattern, replacement in _MARKDOWN:
        text = pattern.sub(replacement, text)
    return text.strip()


def matcher(matches: Matches, analyzer: Analyzer | None = None) -> Callable[[str], str | None]:
    """A function from a lowercased word to its match key (its term), or None."""
    if callable(matches):
        accept = matches
        return lambda word: word if accept(word) else None
    stem = (analyzer or analyzer_for("english")).stem
    terms = matches

    def key(word: str) -> str | None:
        term = stem(word)
        return term if term in terms else None

    return key


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
    """Every match in ``text`` as ``(start, end, key)``, in order."""
    spans: list[Span] = []
    memo: dict[str, list[tuple[int, int, str]]] = {}
    for m in _WORD.finditer(text):
        word = m.group()
        hits = memo.get(word)
        if hits is None:
            hits = memo[word] = [(a, b, k) for a, b, p in _pieces(word) if (k := key(p))]
        spans.extend((m.start() + a, m.start() + b, k) for a, b, k in hits)
    return spans


def _densest(spans: Sequence[Span], width: int) -> tuple[int, int]:
    """Start and end of the run of matches fitting ``width`` with the most distinct keys,
    then the most matches; the earliest wins ties. ``(0, 0)`` when nothing matched."""
    best, best_rank = (0, 0), (0, 0)
    counts: Counter[str] = Counter()
    i = 0
    for j, (_, end, k) in enumerate(spans):
        counts[k] += 1
        while i < j and end - spans[i][0] > width:
            counts[spans[i][2]] -= 1
            if not counts[spans[i][2]]:
                del counts[spans[i][2]]
            i += 1
        rank = (len(counts), j - i + 1)
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


def _cut(text: str, pos: int, limit: int, slack: int) -> int:
    """The nearest cut from ``pos`` towards ``limit`` (inclusive): at a space within
    ``slack`` characters, else between words, else ``pos`` itself."""
    step = 1 if limit >= pos else -1
    near = pos + step * min(slack, abs(limit - pos))
    for clean, stop in ((_at_space, near), (_between_words, limit)):
        p = pos
        while p != stop and not clean(text, p):
            p += step
        if clean(text, p):
            return p
    return pos


def _window(text: str, start: int, end: int, width: int) -> tuple[int, int]:
    """About ``width`` characters around ``[start, end)``, centred, not cutting words."""
    n, slack = len(text), max(1, width // 5)
    left = max(0, min(start - (width - (end - start)) // 2, n - width))
    left = _cut(text, left, min(left, max(0, end - width)), slack)  # back, keeping the span
    right = min(n, left + width)
    right = _cut(text, right, min(right, max(end, left + 1)), slack)
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
            mark: tuple[str, str] = DEFAULT_MARK) -> str:
    """About ``width`` characters of plain text around the densest cluster of matches,
    matches wrapped in ``mark``, ``…`` where the text was cut."""
    plain = strip_markdown(text)
    spans = match_spans(plain, matcher(matches, analyzer))
    left, right = _window(plain, *_densest(spans, width), width)
    body = _marked(plain, spans, left, right, mark)
    before = ELLIPSIS if left > 0 else ""
    after = ELLIPSIS if right < len(plain) else ""
    return f"{before}{body}{after}"


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
