"""Tiered packing of ranked results into a token budget (``--max-tokens``).

Results are taken in rank order. Each goes in full when its content fits in what is
left of the budget; otherwise as its list entry (id, title, snippet) when that fits;
otherwise as a bare reference (id and title) when the item has one and it fits;
otherwise it is skipped, and packing goes on, since a later, smaller result may still
fit. The first two tiers come from the neighbouring system in seed 002, whose context
builder gives the best results in full and the next ones as metadata only: an agent that
cannot afford a result's text still learns that it exists and can fetch it by id. The
reference tier keeps that promise under budgets too small for snippets: a result that
matched is never silently left out while its id would fit.

Costs are whatever the caller counts. Full costs are cl100k_base counts stored per
chunk at index time, of the chunk as shown (``ra.text.tokens.frame``: its id and
breadcrumb lines, then its text); list entries and references are counted as
``ra.query.render`` prints them by a caller-supplied function, by default the cheap
estimate :func:`estimate_entry`, so packing never needs tiktoken.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

Tier = Literal["full", "list", "ref"]


class Costed(Protocol):
    """Anything with a full cost and a list-entry cost in tokens (and optionally a
    ``ref_tokens`` cost of its id and title alone)."""

    @property
    def tokens(self) -> int: ...

    @property
    def list_tokens(self) -> int: ...


T = TypeVar("T", bound=Costed)


@dataclass(frozen=True)
class Cost:
    """A plain :class:`Costed`: a result id with its two costs."""

    id: str
    tokens: int  # the full content, as rendered
    list_tokens: int  # id + title + snippet
    ref_tokens: int | None = None  # id + title; None: no such tier


@dataclass(frozen=True)
class Packed(Generic[T]):
    """One result placed in the budget, and the tier it went in as."""

    item: T
    tier: Tier
    tokens: int


@dataclass(frozen=True)
class Packing(Generic[T]):
    """What fits: packed items in rank order, the tokens they use, and what was left out."""

    items: list[Packed[T]]
    tokens_used: int
    budget: int | None
    skipped: list[T] = field(default_factory=list)


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about four characters per token, never zero)."""
    return len(text) // 4 + 1


def estimate_entry(text: str) -> int:
    """A cheap token estimate for ids, titles and snippets, which are dense in
    punctuation (paths, slugs, code): two tokens per seven characters, or a token per
    mark and per word (one more per eight letters; a third more than its characters for
    a word of other scripts) where that is more. On 3,000 ids and
    titles of the C++ docs cl100k_base gave more tokens than ``estimate_tokens`` for two
    in five (33 more at worst), and on 895 snippets for two in five (44 more); more than
    this for 107 of the ids (23 more at worst) and 3 snippets (3 more at most)."""
    pieces = 1
    for piece in _PIECE.findall(text):
        if not piece[0].isalpha():
            pieces += 1
        elif piece.isascii():
            pieces += 1 + len(piece) // 8
        else:  # CJK: a token or more per character (日本語の見出し: 8)
            pieces += len(piece) * 4 // 3 + 1
    return max(len(text) * 2 // 7 + 1, pieces)


#: Words, numbers (cl100k_base reads digits three at a time) and marks: what a token
#: holds at most, roughly
_PIECE = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]|_")


def list_entry_tokens(chunk_id: str, title: str, snippet: str,
                      count: Callable[[str], int] = estimate_entry) -> int:
    """What a result costs as a list entry, as ``ra.query.render`` prints one: its id
    and title on a line, its snippet indented on the next."""
    return count(f"{chunk_id}  {title}\n    {snippet}\n")


def pack(items: Sequence[T], budget: int | None) -> Packing[T]:
    """Fill ``budget`` tokens with ``items`` in order: in full, else as list entries.

    ``budget`` None means no limit: everything goes in full.
    """
    if budget is not None and budget < 0:
        raise ValueError(f"token budget must not be negative, got {budget}")
    left = budget
    packed: list[Packed[T]] = []
    skipped: list[T] = []
    for item in items:
        tier = _tier(item, left)
        if tier is None:
            skipped.append(item)
            continue
        cost = (item.tokens if tier == "full" else item.list_tokens if tier == "list"
                else _ref(item))
        packed.append(Packed(item, tier, cost))
        left = None if left is None else left - cost
    return Packing(packed, sum(p.tokens for p in packed), budget, skipped)


def _tier(item: Costed, left: int | None) -> Tier | None:
    """The richest tier ``item`` fits in with ``left`` tokens to spare, or None."""
    if left is None or item.tokens <= left:
        return "full"
    if item.list_tokens <= left:
        return "list"
    ref = _ref(item)
    if ref is not None and ref <= left:
        return "ref"
    return None


def _ref(item: Costed) -> int | None:
    return getattr(item, "ref_tokens", None)


def ref_entry_tokens(chunk_id: str, title: str,
                     count: Callable[[str], int] = estimate_entry) -> int:
    """What a result costs as a bare reference: its id and title on one line."""
    return count(f"{chunk_id}  {title}")
