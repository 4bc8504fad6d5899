"""``ChunkStore``: a long-lived reader's chunks as Arrow columns, by ord, as DuckDB's
``meta`` has them; dropped chunks are sliced away and a changed document comes back under
new ords."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ra.index.chunkstore import STORE_COLUMNS, ChunkMeta, ChunkStore, schema


def doc(first: int, name: str, sections: int, mtime: int = 7) -> list[tuple]:
    """Rows (``STORE_COLUMNS``) of a document node and ``sections`` children."""
    doc_id = f"kb:{name}.md"
    rows = [(first, doc_id, doc_id, None, "kb", f"{name}.md", 0, 0, sections, name.title(),
             name.title(), False, 10, 1, mtime, None, [], first, None, f"# {name}\n", name)]
    for i in range(1, sections + 1):
        rows.append((first + i, f"{doc_id}#s{i}", doc_id, doc_id, "kb", f"{name}.md", 1,
                     sections, 0, f"S{i}", f"{name.title()} › S{i}", i == 3,
                     None if i == 2 else 3 * i, 1 + 2 * i, mtime, "draft", ["t"], first,
                     first, f"## S{i} é\n", f"S{i} é"))
    return rows


def table(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(STORE_COLUMNS, r, strict=True)) for r in rows],
                                schema())


def meta_of(row: tuple) -> ChunkMeta:
    return ChunkMeta(*row[:15])


def test_every_chunk_reads_back_as_added():
    store = ChunkStore()
    rows = doc(0, "alpha", 3) + doc(4, "beta", 1)
    store.add(table(rows))
    assert len(store) == 6
    for row in rows:
        assert store.meta(row[0]) == meta_of(row)
        assert store.ord_of(row[1]) == row[0]
        assert store.strings(row[0], True, True) == (row[-2], row[-1])
        assert store.strings(row[0], False, True) == ("", row[-1])
    assert store.meta(2).tokens is None  # unknown token count survives
    assert store.meta(3).is_global and not store.meta(1).is_global
    assert store.ancestors(3) == [0] and store.ancestors(0) == [] and store.ancestors(5) == [4]
    assert store.ord_of("kb:gamma.md") is None and store.ord_of("kb:alpha.md#s0") is None
    assert store.table().equals(table(rows))


def test_a_changed_document_comes_back_under_new_ords_with_its_ids():
    store = ChunkStore()
    store.add(table(doc(0, "alpha", 2) + doc(3, "beta", 1)))
    store.drop([0, 1, 2])
    assert not store.has(1) and store.ord_of("kb:alpha.md#s1") is None
    assert store.strings(1, True, True) is None and len(store) == 2
    changed = doc(9, "alpha", 3, mtime=8)  # numbered after every earlier chunk
    store.add(table(changed))
    assert [store.has(o) for o in range(13)] == [False] * 3 + [True] * 2 + [False] * 4 + [True] * 4
    for row in changed:
        assert store.meta(row[0]) == meta_of(row)
    assert store.ord_of("kb:alpha.md#s1") == 10 and store.ancestors(12) == [9]
    assert store.meta(3) == meta_of(doc(3, "beta", 1)[0])
    assert store.table().column("ord").to_pylist() == [3, 4, 9, 10, 11, 12]


@pytest.mark.parametrize("gone", [[0], [5], [2, 3], [0, 5, 9], list(range(10)), [1, 7, 8]])
def test_slicing_around_dropped_chunks_keeps_every_other_chunk_readable(gone):
    """Drops cut the batches into slices (zero-copy, rows at an offset in the buffers):
    every kept chunk still reads back exactly, by ord and by id, twice over."""
    rows = doc(0, "alpha", 4) + doc(5, "beta", 4)
    store = ChunkStore(table(rows))
    store.drop(gone)
    store.drop([gone[-1], 4])
    kept = [r for r in rows if r[0] not in {*gone, 4}]
    assert len(store) == len(kept)
    for row in kept:
        assert store.meta(row[0]) == meta_of(row)
        assert store.strings(row[0], True, True) == (row[-2], row[-1])
        assert store.ord_of(row[1]) == row[0]
    for o in {*gone, 4}:
        assert not store.has(o) and store.ord_of(rows[o][1]) is None
    assert store.table().equals(table(kept))


def test_dropping_unknown_or_dropped_ords_changes_nothing():
    store = ChunkStore()
    store.add(table(doc(0, "alpha", 1)))
    store.drop([5, -1, 1])
    store.drop([1])
    assert len(store) == 1 and store.ord_of("kb:alpha.md") == 0


@pytest.mark.parametrize("gone", [[], [30]])
def test_many_chunks_read_back_at_once_as_one_by_one(gone):
    """``lineage`` of many rows reads them column by column (``TAKE_ROWS``); a chunk's
    document and parent ids come from those rows (a drop splits alpha in two parts: the
    second holds no document row, and reads its own columns)."""
    rows = doc(0, "alpha", 60) + doc(61, "beta", 3)
    store = ChunkStore(table(rows))
    store.drop(gone)
    kept = [r for r in rows if r[0] not in gone]
    found = store.lineage([r[0] for r in kept])
    assert found == {r[0]: meta_of(r) for r in kept}
    assert [store.meta(r[0]) for r in kept] == [meta_of(r) for r in kept]


def resident_pages(address: int, size: int) -> int:
    """How many pages of ``[address, address + size)`` this process has mapped
    (``/proc/self/pagemap``: bit 63 of each page's entry)."""
    import os
    import struct

    page = os.sysconf("SC_PAGE_SIZE")
    first, last = address // page, (address + size - 1) // page
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(8 * first)
        entries = f.read(8 * (last - first + 1))
    return sum(e >> 63 & 1 for (e,) in struct.iter_unpack("Q", entries))


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux only")
def test_a_mapped_store_reads_texts_from_the_file_not_through_the_map(tmp_path):
    """The markdown and plain text of the chunks a search shows are read from
    ``hot_store.arrow`` with ``pread``: the pages that hold them are never mapped into
    the process (the kernel maps up to 2 MB around a page touched), and they read back
    as written, a subtree's rows at once, around dropped chunks too."""
    import pyarrow.compute as pc

    from ra.index.chunkstore import file_schema

    rows = [(*r[:-2], f"{r[-2]}{'m' * 4000}{r[0]}", f"{r[-1]}{'p' * 4000}{r[0]}")
            for r in doc(0, "big", 3000)]  # 12 MB of markdown, as much of plain text
    stored = table(rows)
    stored = stored.append_column("part", pa.array([0] * len(rows), pa.int32()))
    stored = stored.append_column("id_order", pc.sort_indices(stored["id"]).cast("int32"))
    path = tmp_path / "hot_store.arrow"
    with pa.ipc.new_file(str(path), file_schema()) as writer:
        writer.write_table(stored.cast(file_schema()))
    store = ChunkStore.mapped(path)
    middle = rows[1500:1510]
    assert store.joined(1500, 1510, True, True) == ("".join(r[-2] for r in middle),
                                                    " ".join(r[-1] for r in middle))
    assert store.strings(1505, True, False) == (rows[1505][-2], "")
    store.drop([1504])
    assert store.joined(1500, 1510, False, True) == ("", " ".join(
        r[-1] for r in middle if r[0] != 1504))
    assert store.joined(1500, 1510, True, False) == ("".join(
        r[-2] for r in middle if r[0] != 1504), "")
    batch = store.table().to_batches()[0]
    for name in ("text", "plain"):
        _, offsets, data = batch.column(name).buffers()
        start = memoryview(offsets).cast("i")[1500]
        assert resident_pages(data.address + start, 10 * 4100) == 0, name
