"""The analyze stage against a token-by-token reference.

``analyze`` groups tokens with Arrow and stems each distinct word once; the reference
below walks every field token by token, as the stage did before, so the two must give
the same tables, row for row.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ra.pipeline.analyze import analyze, field_texts
from ra.pipeline.chunk import SourceDoc, chunk, docs_table
from ra.store.artifacts import ANALYZED, LENGTHS, SURFACE
from ra.store.layout import FIELD_CODE
from ra.text.analysis import analyzer_for, split_words


def reference(chunks: pa.Table, language: str = "english"):
    analyzer = analyzer_for(language)
    out = {f.name: [] for f in ANALYZED}
    lengths = {f.name: [] for f in LENGTHS}
    per_doc: dict[tuple[str, str], Counter] = {}
    for row in chunks.to_pylist():
        words = per_doc.setdefault((row["tree"], row["path"]), Counter())
        lengths["ord"].append(row["ord"])
        for name, text in field_texts(row).items():
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
