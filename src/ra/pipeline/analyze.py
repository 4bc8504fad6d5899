"""Stage 3, analyze: chunk rows → terms per field with positions.

Each chunk contributes four BM25F fields, analysed with ``ra.text.analysis``:

- title: the breadcrumb (document title › ancestors › heading), so a chunk is found by
  the names of the sections that contain it;
- tags: the document's tags;
- path: the tree-relative path without its extension (its folders and the words of its
  file name);
- body: the chunk's own text as a reader sees it (``ra.text.markup.plain_text``: code as
  written, comments and the markup of site generators and note apps gone); the document
  node adds the frontmatter description.

A chunk with sections below it but no words of its own (a file that starts with its h1
leaves the document node empty; so does a heading followed at once by subheadings) is
not indexed at all: its title, tags and path are in every one of its sections, whose
breadcrumbs carry its title, so it holds no word they do not. Indexing it would count one
more chunk in N and one more in the df of each word of its title (a one-section document
would count its title words twice and its text once), and its empty body would pull the
average body length down. It still stands for its sections in ranking, when they
aggregate into it.

Output: one row per (chunk, field, term) with the term frequency and positions, the
analysed length of each field, and the surface words with the terms they stem to (the
query layer matches typos against surface words). Pure: tables in, tables out.
"""

from __future__ import annotations

import posixpath
from collections import Counter

import pyarrow as pa

from ra.store.artifacts import ANALYZED, LENGTHS, SURFACE
from ra.store.layout import FIELD_CODE
from ra.text.analysis import Analyzer, analyzer_for, split_words
from ra.text.markup import is_markdown, plain_text

_COLUMNS = ("ord", "tree", "breadcrumb", "tags", "path", "body", "description",
            "descendants")
_NO_FIELDS = {"title": "", "tags": "", "path": "", "body": ""}


def field_texts(row: dict) -> dict[str, str]:
    """The text of each field of one chunk row; none for a chunk with sections below it
    and no words of its own (see the module docstring)."""
    body = plain_text(row["body"]) if is_markdown(row["path"]) else row["body"]
    if row["description"]:
        body = f"{row['description']}\n{body}"
    if row["descendants"] and not split_words(body):
        return _NO_FIELDS
    return {
        "title": row["breadcrumb"],
        "tags": " ".join(row["tags"] or ()),
        "path": posixpath.splitext(row["path"])[0],
        "body": body,
    }


def analyze(chunks: pa.Table, language: str = "english"
            ) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``(analyzed, lengths, surface)`` for the rows of ``chunks``.

    ``surface`` counts each lowercased surface word per document (tree, path): the
    vocabulary for typo matching, kept per document so an update can subtract exactly
    what a changed file contributed.
    """
    analyzer = analyzer_for(language)
    out = {f.name: [] for f in ANALYZED}
    lengths = {f.name: [] for f in LENGTHS}
    per_doc: dict[tuple[str, str], Counter] = {}
    for row in chunks.select(_COLUMNS).to_pylist():
        words = per_doc.setdefault((row["tree"], row["path"]), Counter())
        lengths["ord"].append(row["ord"])
        for name, text in field_texts(row).items():
            n = _add_field(out, row["ord"], FIELD_CODE[name], text, analyzer, words)
            lengths[name].append(n)
    return (pa.table(out, schema=ANALYZED), pa.table(lengths, schema=LENGTHS),
            surface_table(per_doc, analyzer))


def _add_field(out: dict[str, list], ord_: int, code: int, text: str,
               analyzer: Analyzer, words: Counter) -> int:
    """Append the terms of one field; return its length in tokens."""
    if not text:
        return 0
    surface = split_words(text)
    words.update(surface)
    positions: dict[str, list[int]] = {}
    for pos, term in enumerate(analyzer.stem_all(surface)):
        where = positions.get(term)
        if where is None:
            positions[term] = [pos]
        else:
            where.append(pos)
    n = len(positions)
    out["ord"] += [ord_] * n
    out["field"] += [code] * n
    out["term"] += positions.keys()
    out["tf"] += map(len, positions.values())
    out["positions"] += positions.values()
    return len(surface)


def surface_table(per_doc: dict[tuple[str, str], Counter], analyzer: Analyzer) -> pa.Table:
    """One row per (document, surface word) with the word's term and count."""
    cols: dict[str, list] = {"tree": [], "path": [], "word": [], "term": [], "freq": []}
    for (tree, path), words in per_doc.items():
        items = sorted(words.items())
        cols["tree"] += [tree] * len(items)
        cols["path"] += [path] * len(items)
        cols["word"] += [w for w, _ in items]
        cols["term"] += analyzer.stem_all([w for w, _ in items])
        cols["freq"] += [n for _, n in items]
    return pa.table(cols, schema=SURFACE)
