"""Stage 2, chunk: documents → the hierarchical chunk table.

``chunk`` is pure: it takes decoded documents (the runner reads the files) and returns one
row per chunk node, preorder within each document, numbered from ``first_ord``. Parsing
itself lives in ``ra.text.document``; this stage flattens its node trees into Arrow columns and
adds cl100k_base token counts.

Token counts: a chunk is shown with its subsections, under the lines naming it
(``ra.text.tokens.frame``: its id and breadcrumb), so its cost is the tokens of those
lines and of its whole subtree. Each node's own text (heading line + body) is encoded once
and subtree totals are summed from those counts: text between headings ends at a line
break, where cl100k_base never merges across, so the sum equals encoding the subtree at
once up to a token or so per boundary, and every byte of the corpus is encoded once
instead of once per ancestor.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow as pa

from ra.store.artifacts import CHUNKS, DOCS
from ra.text import is_markdown
from ra.text.document import Document, parse_document
from ra.text.links import section_anchors, with_anchors
from ra.text.markup import list_lead, plain_held, reader_line, restore, set_code_aside
from ra.text.tokens import count_frames, count_many

_NEWLINE = re.compile(b"\n")


@dataclass(frozen=True)
class SourceDoc:
    """A decoded file handed to the chunk stage."""

    tree: str
    path: str
    text: str
    mtime_ns: int
    is_global: bool
    problems: tuple[str, ...] = ()


def parse_all(docs: Sequence[SourceDoc], chunk_at_headings: bool) -> list[Document]:
    """Parse every document (``ra.text.document.parse_document``)."""
    return [parse_document(d.text, d.tree, d.path, chunk_at_headings=chunk_at_headings)
            for d in docs]


def docs_table(docs: Sequence[SourceDoc]) -> pa.Table:
    """The in-memory input of ``chunk``: one row per decoded file (schema ``DOCS``)."""
    return pa.table({
        "tree": [d.tree for d in docs], "path": [d.path for d in docs],
        "text": [d.text for d in docs], "mtime_ns": [d.mtime_ns for d in docs],
        "is_global": [d.is_global for d in docs],
        "problems": [list(d.problems) for d in docs],
    }, schema=DOCS)


def chunk(docs: pa.Table, *, chunk_at_headings: bool = True,
          first_ord: int = 0) -> tuple[pa.Table, list[Document]]:
    """The chunk rows of ``docs`` (schema ``ra.store.artifacts.CHUNKS``) and the parsed docs."""
    done = chunk_docs([SourceDoc(**{**row, "problems": tuple(row["problems"] or ())})
                       for row in docs.to_pylist()],
                      chunk_at_headings=chunk_at_headings, first_ord=first_ord)
    return done.chunks, done.parsed


class Chunked(NamedTuple):
    """What ``chunk_docs`` makes of a batch of documents, per chunk in ``ord`` order
    where it is a list."""

    chunks: pa.Table  # the rows, ``CHUNKS``
    parsed: list[Document]
    #: ``set_code_aside`` of each markdown chunk's body (None for a plain text file's):
    #: the links stage reads the same code set aside
    asides: list[tuple[str, list[str]] | None]
    bodies: list[str]  # what a reader sees of each body (``ra.pipeline.analyze.body_texts``)


def chunk_docs(docs: Sequence[SourceDoc], *, chunk_at_headings: bool = True,
               first_ord: int = 0) -> Chunked:
    """``chunk`` of the rows of ``docs_table(docs)``, for a caller that holds the decoded
    documents (a build's worker): their texts are not turned into Arrow and back. The
    plain text of each body, which ``plain`` is made of, is the analyser's body too."""
    parsed = parse_all(docs, chunk_at_headings)
    nodes = [(doc, n) for doc in parsed for n in doc.nodes]
    # anchors alone above a heading name its section (ra.text.links.section_anchors)
    anchored = [a for doc in parsed for a in section_anchors(doc)]
    asides = [set_code_aside(text, list_lead(n.heading)) if is_markdown(doc.path) else None
              for (doc, n), (text, _) in zip(nodes, anchored, strict=True)]
    held = [n.body if aside is None else plain_held(aside[0])  # code still aside
            for (_, n), aside in zip(nodes, asides, strict=True)]
    held = [with_anchors(text, ids) for text, (_, ids) in zip(held, anchored, strict=True)]
    bodies = [text if aside is None else restore(text, aside[1])
              for text, aside in zip(held, asides, strict=True)]
    plains = [reader_line(n.title if n.heading else None, text, aside is not None,
                          None if aside is None else aside[1])
              for (_, n), text, aside in zip(nodes, held, asides, strict=True)]
    own = [n.heading + n.body for _, n in nodes]
    own_tokens = count_many(own)
    frames = count_frames([n.id for _, n in nodes], [n.breadcrumb for _, n in nodes],
                          [n.doc_id for _, n in nodes])
    rows: list[tuple] = []
    ord_, offset = first_ord, 0
    for src, doc in zip(docs, parsed, strict=True):
        lines = line_finder(src.text)
        counts = own_tokens[offset:offset + len(doc.nodes)]
        lengths = [len(n.heading) + len(n.body) for n in doc.nodes]
        offset += len(doc.nodes)
        tags = list(doc.tags)
        for node in doc.nodes:
            span = slice(node.position, node.position + node.descendants + 1)
            rows.append(_row(ord_, src, doc, node, tags, sum(lengths[span]),
                             frames[ord_ - first_ord] + sum(counts[span]),
                             lines(node.heading_start), plains[ord_ - first_ord]))
            ord_ += 1
    columns = zip(*rows, strict=True) if rows else ([] for _ in _ROW)
    table = pa.table(dict(zip(_ROW, map(list, columns), strict=True)), schema=CHUNKS)
    return Chunked(table, parsed, asides, bodies)


def line_finder(text: str):
    """A function from a UTF-8 byte offset of ``text`` to its line number (from 1)."""
    newlines = [m.start() for m in _NEWLINE.finditer(text.encode("utf-8"))]
    return lambda offset: bisect_right(newlines, offset - 1) + 1


#: The columns of a chunk row (``_row``), in ``CHUNKS`` order.
_ROW = ("ord", "id", "doc_id", "parent_id", "tree", "path", "depth", "position",
        "sibling_count", "descendants", "title", "doc_title", "breadcrumb", "tags", "status",
        "description", "applies_to", "is_global", "mtime_ns", "heading", "body", "plain", "line",
        "byte_start", "byte_end", "chars", "tokens")


def _row(ord_: int, src: SourceDoc, doc: Document, node, tags: list[str], chars: int,
         tokens: int, line: int, plain: str) -> tuple:
    """One chunk row, a tuple (the columns ``_ROW``): a dict per row was most of the
    stage's own time."""
    return (ord_, node.id, node.doc_id, node.parent_id, doc.tree, doc.path, node.depth,
            node.position, node.sibling_count, node.descendants, node.title, doc.title,
            node.breadcrumb, tags, doc.status,
            doc.description if node.depth == 0 else None,
            list(doc.applies_to) if node.depth == 0 and doc.applies_to else None,
            src.is_global, src.mtime_ns,
            node.heading, node.body, plain, line, node.byte_start, node.byte_end, chars, tokens)
