"""The embedding cache: vectors made but not yet published, saved batch by batch.

    <index_dir>/embedding/<model key>/batch-<time>-<pid>.parquet    hash, vector

Embedding a large knowledge base takes long enough to be interrupted (an agent's
session ends, the machine sleeps, a user presses Ctrl-C). Each batch of vectors is
written here as soon as it is computed, to a temporary name renamed into place, so a
killed process leaves only whole batches; the next run reads them and embeds only the
rest (``ra.index.embedding``). Vectors are keyed by the hash of the text they embed, so
a batch stays valid whatever happens to the index meanwhile. Once a generation holding
them is published, the batches are removed.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ra.pipeline.vectors import Pool, vector_array

FOLDER = "embedding"


class Cache:
    """The batches of one model in one index folder."""

    def __init__(self, index_dir: Path, model: str) -> None:
        key = hashlib.sha256(model.encode()).hexdigest()[:16]
        self.folder = Path(index_dir) / FOLDER / key
        self._files: list[Path] = []

    def load(self) -> Pool:
        """Every whole batch, as a pool (partial ones, of a killed writer, are removed)."""
        pool = Pool()
        if not self.folder.is_dir():
            return pool
        for path in sorted(self.folder.iterdir()):
            if path.name.startswith("."):
                _remove(path)  # a temporary file a killed process left
                continue
            try:
                pool.add(pq.ParquetFile(path).read())
            except (OSError, pa.ArrowException):  # unreadable: embedded again
                _remove(path)
                continue
            self._files.append(path)
        return pool

    def save(self, hashes: list[bytes], vectors: list[list[float]], dims: int) -> pa.Table:
        """Write one batch (atomically) and return it as a table."""
        table = pa.table({"hash": pa.array(hashes, pa.binary(16)),
                          "vector": vector_array(vectors, dims)})
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"batch-{time.time_ns()}-{os.getpid()}.parquet"
        tmp = self.folder / f".{name}"
        pq.write_table(table, tmp, compression="zstd", use_dictionary=False)
        os.replace(tmp, self.folder / name)
        self._files.append(self.folder / name)
        return table

    def clear(self) -> None:
        """Remove the batches loaded or saved by this object (published by now)."""
        for path in self._files:
            _remove(path)
        self._files.clear()
        for folder in (self.folder, self.folder.parent):
            try:
                folder.rmdir()
            except OSError:
                break


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
