"""A long-lived reader's impacts as arrays, summed by ``ra.query.impacts.top_rows``.

A plain query over impacts is one multiplication per posting and a sum per chunk, and
DuckDB does that in well under a millisecond; what it cannot avoid is binding, optimising
and planning the query, about 3 ms of CPU whatever the data (docs/ranking.md). A reader
that answers many queries (the daemon, the MCP server) therefore holds its impacts as
NumPy arrays over the rows DuckDB returned, sorted by term and chunk, so a term's
postings are one slice: ``starts[t]:starts[t + 1]``. The same rows stay registered with
DuckDB as relation ``impacts`` (``con.register``, no copy), so ``top_sql`` still reads
them: ``--explain`` and the tests compare the two.

NumPy is imported here only: a one-shot command never loads this module.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa


@dataclass(frozen=True, eq=False)
class ImpactArrays:
    """Rows ``term_id, ord, impact, is_global, archived`` by term then chunk (``table``)
    and the arrays ``top_rows`` reads from them."""

    table: pa.Table
    starts: np.ndarray  # int64, terms + 1: term t's postings are starts[t]:starts[t + 1]
    ords: np.ndarray  # int32
    impacts: np.ndarray  # uint16 (the build's, quantized) or float64 (computed, exact)
    is_global: np.ndarray  # bool by ord: the chunk is in a global tree
    archived: np.ndarray  # bool by ord: the chunk's status is archived
    any_archived: bool = False
    _local: threading.local = field(default_factory=threading.local, init=False, repr=False)

    @property
    def chunks(self) -> int:
        """The length of the by-ord arrays: one more than the highest ord with a posting."""
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


def from_table(table: pa.Table, terms: int) -> ImpactArrays:
    """The arrays of ``table`` (rows sorted by ``term_id`` then ``ord``, as
    ``IndexReader`` loads them); ``terms``: one more than the highest term id."""
    table = table.combine_chunks()
    term_ids = _numpy(table.column("term_id"), np.int32)
    ords = _numpy(table.column("ord"), np.int32)
    impacts = _numpy(table.column("impact"), None)
    if len(term_ids) > 1 and bool((np.diff(term_ids) < 0).any()):
        raise ValueError("impacts are not sorted by term")
    terms = max(terms, int(term_ids[-1]) + 1 if len(term_ids) else 0)
    starts = np.searchsorted(term_ids, np.arange(terms + 1), side="left").astype(np.int64)
    n = int(ords.max()) + 1 if len(ords) else 0
    by_ord = {}
    for name in ("is_global", "archived"):
        flags = np.zeros(n, dtype=bool)
        flags[ords] = _numpy(table.column(name), bool)
        by_ord[name] = flags
    return ImpactArrays(table, starts, ords, impacts, by_ord["is_global"], by_ord["archived"],
                        bool(by_ord["archived"].any()))


def _numpy(column: pa.ChunkedArray, dtype) -> np.ndarray:
    """One column as a NumPy array (no copy for numbers; booleans are unpacked)."""
    if column.null_count:
        raise ValueError(f"impacts column {column._name if hasattr(column, '_name') else ''} "
                         "has nulls")
    values = column.to_numpy()
    return values if dtype is None else values.astype(dtype, copy=False)
