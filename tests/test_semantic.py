"""Hybrid retrieval ([semantic]) with a small deterministic embedder (``semantic_fake``):
the vectors artifact and how it is carried and filled, incremental and resumable
embedding, the scoring SQL, fusion, the search surfaces, and the path without it.

The real models are tested in ``tests/test_semantic_model.py`` (marker ``semantic``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ra.config.settings
import ra.index.freshness
from ra.errors import ConfigError
from ra.index.embedding import catch_up, embed_index
from ra.index.successor import carry_over
from ra.pipeline.vector_cache import Cache
from ra.query.bm25f import Filters
from ra.query.fusion import fuse, min_max, scale_by_max
from ra.query.search import Searcher, SearchOptions
from ra.query.semantic_sql import semantic_sql
from ra.store import generations
from ra.store.vector_state import readiness
from ra.text import embedder_runtime as runtime
from semantic_fake import FakeEmbedder

TESTS = Path(__file__).resolve().parent
FAKE = "semantic_fake:FakeEmbedder"

CARS = """# Garage

## Automobile maintenance

Change the oil of your automobile every year. A sedan needs new tyres.

## Dogs

A puppy needs walks. The hound sleeps in the garden.
"""
ERRORS = """# Troubles

## Exceptions

Raise an exception when a fault happens; a crash is worse.

## Logging

Write log lines with timestamps.
"""
GARDEN = """---
status: archived
---
# Garden

Plant roses in spring; an old sedan rusts behind the shed.
"""


def _toml(extra: str = "") -> str:
    return ('[tree.docs]\npath = "./docs"\n\n[semantic]\nenabled = true\n'
            f'backend = "{FAKE}"\nbatch_size = 2\n{extra}')


@pytest.fixture
def kb(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cars.md").write_text(CARS)
    (tmp_path / "docs" / "errors.md").write_text(ERRORS)
    (tmp_path / "docs" / "garden.md").write_text(GARDEN)
    (tmp_path / ".ra.toml").write_text(_toml())
    monkeypatch.chdir(tmp_path)
    runtime.forget()
    FakeEmbedder.calls = 0
    return tmp_path


def config_of(root: Path, **semantic):
    config = ra.config.settings.load_config(root)
    return replace(config, semantic=replace(config.semantic, **semantic)) if semantic \
        else config


def embedded(root: Path, **semantic):
    """The configuration of ``root``, its index built and every chunk embedded."""
    config = config_of(root, **semantic)
    ra.index.freshness.refresh_index(config)
    embed_index(config, lambda: runtime.embedder(config.semantic))
    return config


def current(config) -> Path:
    return config.index_dir / generations.current_name(config.index_dir)


def vectors_of(config) -> dict[int, list[float]]:
    gen = current(config)
    rows = {}
    for f in sorted((gen / "vectors").glob("*.parquet")):
        t = pq.read_table(f)
        rows.update(zip(t["ord"].to_pylist(), t["vector"].to_pylist(), strict=True))
    return rows


def search(config, query: str, **options):
    reader, _ = ra.index.freshness.open_index(config)
    try:
        return Searcher(reader, config).search([query], SearchOptions(**options))
    finally:
        reader.close()


def ids(response) -> list[str]:
    return [r.id for r in response.queries[0].results]


# --- the artifact --------------------------------------------------------------------------

def test_a_build_counts_what_lacks_a_vector_and_embedding_fills_it(kb):
    config = config_of(kb)
    ra.index.freshness.refresh_index(config)
    manifest = generations.read_manifest(current(config))
    # five sections with text of their own; documents and h1s with only subsections: none
    assert manifest["vectors"]["count"] == 0 and manifest["vectors"]["missing"] == 5
    assert not readiness(manifest, config.semantic.model_id()).ready
    report = embed_index(config, lambda: runtime.embedder(config.semantic))
    assert report.embedded == 5 and report.missing == 0 and report.generation
    manifest = generations.read_manifest(current(config))
    assert readiness(manifest, config.semantic.model_id()).ready
    rows = vectors_of(config)
    assert len(rows) == 5 and all(len(v) == 16 for v in rows.values())
    assert manifest["update"] == {"kind": "vectors", "base": manifest["update"]["base"],
                                  "partitions": []}


def test_vectors_are_queryable_with_ra_sql(kb):
    from ra.query.sql import run_sql

    config = embedded(kb)
    reader, _ = ra.index.freshness.open_index(config)
    try:
        rows = reader.query("SELECT count(*), min(len(vector)), any_value(model) FROM vectors")
    finally:
        reader.close()
    assert rows == [(5, 16, config.semantic.model_id())]
    assert run_sql  # the view is made where every view is (``IndexReader``)


def test_an_edit_embeds_only_the_changed_texts(kb):
    config = embedded(kb)
    before = vectors_of(config)
    FakeEmbedder.calls = 0
    text = CARS.replace("The hound sleeps in the garden.", "The hound sleeps in the car.")
    (kb / "docs" / "cars.md").write_text(text)
    ra.index.freshness.refresh_index(config)
    manifest = generations.read_manifest(current(config))
    # the file's three chunks are numbered anew; the unchanged section's text keeps its
    # vector (by content hash), only the edited one lacks one
    assert manifest["vectors"]["missing"] == 1
    embed_index(config, lambda: runtime.embedder(config.semantic))
    assert FakeEmbedder.calls == 1
    after = vectors_of(config)
    assert len(after) == 5
    kept = set(before) & set(after)
    assert {o for o in kept} and all(before[o] == after[o] for o in kept)


def test_unchanged_partitions_keep_their_vectors_file(kb, monkeypatch):
    monkeypatch.setattr("ra.pipeline.partitions.PART_FILES", 1)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 1)
    monkeypatch.setattr("ra.pipeline.run.PART_FILES", 1)
    config = embedded(kb)
    pinned = generations.open_current(config.index_dir)  # kept from garbage collection
    old = pinned.path
    (kb / "docs" / "errors.md").write_text(ERRORS + "\nMore about timestamps.\n")
    ra.index.freshness.refresh_index(config)
    new = current(config)
    pinned.close()
    same = [os.path.samefile(old / "vectors" / p.name, new / "vectors" / p.name)
            for p in sorted((old / "vectors").glob("*.parquet"))]
    assert sorted(same) == [False, True, True]  # only errors.md's partition is rewritten


def test_a_full_rebuild_embeds_nothing_again(kb):
    config = embedded(kb)
    FakeEmbedder.calls = 0
    ra.index.freshness.refresh_index(config, force=True)
    manifest = generations.read_manifest(current(config))
    assert manifest["vectors"]["missing"] == 0 and manifest["vectors"]["count"] == 5
    assert FakeEmbedder.calls == 0


def test_another_model_is_embedded_afresh(kb):
    embedded(kb)
    other = config_of(kb, model="another-model")
    assert not readiness(generations.read_manifest(current(other)),
                         other.semantic.model_id()).ready
    FakeEmbedder.calls = 0
    embed_index(other, lambda: runtime.embedder(other.semantic))
    assert FakeEmbedder.calls == 5
    assert {r for r in pq.read_table(current(other) / "vectors")["model"].to_pylist()} == {
        other.semantic.model_id()}


def test_a_killed_embedding_resumes_where_it_stopped(kb):
    config = config_of(kb)
    ra.index.freshness.refresh_index(config)
    batches = []

    def stop() -> bool:  # the process "dies" after two batches of two
        return len(batches) >= 2

    report = embed_index(config, lambda: runtime.embedder(config.semantic),
                         progress=lambda done, total: batches.append(done), stop=stop)
    assert report.stopped and report.embedded == 4 and report.generation is None
    assert len(list(Cache(config.index_dir, config.semantic.model_id()).folder.iterdir())) == 2
    FakeEmbedder.calls = 0
    report = embed_index(config, lambda: runtime.embedder(config.semantic))
    assert report.resumed == 4 and report.embedded == 1 and FakeEmbedder.calls == 1
    assert readiness(generations.read_manifest(current(config)),
                     config.semantic.model_id()).ready
    assert not Cache(config.index_dir, config.semantic.model_id()).folder.exists()


def test_a_partial_batch_file_of_a_killed_writer_is_ignored(kb):
    config = config_of(kb)
    ra.index.freshness.refresh_index(config)
    cache = Cache(config.index_dir, config.semantic.model_id())
    cache.folder.mkdir(parents=True)
    (cache.folder / ".batch-1-1.parquet").write_bytes(b"PAR1 half written")
    (cache.folder / "batch-2-1.parquet").write_bytes(b"not parquet at all")
    report = embed_index(config, lambda: runtime.embedder(config.semantic))
    assert report.embedded == 5 and report.resumed == 0


def test_one_process_embeds_an_index_at_a_time(kb):
    from ra.index.embedding import embed_lock

    config = config_of(kb)
    ra.index.freshness.refresh_index(config)
    with embed_lock(config.index_dir) as held:
        assert held
        report = embed_index(config, lambda: runtime.embedder(config.semantic))
    assert report.busy and report.embedded == 0


# --- fusion ----------------------------------------------------------------------------------

def test_convex_fusion_normalises_each_side():
    fused = fuse([(1, 10.0), (2, 5.0)], [(2, 0.9), (3, 0.5), (4, 0.3)], weight=0.25,
                 floor=0.0)
    by = {f.ord: f for f in fused}
    assert by[1].score == pytest.approx(0.75)  # keyword 1.0, not a semantic candidate
    assert by[2].score == pytest.approx(0.75 * 0.5 + 0.25 * 1.0)
    assert by[3].score == pytest.approx(0.25 * (0.5 - 0.3) / 0.6)
    assert 4 not in by  # the last semantic candidate is that side's zero: no evidence
    assert [f.ord for f in fused] == [1, 2, 3]
    assert by[2].keyword == 5.0 and by[2].semantic == 0.9 and by[1].semantic is None


def test_weak_candidates_of_meaning_alone_are_dropped():
    kw, sem = [(1, 10.0), (2, 1.0)], [(3, 0.9), (4, 0.5), (2, 0.45), (5, 0.1)]
    fused = {f.ord for f in fuse(kw, sem, weight=0.5, keyword_bound=10.0)}
    # best: 1 (0.5); 3 scores 0.5 (kept), 4 0.25 (kept at the floor), 5 is the zero;
    # 2 holds a word, so it stays however low
    assert fused == {1, 2, 3, 4}
    assert {f.ord for f in fuse(kw, sem, weight=0.5, keyword_bound=10.0, floor=0.6)} == {
        1, 2, 3}


def test_weight_zero_is_keyword_order_and_one_is_semantic_order():
    kw, sem = [(1, 3.0), (2, 2.0), (3, 1.0)], [(3, 0.9), (2, 0.8), (1, 0.1)]
    assert [f.ord for f in fuse(kw, sem, weight=0.0)] == [1, 2, 3]
    assert [f.ord for f in fuse(kw, sem, weight=1.0)] == [3, 2, 1]


def test_rrf_sums_reciprocal_ranks():
    fused = fuse([(1, 9.0), (2, 1.0)], [(2, 0.5), (3, 0.4)], method="rrf", rrf_k=60,
                 weight=0.5)
    by = {f.ord: f.score for f in fused}
    assert by[2] == pytest.approx(0.5 / 62 + 0.5 / 61)
    assert by[1] == pytest.approx(0.5 / 61) and by[3] == pytest.approx(0.5 / 62)


def test_normalisations_handle_empty_and_equal_scores():
    assert min_max({}) == {} and scale_by_max({}) == {}
    assert min_max({1: 0.4, 2: 0.4}) == {1: 1.0, 2: 1.0}
    assert scale_by_max({1: 0.0}) == {1: 0.0}
    with pytest.raises(ValueError):
        fuse([], [], method="mean")


# --- the scoring query --------------------------------------------------------------------------

def test_semantic_sql_shapes():
    plain = semantic_sql(384, Filters(), [], 100)
    assert plain.text == (
        "SELECT v.ord, array_inner_product(v.vector, $q::FLOAT[384]) AS sim FROM "
        "sem_vectors v JOIN meta m ON m.ord = v.ord WHERE m.status IS DISTINCT FROM "
        "'archived' ORDER BY sim DESC, v.ord LIMIT $p0")
    assert plain.params == {"p0": 100}
    negated = semantic_sql(16, Filters(trees=("docs",)), [7, 3], 5)
    assert negated.text.startswith("WITH tainted AS (SELECT DISTINCT ord FROM tf_postings "
                                   "WHERE term_id = ANY($p0::INTEGER[]))")
    assert "v.ord NOT IN (SELECT ord FROM blocked)" in negated.text
    assert negated.params["p0"] == [3, 7] and "docs" in negated.params.values()


def test_the_coarse_stage_picks_the_nearest_unarchived_projections():
    import numpy as np

    from ra.index.vector_tables import Resident

    full = np.array([[1, 0, 0], [1, 0.1, 0], [0, 1, 0], [0.9, 0.2, 0]], np.float32)
    held = Resident.empty(3, 2).add(Resident(
        np.array([5, 9, 2, 7]), np.array([0, 0, 1, 1], np.int32),
        np.array([False, True, False, False]), full, full[:, :2].copy()))

    def best(q, n, include_archived):
        return sorted(held.ords[held.best(q, n, include_archived)].tolist())

    assert best([1, 0], 2, include_archived=False) == [5, 7]
    assert best([1, 0], 2, include_archived=True) == [5, 9]
    assert best([1, 0], 10, include_archived=False) == [2, 5, 7]
    held = held.drop([0])
    assert best([1, 0], 1, include_archived=True) == [7]


def test_the_exact_stage_orders_like_the_sql():
    """Best first, ties by ord, archived rows out unless asked for, ``k`` at most."""
    import numpy as np

    from ra.index.vector_tables import Resident

    full = np.array([[0, 1], [1, 0], [0, 1], [0.6, 0.8], [1, 0]], np.float32)
    held = Resident(np.array([8, 3, 4, 6, 1]), np.zeros(5, np.int32),
                    np.array([False, False, False, False, True]), full)
    assert [o for o, _ in held.exact([0, 1], 2, include_archived=False)] == [4, 8]
    assert [o for o, _ in held.exact([1, 0], 2, include_archived=False)] == [3, 6]
    assert [o for o, _ in held.exact([1, 0], 2, include_archived=True)] == [1, 3]
    got = held.exact([1, 0], 9, include_archived=False, rows=np.array([0, 3, 4]))
    assert got == [(6, pytest.approx(0.6)), (8, 0.0)]
    # ties at the k-th score keep the lowest ords, as ``ORDER BY sim DESC, v.ord`` does
    assert [o for o, _ in held.exact([0, 1], 1, include_archived=False)] == [4]


# --- searching -------------------------------------------------------------------------------

def test_meaning_finds_what_shares_no_word_with_the_query(kb):
    config = embedded(kb)
    assert ids(search(config, "vehicle", semantic=False)) == []
    response = search(config, "vehicle")
    topic = response.queries[0]
    assert topic.match == "semantic" and response.notes == []
    assert topic.results[0].id == "docs:cars.md#automobile-maintenance"


def test_words_still_rank_first_when_they_match(kb):
    config = embedded(kb)
    response = search(config, "timestamps")
    assert response.queries[0].match == "all"
    assert ids(response)[0] == "docs:errors.md#logging"


def test_fused_scores_keep_filters_and_exclusions(kb, monkeypatch):
    monkeypatch.setattr("ra.query.fusion.FLOOR", 0.0)  # every candidate of meaning
    config = embedded(kb)
    # garden.md is archived: its sedan is no answer unless asked for
    assert "docs:garden.md" not in {i.split("#")[0] for i in ids(search(config, "automobile"))}
    assert "docs:garden.md" in {i.split("#")[0] for i in ids(
        search(config, "automobile", include_archived=True, limit=10, cutoff_ratio=0.0))}
    assert all(i.startswith("docs:errors.md") for i in ids(search(config, "vehicle crash",
                                                                  path="errors.md")))
    # a word the query excludes excludes its chunks (and their parents) from the
    # semantic side too
    found = ids(search(config, "vehicle -oil", cutoff_ratio=0.0, limit=10))
    assert found and not {"docs:cars.md#automobile-maintenance", "docs:cars.md#garage",
                          "docs:cars.md"} & set(found)


def test_explain_shows_both_scores(kb):
    config = embedded(kb)
    explain = search(config, "automobile oil", explain=True).queries[0].explain
    sem = explain["semantic"]
    assert sem["fusion"] == "convex" and sem["weight"] == config.semantic.weight
    assert sem["query_text"] == "automobile oil" and "sem_vectors" in sem["sql"]
    first = sem["scores"][0]
    assert first["id"] == "docs:cars.md#automobile-maintenance"
    assert first["keyword"] > 0 and 0 < first["semantic"] <= 1.0


def test_rrf_is_configurable(kb):
    config = embedded(kb, fusion="rrf")
    first = search(config, "vehicle").queries[0].results[0]
    # every candidate of rank fusion scores above zero, so the sections aggregate
    assert "docs:cars.md#automobile-maintenance" in (first.id, *first.constituents)


def test_not_ready_answers_with_keywords_and_says_so(kb):
    config = config_of(kb)
    response = search(config, "automobile")
    assert response.queries[0].match == "all"
    assert response.notes == ["semantic: vectors not ready (no chunk embedded yet (5 to "
                              "embed)); answered with keywords alone"]
    assert response.to_dict()["notes"] == response.notes


def test_without_the_extra_the_search_says_how_to_install_it(kb):
    config = embedded(kb)
    broken = replace(config, semantic=replace(config.semantic, backend="auto"))
    # the same vectors (model id), but no backend importable here: block both
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "sentence_transformers", None)
        mp.setitem(sys.modules, "fastembed", None)
        mp.setattr("importlib.util.find_spec", lambda name, *a: None)
        runtime.forget()
        response = search(broken, "vehicle")
    assert ids(response) == []
    assert "pip install 'ra[semantic]'" in response.notes[0]
    assert response.notes[0].endswith("answered with keywords alone")


def test_multi_topic_budgets_and_aggregation_work_on_fused_scores(kb):
    config = embedded(kb)
    response = search(config, "vehicle", max_tokens=30)
    assert response.tokens_used <= 30
    two = Searcher
    reader, _ = ra.index.freshness.open_index(config)
    try:
        answer = two(reader, config).search(["vehicle", "automobile"], SearchOptions())
    finally:
        reader.close()
    first, second = answer.queries
    assert first.results and second.results[0].seen_in == "vehicle"


@pytest.mark.parametrize("coarse", [False, True])
def test_a_long_lived_reader_scores_like_a_short_lived_one(kb, monkeypatch, coarse):
    """In memory (NumPy, for a plain topic; float32 products summed in another order
    than DuckDB's, hence ``approx``) and through DuckDB over its Arrow table (a topic
    with an excluded word), a long-lived reader ranks as a command's own reader does."""
    import ra.index.vector_tables as tables

    if coarse:
        monkeypatch.setattr(tables, "COARSE_MIN_ROWS", 1)
        monkeypatch.setattr(tables, "COARSE_DIMS", 4)
        monkeypatch.setattr(tables, "COARSE_FACTOR", 100)
    early = _count_early(monkeypatch)
    config = embedded(kb)
    short, _ = ra.index.freshness.open_index(config)
    long, _ = ra.index.freshness.open_index(config)
    long.keep_vocabulary = True
    try:
        for query in ("vehicle", "automobile crash", "dogs -garden"):
            a = Searcher(short, config).search([query], SearchOptions(limit=10))
            b = Searcher(long, config).search([query], SearchOptions(limit=10))
            assert [r.id for r in a.queries[0].results] == \
                   [r.id for r in b.queries[0].results], query
            assert [r.score for r in b.queries[0].results] == pytest.approx(
                [r.score for r in a.queries[0].results], abs=1e-6), query
        assert long.semantic.coarse is coarse and long.semantic.resident
        assert not short.semantic.resident
        # the two plain queries were scored on the query thread, the exclusion after
        assert early == [2]
    finally:
        short.close()
        long.close()


def _count_early(monkeypatch) -> list[int]:
    """How many topics ``ra.query.semantic`` scored on the query thread (``_Early``)."""
    import ra.query.semantic as semantic

    count, call = [0], semantic._Early.__call__

    def counted(self, vector):
        count[0] += 1
        return call(self, vector)

    monkeypatch.setattr(semantic._Early, "__call__", counted)
    return count


def _held_through_an_edit(kb: Path):
    """``(config, reader)``: a long-lived reader that held the vectors, carried over to
    the update that edits errors.md (whose new chunk has no vector yet)."""
    from ra.index.reader import IndexReader

    config = embedded(kb)
    reader = IndexReader.open(config.index_dir)
    reader.keep_vocabulary = True
    Searcher(reader, config).search(["vehicle"], SearchOptions())
    (kb / "docs" / "errors.md").write_text(ERRORS.replace("timestamps", "a sedan's clock"))
    ra.index.freshness.refresh_index(config, tidy=False)
    reader = carry_over(reader, generations.open_current(config.index_dir))  # the update
    assert reader is not None
    return config, reader


@pytest.mark.parametrize("coarse", [False, True])
def test_a_carried_over_reader_patches_its_vectors(kb, monkeypatch, coarse):
    import ra.index.vector_tables as tables
    from ra.index.reader import IndexReader

    if coarse:  # the patched vectors are projected too
        monkeypatch.setattr(tables, "COARSE_MIN_ROWS", 1)
        monkeypatch.setattr(tables, "COARSE_DIMS", 4)
    early = _count_early(monkeypatch)
    config, reader = _held_through_an_edit(kb)
    assert search(config, "vehicle").notes  # its new chunk has no vector yet
    embed_index(config, lambda: runtime.embedder(config.semantic))
    reader = carry_over(reader, generations.open_current(config.index_dir))  # its vectors
    assert reader is not None and reader.manifest["update"]["kind"] == "vectors"
    fresh = IndexReader.open(config.index_dir)
    try:
        for query in ("vehicle clock", "vehicle clock -oil"):  # in memory; DuckDB
            a = Searcher(reader, config).search([query], SearchOptions(limit=10))
            b = Searcher(fresh, config).search([query], SearchOptions(limit=10))
            assert [r.id for r in a.queries[0].results] == \
                   [r.id for r in b.queries[0].results], query
        assert early[0] > 0  # in memory, on the query thread
    finally:
        reader.close()
        fresh.close()


def test_a_rewritten_vectors_file_is_read_again_though_its_inode_is_reused(kb, monkeypatch):
    """A vectors file written anew may get the inode number of the file it replaced (the
    file system reuses the number of a file deleted a moment before): a long-lived
    reader that knew partitions by inode kept the old vectors, and its searches put
    another page first (a fresh clone's ``make test`` failed the test above on it, under
    load; reproduced 2 times in 130 runs). Here every file reports one inode, size and
    time: the generation that wrote a file, from the manifest, still tells them apart."""
    from types import SimpleNamespace

    import ra.index.vector_tables as tables
    from ra.index.reader import IndexReader

    same = SimpleNamespace(st_dev=1, st_ino=2, st_size=3, st_mtime_ns=4)
    monkeypatch.setattr(tables, "os", SimpleNamespace(stat=lambda path: same))
    config, reader = _held_through_an_edit(kb)
    Searcher(reader, config).search(["vehicle"], SearchOptions())  # holds its vectors
    embed_index(config, lambda: runtime.embedder(config.semantic))
    reader = carry_over(reader, generations.open_current(config.index_dir))  # its vectors
    fresh = IndexReader.open(config.index_dir)
    try:
        a = Searcher(reader, config).search(["vehicle clock"], SearchOptions(limit=10))
        b = Searcher(fresh, config).search(["vehicle clock"], SearchOptions(limit=10))
        assert ids(a) == ids(b) == ["docs:errors.md#logging"]
    finally:
        reader.close()
        fresh.close()


def test_a_command_line_search_embeds_a_few_changed_chunks_first(kb):
    config = embedded(kb)
    (kb / "docs" / "dogs.md").write_text("# Canines\n\nA puppy and a hound.\n")
    reader, _ = ra.index.freshness.open_index(config)
    state = readiness(reader.manifest, config.semantic.model_id())
    assert state.missing == 1
    reader = catch_up(config, reader)
    try:
        assert readiness(reader.manifest, config.semantic.model_id()).ready
        found = Searcher(reader, config).search(["dog"], SearchOptions())
        assert found.queries[0].results[0].id == "docs:dogs.md#canines"
    finally:
        reader.close()


# --- configuration and surfaces -------------------------------------------------------------------

def test_semantic_settings_are_validated(tmp_path):
    from ra.config.settings import parse_config_text

    raw = parse_config_text('[semantic]\nenabled = true\nweight = 0.4\nfusion = "rrf"\n',
                            tmp_path / ".ra.toml")
    assert raw["semantic"] == {"enabled": True, "weight": 0.4, "fusion": "rrf"}
    for bad, key in (("weight = 1.5", "semantic.weight"),
                     ('fusion = "max"', "semantic.fusion"),
                     ('backend = "torch"', "semantic.backend"),
                     ("enabled = 1", "semantic.enabled")):
        with pytest.raises(ConfigError) as err:
            parse_config_text(f"[semantic]\n{bad}\n", tmp_path / ".ra.toml")
        assert err.value.key == key and err.value.line == 2
    raw = parse_config_text('[semantic]\nwieght = 0.2\n', tmp_path / ".ra.toml")
    assert "did you mean 'weight'" in str(raw["warnings"][0])


def test_semantic_settings_do_not_shape_the_keyword_index(kb):
    a = config_of(kb)
    b = config_of(kb, enabled=False, model="x", weight=0.9)
    assert a.config_hash() == b.config_hash()


def test_cli_search_semantic_flags(kb, capsys):
    from ra.cli.app import main

    embedded(kb)
    assert main(["search", "vehicle", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["queries"][0]["match"] == "semantic" and "notes" not in data
    assert main(["search", "vehicle", "--no-semantic", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queries"][0]["results"] == []
    assert main(["search", "vehicle", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "semantic: " in out and "keyword -, semantic 0." in out


def test_cli_update_embeds_with_a_summary(kb, capsys):
    from ra.cli.app import main

    assert main(["update"]) == 0
    err = capsys.readouterr().err
    assert "semantic: embedded 5 chunks" in err
    assert main(["status"]) == 0
    assert "semantic: semantic_fake:FakeEmbedder/all-MiniLM-L6-v2#t1: 5 chunks embedded" in \
        capsys.readouterr().out


def test_cli_note_when_not_ready(kb, capsys, monkeypatch):
    from ra.cli.app import main

    monkeypatch.setattr("ra.index.embedding.INLINE", 0)  # too many to embed before answering
    assert main(["search", "automobile", "--list"]) == 0
    captured = capsys.readouterr()
    assert "docs:cars.md#automobile-maintenance" in captured.out
    assert "semantic: vectors not ready" in captured.err


# --- without the extra, nothing changes -----------------------------------------------------------

def test_disabled_semantic_leaves_index_and_answers_as_they_were(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cars.md").write_text(CARS)
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    plain = ra.config.settings.load_config(tmp_path)
    ra.index.freshness.refresh_index(plain)
    manifest = generations.read_manifest(current(plain))
    assert "vectors" not in manifest and not (current(plain) / "vectors").exists()
    before = search(plain, "automobile oil", explain=False).to_dict()
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n\n[semantic]\n'
                                       'enabled = false\n')
    off = ra.config.settings.load_config(tmp_path)
    assert search(off, "automobile oil").to_dict() == before


#: The modules of the semantic side, in the layers they belong to.
SEMANTIC = {"ra.config.semantic", "ra.text.embedding_text", "ra.text.embedders",
            "ra.text.embedder_runtime", "ra.store.vector_state", "ra.pipeline.vectors",
            "ra.pipeline.vector_cache", "ra.index.embedding", "ra.index.embedding_thread",
            "ra.index.vector_tables", "ra.query.semantic", "ra.query.semantic_sql",
            "ra.query.fusion"}


def test_the_semantic_modules_exist():
    import importlib.util

    assert all(importlib.util.find_spec(m) for m in SEMANTIC)


PROBE = ("import sys, contextlib, io\nfrom ra.cli.app import main\n"
         "with contextlib.redirect_stdout(io.StringIO()), "
         "contextlib.redirect_stderr(io.StringIO()):\n    main(sys.argv[1:])\n"
         f"print(' '.join(sorted(m for m in sys.modules if m in {sorted(SEMANTIC)!r} "
         "or m.split('.')[0] in ('torch', 'sentence_transformers', 'fastembed', "
         "'onnxruntime', 'numpy', 'pyarrow'))))\n")


def _modules(cwd: Path, *argv: str, env: dict | None = None) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, check=True,
                         capture_output=True, text=True, env=env).stdout
    return set(out.split())


def test_keyword_search_imports_nothing_of_the_semantic_side(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nalpha words here\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    subprocess.run([sys.executable, "-c", "from ra.cli.app import main; main(['update'])"],
                   cwd=tmp_path, check=True, capture_output=True)
    # the settings dataclass is all a configuration holds
    assert _modules(tmp_path, "search", "alpha") <= {"ra.config.semantic"}
    assert _modules(tmp_path, "--help") <= {"ra.config.semantic"}


def test_semantic_search_imports_no_pyarrow(kb):
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    subprocess.run([sys.executable, "-c", "from ra.cli.app import main; main(['update'])"],
                   cwd=kb, check=True, capture_output=True, env=env)
    found = _modules(kb, "search", "vehicle", env=env)
    assert "ra.query.semantic" in found and "pyarrow" not in found


# --- long-lived processes embed in the background ------------------------------------------

def test_a_warm_index_embeds_in_the_background_and_says_so_meanwhile(kb):
    import threading

    from ra.index.warm import WarmIndex

    gate = threading.Event()
    embed = FakeEmbedder.embed_documents

    def slow(self, texts):
        gate.wait(10)  # the first search comes while the thread embeds
        return embed(self, texts)

    config = config_of(kb)
    index = WarmIndex(config, watch=False)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(FakeEmbedder, "embed_documents", slow)
            with index.use() as reader:
                first = Searcher(reader, index.config).search(["vehicle"], SearchOptions())
            assert first.notes and "answered with keywords alone" in first.notes[0]
            assert first.queries[0].results == []
            gate.set()
            index._embedding.thread.join(10)
        assert index._embedding.last.embedded == 5
        with index.use() as reader:  # the published vectors are picked up
            later = Searcher(reader, index.config).search(["vehicle"], SearchOptions())
        assert later.notes == []
        assert later.queries[0].results[0].id == "docs:cars.md#automobile-maintenance"
    finally:
        index.close()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_search_fuses_meaning_and_can_turn_it_off(kb, anyio_backend):
    from mcp import Client

    from ra.serve.mcp import create_server

    embedded(kb)
    async with Client(create_server(kb)) as client:
        for _ in range(50):  # the server loads the model on its thread; meanwhile: keywords
            fused = await client.call_tool("search", {"queries": "vehicle"})
            if not fused.structured_content.get("notes"):
                break
            assert "answered with keywords alone" in fused.content[0].text
            await __import__("anyio").sleep(0.1)
        words = await client.call_tool("search", {"queries": "vehicle", "semantic": False})
    topic = fused.structured_content["queries"][0]
    assert topic["match"] == "semantic"
    assert topic["results"][0]["id"] == "docs:cars.md#automobile-maintenance"
    assert words.structured_content["queries"][0]["results"] == []


def _module(name: str, **attrs):
    return type(name, (), attrs)()


def _pooling(config: dict):
    return _module("Pooling", get_config_dict=lambda self: config)


@pytest.mark.parametrize(("modules", "traced"), [
    (["Transformer", {"pooling_mode": "mean"}, "Normalize"], True),
    (["Transformer", {"pooling_mode": "mean"}], True),
    (["Transformer", {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}],
     True),  # sentence-transformers before 6
    (["Transformer", {"pooling_mode": "cls"}, "Normalize"], False),
    (["Transformer", {"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}],
     False),
    (["Transformer", {"pooling_mode": "mean"}, "Dense", "Normalize"], False),
    (["CLIPModel"], False),
])
def test_only_a_transformer_with_mean_pooling_is_traced_for_queries(modules, traced):
    """``ra.text.query_trace`` traces what its pooling reproduces; anything else is
    embedded eagerly (the real model's trace is checked in test_semantic_model)."""
    from ra.text.query_trace import _traceable

    built = [_module(m, auto_model=object()) if m == "Transformer" else
             _pooling(m) if isinstance(m, dict) else _module(m) for m in modules]
    assert _traceable(built) is traced
