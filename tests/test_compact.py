"""The compact artifacts (``ra.pipeline.compact``): a one-shot reader that scores from
them reads the same relations, and answers the same, as one that joins the partitioned
artifacts, after a full build and after incremental updates that leave some partitions
stale.

The knowledge base is 24 chapters of the Rust book (``../shared/corpora``, MIT/Apache-2.0,
see its LICENSES.md), in partitions of 4 files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from conftest import partitioned_book
from ra.config.settings import load_config
from ra.errors import IndexStateError
from ra.index.freshness import refresh_index
from ra.index.reader import HELD, IndexReader
from ra.index.relations import RELATIONS
from ra.pipeline.impacts import parameters, record
from ra.query.search import Searcher, SearchOptions
from ra.store import generations
from ra.store.layout import COMPACT, MANIFEST, artifact_path

QUERIES = ["ownership borrowing", "closures capture environment", "lifetime annotations",
           "iterator", "zebra stripes", "ownrship", "\"smart pointer\"", "cargo -workspace",
           "borrow-checker errors", "std::iter adapters"]


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    return partitioned_book(tmp_path / "kb", monkeypatch)


def relations(reader: IndexReader) -> dict[str, list]:
    q = reader.con.execute
    return {"meta": q("SELECT * FROM meta ORDER BY ord").fetchall(),
            **{name: q(f"SELECT * FROM {name} ORDER BY term_id, ord, field").fetchall()
               for name in ("tf_postings", "phrase_postings")}}


def partitioned(reader: IndexReader) -> dict[str, list]:
    """The relations as the partitioned artifacts define them."""
    body = {name: body for name, body, _ in RELATIONS}
    q = reader.con.execute
    return {"meta": q(f"SELECT * FROM ({body['meta']}) ORDER BY ord").fetchall(),
            **{name: q(f"SELECT * FROM ({body[name]}) ORDER BY term_id, ord, field")
               .fetchall() for name in ("tf_postings", "phrase_postings")}}


def answers(reader: IndexReader, config, *, quantized: bool = False,
            unrounded: bool = False) -> list:
    """Each query's total and results; ``quantized``: the scores of a reader that scores
    plain queries with the index's impacts, to be equal within their step;
    ``unrounded``: with impacts it computed itself, equal to a double's last bits."""
    searcher = Searcher(reader, config)
    out = []
    for q in QUERIES:
        topic = searcher.search([q], SearchOptions(limit=20)).queries[0]
        out.append((q, topic.total_matches,
                    [(r.id, pytest.approx(r.score, abs=1e-3) if quantized else
                      pytest.approx(r.score, rel=1e-12) if unrounded else r.score,
                      r.snippet) for r in topic.results]))
    return out


def without_compact(config) -> list:
    """The answers of a reader of the current generation told it has no compact files."""
    gen = generations.open_current(config.index_dir)
    gen.manifest = {k: v for k, v in gen.manifest.items() if k != "compact"}
    with IndexReader(gen) as reader:
        return answers(reader, config)


def test_a_full_build_writes_compact_artifacts_read_in_place_of_the_partitions(project):
    config = load_config(project)
    gen = generations.open_current(config.index_dir)
    avg = gen.manifest["stats"]["avg_length"]
    assert gen.manifest["compact"] == {"stale": [], "impacts": record(parameters(config), avg)}
    assert all((gen.path / artifact_path(name)).is_file() for name in COMPACT)
    with IndexReader(gen) as reader:
        sql = reader.con.execute("SELECT sql FROM duckdb_views() WHERE view_name = "
                                 "'tf_postings'").fetchone()[0]
        assert "hot_postings.parquet" in sql and "/postings/" not in sql
        got = relations(reader)
        assert len(got["tf_postings"]) > 10_000 and len(got["meta"]) > 100
        assert got == partitioned(reader)
        assert answers(reader, config, quantized=True) == without_compact(config)


def _edit(docs: Path) -> None:
    paths = sorted(docs.glob("*.md"))
    paths[1].write_text("# Replaced\n\nNothing about ownership remains here; zebra stripes.\n")
    paths[22].unlink()
    (docs / "sub").mkdir()
    (docs / "sub" / "extra.md").write_text("# Extra\n\n## Iterators\n\nAn iterator of zebras.\n")


def _empty_a_partition(docs: Path) -> None:
    for path in sorted(docs.glob("*.md"))[8:12]:
        path.unlink()


def test_updates_read_their_stale_partitions_from_the_partition_files(project):
    config = load_config(project)
    first = generations.open_current(config.index_dir)
    for change in (_edit, _empty_a_partition):
        change(project / "docs")
        assert refresh_index(config).startswith("indexed")
        gen = generations.open_current(config.index_dir)
        assert gen.manifest["update"]["kind"] == "incremental"
        assert gen.manifest["compact"]["stale"]
        for name in COMPACT:  # linked, not written again
            assert (gen.path / artifact_path(name)).stat().st_ino == \
                (first.path / artifact_path(name)).stat().st_ino
        with IndexReader(gen) as reader:
            assert relations(reader) == partitioned(reader)
            assert answers(reader, config, quantized=True) == without_compact(config)
        resident = IndexReader(generations.open_current(config.index_dir),
                               keep_vocabulary=True)
        with resident:
            assert resident.resident
            assert_store_is_the_partitions(resident)
    # the partition emptied by the second change is stale and gone: its rows are in
    # neither relation
    assert 2 in gen.manifest["compact"]["stale"] and 2 not in gen.manifest["partitions"]


@pytest.mark.parametrize("name", ["hot_postings.parquet", "hot_store.arrow"])
def test_a_truncated_compact_file_is_a_damaged_index(project, name):
    config = load_config(project)
    gen = generations.open_current(config.index_dir)
    path = gen.path / name
    data = path.read_bytes()
    path.unlink()  # a new file: the generation's others stay as they are
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexStateError, match=name):
        IndexReader(generations.open_current(config.index_dir))


def test_a_chunk_store_file_of_another_shape_is_a_damaged_index(project):
    """Framed like Arrow IPC but not the store's columns: found when the long-lived
    reader maps it, reported as a damaged index (``ra update`` rebuilds it)."""
    config = load_config(project)
    gen = generations.open_current(config.index_dir)
    path = gen.path / artifact_path("hot_store")
    path.unlink()
    other = pa.table({"x": pa.array([1], pa.int8())})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, other.schema) as w:
        w.write_table(other)
    reader = IndexReader.open(config.index_dir)
    reader.keep_vocabulary = True
    with reader, pytest.raises(IndexStateError, match="damaged.*hot_store.arrow"):
        reader.lookup_terms(["ownership"])  # the first use loads the index in memory


def test_an_index_without_compact_artifacts_is_read_from_its_partitions(project):
    """An index built before the compact artifacts existed has no manifest entry."""
    config = load_config(project)
    gen = generations.open_current(config.index_dir)
    manifest = json.loads((gen.path / MANIFEST).read_text())
    del manifest["compact"]
    (gen.path / MANIFEST).unlink()
    (gen.path / MANIFEST).write_text(json.dumps(manifest))
    for name in COMPACT:
        (gen.path / artifact_path(name)).unlink()
    with IndexReader(generations.open_current(config.index_dir)) as reader:
        assert relations(reader) == partitioned(reader)
        assert answers(reader, config)[0][2]
    with IndexReader(generations.open_current(config.index_dir), keep_vocabulary=True) as reader:
        assert reader.resident  # its ChunkStore loaded from the partitions, in memory
        assert_store_is_the_partitions(reader)


def test_a_long_lived_reader_loads_its_tables_from_the_compact_artifacts(project):
    config = load_config(project)
    for change in (None, _edit):
        if change:
            change(project / "docs")
            assert refresh_index(config).startswith("indexed")
        reader = IndexReader.open(config.index_dir)
        reader.keep_vocabulary = True
        with reader:
            got = answers(reader, config, quantized=change is None,
                          unrounded=change is not None)
            assert reader.resident
            # after an update the averages moved: the build's impacts no longer hold,
            # and the reader computes its own, unrounded, from tf_postings
            assert reader.impacts(Searcher(reader, config).weights())
            kind = reader.impact_arrays.impacts.dtype.name
            assert kind == ("uint16" if change is None else "float64")
            kinds = dict(reader.con.execute(
                "SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = ?",
                [HELD]).fetchall())
            assert {"tf_postings"} <= set(kinds)
            assert relations(reader) == partitioned(reader)
            assert got == without_compact(config)
            assert_store_is_the_partitions(reader)


def assert_store_is_the_partitions(reader: IndexReader) -> None:
    """The long-lived reader's ``ChunkStore`` (memory-mapped from ``hot_store.arrow``,
    patched for stale partitions) holds what the partitioned artifacts define: every
    live chunk's row (parent ord and text included), readable by ord and by id."""
    from ra.index.chunkstore import STORE_COLUMNS, ChunkMeta
    from ra.index.relations import store_sql

    store = reader._store
    body = {name: body for name, body, _ in RELATIONS}
    want = reader.con.sql(store_sql(body["meta"], body["texts"]) + " ORDER BY m.ord"
                          ).to_arrow_table()
    assert store.table().select(list(STORE_COLUMNS)).to_pylist() == want.to_pylist()
    for row in want.to_pylist()[::7]:
        meta = ChunkMeta(*(row[c] for c in ChunkMeta._fields))
        assert store.meta(row["ord"]) == meta and store.meta_by_id(row["id"]) == meta
        assert store.strings(row["ord"], True, True) == (row["text"], row["plain"])
    assert store.lineage([r["ord"] for r in want.to_pylist()]) == {
        r["ord"]: ChunkMeta(*(r[c] for c in ChunkMeta._fields)) for r in want.to_pylist()}


@pytest.mark.parametrize("rows", [1, 60, 10**6])
def test_the_chunk_store_holds_every_text_in_batches_of_whole_partitions(tmp_path,
                                                                         monkeypatch, rows):
    """``write_store`` copies each batch's texts into one buffer, a partition at a time:
    batches of one partition (a partition over the limit is a batch of its own), of a
    few, or of all, hold the partitions' rows and texts."""
    import ra.pipeline.compact as compact

    monkeypatch.setattr(compact, "STORE_BATCH", rows)
    config = load_config(partitioned_book(tmp_path / "kb", monkeypatch))
    gen = generations.open_current(config.index_dir)
    with pa.memory_map(str(gen.path / artifact_path("hot_store"))) as source:
        batches = pa.ipc.open_file(source).num_record_batches
    assert batches == 6 if rows == 1 else batches == 1 if rows > 10**5 else 1 < batches < 6
    with IndexReader(gen, keep_vocabulary=True) as reader:
        assert reader.resident
        assert_store_is_the_partitions(reader)


def test_texts_are_copied_from_sliced_arrays():
    from ra.pipeline.compact import _Texts

    words = pa.array(["", "ab", "ünï", "c", None, "xyz"]).fill_null("")
    texts = _Texts(5, len("abünïcxyz".encode()))
    texts.add(words.slice(0, 3))
    texts.add(words.slice(0, 0))
    texts.add(pa.chunked_array([words.slice(3, 1), words.slice(5, 1)]))
    assert texts.array().to_pylist() == ["", "ab", "ünï", "c", "xyz"]
    short = _Texts(2, 1)
    short.add(pa.array(["a"]))
    with pytest.raises(ValueError, match="another size"):
        short.array()


def test_the_chunk_store_is_memory_mapped_not_loaded(project):
    """Mapping ``hot_store.arrow`` allocates nothing for its columns: the text and the
    metadata stay in the file's pages."""
    from ra.index.chunkstore import ChunkStore

    gen = generations.open_current(load_config(project).index_dir)
    path = gen.path / artifact_path("hot_store")
    before = pa.total_allocated_bytes()
    store = ChunkStore.mapped(path)
    table = store.table()
    assert table.num_rows > 100 and table.nbytes > 100_000
    assert pa.total_allocated_bytes() - before < table.nbytes / 10


def test_field_lengths_are_looked_up_by_position_or_joined():
    from ra.pipeline.compact import _field_lengths
    from ra.pipeline.partitions import Part

    def part(ords: list[int]) -> Part:
        p = Part.empty(0)
        p.lengths = pa.table({"ord": ords, "title": [o * 10 for o in ords],
                              "tags": [1] * len(ords), "path": [2] * len(ords),
                              "body": [o + 100 for o in ords]})
        return p

    ords = pa.array([2, 0, 5, 2], pa.int32())
    fields = pa.array([3, 0, 0, 1], pa.int8())
    numbered = _field_lengths([part([0, 1, 2]), part([3, 4, 5])])  # a full build
    holes = _field_lengths([part([0, 2]), part([5, 9])])  # after an update
    assert numbered(ords, fields).to_pylist() == [102, 0, 50, 1]
    assert holes(ords, fields).to_pylist() == [102, 0, 50, 1]


@pytest.mark.parametrize("row_group", [1, 5, 64])
def test_a_partitions_postings_are_read_a_range_of_terms_at_a_time(tmp_path, row_group):
    """``write_compact`` reads each partition's postings file a row group at a time, as
    the term ranges reach it (``_Postings``): the ranges, in order, give every row once,
    each range the rows of its terms alone, whether a term's rows span row groups or a
    range falls between two terms or past the last."""
    import random

    import pyarrow.parquet as pq

    from ra.pipeline.compact import _Postings
    from ra.store.artifacts import POSTINGS

    rng = random.Random(7)
    rows = sorted((t, o, f) for t in rng.sample(range(40), 15)
                  for o in rng.sample(range(9), rng.randint(1, 6)) for f in range(2))
    table = pa.table({"term_id": [r[0] for r in rows], "ord": [r[1] for r in rows],
                      "field": [r[2] for r in rows], "tf": list(range(len(rows))),
                      "positions": [[1]] * len(rows)}).cast(POSTINGS)
    empty = tmp_path / "empty.parquet"
    pq.write_table(POSTINGS.empty_table(), empty)
    full = tmp_path / "part.parquet"
    pq.write_table(table, full, row_group_size=row_group)
    for path, want in ((full, table), (empty, POSTINGS.empty_table())):
        source, lo, pieces = _Postings(path), 0, []
        for hi in (3, 4, 11, 12, 25, 26, 39, 50, 60):
            piece = source.below(hi)
            assert all(lo <= t < hi for t in piece["term_id"].to_pylist())
            pieces.append(piece)
            lo = hi
        got = pa.concat_tables(pieces)
        assert got.to_pylist() == want.select(_Postings.COLUMNS).to_pylist()


HALVES = [0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 1.4999999999999998, 2.5000000000000004,
          65534.5, 65534.49999999999, 1e-300, 3.0, -0.5, -2.5, -1.4999999999999998]


def test_impacts_are_rounded_as_duckdb_rounds():
    """The build rounds impacts in NumPy (``round_half_away``); they must be DuckDB's
    ``round`` (what ``impacts_sql`` gives a reader): halves away from zero, where NumPy's
    own ``round`` takes them to even (0.5 -> 0, 2.5 -> 2), and no error at the last bit
    below a half (``floor(x + 0.5)`` rounds 0.49999999999999994 up)."""
    import duckdb
    import numpy as np

    from ra.pipeline.impacts import round_half_away

    want = [duckdb.sql(f"SELECT round({x!r}::DOUBLE)").fetchall()[0][0] for x in HALVES]
    got = round_half_away(np.array(HALVES)).tolist()
    assert got == want and got[1:4] == [1.0, 2.0, 3.0] and got[4] == 0.0


@pytest.mark.parametrize("weights", [(1.2, 0.75, (2.0, 1.5, 1.2, 1.0)),
                                     (2.0, 0.3, (5.0, 1.0, 1.0, 1.0))])
def test_impacts_computed_in_numpy_are_those_of_the_sql(weights):
    """``hot_impacts`` is computed in NumPy (``ImpactWriter``, ``rounded_impacts``):
    the rows of ``impacts_sql``, the query a reader computes them with, to the last
    value, from postings rows in term, chunk and field order; rows in another order are
    refused, not grouped wrongly."""
    import random

    import duckdb
    import numpy as np

    from ra.pipeline.impacts import Parameters, impacts_sql, rounded_impacts

    rng = random.Random(7)
    keys = sorted({(rng.randrange(300), rng.randrange(2000), rng.randrange(4))
                   for _ in range(20_000)})
    batch = pa.table({
        "term_id": pa.array([k[0] for k in keys], pa.int32()),
        "ord": pa.array([k[1] for k in keys], pa.int32()),
        "field": pa.array([k[2] for k in keys], pa.int8()),
        "tf": pa.array([rng.choice((1, 1, 1, 2, 3, 40)) for _ in keys], pa.int32()),
        "len": pa.array([rng.randrange(1, 900) for _ in keys], pa.int32())})
    w = Parameters(*weights)
    avg = {"title": 6.3, "tags": 1.7, "path": 4.1, "body": 181.9}
    con = duckdb.connect()
    con.register("batch", batch)
    want = con.execute(*impacts_sql("batch", avg, w)).fetchnumpy()
    rows = {n: batch[n].to_numpy() for n in batch.column_names}
    got = rounded_impacts(rows, avg, w)
    for name in ("term_id", "ord", "impact"):
        assert np.array_equal(got[name], want[name]), name
    assert got["impact"].dtype == np.uint16 and len(got["ord"]) > 10_000
    shuffled = {n: np.roll(a, 1) for n, a in rows.items()}
    with pytest.raises(ValueError, match="order"):
        rounded_impacts(shuffled, avg, w)
