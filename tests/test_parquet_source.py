"""ra.store.parquet: a local Parquet file read without pyarrow.fs, and its fallback.

The direct reader (pyarrow's ``ParquetReader``, what ``pq.ParquetFile`` wraps) and the
fallback (``pq.ParquetFile`` itself, taken when that private class is missing or changed)
must give the rows ``pq.ParquetFile`` gives, column by column and batch by batch, and a
damaged file must fail as it does.
"""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ra.store import parquet
from ra.store.parquet import ParquetSource

ROWS = 2_500


@pytest.fixture
def table_file(tmp_path):
    table = pa.table({
        "term_id": pa.array(range(ROWS), pa.int32()),
        "term": pa.array([f"w{i % 97}" if i % 11 else None for i in range(ROWS)]),
        "impact": pa.array([i * 7 % 65_536 for i in range(ROWS)], pa.uint16()),
    })
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)  # four row groups, the last short
    return path, table


@pytest.fixture(params=["direct", "fallback"])
def mode(request, monkeypatch):
    """Both paths: the direct reader, and the fallback as a pyarrow without it takes."""
    if request.param == "fallback":
        import pyarrow._parquet

        class Changed:  # a ParquetReader whose open takes other arguments
            def open(self, source):
                raise AssertionError("not reached")

        monkeypatch.setattr(pyarrow._parquet, "ParquetReader", Changed)
    return request.param


def test_columns_are_read_as_parquet_file_reads_them(table_file, mode):
    path, table = table_file
    with ParquetSource(path) as source:
        assert (source._file is not None) == (mode == "fallback")
        assert source.num_rows == ROWS
        got = source.read(["impact", "term"])
    assert got.column_names == ["impact", "term"]
    assert got.equals(pq.ParquetFile(path).read(columns=["impact", "term"]))
    assert got.equals(table.select(["impact", "term"]))


@pytest.mark.parametrize("size", [1, 333, 700, 5_000])
def test_batches_hold_every_row_in_order(table_file, mode, size):
    path, table = table_file
    with ParquetSource(path) as source:
        batches = list(source.iter_batches(size, ["term_id", "impact"], use_threads=False))
    assert all(b.num_rows <= size for b in batches)
    assert pa.Table.from_batches(batches).equals(table.select(["term_id", "impact"]))


def test_an_unknown_column_fails_as_parquet_file_fails(table_file, mode):
    path, _ = table_file
    with pytest.raises(KeyError), ParquetSource(path) as source:
        source.read(["nope"])


@pytest.mark.parametrize("content", [b"", b"PAR1 not parquet at all PAR1", None])
def test_a_damaged_file_raises_what_parquet_file_raises(tmp_path, table_file, mode, content):
    path, _ = table_file
    bad = tmp_path / "bad.parquet"
    if content is None:  # a file cut short: its footer is gone
        bad.write_bytes(path.read_bytes()[:-100])
    else:
        bad.write_bytes(content)
    with pytest.raises((OSError, pa.ArrowException)):
        ParquetSource(bad).read(["term_id"])
    with pytest.raises((OSError, pa.ArrowException)):
        ParquetSource(tmp_path / "missing.parquet")


def test_reading_imports_neither_pyarrow_fs_nor_pyarrow_parquet(table_file):
    """The point of the module: pyarrow.fs (S3, OpenSSL, ...) stays out of the process."""
    path, _ = table_file
    code = ("import sys\n"
            "from ra.store.parquet import ParquetSource\n"
            f"with ParquetSource({str(path)!r}) as s:\n"
            "    n = s.read(['term_id']).num_rows + sum(\n"
            "        b.num_rows for b in s.iter_batches(100, ['impact']))\n"
            "print(n, sorted(m for m in ('pyarrow.fs', 'pyarrow.parquet', 'pyarrow._s3fs')\n"
            "                if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split(maxsplit=1)
    assert out == [str(2 * ROWS), "[]\n"]


def test_the_module_names_the_reader_it_drives():
    """If pyarrow renames its reader, the fallback serves; this says so loudly here
    rather than only in memory figures."""
    import pyarrow._parquet

    assert hasattr(pyarrow._parquet, "ParquetReader"), parquet.__doc__
