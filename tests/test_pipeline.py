"""The indexing pipeline end to end: a hostile tree, stage invariants, artifacts, determinism."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ra.config.settings import load_config
from ra.index.freshness import open_index
from ra.pipeline import run
from ra.pipeline.analyze import analyze
from ra.pipeline.chunk import SourceDoc, chunk, docs_table
from ra.pipeline.postings import (
    field_chunks,
    indexed_chunks,
    length_sums,
    postings,
    statistics,
)
from ra.query.search import Searcher
from ra.store.artifacts import SCHEMAS
from ra.store.generations import open_current, read_fingerprints
from ra.store.layout import ARTIFACTS, FIELD_CODE, FIELDS, artifact_path
from ra.text.analysis import analyzer_for

DOCS_TOML = '[tree.docs]\npath = "./docs"\n'


def make_project(root: Path, files: dict[str, bytes | str], toml: str = DOCS_TOML,
                 home: Path | None = None):
    """Write ``files`` under ``root/docs`` and a ``.ra.toml``; return the loaded Config."""
    (root / ".ra.toml").write_text(toml)
    for rel, content in files.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    (root / "docs").mkdir(exist_ok=True)
    return load_config(root, home=home)


def search_ids(config, query: str) -> list[str]:
    reader, _ = open_index(config)
    try:
        return [r.id for r in Searcher(reader, config).search([query]).queries[0].results]
    finally:
        reader.close()


def read_artifacts(folder: Path, names=("chunks", "terms", "postings")) -> dict[str, pa.Table]:
    return {name: pq.read_table(folder / artifact_path(name)) for name in names}


# --- (a) the acceptance tree -------------------------------------------------------------

BIG_LINE = "lorem ipsum dolor sit amet " * 116_000 + "needleword trailing words\n"

ACCEPTANCE_FILES: dict[str, bytes | str] = {
    "bin.md": b"# Binary heading\n\x00\x01\x02\xff binaryword\n",
    "latin.md": "# Latin notes\n\ncafé au lait with zebraword\n".encode("latin-1"),
    "bom.md": "\ufeff# Alpha Heading\r\n\r\nalphabody words\r\n\r\n## Beta Section\r\n"
              "betabody text\r\n".encode(),
    "yaml.md": "---\ntitle: [unclosed\n---\n# Heading\nbody words yamlbodyword\n",
    "empty.md": b"",
    "big.md": BIG_LINE,
}


def acceptance_project(root: Path, *, loop: bool, home: Path | None = None):
    config = make_project(root, ACCEPTANCE_FILES, home=home)
    if loop:
        os.symlink("b.md", root / "docs" / "a.md")
        os.symlink("a.md", root / "docs" / "b.md")
    return config


def problems_about(report: run.BuildReport, rel: str) -> list[str]:
    return [p for p in report.problems if p.startswith(f"docs:{rel}:")]


def check_acceptance(config, report: run.BuildReport) -> None:
    """Everything the acceptance tree must satisfy, with or without the symlink loop."""
    assert len(BIG_LINE.encode()) > 3_000_000 and BIG_LINE.count("\n") == 1
    # each problem exactly once, and no problem for the healthy files
    assert problems_about(report, "bin.md") == ["docs:bin.md: binary file skipped"]
    (latin,) = problems_about(report, "latin.md")
    assert "invalid UTF-8" in latin
    (yaml,) = problems_about(report, "yaml.md")
    assert "YAML" in yaml
    for rel in ("bom.md", "empty.md", "big.md"):
        assert problems_about(report, rel) == []
    assert len(report.problems) == len(set(report.problems))
    assert report.files == 5  # all but bin.md
    assert [cid for cid, _ in report.oversized] == ["docs:big.md"]
    # the good text of every readable file is searchable
    reader, _ = open_index(config)
    try:
        searcher = Searcher(reader, config)

        def ids(query: str) -> list[str]:
            return [r.id for r in searcher.search([query]).queries[0].results]

        assert ids("zebraword") == ["docs:latin.md#latin-notes"]
        assert ids("needleword") == ["docs:big.md"]
        assert ids("yamlbodyword") == ["docs:yaml.md#heading"]
        assert ids("alphabody") == ["docs:bom.md#alpha-heading"]
        assert ids("betabody") == ["docs:bom.md#beta-section"]
        assert ids("Beta Section") and all(i.startswith("docs:bom.md")
                                           for i in ids("Beta Section"))
        assert ids("alpha heading")
        assert ids("binaryword") == []
    finally:
        reader.close()
    # chunk ids of the BOM/CRLF file come from its headings; no CR or BOM leaks anywhere
    gen = open_current(config.index_dir)
    try:
        chunks = pq.read_table(gen.file("chunks")).to_pylist()
    finally:
        gen.close()
    ids = [c["id"] for c in chunks]
    assert [i for i in ids if i.startswith("docs:bom.md")] == [
        "docs:bom.md", "docs:bom.md#alpha-heading", "docs:bom.md#beta-section"]
    assert {c["title"] for c in chunks if c["path"] == "bom.md"} == {
        "Alpha Heading", "Beta Section"}
    for c in chunks:
        for col in ("title", "breadcrumb", "heading", "body", "doc_title"):
            assert "\r" not in c[col] and "\ufeff" not in c[col], (c["id"], col)
    assert "docs:empty.md" in ids and "docs:yaml.md#heading" in ids
    assert not any(i.startswith("docs:bin.md") for i in ids)


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory):
    """The acceptance tree without the symlink loop, built once for the module."""
    root = tmp_path_factory.mktemp("acceptance")
    config = acceptance_project(root, loop=False, home=tmp_path_factory.mktemp("home"))
    return config, run.build(config)


def test_acceptance_tree_without_symlink_loop(acceptance):
    check_acceptance(*acceptance)


def test_acceptance_tree(tmp_path):
    config = acceptance_project(tmp_path, loop=True)
    report = run.build(config)
    loop = problems_about(report, "a.md") + problems_about(report, "b.md")
    assert loop and len(loop) == len(set(loop))
    assert len(report.problems) == 3 + len(loop)
    check_acceptance(config, report)


def test_acceptance_manifest_records_problems_and_counts(acceptance):
    config, report = acceptance
    gen = open_current(config.index_dir)
    try:
        manifest = gen.manifest
        record = read_fingerprints(gen.path)
    finally:
        gen.close()
    assert manifest["problems"] == report.problems
    assert manifest["counts"] == {"files": report.files, "chunks": report.chunks,
                                  "terms": report.terms, "postings": report.postings}
    assert sorted(record.files) == [
        "docs:big.md", "docs:bom.md", "docs:empty.md", "docs:latin.md", "docs:yaml.md"]
    assert sorted(record.binary) == ["docs:bin.md"]
    assert record.partition == dict.fromkeys(record.files, 0)
    assert manifest["partitions"] == [0]
    assert report.generation == gen.path.name
    # the whole build's time and every stage's, as the report says (not 0.0 and the
    # stages after chunking only, as the manifest once said)
    assert manifest["build_seconds"] == round(report.seconds, 3) > 0
    assert list(manifest["stage_seconds"]) == ["discover", "chunk+analyze", "terms",
                                                "postings+write", "compact"]


# --- (b) stage invariants, property-based ------------------------------------------------

VOCAB = ["alpha", "beta", "gamma", "delta", "run", "running", "runs", "index", "indexing",
         "search", "日本語", "Café", "x2"]
words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join)
heading = st.tuples(st.integers(1, 6), words).map(lambda t: f"{'#' * t[0]} {t[1]}\n")
paragraph = words.map(lambda w: f"{w}\n")
blank = st.just("\n")
frontmatter = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(VOCAB[:6]), max_size=3).map(
        lambda tags: f"---\ntags: [{', '.join(tags)}]\n---\n"))
document = st.tuples(frontmatter, st.lists(st.one_of(heading, paragraph, blank),
                                           max_size=14)).map(lambda t: t[0] + "".join(t[1]))
documents = st.lists(document, min_size=1, max_size=3)


def chunk_texts(texts: list[str]) -> pa.Table:
    docs = [SourceDoc("docs", f"d{i}.md", text, 1, False) for i, text in enumerate(texts)]
    return chunk(docs_table(docs))[0]


def run_stages(texts: list[str]):
    """chunk → analyze → postings; DuckDB makes this ~0.1 s, so fewer examples use it."""
    chunks = chunk_texts(texts)
    analyzed, lengths, surface = analyze(chunks, "english")
    terms, post, vocab = postings(analyzed, surface)
    return chunks, analyzed, lengths, terms, post, vocab


PROPERTY = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
SLOW_PROPERTY = settings(PROPERTY, max_examples=25)


@PROPERTY
@given(documents)
def test_chunk_spans_nest_and_ids_are_unique(texts):
    chunks = chunk_texts(texts)
    rows = chunks.to_pylist()
    by_id = {r["id"]: r for r in rows}
    assert len(by_id) == len(rows)  # unique ids
    assert [r["ord"] for r in rows] == list(range(len(rows)))
    for r in rows:
        size = len(texts[int(r["path"][1:-3])].encode())
        assert 0 <= r["byte_start"] <= r["byte_end"] <= size
        if r["parent_id"] is None:
            assert r["depth"] == 0 and r["id"] == r["doc_id"]
            continue
        parent = by_id[r["parent_id"]]
        assert parent["doc_id"] == r["doc_id"] and parent["depth"] < r["depth"]
        assert parent["byte_start"] <= r["byte_start"] <= r["byte_end"] <= parent["byte_end"]
    # the subtree of a chunk is the contiguous ord range ord..ord+descendants
    for r in rows:
        inside = rows[r["ord"] + 1:r["ord"] + r["descendants"] + 1]
        for child in inside:
            chain, node = [], child
            while node["parent_id"] is not None:
                node = by_id[node["parent_id"]]
                chain.append(node["id"])
            assert r["id"] in chain


@SLOW_PROPERTY
@given(documents)
def test_terms_and_postings_statistics_agree(texts):
    chunks, analyzed, lengths, terms, post, vocab = run_stages(texts)
    p = post.to_pylist()
    keys = [(r["term_id"], r["ord"], r["field"]) for r in p]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    chunks_of, cf = defaultdict(set), Counter()
    for r in p:
        chunks_of[r["term_id"]].add(r["ord"])
        cf[r["term_id"]] += r["tf"]
        assert r["tf"] == len(r["positions"]) > 0
        assert r["positions"] == sorted(set(r["positions"]))
    t = terms.to_pylist()
    assert [r["term_id"] for r in t] == list(range(len(t)))
    assert [r["term"] for r in t] == sorted(r["term"] for r in t)
    for r in t:
        assert r["df"] == len(chunks_of[r["term_id"]])
        assert r["cf"] == cf[r["term_id"]]
    assert post.num_rows == analyzed.num_rows
    # field lengths equal the summed tf of that field
    tf_sum = Counter()
    for r in p:
        tf_sum[(r["ord"], r["field"])] += r["tf"]
    assert lengths["ord"].to_pylist() == chunks["ord"].to_pylist()
    for row in lengths.to_pylist():
        for name in FIELDS:
            assert row[name] == tf_sum[(row["ord"], FIELD_CODE[name])], (row, name)
    # every surface word maps to its stemmed term and that term's id
    term_id = {r["term"]: r["term_id"] for r in t}
    analyzer = analyzer_for("english")
    for w in vocab.to_pylist():
        assert w["term"] == analyzer.stem(w["word"]) and w["term_id"] == term_id[w["term"]]


def _content_lines(text: str) -> list[str]:
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 3) + 5:]
    return [line for line in text.splitlines() if line.strip()]


@PROPERTY
@given(documents)
@example(["# A\nalpha\n#### Lostword\n# B\nbeta\n"])
@example(["###### alpha\n"])
def test_every_nonblank_line_lands_in_exactly_one_chunk(texts):
    """Dropped (empty-span) headings keep their line in the enclosing body."""
    chunks = chunk_texts(texts)
    for i, text in enumerate(texts):
        own = [r["heading"] + r["body"] for r in chunks.to_pylist() if r["path"] == f"d{i}.md"]
        assert _content_lines("".join(own)) == _content_lines(text)


def alias_bomb(depth: int, width: int = 10) -> str:
    """YAML whose anchors expand to ``width ** depth`` strings from a few hundred bytes."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]"
              for i in range(1, depth)]
    return "---\n" + "\n".join(lines) + f"\ntitle: *a{depth - 1}\n---\n# Heading\n\nbody\n"


def test_frontmatter_alias_bomb_stays_small():
    text = alias_bomb(5)
    assert len(text) < 400
    chunks = chunk_texts([text]).to_pylist()
    for row in chunks:
        assert len(row["title"]) <= len(text) and len(row["doc_title"]) <= len(text)
        assert len(row["breadcrumb"]) <= 2 * len(text)


def test_build_of_an_empty_tree(tmp_path):
    config = make_project(tmp_path, {})
    report = run.build(config)
    assert (report.files, report.chunks, report.terms, report.postings) == (0, 0, 0, 0)
    assert search_ids(config, "anything") == []


def test_pipeline_on_no_documents_gives_empty_tables():
    chunks, analyzed, lengths, terms, post, vocab = run_stages([])
    assert chunks.num_rows == analyzed.num_rows == terms.num_rows == post.num_rows == 0
    assert chunks.schema.equals(SCHEMAS["chunks"])


def test_title_tags_path_and_body_fields():
    text = "---\ntags: [widget, gadget]\ndescription: lengthy summary\n---\n# Top\n\nbody\n"
    docs = [SourceDoc("docs", "guides/setup-notes.md", text, 1, False)]
    chunks, _ = chunk(docs_table(docs))
    analyzed, _, _ = analyze(chunks)
    fields = defaultdict(set)
    for r in analyzed.to_pylist():
        fields[(r["ord"], FIELDS[r["field"]])].add(r["term"])
    assert fields[(1, "title")] == {"top"}  # breadcrumb "Top › Top" collapses to one term
    assert fields[(1, "tags")] == {"widget", "gadget"}
    assert fields[(1, "path")] == {"guid", "setup", "note"}
    assert fields[(1, "body")] == {"bodi"}
    assert {"lengthi", "summari"} <= fields[(0, "body")]  # description on the document node


def test_each_chunk_stores_what_a_reader_sees_of_it_on_one_line():
    """``chunks.plain``, which snippets are cut from: a heading's title, then its body as
    a reader sees it (markup, link targets, fences, bullets gone; code kept); a text
    file's words as written."""
    texts = {"a.md": "Intro with <!-- a comment --> **bold**.\n\n## Set up { #setup }\n\n"
                     "- Run `ra init` in [the root](https://x.org).\n\n```sh\nra index\n```\n",
             "notes.txt": "  plain   *text*\nfile\n"}
    docs = [SourceDoc("docs", p, t, 1, False) for p, t in texts.items()]
    chunks, _ = chunk(docs_table(docs))
    assert dict(zip(chunks["id"].to_pylist(), chunks["plain"].to_pylist(), strict=True)) == {
        "docs:a.md": "Intro with bold.",
        "docs:a.md#setup": "Set up Run ra init in the root. ra index",
        "docs:notes.txt": "plain *text* file"}


def test_a_chunk_with_sections_and_no_words_of_its_own_is_not_indexed():
    """The document node of a file that starts with its h1, and a heading followed at once
    by subheadings, hold nothing their sections do not (breadcrumbs carry their titles):
    they get no postings and zero lengths. A chunk with no sections is indexed whatever it
    holds, and so is one whose own text is only a frontmatter description."""
    texts = {"a.md": "# Guide\n\n## Part\n\n### Step\n\nwords here\n",
             "b.md": "---\ntitle: Lone\n---\n",
             "c.md": "---\ndescription: summary\n---\n# Head\n\ntext\n"}
    docs = [SourceDoc("docs", p, t, 1, False) for p, t in texts.items()]
    chunks, _ = chunk(docs_table(docs))
    analyzed, lengths, _ = analyze(chunks)
    indexed = set(analyzed["ord"].to_pylist())
    ids = dict(zip(chunks["ord"].to_pylist(), chunks["id"].to_pylist(), strict=True))
    assert sorted(ids[o] for o in indexed) == [
        "docs:a.md#step", "docs:b.md", "docs:c.md", "docs:c.md#head"]
    for row in lengths.to_pylist():
        assert any(row[f] for f in FIELDS) == (row["ord"] in indexed)
    assert indexed_chunks(lengths) == 4


def test_statistics_average_each_field_over_the_chunks_that_have_it():
    lengths = pa.table({"ord": [0, 1, 2, 3], "title": [2, 4, 0, 3], "tags": [0, 0, 0, 6],
                        "path": [1, 1, 0, 1], "body": [0, 10, 0, 30]})
    stats = statistics(indexed_chunks(lengths), length_sums(lengths), field_chunks(lengths))
    assert stats["chunks"] == 3
    assert stats["field_chunks"] == {"title": 3, "tags": 1, "path": 3, "body": 2}
    assert stats["avg_length"] == {"title": 3.0, "tags": 6.0, "path": 1.0, "body": 20.0}


# --- (c) artifacts readable with plain DuckDB --------------------------------------------

def test_artifacts_are_readable_with_plain_duckdb(acceptance):
    config, report = acceptance
    gen = open_current(config.index_dir)
    try:
        expected = {"files": report.files, "chunks": report.chunks, "terms": report.terms,
                    "postings": report.postings}
        for name in ARTIFACTS:
            (count,) = duckdb.sql(f"select count(*) from '{gen.scan(name)}'").fetchall()[0]
            assert count == pq.read_table(gen.file(name)).num_rows
            if name in expected:
                assert count == expected[name], name
        (n,) = duckdb.sql(
            f"select count(*) from '{gen.scan('postings')}' p join '{gen.scan('terms')}' t "
            "using (term_id)").fetchall()[0]
        assert n == report.postings
        # column descriptions are visible to plain DuckDB, in the key/value metadata
        rows = duckdb.sql(f"select value from parquet_kv_metadata('{gen.scan('chunks')}') "
                          "where key = 'ra.columns'").fetchall()
        assert rows and "breadcrumb" in json.loads(rows[0][0])
    finally:
        gen.close()


def test_artifact_columns_carry_descriptions(acceptance):
    config, _ = acceptance
    gen = open_current(config.index_dir)
    try:
        for name in ARTIFACTS:
            path = gen.file(name)
            schema = pq.read_schema(sorted(path.glob("*.parquet"))[0] if path.is_dir()
                                    else path)
            assert schema.names == SCHEMAS[name].names, name
            for f in schema:
                want = SCHEMAS[name].field(f.name).metadata[b"description"]
                assert want and (f.metadata or {}).get(b"description") == want, (name, f.name)
    finally:
        gen.close()



def test_the_global_tables_are_plain_and_the_partitions_compressed(acceptance):
    """Every update rewrites the global tables whole: they are written without
    compression or dictionaries (``partitions.write_globals``), the rest with zstd."""
    config, _ = acceptance
    gen = open_current(config.index_dir)
    try:
        for name in ("terms", "words", "chunks", "postings"):
            path = gen.file(name)
            meta = pq.ParquetFile(sorted(path.glob("*.parquet"))[0] if path.is_dir()
                                  else path).metadata
            kinds = {meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
            assert kinds == ({"UNCOMPRESSED"} if name in ("terms", "words") else {"ZSTD"})
    finally:
        gen.close()

# --- (d) chunk_at_headings = false -------------------------------------------------------

def test_chunk_at_headings_false_gives_one_chunk_per_document(tmp_path):
    files = {"a.md": "# Title A\n\nintro\n\n## Sub\n\nsubword\n", "b.md": "plain\n",
             "c.txt": "text file\n"}
    config = make_project(tmp_path, files,
                          DOCS_TOML + "\n[settings]\nchunk_at_headings = false\n")
    assert config.settings.chunk_at_headings is False
    report = run.build(config)
    assert (report.files, report.chunks) == (3, 3)
    gen = open_current(config.index_dir)
    try:
        rows = pq.read_table(gen.file("chunks")).to_pylist()
    finally:
        gen.close()
    assert [r["id"] for r in rows] == ["docs:a.md", "docs:b.md", "docs:c.txt"]
    assert rows[0]["title"] == "Title A" and rows[0]["depth"] == 0
    assert search_ids(config, "subword") == ["docs:a.md"]


def test_updated_terms_and_words_equal_a_recount(tmp_path):
    """An update's arithmetic on the vocabulary equals counting again from scratch, and
    keeps the id of every term that survives."""
    import random

    from ra.pipeline.postings import terms_of, updated_terms, updated_words, words_of

    rng = random.Random(3)
    vocab = ["alpha", "beta", "gamma", "delta", "running", "runs", "indexing", "日本語"]

    def docs(first: int, n: int) -> list[str]:
        return [f"# {rng.choice(vocab)}\n\n{' '.join(rng.choices(vocab, k=rng.randrange(1, 9)))}"
                f"\n\n## {rng.choice(vocab)} {first + i}\n\nnew{first + i}\n" for i in range(n)]

    def stages(texts: list[str], first_ord: int, names: list[str]):
        sources = [SourceDoc("docs", name, text, 1, False)
                   for name, text in zip(names, texts, strict=True)]
        return analyze(chunk(docs_table(sources), first_ord=first_ord)[0], "english")

    kept, gone, new = docs(0, 5), docs(5, 3), docs(8, 4)
    k_an, _, k_su = stages(kept, 0, [f"k{i}.md" for i in range(5)])
    g_an, _, g_su = stages(gone, 1000, [f"g{i}.md" for i in range(3)])
    n_an, _, n_su = stages(new, 2000, [f"n{i}.md" for i in range(4)])
    before = terms_of(pa.concat_tables([k_an, g_an]))
    old_words = words_of(pa.concat_tables([k_su, g_su]), before)
    terms = updated_terms(before, g_an, n_an)
    words = updated_words(old_words, g_su, n_su, terms)
    recount = terms_of(pa.concat_tables([k_an, n_an]))

    def counted(table: pa.Table) -> list[tuple]:
        return sorted((r["term"], r["df"], r["cf"]) for r in table.to_pylist())

    assert counted(terms) == counted(recount)
    assert len(set(terms["term_id"].to_pylist())) == terms.num_rows
    ids_before = dict(zip(before["term"].to_pylist(), before["term_id"].to_pylist(),
                          strict=True))
    ids = dict(zip(terms["term"].to_pylist(), terms["term_id"].to_pylist(), strict=True))
    for term, term_id in ids.items():
        assert ids_before.get(term, term_id) == term_id
        assert term in ids_before or term_id > max(ids_before.values())
    want = words_of(pa.concat_tables([k_su, n_su]), recount).to_pylist()
    assert words["word"].to_pylist() == sorted(words["word"].to_pylist())
    assert [(w["word"], w["term"], w["freq"], w["term_id"]) for w in words.to_pylist()] == [
        (w["word"], w["term"], w["freq"], ids[w["term"]]) for w in want]
    assert updated_terms(before, g_an.slice(0, 0), g_an.slice(0, 0)).equals(before)



#: Words of the documents of ``test_a_chain_of_updates_equals_a_recount``: some stem to
#: one term (run, runs, running), some are not ASCII, some sort between others.
CHAIN_WORDS = ["run", "runs", "running", "alpha", "alphas", "beta", "gamma", "zeta",
               "日本語", "éclair", "eclair", "a", "b"]
chain_docs = st.lists(st.sampled_from(CHAIN_WORDS), min_size=1, max_size=6)
chain_steps = st.lists(st.tuples(st.sets(st.integers(0, 9), max_size=4),
                                 st.lists(chain_docs, max_size=3)), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.lists(chain_docs, max_size=5), steps=chain_steps, edits=st.sampled_from([0, 64]))
def test_a_chain_of_updates_equals_a_recount(first, steps, edits):
    """Update after update, as a long-lived process makes them (each table's lookups
    derived from the last ones, ``ra.pipeline.lookups``): the terms and words equal a
    count from scratch of the documents now, words in word order, every surviving term
    keeps its id and new ones come after; the lookups kept equal lookups made afresh;
    postings numbered through them equal those numbered by hashing the terms. ``edits``:
    the word list of each new table made from the old one or listed afresh."""
    from unittest import mock

    from ra.pipeline import lookups
    from ra.pipeline.postings import (
        postings_of,
        terms_of,
        updated_terms,
        updated_words,
        words_of,
    )

    made = iter(range(10**6))

    def rows(words: list[str]) -> tuple[pa.Table, pa.Table]:
        n = next(made)
        doc = SourceDoc("docs", f"d{n}.md", f"# {words[0]}\n\n{' '.join(words)}\n", 1, False)
        an, _, su = analyze(chunk(docs_table([doc]), first_ord=10 * n)[0], "english")
        return an, su

    def cat(tables: list[pa.Table], name: str) -> pa.Table:
        return pa.concat_tables(tables) if tables else SCHEMAS[name].empty_table()

    docs = [rows(words) for words in first]
    terms = terms_of(cat([an for an, _ in docs], "analyzed"))
    words = words_of(cat([su for _, su in docs], "surface"), terms)
    for gone_at, new in steps:
        gone = [d for i, d in enumerate(docs) if i in gone_at]
        docs = [d for i, d in enumerate(docs) if i not in gone_at]
        added = [rows(w) for w in new]
        docs += added
        before = dict(zip(terms["term"].to_pylist(), terms["term_id"].to_pylist(),
                          strict=True))
        terms = updated_terms(terms, cat([an for an, _ in gone], "analyzed"),
                              cat([an for an, _ in added], "analyzed"))
        with mock.patch("ra.pipeline.postings.LIST_EDITS", edits):
            words = updated_words(words, cat([su for _, su in gone], "surface"),
                                  cat([su for _, su in added], "surface"), terms)
        recount = terms_of(cat([an for an, _ in docs], "analyzed"))
        assert sorted((t["term"], t["df"], t["cf"]) for t in terms.to_pylist()) == sorted(
            (t["term"], t["df"], t["cf"]) for t in recount.to_pylist())
        ids = dict(zip(terms["term"].to_pylist(), terms["term_id"].to_pylist(), strict=True))
        assert len(set(ids.values())) == len(ids)
        assert terms["term_id"].to_pylist() == sorted(ids.values())
        for term, term_id in ids.items():
            assert before.get(term, term_id) == term_id
            assert term in before or term_id > max(before.values(), default=-1)
        want = words_of(cat([su for _, su in docs], "surface"), recount).to_pylist()
        assert [(w["word"], w["term"], w["freq"], w["term_id"]) for w in words.to_pylist()] == [
            (w["word"], w["term"], w["freq"], ids[w["term"]]) for w in want]
        assert lookups.term_ids(terms) == ids
        assert lookups.word_list(words) == words["word"].to_pylist()
        new_rows = cat([an for an, _ in added], "analyzed")
        assert postings_of(new_rows, terms, looked_up=True).equals(postings_of(new_rows, terms))


# --- (e) determinism ---------------------------------------------------------------------

def small_corpus(n: int = 9) -> dict[str, str]:
    return {f"{'sub/' if i % 3 else ''}note{i}.md":
            f"# Note {i}\n\nshared text number{i}\n\n## Part {i}\n\nmore shared words\n"
            for i in range(n)}


def test_building_twice_gives_identical_tables(tmp_path):
    config = make_project(tmp_path, small_corpus())
    first = tmp_path / "first"
    second = tmp_path / "second"
    first.mkdir()
    second.mkdir()
    run.build_into(first, config, workers=1)
    run.build_into(second, config, workers=1)
    names = ARTIFACTS
    a, b = read_artifacts(first, names), read_artifacts(second, names)
    for name in names:
        assert a[name].equals(b[name], check_metadata=True), name


def test_one_and_two_workers_give_identical_tables(tmp_path, monkeypatch):
    config = make_project(tmp_path, small_corpus())
    monkeypatch.setattr(run, "PART_FILES", 2)  # several partitions, so the pool really runs
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    r1 = run.build_into(one, config, workers=1)
    r2 = run.build_into(two, config, workers=2)
    assert (r1.files, r1.chunks, r1.terms, r1.postings) == (
        r2.files, r2.chunks, r2.terms, r2.postings)
    a, b = read_artifacts(one, ARTIFACTS), read_artifacts(two, ARTIFACTS)
    for name in ARTIFACTS:
        assert a[name].equals(b[name]), name
    assert a["chunks"]["ord"].to_pylist() == list(range(r1.chunks))


def test_published_build_matches_build_into(tmp_path):
    config = make_project(tmp_path, small_corpus(4))
    run.build(config)
    out = tmp_path / "direct"
    out.mkdir()
    run.build_into(out, config, workers=1)
    gen = open_current(config.index_dir)
    try:
        published = read_artifacts(gen.path)
    finally:
        gen.close()
    direct = read_artifacts(out)
    for name, table in published.items():
        assert table.equals(direct[name]), name
