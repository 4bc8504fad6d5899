"""``IndexReader.successor``: a long-lived reader carried over to the incremental update
of its generation by patching its memory must be indistinguishable from a reader of the
new generation loaded afresh: the same relations, vocabulary, texts and chunk tree, and
the same results with the same scores.

The knowledge base is 24 chapters of the Rust book (``../shared/corpora``, MIT/Apache-2.0,
see its LICENSES.md), in partitions of 4 files, so that an update touches some
partitions and links the others.
"""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

from conftest import partitioned_book
from ra.config.settings import load_config
from ra.index.freshness import refresh_index
from ra.index.impact_arrays import TermImpacts
from ra.index.reader import IndexReader
from ra.index.successor import carry_over
from ra.index.warm import WarmIndex
from ra.pipeline import update
from ra.query.search import Searcher, SearchOptions
from ra.store import generations

QUERIES = ["ownership borrowing", "closures capture environment", "lifetime annotations",
           "iterator", "smart pointer Box", "zebra stripes", "ownrship", "trait object",
           "error handling Result", "unsafe", "cargo workspace", "pattern matching"]


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    return partitioned_book(tmp_path / "kb", monkeypatch)


def warm_reader(config) -> IndexReader:
    """A fully loaded long-lived reader of the current generation (its impacts loaded
    when they hold: after a full build, not after an update)."""
    reader = IndexReader.open(config.index_dir)
    reader.keep_vocabulary = True
    Searcher(reader, config).search(["ownership"])
    assert reader.resident
    return reader


def answers(reader: IndexReader, config) -> list:
    """Each query's results; scores to a double's last bits (a successor scores with the
    formula, a reader loaded afresh after an update with the impacts it computed)."""
    searcher = Searcher(reader, config)
    out = []
    for q in QUERIES:
        topic = searcher.search([q], SearchOptions(limit=20, list_only=True)).queries[0]
        out.append((q, topic.match, topic.total_matches,
                    [(r.id, pytest.approx(r.score, rel=1e-12), r.snippet)
                     for r in topic.results]))
    return out


def memory(reader: IndexReader) -> dict:
    """Everything a search reads, as a loaded-afresh reader would hold it."""
    q = reader.con.execute
    live = [o for (o,) in q("SELECT ord FROM meta ORDER BY ord").fetchall()]
    return {
        "meta": q("SELECT * FROM meta ORDER BY ord").fetchall(),
        "field_lengths": q("SELECT * FROM field_lengths ORDER BY ord").fetchall(),
        "tf_postings": q("SELECT * FROM tf_postings ORDER BY term_id, ord, field").fetchall(),
        "texts": {o: reader._store.strings(o, True, True) for o in live},
        "held chunks": reader._store.table().column("ord").to_pylist(),
        "chunks": {o: reader._store.meta(o) for o in live},
        "ids": {m.id: reader._store.ord_of(m.id) for o in live if (m := reader._store.meta(o))},
        "parents": {o: reader._store.ancestors(o) for o in live},
        "terms": dict(reader._terms), "term_info": dict(reader._term_info),
        "surface": {n: list(b) for n, b in reader._vocab.by_length.items()},
        "stats": reader.stats,
    }


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def edit_one(docs: Path) -> None:
    path = sorted(docs.glob("*.md"))[5]
    path.write_text(path.read_text() + "\n## Zebra stripes\n\nOwnership of zebra stripes.\n")


def add_one(docs: Path) -> None:
    write(docs / "zz-new.md", "# Zebras\n\nStriped horses borrow nothing; ownrship typo.\n")


def delete_one(docs: Path) -> None:
    sorted(docs.glob("*.md"))[9].unlink()


def rename_one(docs: Path) -> None:
    path = sorted(docs.glob("*.md"))[13]
    path.rename(docs / "renamed.md")


def edit_across_partitions(docs: Path) -> None:
    paths = sorted(docs.glob("*.md"))
    paths[1].write_text("# Replaced\n\nNothing about ownership remains here; lifetimes do.\n")
    paths[22].unlink()
    write(docs / "sub" / "extra.md", "# Extra\n\n## Iterators\n\nAn iterator of zebras.\n")


@pytest.mark.parametrize("change", [edit_one, add_one, delete_one, rename_one,
                                    edit_across_partitions])
@pytest.mark.parametrize("tables", [False, True])
@pytest.mark.parametrize("handed", [True, False])
def test_a_successor_equals_a_reader_loaded_afresh(project, change, tables, handed):
    """``tables``: the held reader has loaded its relations (a query excluding a word
    named them), so they are patched; else they are views, pointed at the new files.
    ``handed``: the update ran in this process and left what it changed
    (``ra.pipeline.update.Delta``); else the successor finds it in the files, as after an
    update made by another process."""
    config = load_config(project)
    held = warm_reader(config)
    if tables:
        Searcher(held, config).search(["ownership -zebra"])
    assert {r for (r,) in held.con.execute(
        "SELECT table_name FROM duckdb_tables()").fetchall()} == (
        {"meta", "tf_postings"} if tables else set())
    before = answers(held, config)
    change(project / "docs")
    assert refresh_index(config).startswith("indexed")
    current = generations.open_current(config.index_dir)
    assert update.take_delta(current.path, "gen-another") is None  # from its base only
    assert bool(update._DELTAS) is True
    if not handed:
        update._DELTAS.clear()
    successor = carry_over(held, current)
    assert successor is not None and successor.patched
    assert not update._DELTAS  # taken
    with pytest.raises(Exception, match="closed"):  # the connection moved
        held.query("SELECT 1")
    fresh = warm_reader(config)
    try:
        # the reader loaded afresh computed its impacts from the files' postings, without
        # loading them as a table (its relations are views until a query names them)
        assert fresh.impact_arrays is not None and fresh.impact_arrays.impacts.dtype == "f8"
        assert not fresh.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        assert successor.generation.path == fresh.generation.path
        assert memory(successor) == memory(fresh)
        after = answers(successor, config)
        Searcher(successor, config).search(["ownership -zebra"])  # names the relations
        # a successor reads its views rather than load them (a fresh load replaces it)
        assert {r for (r,) in successor.con.execute(
            "SELECT table_name FROM duckdb_tables()").fetchall()} == (
            {"meta", "tf_postings"} if tables else set())
        assert after == answers(fresh, config)
        assert after != before  # the change shows
        # its plain queries were scored from impacts it computed for their terms alone
        assert isinstance(successor.impact_arrays, TermImpacts)
    finally:
        successor.close()
        fresh.close()


def test_successors_chain_over_several_updates(project):
    config = load_config(project)
    reader = warm_reader(config)
    docs = project / "docs"
    for change in (edit_one, add_one, delete_one, edit_one):
        change(docs)
        refresh_index(config)
        reader = carry_over(reader, generations.open_current(config.index_dir))
        assert reader is not None
    fresh = warm_reader(config)
    try:
        assert memory(reader) == memory(fresh)
        assert answers(reader, config) == answers(fresh, config)
    finally:
        reader.close()
        fresh.close()


def test_a_closed_successor_lets_go_of_its_memory_without_the_cyclic_collector(project):
    """A successor scoring with ``TermImpacts`` is in a reference cycle (the impacts call
    back into it); closing it must still free its vocabulary, chunk store and impacts at
    once, or a daemon grows by a vocabulary an edit until the collector runs (cpp-docs:
    287 -> 901 MB after five edits)."""
    config = load_config(project)
    reader = warm_reader(config)
    edit_one(project / "docs")
    refresh_index(config)
    successor = carry_over(reader, generations.open_current(config.index_dir))
    Searcher(successor, config).search(["ownership zebra"])
    assert isinstance(successor.impact_arrays, TermImpacts)
    held = [weakref.ref(x) for x in (successor._vocab, successor._store,
                                     successor.impact_arrays)]
    gc.disable()
    try:
        successor.close()
        del reader
        assert [r() for r in held] == [None, None, None]
    finally:
        gc.enable()


def test_no_successor_for_a_generation_that_does_not_follow_this_one(project):
    config = load_config(project)
    held = warm_reader(config)
    docs = project / "docs"
    edit_one(docs)
    refresh_index(config)
    add_one(docs)
    refresh_index(config)  # two updates: the second follows the first, not held's
    newest = generations.open_current(config.index_dir)
    assert carry_over(held, newest) is None
    refresh_index(config, force=True)  # a full build follows nothing
    rebuilt = generations.open_current(config.index_dir)
    assert carry_over(held, rebuilt) is None
    assert held.query("SELECT count(*) FROM meta")[0][0] > 0  # untouched, still open
    cold = IndexReader.open(config.index_dir)  # a reader not in memory has none either
    edit_one(docs)
    refresh_index(config)
    assert carry_over(cold, generations.open_current(config.index_dir)) is None
    for r in (held, cold):
        r.close()
    for g in (newest, rebuilt):
        g.close()


def test_no_successor_while_another_thread_holds_the_reader(project):
    config = load_config(project)
    held = warm_reader(config)
    edit_one(project / "docs")
    refresh_index(config)
    generation = generations.open_current(config.index_dir)
    got = []
    with held.lock:
        other = threading.Thread(target=lambda: got.append(carry_over(held, generation)))
        other.start()
        other.join(30)
    assert got == [None]
    assert held.query("SELECT count(*) FROM meta")[0][0] > 0
    held.close()
    generation.close()


def test_warm_index_carries_the_reader_over_then_loads_afresh(project, monkeypatch):
    import ra.index.warm

    monkeypatch.setattr(ra.index.warm, "SUCCESSOR_QUIET", 0.0)
    index = WarmIndex.at(project)
    try:
        index.reader()
        assert index.wait_warm(60)
        warm = index.reader()
        assert warm.keep_vocabulary and not warm.patched
        add_one(project / "docs")
        with index.use() as reader:  # answered at once, from memory
            assert reader.patched and reader.generation.path != warm.generation.path
            hits = Searcher(reader, index.config).search(["zebras"]).queries[0].results
            assert hits[0].path == "zz-new.md"
        for _ in range(600):  # then a reader loaded afresh takes over
            current = index.reader()
            if not current.patched:
                break
            threading.Event().wait(0.05)
        assert not current.patched and current.keep_vocabulary
        assert current.generation.path == reader.generation.path
    finally:
        index.close()


def test_a_successor_computes_what_its_reader_memoised_again(project):
    """``IndexReader.memo`` holds a value for the generation read: a successor shares its
    reader's memory and reads another, so it computes the value again (``ra context``'s
    rule files: one written since the last build comes in)."""
    from ra.query.context import context_search

    config = load_config(project)
    docs = project / "docs"
    write(docs / "ownership_rules.md",
          "---\nglobs: src/**/*.rs\n---\n\n# Ownership rules\n\nBorrow, do not clone.\n")
    refresh_index(config)
    reader = warm_reader(config)
    (project / "src").mkdir()
    (project / "src" / "lib.rs").write_text(
        "// ownership and borrowing: borrowing keeps ownership\n"
        "fn borrowing(x: &String) -> usize { x.len() }  // ownership stays\n")
    ids = lambda r: [x.id for x in context_search(r, config, [project / "src" / "lib.rs"])  # noqa: E731
                     .queries[0].results]
    assert ids(reader)[0] == "book:ownership_rules.md"
    write(docs / "ownership_rules.md", "# Ownership rules\n\nBorrow, do not clone.\n")
    refresh_index(config)
    successor = carry_over(reader, generations.open_current(config.index_dir))
    assert successor is not None and successor._memo is reader._memo
    try:
        assert "book:ownership_rules.md" not in ids(successor)[:1]
    finally:
        successor.close()
