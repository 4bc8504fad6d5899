"""Reading a local Parquet file without importing ``pyarrow.fs``.

``pyarrow.parquet`` imports ``pyarrow.fs``, which imports every remote file system the
wheel was built with: S3 (with the AWS SDK, OpenSSL and Python's ``ssl``), GCS, Azure,
HDFS. That is 8 MB of resident memory, and some 15 ms, in a process that reads files
on its own disk only. A long-lived reader (the daemon, the MCP server) reads its
vocabulary and its impacts here, so it never imports them.

``ParquetSource`` drives ``pyarrow._parquet.ParquetReader``, the reader that
``pq.ParquetFile`` itself wraps, on a memory-mapped path. That class is pyarrow's, not
public: if a pyarrow release changes it (ra accepts 20 to 26), opening falls back to
``pq.ParquetFile``, which reads the same rows at the cost of that memory
(tests/test_parquet_source.py holds both to the same answers). A file that is damaged
raises what ``pq.ParquetFile`` raises (``OSError``, ``pyarrow.ArrowException``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


class ParquetSource:
    """One local Parquet file, memory-mapped, read by column name."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._file = None  # pq.ParquetFile, when the direct reader is unavailable
        try:
            from pyarrow._parquet import ParquetReader

            reader = ParquetReader()
            reader.open(self.path, use_memory_map=True)
            self.num_rows = reader.metadata.num_rows
            self._reader = reader
        except (ImportError, AttributeError, TypeError):  # a pyarrow that changed it
            self._open_public()

    def _open_public(self) -> None:
        import pyarrow.parquet as pq

        self._reader = None
        self._file = pq.ParquetFile(self.path, memory_map=True)
        self.num_rows = self._file.metadata.num_rows

    def read(self, columns: list[str]):
        """The columns ``columns`` as a ``pyarrow.Table`` (``KeyError`` for a column the
        file does not have, which ``pq.ParquetFile`` would leave out)."""
        if self._file is not None:
            return self._file.read(columns=self._known(columns))
        return self._reader.read_all(column_indices=self._indices(columns))

    def iter_batches(self, batch_size: int, columns: list[str],
                     use_threads: bool = True) -> Iterator:
        """The columns ``columns`` in record batches of up to ``batch_size`` rows."""
        if self._file is not None:
            yield from self._file.iter_batches(batch_size=batch_size,
                                               columns=self._known(columns),
                                               use_threads=use_threads)
            return
        groups = range(self._reader.num_row_groups)
        yield from self._reader.iter_batches(batch_size, groups,
                                             column_indices=self._indices(columns),
                                             use_threads=use_threads)

    def _known(self, columns: list[str]) -> list[str]:
        names = self._file.schema_arrow.names
        for name in columns:
            if name not in names:
                raise KeyError(f"{name!r}: no such column in {self.path}")
        return columns

    def _indices(self, columns: list[str]) -> list[int]:
        return [self._reader.column_name_idx(name) for name in columns]

    def close(self) -> None:
        (self._file or self._reader).close()

    def __enter__(self) -> ParquetSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
