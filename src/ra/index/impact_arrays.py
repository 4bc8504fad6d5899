"""A long-lived reader's impacts as arrays, summed by ``ra.query.impacts.top_rows``.

A plain query over impacts is one multiplication per posting and a sum per chunk, and
DuckDB does that in well under a millisecond; what it cannot avoid is binding, optimising
and planning the query, about 3 ms of CPU whatever the data (docs/ranking.md). A reader
that answers many queries (the daemon, the MCP server) therefore holds its impacts as
NumPy arrays, sorted by term and chunk, so a term's postings are one slice:
``starts[t]:starts[t + 1]``: six bytes per posting (an ord and a 16-bit impact; 12 for
impacts the reader computed itself, which are doubles), and a flag or two per chunk.
They are read from the build's ``hot_impacts`` as they are (``read_file``); DuckDB never
holds them: a one-shot reader's relation ``impacts`` (a view over the same
file) has the same rows, which the tests compare.

NumPy is imported here only: a one-shot command never loads this module.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

READ_ROWS = 1 << 19  # rows of ``hot_impacts`` read at a time


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

    def load(self, term_ids: Iterable[int | None]) -> None:
        """Nothing: every term's postings are held (``TermImpacts`` computes them)."""

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's by-ord work arrays ``(hit, slot)``: all False and all -1, as
        ``top_rows`` must leave them (it resets the entries it set). Allocating them per
        query cost more than the sums: every page of a fresh array is a page fault."""
        return _scratch(self._local, self.chunks)

    def describe(self) -> str:
        return (f"{len(self.ords):,} impacts of {len(self.starts) - 1:,} terms held as "
                "arrays, each term's a slice")

    def rows(self) -> list[tuple[int, int, float]]:
        """Every ``(term_id, ord, impact)``, by term then ord (for tests and checks)."""
        terms = np.repeat(np.arange(len(self.starts) - 1), np.diff(self.starts))
        return list(zip(terms.tolist(), self.ords.tolist(), self.impacts.tolist(),
                        strict=True))


def _scratch(local: threading.local, size: int) -> tuple[np.ndarray, np.ndarray]:
    held = getattr(local, "arrays", None)
    if held is None:
        held = (np.zeros(size, dtype=bool), np.full(size, -1, np.int32))
        local.arrays = held
    return held


class TermImpacts:
    """The impacts of the terms a reader is asked about, computed when first asked and
    then held: what a reader carried over to an update (``ra.index.successor``) scores
    plain queries with, the interface of ``ImpactArrays``. The build's impacts hold for
    the averages before the update; these are computed exactly
    (``impacts_sql(exact=True)``) from the reader's ``tf_postings`` under the averages
    now, as a reader loaded afresh computes every term's, but only for the terms of the
    queries it answers: one DuckDB query for those of a query not held yet, where the
    formula (``bm25f_sql``) also joined every candidate with the chunks' metadata.

    ``compute(term_ids)``: the rows ``term_id, ord, impact`` of those terms as NumPy
    arrays, sorted by term and chunk; ``is_global`` and ``archived``: the chunk flags by
    ord, over every ord the reader may hold; ``lock``: the reader's, which ``compute``
    takes too (one lock, so that two threads cannot each hold one and wait for the
    other)."""

    def __init__(self, compute, is_global: np.ndarray, archived: np.ndarray,
                 lock: threading.RLock) -> None:
        self._compute = compute
        self.is_global, self.archived = is_global, archived
        self.any_archived = bool(archived.any())
        self._held: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = lock
        self._local = threading.local()

    @property
    def chunks(self) -> int:
        return len(self.is_global)

    def load(self, term_ids: Iterable[int | None]) -> None:
        """Compute the postings of those of ``term_ids`` not held yet, in one query."""
        with self._lock:
            missing = sorted({t for t in term_ids if t is not None and t not in self._held})
            if not missing:
                return
            rows = self._compute(missing)
            ids = np.asarray(rows["term_id"])
            ords = np.asarray(rows["ord"]).astype(np.int32)
            values = np.asarray(rows["impact"], dtype=np.float64)
            for t, low, high in zip(missing, np.searchsorted(ids, missing, "left"),
                                    np.searchsorted(ids, missing, "right"), strict=True):
                self._held[t] = (ords[low:high], values[low:high])

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The ords and impacts of ``term_id`` (empty for a term with no posting)."""
        if term_id not in self._held:
            self.load([term_id])
        return self._held[term_id]

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        return _scratch(self._local, self.chunks)

    def describe(self) -> str:
        return (f"impacts of {len(self._held):,} terms computed as queries asked for them "
                "(a reader carried over to an update), held as arrays")


def flags(ords: np.ndarray, is_global: np.ndarray, archived: np.ndarray,
          size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(is_global, archived)`` by ord, ``size`` long, of the chunks ``ords``."""
    by_ord = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
    by_ord[0][ords] = is_global
    by_ord[1][ords] = archived
    return by_ord


def build(batches: Iterable[dict], terms: int, chunks: dict, capacity: int) -> ImpactArrays:
    """The arrays of ``batches``: dicts of NumPy arrays ``term_id, ord, impact`` of
    consecutive ranges of rows sorted by term then ord (``read_file``'s one batch of a
    ``hot_impacts`` file, or DuckDB's ``fetchnumpy()`` of the impacts a reader computes,
    a range of terms at a time); ``terms``: one
    more than the highest term id; ``chunks``: the chunks the reader holds (``meta``), as
    arrays ``ord, is_global, archived``; rows of other chunks are left out, as a join
    with ``meta`` would; ``capacity``: at least the number of rows. Only the ords and
    impacts are kept per posting, written into arrays allocated once (a list of batches
    joined at the end held every posting twice); each batch's term ids become counts."""
    held = np.asarray(chunks["ord"], dtype=np.int64)
    size = int(held.max()) + 1 if len(held) else 0
    known = np.zeros(size, dtype=bool)
    known[held] = True
    is_global, archived = flags(held, np.asarray(chunks["is_global"], dtype=bool),
                                np.asarray(chunks["archived"], dtype=bool), size)
    counts = np.zeros(terms, dtype=np.int64)
    ords = np.empty(capacity, dtype=np.int32)
    impacts = None
    at = 0
    for batch in batches:
        term_ids, where = np.asarray(batch["term_id"]), np.asarray(batch["ord"])
        values = np.asarray(batch["impact"])
        inside = where < size
        keep = inside & known[np.where(inside, where, 0)]
        if not keep.all():
            term_ids, where, values = term_ids[keep], where[keep], values[keep]
        n = len(term_ids)
        if not n:
            continue
        if (np.diff(term_ids) < 0).any() or term_ids[-1] >= terms or at + n > capacity:
            raise ValueError("impacts are out of order, beyond the vocabulary or more than "
                             "counted")
        counts += np.bincount(term_ids, minlength=terms)
        if at == 0 and n == capacity:  # one batch of every row: its arrays are kept
            ords, impacts, at = where.astype(np.int32, copy=False), values, n
            continue
        if impacts is None:
            impacts = np.empty(capacity, dtype=values.dtype)
        ords[at:at + n] = where
        impacts[at:at + n] = values
        at += n
    if impacts is None:
        impacts = np.empty(capacity, dtype=np.uint16)
    if at < capacity:  # computed impacts: fewer rows than the postings they were counted by
        ords, impacts = ords[:at].copy(), impacts[:at].copy()
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return ImpactArrays(starts, ords, impacts, is_global, archived, bool(archived.any()))


def read_file(path) -> tuple[Iterable[dict], int]:
    """The rows of a ``hot_impacts`` file (sorted by term and ord when written) in
    batches for ``build``, read by pyarrow a batch at a time, and their number. (DuckDB
    read cpp-docs' 3.8M rows in 75 ms against 110, but a reader that serves plain
    queries then needs no DuckDB at all; the join with ``meta`` and the sort per range
    of terms the reader did before took 350 ms.)"""
    from ra.store.parquet import ParquetSource

    source = ParquetSource(path)  # not pq.ParquetFile: see ra.store.parquet
    columns = ["term_id", "ord", "impact"]
    # on this thread: pyarrow's reader threads leave the freed batches in their malloc
    # arenas (cpp-docs: 10 MB more for as long as the reader lives)
    batches = ({name: batch.column(name).to_numpy() for name in columns}
               for batch in source.iter_batches(READ_ROWS, columns, use_threads=False))
    return batches, source.num_rows
