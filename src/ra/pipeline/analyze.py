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
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ra.pipeline.typed import int64
from ra.store.artifacts import ANALYZED, LENGTHS, SURFACE
from ra.store.layout import FIELDS
from ra.text import is_markdown, unescaped
from ra.text.analysis import Analyzer, analyzer_for, split_words
from ra.text.document import BREADCRUMB_SEPARATOR
from ra.text.links import anchored_bodies, with_anchors
from ra.text.markup import list_lead, plain_text

_COLUMNS = ("ord", "tree", "breadcrumb", "tags", "path", "heading", "body", "description",
            "descendants", "position")
_NO_FIELDS = {"title": "", "tags": "", "path": "", "body": ""}
#: The columns ``field_words`` and ``Tokens.surface`` read of a row
_FIELD_COLUMNS = ("tree", "breadcrumb", "tags", "path", "description", "descendants")


def field_texts(row: dict, body: str) -> dict[str, str]:
    """The text of each field of one chunk row; none for a chunk with sections below it
    and no words of its own (see the module docstring). ``body``: the plain text of the
    row's body (``body_texts``)."""
    if row["description"]:
        body = f"{row['description']}\n{body}"
    if row["descendants"] and not split_words(body):
        return _NO_FIELDS
    return {
        "title": row["breadcrumb"],
        "tags": " ".join(row["tags"] or ()),
        "path": _path_words(row["path"]),
        "body": body,
    }


def field_words(rows: list[dict], bodies: list[str]) -> list[list[str]]:
    """The surface words of each field (``FIELDS``) of each row, the rows' fields one
    after the other: ``split_words`` of ``field_texts``. A document's chunks share its
    path and tags, whose words are split once per distinct value, and a body's words are
    split once (``field_texts`` splits them to tell an empty chunk, then again). With
    the rows' texts left in Arrow when the bodies are given, 0.6 s of the 4.7 s the stage
    took on cpp-docs. A breadcrumb's words are its crumbs', each split once: no word
    reaches across the separator, whose spaces also end what lowercasing looks at (a
    final sigma), and a chunk's crumbs are its document's title and its sections'
    headings, which its siblings and many other pages share ("Remarks", "See also")."""
    out: list[list[str]] = []
    paths: dict[str, list[str]] = {}
    tags: dict[tuple[str, ...], list[str]] = {}
    crumbs: dict[str, list[str]] = {}
    for row, body in zip(rows, bodies, strict=True):
        if row["description"]:
            body = f"{row['description']}\n{body}"
        body_words = split_words(body)
        if row["descendants"] and not body_words:
            out += ([], [], [], [])
            continue
        path, tag = row["path"], tuple(row["tags"] or ())
        if (path_words := paths.get(path)) is None:
            path_words = paths[path] = split_words(_path_words(path))
        if (tag_words := tags.get(tag)) is None:
            tag_words = tags[tag] = split_words(" ".join(tag))
        title_words = []
        for crumb in row["breadcrumb"].split(BREADCRUMB_SEPARATOR):
            if (words := crumbs.get(crumb)) is None:
                words = crumbs[crumb] = split_words(crumb)
            title_words += words
        out += (title_words, tag_words, path_words, body_words)
    return out


def _path_words(path: str) -> str:
    """The path field's text: the path without its suffix, URL escapes decoded (a page
    of an Azure DevOps wiki, ``ODO%2D1-(SI).md``, is "ODO-1 (SI)", not "odo 2d1 si"),
    then the words of the camelCase names of the file's: a runbook named for its alert,
    ``etcdNoLeader.md``, is also "etcd No Leader" (the name alone is one word, and "etcd
    no leader" did not find it). Not the folders': ``Microsoft.PowerShell.Core/`` would
    put "shell" in the path of each of its pages."""
    text = unescaped(posixpath.splitext(path)[0])
    names = _CAMEL_NAME.findall(text.rpartition("/")[2])
    return f"{text} {' '.join(_CAMEL.sub(' ', n) for n in names)}" if names else text


#: Where a camelCase name's words meet: ``etcd|No|Leader``, ``XML|Http|Request``
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: A name of letters and digits that is camelCase, for ``_path_words``
_CAMEL_NAME = re.compile(r"[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*")


def body_texts(rows: list[dict]) -> list[str]:
    """The body field's text of each chunk row of whole documents (before the
    description): what a reader sees of a markdown chunk, the ids of the anchors above its
    heading first (``ra.text.links.anchored_bodies``, as the chunk stage reads them), a
    text file's as it is."""
    out: list[str] = []
    starts = [i for i, row in enumerate(rows) if row["position"] == 0] + [len(rows)]
    for a, b in zip(starts, starts[1:], strict=False):
        doc = rows[a:b]
        if not is_markdown(doc[0]["path"]):
            out += (row["body"] for row in doc)
            continue
        out += (with_anchors(plain_text(body, list_lead(row["heading"])), ids)
                for row, (body, ids) in zip(doc, anchored_bodies([row["body"] for row in doc]),
                                            strict=True))
    return out


def analyze(chunks: pa.Table, language: str = "english", bodies: list[str] | None = None
            ) -> tuple[pa.Table, pa.Table, pa.Table]:
    """``(analyzed, lengths, surface)`` for the rows of ``chunks``; ``bodies``: the
    ``body_texts`` of the rows, when the caller has it (``ra.pipeline.run`` makes it
    from the code it set aside for the links).

    ``surface`` counts each lowercased surface word per document (tree, path): the
    vocabulary for typo matching, kept per document so an update can subtract exactly
    what a changed file contributed.

    Whole documents are analysed ``BATCH`` chunks or so at a time: a batch's words are
    Python strings until Arrow holds them, and a partition's at once took a worker
    100 MB more on cpp-docs.
    """
    analyzer = analyzer_for(language)
    pieces = [_analyze(chunks.slice(a, b - a), analyzer,
                       None if bodies is None else bodies[a:b]) for a, b in _batches(chunks)]
    return tuple(pa.concat_tables([p[i] for p in pieces]) for i in range(3))


#: Chunks analysed at a time (whole documents: a batch ends where a document does).
BATCH = 2_048


def _batches(chunks: pa.Table) -> list[tuple[int, int]]:
    """``[a, b)`` row ranges of about ``BATCH`` chunks that cut no document (its chunks
    follow its node, ``position`` 0)."""
    starts = pc.indices_nonzero(pc.equal(chunks["position"], int64(0))).to_pylist()
    cuts, last = [0], 0
    for start in starts:
        if start - last >= BATCH:
            cuts.append(start)
            last = start
    return list(zip(cuts, cuts[1:] + [chunks.num_rows], strict=True))


def _analyze(chunks: pa.Table, analyzer: Analyzer, bodies: list[str] | None
             ) -> tuple[pa.Table, pa.Table, pa.Table]:
    # the texts of the chunks only when their bodies are still to be read
    rows = chunks.select(_COLUMNS if bodies is None else _FIELD_COLUMNS).to_pylist()
    bodies = bodies or body_texts(rows)
    words = pa.array(field_words(rows, bodies), pa.list_(pa.string()))
    tokens = Tokens.of(words, analyzer)
    return (tokens.analyzed(chunks["ord"]), _lengths(words, chunks["ord"]),
            tokens.surface(rows))


@dataclass(frozen=True)
class Tokens:
    """Every token of a table of fields, as parallel arrays: ``at`` is the field's row
    (chunk × ``len(FIELDS)`` + field code), ``pos`` the token's position in it, ``word``
    and ``term`` indices into the distinct surface words and terms."""

    at: pa.Array
    pos: pa.Array
    word: pa.Array
    term: pa.Array
    words: pa.Array  # distinct surface words
    terms: pa.Array  # distinct terms
    stems: pa.Array  # the term of each distinct surface word

    @classmethod
    def of(cls, fields: pa.ListArray, analyzer: Analyzer) -> Tokens:
        """The tokens of ``fields`` (one list of surface words per field row); each
        distinct word is stemmed once (``Analyzer.stem_all`` caches it for the process)."""
        flat = fields.flatten()
        at = pc.list_parent_indices(fields)
        first = pc.take(fields.offsets, at).cast(pa.int32())
        pos = pc.subtract(_count_up(len(flat)), first)
        word = flat.dictionary_encode()
        stems = pa.array(analyzer.stem_all(word.dictionary.to_pylist()), pa.string())
        term = stems.dictionary_encode()
        return cls(at, pos, word.indices, pc.take(term.indices, word.indices),
                   word.dictionary, term.dictionary, stems)

    def analyzed(self, ords: pa.ChunkedArray) -> pa.Table:
        """Rows of ``ANALYZED``: per field row and term, tf and positions; in each field
        the terms in the order of their first occurrence."""
        n = len(FIELDS)
        g = (pa.table({"at": self.at, "term": self.term, "pos": self.pos})
             .group_by(["at", "term"], use_threads=False)
             .aggregate([("pos", "list"), ("pos", "count"), ("pos", "min")])
             .sort_by([("at", "ascending"), ("pos_min", "ascending")]))
        at, per_chunk = g["at"], int64(n)
        return pa.table({
            "ord": pc.take(ords, pc.divide(at, per_chunk)),
            "field": pc.subtract(at, pc.multiply(pc.divide(at, per_chunk), per_chunk)
                                 ).cast(pa.int8()),
            "term": pc.take(self.terms, g["term"]),
            "tf": g["pos_count"].cast(pa.int32()),
            "positions": g["pos_list"].cast(pa.list_(pa.int32())),
        }, schema=ANALYZED)

    def surface(self, rows: list[dict]) -> pa.Table:
        """One row per (document, surface word) with the word's term and count, each
        document's words sorted."""
        doc_of_chunk, docs = [], {}
        for row in rows:
            doc_of_chunk.append(docs.setdefault((row["tree"], row["path"]), len(docs)))
        doc = pc.take(pa.array(doc_of_chunk, pa.int32()), pc.divide(self.at, int64(len(FIELDS))))
        g = (pa.table({"doc": doc, "word": self.word}).group_by(["doc", "word"])
             .aggregate([("word", "count")]))
        g = pa.table({"doc": g["doc"], "word": pc.take(self.words, g["word"]),
                      "term": pc.take(self.stems, g["word"]), "freq": g["word_count"]}
                     ).sort_by([("doc", "ascending"), ("word", "ascending")])
        keys = list(docs)
        return pa.table({
            "tree": pc.take(pa.array([k[0] for k in keys], pa.string()), g["doc"]),
            "path": pc.take(pa.array([k[1] for k in keys], pa.string()), g["doc"]),
            "word": g["word"], "term": g["term"], "freq": g["freq"]}, schema=SURFACE)


def _count_up(n: int) -> pa.Array:
    """0, 1, ..., n - 1 as int32, summed by Arrow: ``pa.array(range(n))`` made a Python
    int of each of the 6.3 million tokens of cpp-docs (0.3 s more of the stage's time)."""
    return pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int32()), n),
                             start=pa.scalar(-1, pa.int32()))  # typed: ra.pipeline.typed


def _lengths(fields: pa.ListArray, ords: pa.ChunkedArray) -> pa.Table:
    """Tokens per field of each chunk (``LENGTHS``)."""
    n = len(FIELDS)
    counts = pc.list_value_length(fields).cast(pa.int32())
    columns = {name: pc.take(counts, pa.array(range(code, len(counts), n), pa.int64()))
               for code, name in enumerate(FIELDS)}
    return pa.table({"ord": ords, **columns}, schema=LENGTHS)
