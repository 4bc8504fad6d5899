"""The analyze stage against a token-by-token reference.

``analyze`` groups tokens with Arrow and stems each distinct word once; the reference
below walks every field token by token, as the stage did before, so the two must give
the same tables, row for row.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ra.pipeline.analyze import analyze, body_texts, field_texts
from ra.pipeline.chunk import SourceDoc, chunk, docs_table
from ra.store.artifacts import ANALYZED, LENGTHS, SURFACE
from ra.store.layout import FIELD_CODE
from ra.text.analysis import analyzer_for, split_words


def reference(chunks: pa.Table, language: str = "english"):
    analyzer = analyzer_for(language)
    out = {f.name: [] for f in ANALYZED}
    lengths = {f.name: [] for f in LENGTHS}
    per_doc: dict[tuple[str, str], Counter] = {}
    rows = chunks.to_pylist()
    for row, body in zip(rows, body_texts(rows), strict=True):
        words = per_doc.setdefault((row["tree"], row["path"]), Counter())
        lengths["ord"].append(row["ord"])
        for name, text in field_texts(row, body).items():
            surface = split_words(text)
            words.update(surface)
            lengths[name].append(len(surface))
            positions: dict[str, list[int]] = {}
            for pos, word in enumerate(surface):
                positions.setdefault(analyzer.stem(word), []).append(pos)
            for term, where in positions.items():
                out["ord"].append(row["ord"])
                out["field"].append(FIELD_CODE[name])
                out["term"].append(term)
                out["tf"].append(len(where))
                out["positions"].append(where)
    surface = {f.name: [] for f in SURFACE}
    for (tree, path), words in per_doc.items():
        for word, freq in sorted(words.items()):
            row = (tree, path, word, analyzer.stem(word), freq)
            for name, value in zip(SURFACE.names, row, strict=True):
                surface[name].append(value)
    return (pa.table(out, schema=ANALYZED), pa.table(lengths, schema=LENGTHS),
            pa.table(surface, schema=SURFACE))


WORDS = ["Running", "runs", "ran", "the", "Café", "naïve", "東京タワー", "한국어", "x_y",
         "über", "C++", "std::vector", "a" * 12, "é" * 11, "b" * 41, "42", "İstanbul"]
line = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
block = st.one_of(line.map(lambda s: s + "\n"), line.map(lambda s: f"# {s}\n"),
                  line.map(lambda s: f"## {s}\n"), line.map(lambda s: f"`{s}` [{s}](x.md)\n"),
                  st.just("\n"))
document = st.tuples(st.sampled_from(["", "---\ntags: [Running, café]\ndescription: naïve "
                                          "runs\n---\n"]),
                     st.lists(block, max_size=10).map("".join)).map("".join)


def chunks_of(texts: list[str], first_ord: int = 0) -> pa.Table:
    docs = [SourceDoc("docs", f"d{i}.{'md' if i % 3 else 'txt'}", text, 1, False)
            for i, text in enumerate(texts)]
    return chunk(docs_table(docs), first_ord=first_ord)[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(document, max_size=4))
@example([])
@example(["# Only\n## Heading\n"])
@example(["runs runs ran\n\nthe run\n", "# 東京タワー\nC++ x_y " + "b" * 41 + "\n"])
def test_analyze_equals_the_token_by_token_reference(texts):
    chunks = chunks_of(texts, first_ord=7)
    for got, want in zip(analyze(chunks), reference(chunks), strict=True):
        assert got.schema == want.schema
        assert got.to_pylist() == want.to_pylist()


def test_terms_of_partitions_equal_the_terms_of_their_concatenation():
    """A build counts terms partition by partition (they share no chunk)."""
    from ra.pipeline.postings import terms_of

    texts = ["# Run\nruns ran running\n", "# Café\nnaïve café runs\n\nC++ x_y\n",
             "plain words, runs\n", "# 東京タワー\n東京 runs\n"]
    parts = [analyze(chunks_of(texts[i:i + 2], first_ord=10 * i))[0] for i in (0, 2)]
    parts.append(analyze(chunks_of([]))[0])
    whole = terms_of(pa.concat_tables(parts))
    assert terms_of(parts).equals(whole)
    assert whole["term"].to_pylist() == sorted(whole["term"].to_pylist())
    assert whole["term_id"].to_pylist() == list(range(whole.num_rows))
    df = {t: len({o for o, tt in zip(*(pa.concat_tables(parts)[c].to_pylist()
                                        for c in ("ord", "term")), strict=True) if tt == t})
          for t in whole["term"].to_pylist()}
    assert dict(zip(whole["term"].to_pylist(), whole["df"].to_pylist(), strict=True)) == df
    assert terms_of([]).num_rows == 0


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_analyze_in_batches_of_whole_documents_equals_the_reference(monkeypatch, batch):
    import ra.pipeline.analyze as stage

    monkeypatch.setattr(stage, "BATCH", batch)
    texts = ["# Run\nruns ran\n## Running\nrunning runs\n## Ran\nran\n", "plain runs\n",
             "---\ntags: [café]\n---\n# Café\nnaïve\n## Café\ncafé café\n", "",
             "# 東京タワー\n東京 runs\n## B\nb\n"]
    chunks = chunks_of(texts, first_ord=3)
    assert len(stage._batches(chunks)) > 1
    for got, want in zip(analyze(chunks), reference(chunks), strict=True):
        assert got.to_pylist() == want.to_pylist()


def test_a_partition_sets_each_body_aside_once_for_the_same_tables(tmp_path):
    """``process_files`` sets each markdown body's code aside once for its plain text and
    its links (``bodies`` and ``asides``); the stages run apart, each preparing its own
    text, give the same chunks, links and analysed rows. The Rust book's chapters and a
    text file (../shared/corpora, MIT/Apache-2.0, see its LICENSES.md)."""
    from pathlib import Path

    from ra.pipeline.discover import FoundFile
    from ra.pipeline.links import links_table
    from ra.pipeline.run import process_files, read_sources

    book = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "rust-book" / "src"
    paths = sorted(book.glob("ch0*.md"))[:12]
    (tmp_path / "notes.txt").write_text("A [text](file.md) with `code` and <b>tags</b>\n")
    files = [FoundFile("book", p.name, str(p), "markdown", 0, 0, False) for p in paths]
    files.append(FoundFile("book", "notes.txt", str(tmp_path / "notes.txt"), "text", 0, 0,
                           False))
    part, _ = process_files(files, {"chunk_at_headings": True, "language": "english"})
    docs, _ = read_sources(files)
    chunks, parsed = chunk(docs_table(docs))
    assert part.chunks.equals(chunks)
    assert part.links.equals(links_table(parsed)) and part.links.num_rows > 50
    for mine, theirs in zip((part.analyzed, part.lengths, part.surface), analyze(chunks),
                            strict=True):
        assert mine.equals(theirs)


def test_the_benchmark_peers_read_the_chunks_as_the_analyze_stage_does(tmp_path):
    """``benchmarks.peers.read_chunks`` gives tantivy, FTS5 and bm25s ra's own field texts:
    an anchor's id above a heading is the text of the section it names there too (it
    called ``field_texts`` without the bodies the stage reads, and ``make bench`` failed)."""
    import pyarrow.parquet as pq
    from benchmarks.peers import read_chunks

    text = ("# Naming\n\nIntro.\n\n<a id=\"c-case\"></a>\n## Casing (C-CASE)\n\nUse case.\n\n"
            "## Other\n\nMore.\n")
    chunks, _ = chunk(docs_table([SourceDoc("kb", "naming.md", text, 0, False),
                                  SourceDoc("kb", "notes.txt", "plain <a id=\"x\"></a>\n", 0,
                                            False)]))
    pq.write_table(chunks, tmp_path / "chunks.parquet")
    got = {c.ord: c.fields for c in read_chunks(tmp_path / "chunks.parquet")}
    rows = chunks.to_pylist()
    want = {r["ord"]: field_texts(r, body) for r, body in zip(rows, body_texts(rows),
                                                             strict=True)}
    assert got == {o: f for o, f in want.items() if any(f.values())}
    assert "c-case" in got[2]["body"] and "c-case" not in got[1]["body"]


def test_the_path_field_holds_the_words_of_a_camel_case_file_name():
    """openshift/runbooks names each runbook for its alert, ``etcdNoLeader.md``, whose
    page says "does not have a leader": "etcd no leader" found its sections, never the
    page. The file's name only: ``Microsoft.PowerShell.Core/`` would put "shell" in each
    of its pages' paths."""
    row = {"breadcrumb": "etcdNoLeader", "tags": [], "description": None, "descendants": 0}
    fields = {path: field_texts({**row, "path": path}, "Text.")["path"] for path in (
        "alerts/etcd/etcdNoLeader.md", "Microsoft.PowerShell.Core/Get-ChildItem.md",
        "ch04-01-what-is-ownership.md", "api/XMLHttpRequest.md")}
    assert fields == {
        "alerts/etcd/etcdNoLeader.md": "alerts/etcd/etcdNoLeader etcd No Leader",
        "Microsoft.PowerShell.Core/Get-ChildItem.md":
            "Microsoft.PowerShell.Core/Get-ChildItem Child Item",
        "ch04-01-what-is-ownership.md": "ch04-01-what-is-ownership",
        "api/XMLHttpRequest.md": "api/XMLHttpRequest XML Http Request"}


def test_field_words_are_the_words_of_each_field_text():
    """``field_words`` splits a document's path and tags once and a body once; each
    row's words must still be ``split_words`` of its ``field_texts``, whichever rows
    share a path or tags (two documents with the same tags, one path with other tags)."""
    from ra.pipeline.analyze import field_words

    rows = [
        {"breadcrumb": "Run › Café", "tags": ["Running", "x_y"], "path": "a/runBook.md",
         "description": "naïve runs", "descendants": 2},
        {"breadcrumb": "Run › Café › Sub", "tags": ["Running", "x_y"],
         "path": "a/runBook.md", "description": None, "descendants": 0},
        {"breadcrumb": "Empty", "tags": ["Running", "x_y"], "path": "a/runBook.md",
         "description": None, "descendants": 1},  # no words of its own: no fields
        {"breadcrumb": "Other", "tags": ["Running", "x_y"], "path": "b/other.md",
         "description": None, "descendants": 0},
        {"breadcrumb": "東京タワー", "tags": None, "path": "b/other.md",
         "description": "", "descendants": 0},
        {"breadcrumb": "Long", "tags": ["b" * 41], "path": "c/XMLHttpRequest.md",
         "description": None, "descendants": 0},
    ]
    bodies = ["intro C++ text", "runs ran", " ,, ", "other words", "東京 runs", "é" * 11]
    want = [split_words(text) for row, body in zip(rows, bodies, strict=True)
            for text in field_texts(row, body).values()]
    assert field_words(rows, bodies) == want
    assert want[8:12] == [[], [], [], []] and want[13] == want[5]  # what it is meant to show


def test_positions_count_up_from_zero():
    """Token positions subtract each field's first index from 0, 1, ..., n - 1, made by
    Arrow (``_count_up``)."""
    from ra.pipeline.analyze import _count_up

    for n in (0, 1, 5, 70_000):
        got = _count_up(n)
        assert got.type == pa.int32() and got.to_pylist() == list(range(n))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(
    ["a", "Z", "Σ", "σ", "ς", "İ", "ß", "東", "京", "タ", "한", "ก", "_", " ", "›", "'", "-",
     "\u0301", "\u093f", "1", "é" * 11, "b" * 41, "\n", "\t"]), max_size=12).map("".join),
    min_size=1, max_size=4))
@example(["ΟΔΟΣ", "Σ"])  # a final sigma each, before and after the separator
@example(["İstanbul", "東京タワー"])
def test_a_breadcrumbs_words_are_its_crumbs_words(crumbs):
    """``field_words`` splits the crumbs of a breadcrumb one by one (``BREADCRUMB_SEPARATOR``
    joins them): the words of the whole must be theirs, in order, whatever the crumbs hold
    (lowercasing's final sigma looks no further than the separator's spaces)."""
    from ra.text.document import BREADCRUMB_SEPARATOR

    assert split_words(BREADCRUMB_SEPARATOR.join(crumbs)) == [
        w for crumb in crumbs for w in split_words(crumb)]
