"""A long-lived reader's impacts as arrays, summed by ``ra.query.impacts.top_rows``.

A plain query over impacts is one multiplication per posting and a sum per chunk, and
DuckDB does that in well under a millisecond; what it cannot avoid is binding, optimising
and planning the query, about 3 ms of CPU whatever the data (docs/ranking.md). A reader
that answers many queries (the daemon, the MCP server) therefore holds its impacts as
NumPy arrays, sorted by term and chunk, so a term's postings are one slice:
``starts[t]:starts[t + 1]``: six bytes per posting (an ord and a 16-bit impact; 12 for
impacts the reader computed itself, which are doubles), and a flag or two per chunk.
DuckDB never holds them: a one-shot reader's relation ``impacts`` (a view over the
build's ``hot_impacts``) has the same rows, which the tests compare.

NumPy is imported here only: a one-shot command never loads this module.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class ImpactArrays:
    """The rows ``term_id, ord, impact`` by term then chunk, as arrays, and the chunk
    flags ``top_rows`` reads."""

    starts: np.ndarray  # int64, terms + 1: term t's postings are starts[t]:starts[t + 1]
    ords: np.ndarray  # int32
    impacts: np.ndarray  # uint16 (the build's, quantized) or float64 (computed, exact)
    is_global: np.ndarray  # bool by ord: the chunk is in a global tree
    archived: np.ndarray  # bool by ord: the chunk's status is archived
    any_archived: bool = False
    _local: threading.local = field(default_factory=threading.local, init=False, repr=False)

    @property
    def chunks(self) -> int:
        """The length of the by-ord arrays."""
        return len(self.is_global)

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The ords and impacts of ``term_id`` (empty for a term with no posting here)."""
        if not 0 <= term_id < len(self.starts) - 1:
            return self.ords[:0], self.impacts[:0]
        low, high = int(self.starts[term_id]), int(self.starts[term_id + 1])
        return self.ords[low:high], self.impacts[low:high]

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's by-ord work arrays ``(hit, slot)``: all False and all -1, as
        ``top_rows`` must leave them (it resets the entries it set). Allocating them per
        query cost more than the sums: every page of a fresh array is a page fault."""
        held = getattr(self._local, "arrays", None)
        if held is None:
            held = (np.zeros(self.chunks, dtype=bool), np.full(self.chunks, -1, np.int32))
            self._local.arrays = held
        return held

    def describe(self) -> str:
        return (f"{len(self.ords):,} impacts of {len(self.starts) - 1:,} terms held as "
                "arrays, each term's a slice")

    def rows(self) -> list[tuple[int, int, float]]:
        """Every ``(term_id, ord, impact)``, by term then ord (for tests and checks)."""
        terms = np.repeat(np.arange(len(self.starts) - 1), np.diff(self.starts))
        return list(zip(terms.tolist(), self.ords.tolist(), self.impacts.tolist(),
                        strict=True))


def build(batches: Iterable[dict], terms: int, chunks: int, capacity: int) -> ImpactArrays:
    """The arrays of ``batches``: DuckDB's ``fetchnumpy()`` of the rows ``term_id, ord,
    impact, is_global, archived`` of consecutive ranges of term ids, each sorted by term
    then ord (as ``IndexReader`` loads them); ``terms``: one more than the highest term
    id; ``chunks``: one more than the highest ord; ``capacity``: at least the number of
    rows. Only the ords and impacts are kept per posting, written into arrays allocated
    once (a list of batches joined at the end held every posting twice); each batch's
    term ids become counts, its flags are set by ord."""
    counts = np.zeros(terms, dtype=np.int64)
    ords = np.empty(capacity, dtype=np.int32)
    impacts = None
    flags = {name: np.zeros(chunks, dtype=bool) for name in ("is_global", "archived")}
    at = 0
    for batch in batches:
        term_ids = np.asarray(batch["term_id"])
        n = len(term_ids)
        if not n:
            continue
        if (np.diff(term_ids) < 0).any() or term_ids[-1] >= terms or at + n > capacity:
            raise ValueError("impacts are out of order, beyond the vocabulary or more than "
                             "counted")
        counts += np.bincount(term_ids, minlength=terms)
        values = np.asarray(batch["impact"])
        if impacts is None:
            impacts = np.empty(capacity, dtype=values.dtype)
        ords[at:at + n] = batch["ord"]
        impacts[at:at + n] = values
        for name, by_ord in flags.items():
            by_ord[ords[at:at + n]] = np.asarray(batch[name], dtype=bool)
        at += n
    if impacts is None:
        impacts = np.empty(capacity, dtype=np.uint16)
    if at < capacity:  # computed impacts: fewer rows than the postings they were counted by
        ords, impacts = ords[:at].copy(), impacts[:at].copy()
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return ImpactArrays(starts, ords, impacts, flags["is_global"], flags["archived"],
                        bool(flags["archived"].any()))
