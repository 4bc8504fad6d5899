"""``ChunkStore``: a long-lived reader's chunks in Python, by ord, as DuckDB's ``meta`` has
them; dropped chunks leave holes and a changed document comes back under new ords."""

from __future__ import annotations

from ra.index.chunkstore import ChunkMeta, ChunkStore


def doc(first: int, name: str, sections: int, mtime: int = 7) -> list[tuple]:
    """Rows (``STORE_COLUMNS``) of a document node and ``sections`` children."""
    doc_id = f"kb:{name}.md"
    rows = [(first, doc_id, doc_id, None, "kb", f"{name}.md", 0, 0, sections, name.title(),
             name.title(), False, 10, 1, mtime, first, f"# {name}\n")]
    for i in range(1, sections + 1):
        rows.append((first + i, f"{doc_id}#s{i}", doc_id, doc_id, "kb", f"{name}.md", 1,
                     sections, 0, f"S{i}", f"{name.title()} › S{i}", False,
                     None if i == 2 else 3 * i, 1 + 2 * i, mtime, first, f"## S{i}\n"))
    return rows


def meta_of(row: tuple) -> ChunkMeta:
    return ChunkMeta(*row[:15])


def test_every_chunk_reads_back_as_added():
    store = ChunkStore()
    rows = doc(0, "alpha", 3) + doc(4, "beta", 1)
    store.add(rows)
    assert len(store) == 6
    for row in rows:
        assert store.meta(row[0]) == meta_of(row)
        assert store.ord_of(row[1]) == row[0]
        assert store.texts[row[0]] == row[16]
    assert store.meta(2).tokens is None  # unknown token count survives
    assert store.ancestors(3) == [0] and store.ancestors(0) == [] and store.ancestors(5) == [4]


def test_a_changed_document_comes_back_under_new_ords_with_its_ids():
    store = ChunkStore()
    store.add(doc(0, "alpha", 2) + doc(3, "beta", 1))
    store.drop([0, 1, 2])
    assert not store.has(1) and store.ord_of("kb:alpha.md#s1") is None
    assert store.texts[1] is None and len(store) == 2
    changed = doc(9, "alpha", 3, mtime=8)  # numbered after every earlier chunk
    store.add(changed)
    assert [store.has(o) for o in range(13)] == [False] * 3 + [True] * 2 + [False] * 4 + [True] * 4
    for row in changed:
        assert store.meta(row[0]) == meta_of(row)
    assert store.ord_of("kb:alpha.md#s1") == 10 and store.ancestors(12) == [9]
    assert store.meta(3) == meta_of(doc(3, "beta", 1)[0])


def test_dropping_unknown_or_dropped_ords_changes_nothing():
    store = ChunkStore()
    store.add(doc(0, "alpha", 1))
    store.drop([5, -1, 1])
    store.drop([1])
    assert len(store) == 1 and store.ord_of("kb:alpha.md") == 0
