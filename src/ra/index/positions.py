"""A long-lived reader's way to the positions of a few terms in a few chunks.

A compound's phrase is scored in the chunks it could lift to the best only
(``ra.query.impacts.top_rows``), from the positions of its words there. The compact
``hot_postings`` holds them sorted by term and chunk in row groups of 16,384 rows, so
those rows are in a few row groups, which the file's footer tells (each row group's
least and greatest term and ord). DuckDB spent about 10 ms planning and scanning for
them where pyarrow reads the row groups in a millisecond or two each: on cpp-docs'
known-item queries with a compound (119 reads), 15 ms at the median in DuckDB, 6 ms
so (the same rows; ``tests/test_bm25f.py`` compares them).

pyarrow and NumPy are imported here only: a one-shot command reads the positions
through DuckDB (``IndexReader.phrase_positions``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

COLUMNS = ["term_id", "ord", "field", "len", "positions"]


class HotPositions:
    """``hot_postings`` of one generation, its row groups' ranges read once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.meta = pq.read_metadata(path)
        names = self.meta.schema.to_arrow_schema().names
        term, ord_ = names.index("term_id"), names.index("ord")
        groups = [self.meta.row_group(i) for i in range(self.meta.num_row_groups)]
        stats = [[_stat(g.column(c), which) for g in groups]
                 for c, which in ((term, "min"), (term, "max"), (ord_, "min"), (ord_, "max"))]
        self.every = any(v is None for column in stats for v in column)  # read them all
        self.low_term, self.high_term, self.low_ord, self.high_ord = (
            np.array([-1 if v is None else v for v in column], dtype=np.int64)
            for column in stats)

    def rows(self, terms: list[int], ords: list[int]) -> list[tuple]:
        """``(term_id, ord, field, len, positions)`` of ``terms`` in the chunks ``ords``
        (sorted), in no order."""
        wanted = np.asarray(ords, dtype=np.int64)
        groups: set[int] = set(range(len(self.low_term))) if self.every else set()
        # row groups are in term order: a term's are one run of them
        for t in terms if not self.every else ():
            first = int(np.searchsorted(self.high_term, t, "left"))
            last = int(np.searchsorted(self.low_term, t, "right"))
            for g in range(first, last):  # and holding one of the chunks by their range
                k = int(np.searchsorted(wanted, self.low_ord[g], "left"))
                if k < len(wanted) and wanted[k] <= self.high_ord[g]:
                    groups.add(g)
        if not groups:
            return []
        with pq.ParquetFile(self.path, metadata=self.meta) as file:
            table = file.read_row_groups(sorted(groups), columns=COLUMNS)
        table = table.filter(pc.and_(pc.is_in(table["term_id"], pa.array(terms, pa.int32())),
                                     pc.is_in(table["ord"], pa.array(ords, pa.int32()))))
        return list(zip(*(table[c].to_pylist() for c in COLUMNS), strict=True))


def _stat(column, which: str) -> int | None:
    """A row group's least or greatest value of ``column``, None without statistics
    (then every row group is read)."""
    stats = column.statistics
    if stats is None or not stats.has_min_max:
        return None
    return int(stats.min if which == "min" else stats.max)
