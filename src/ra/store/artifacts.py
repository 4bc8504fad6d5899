"""Parquet schemas of the index artifacts, in one place.

Every stage writes one of these tables; ``ra sql`` and plain DuckDB read them, so each
column carries a description (stored as Parquet field metadata). Bump
``SCHEMA_VERSION`` whenever a column changes meaning: the manifest records it and a
mismatch forces a full rebuild.

Artifacts of one generation (a directory, see ``ra.store.generations``). Per-file data is
partitioned: each artifact is a folder of ``part-NNNN.parquet`` files, one per group of
source files, so an update rewrites only the partitions whose files changed
(``ra.pipeline.partitions``); read a whole artifact with ``'GEN/chunks/*.parquet'``.

    files/      one row per indexed file
    chunks/     one row per chunk (document node and every heading), preorder per file
    analyzed/   the analyze stage: one row per (chunk, field, term) with positions
    lengths/    one row per chunk: analysed length of each field
    surface/    one row per (document, surface word): how often it occurs
    postings/   one row per (term, chunk, field), sorted by term_id then chunk
    links/      one row per outgoing link of a chunk, its target normalised (``ra.text.links``);
                the ``links`` view resolves targets to chunk ids when the index is read
    terms.parquet   one row per distinct term: term_id, df, collection frequency
    words.parquet   one row per distinct surface word: the term it stems to (fuzzy)
    manifest.json   schema version, config hash, partitions, statistics, and a digest
                    of every file's fingerprint (a freshness check compares only that)
    fingerprints.json   each file's fingerprint and partition (read when files changed)
"""

from __future__ import annotations

import pyarrow as pa

from ra.store.layout import FIELD_CODE, FIELDS, SCHEMA_VERSION  # noqa: F401 (re-exported)


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"description": doc})


FILES = pa.schema([
    _f("tree", pa.string(), "tree name from .ra.toml", False),
    _f("path", pa.string(), "path relative to the tree root, '/'-separated", False),
    _f("abspath", pa.string(), "absolute path of the file when indexed", False),
    _f("kind", pa.string(), "markdown | text", False),
    _f("size", pa.int64(), "file size in bytes (fingerprint)", False),
    _f("mtime_ns", pa.int64(), "modification time in ns since the epoch (fingerprint)", False),
    _f("ctime_ns", pa.int64(), "inode change time in ns since the epoch (fingerprint: no "
       "tool can set it back)", False),
    _f("is_global", pa.bool_(), "true when the tree comes from ~/.ra.toml", False),
])

DOCS = pa.schema([  # in memory only: the chunk stage's input
    _f("tree", pa.string(), "tree name", False),
    _f("path", pa.string(), "path relative to the tree root", False),
    _f("text", pa.string(), "decoded, newline-normalised text", False),
    _f("mtime_ns", pa.int64(), "modification time", False),
    _f("is_global", pa.bool_(), "tree from ~/.ra.toml", False),
    _f("problems", pa.list_(pa.string()), "decoding problems"),
])

CHUNKS = pa.schema([
    _f("ord", pa.int32(), "chunk number in this generation; postings refer to it", False),
    _f("id", pa.string(), "chunk id: tree:path for documents, tree:path#slug", False),
    _f("doc_id", pa.string(), "id of the document node (tree:path)", False),
    _f("parent_id", pa.string(), "id of the parent chunk; null for documents"),
    _f("tree", pa.string(), "tree name", False),
    _f("path", pa.string(), "path relative to the tree root", False),
    _f("depth", pa.int8(), "0 for the document node, else the heading level 1-6", False),
    _f("position", pa.int32(), "preorder index within the document (document = 0)", False),
    _f("sibling_count", pa.int32(), "number of children of the parent", False),
    _f("descendants", pa.int32(), "nodes below this one; subtree = ord..ord+descendants",
       False),
    _f("title", pa.string(), "heading text, or the document title", False),
    _f("doc_title", pa.string(), "title of the document", False),
    _f("breadcrumb", pa.string(), "Doc Title › Parent › Child", False),
    _f("tags", pa.list_(pa.string()), "document tags"),
    _f("status", pa.string(), "document frontmatter status (archived notes are hidden)"),
    _f("description", pa.string(), "frontmatter description (document nodes only)"),
    _f("applies_to", pa.list_(pa.string()), "globs of the files the document is about, "
       "from its frontmatter (globs, paths, applyTo, fileMatchPattern: agent rule files); "
       "document nodes only"),
    _f("is_global", pa.bool_(), "true when the tree comes from ~/.ra.toml", False),
    _f("mtime_ns", pa.int64(), "modification time of the file", False),
    _f("heading", pa.string(), "the heading line as written; empty for documents", False),
    _f("body", pa.string(), "the chunk's own text up to the next heading", False),
    _f("plain", pa.string(), "what a reader sees of heading and body, as one line: "
       "markup stripped (snippets are cut from it)", False),
    _f("line", pa.int32(), "line number (from 1) where the chunk's content starts", False),
    _f("byte_start", pa.int64(), "span start: byte after the heading line", False),
    _f("byte_end", pa.int64(), "span end: next heading of equal or higher level, or EOF",
       False),
    _f("chars", pa.int32(), "characters of the chunk's content incl. subsections", False),
    _f("tokens", pa.int32(), "cl100k_base tokens of the chunk as shown in full: its id and "
       "breadcrumb lines (ra.text.tokens.frame) and its content incl. subsections", False),
])

ANALYZED = pa.schema([
    _f("ord", pa.int32(), "chunk number", False),
    _f("field", pa.int8(), "0 title, 1 tags, 2 path, 3 body", False),
    _f("term", pa.string(), "analysed (stemmed) term", False),
    _f("tf", pa.int32(), "occurrences of the term in this field of this chunk", False),
    _f("positions", pa.list_(pa.int32()), "token positions within the field", False),
])

LENGTHS = pa.schema([
    _f("ord", pa.int32(), "chunk number", False),
    _f("title", pa.int32(), "tokens in the title field (heading and breadcrumb)", False),
    _f("tags", pa.int32(), "tokens in the tags field", False),
    _f("path", pa.int32(), "tokens in the path field (path and its components)", False),
    _f("body", pa.int32(), "tokens in the body field", False),
])

SURFACE = pa.schema([
    _f("tree", pa.string(), "tree of the document", False),
    _f("path", pa.string(), "path of the document", False),
    _f("word", pa.string(), "a lowercased surface word of the document", False),
    _f("term", pa.string(), "the term it stems to", False),
    _f("freq", pa.int64(), "occurrences in the document (all fields of all its chunks)",
       False),
])

WORDS = pa.schema([
    _f("word", pa.string(), "a lowercased surface word as it appears in the corpus", False),
    _f("term", pa.string(), "the term it stems to", False),
    _f("term_id", pa.int32(), "term_id of that term", False),
    _f("freq", pa.int64(), "occurrences of the surface word", False),
])

TERMS = pa.schema([
    _f("term_id", pa.int32(), "term number, in term order", False),
    _f("term", pa.string(), "analysed (stemmed) term", False),
    _f("df", pa.int32(), "chunks containing the term in any field", False),
    _f("cf", pa.int64(), "occurrences of the term in the collection, all fields", False),
])

POSTINGS = pa.schema([
    _f("term_id", pa.int32(), "term number (terms.term_id)", False),
    _f("ord", pa.int32(), "chunk number (chunks.ord)", False),
    _f("field", pa.int8(), "0 title, 1 tags, 2 path, 3 body", False),
    _f("tf", pa.int32(), "term frequency in this field of this chunk", False),
    _f("positions", pa.list_(pa.int32()), "token positions within the field", False),
])

LINKS = pa.schema([
    _f("ord", pa.int32(), "chunk the link is in (chunks.ord)", False),
    _f("tree", pa.string(), "tree of the document holding the link", False),
    _f("path", pa.string(), "path of the document holding the link", False),
    _f("seq", pa.int32(), "position of the link in its chunk (0, 1, ...); -1, -2, ... "
       "for a page row, -1000, -1001, ... for an anchor row", False),
    _f("kind", pa.string(), "link (markdown, reference, autolink) | wiki | embed | page "
       "(no link: an address the document's front matter gives it, slug, id, permalink, "
       "url, in target and target_paths) | anchor (no link: an id an HTML anchor gives "
       "the chunk, <a id=...>, in target)", False),
    _f("text", pa.string(), "the link text a reader sees; a page row's: 'moved' for an "
       "address the page moved from (aliases, redirect_from, oldUrl), else empty", False),
    _f("target", pa.string(), "the target as written", False),
    _f("external", pa.bool_(), "a URL with a scheme (https:, mailto:) or //host", False),
    _f("target_paths", pa.list_(pa.string()),
       "tree-relative files the target may name, preferred first"),
    _f("target_name", pa.string(),
       "a wiki link's file name (lowercase, no suffix), matched anywhere in the tree"),
    _f("target_anchors", pa.list_(pa.string()), "candidate heading slugs, preferred first"),
])

#: Columns of the ``links`` view (``ra sql``): the artifact's, resolved against the index.
LINKS_VIEW = [
    ("source_id", "VARCHAR", "id of the chunk holding the link"),
    ("source_ord", "INTEGER", "its chunks.ord"),
    ("seq", "INTEGER", "position of the link in its chunk"),
    ("kind", "VARCHAR", "link | wiki | embed"),
    ("text", "VARCHAR", "the link text a reader sees"),
    ("target", "VARCHAR", "the target as written"),
    ("external", "BOOLEAN", "a URL outside the knowledge base"),
    ("target_id", "VARCHAR", "the indexed chunk the link points to (its heading when "
                             "the anchor is indexed, else its document); null if none"),
]

#: ``hot_store.arrow`` (``ra.pipeline.compact.write_store``): what a long-lived reader
#: holds of every chunk (``ra.index.chunkstore``), uncompressed Arrow IPC it memory-maps.
#: Its chunk columns are those of ``chunks``, nullable as the reader's own loads are.
HOT_STORE = pa.schema([
    *(CHUNKS.field(name).with_nullable(True) for name in (
        "ord", "id", "doc_id", "parent_id", "tree", "path", "depth", "sibling_count",
        "descendants", "title", "breadcrumb", "is_global", "tokens", "line", "mtime_ns",
        "status", "tags")),
    _f("doc_ord", pa.int32(), "ord of the chunk's document node (ord - position)"),
    _f("parent_ord", pa.int32(), "ord of the parent chunk; null for documents"),
    _f("text", pa.string(), "the chunk's own markdown: heading || body"),
    _f("plain", pa.string(), "the chunk's own text as a reader sees it (chunks.plain)"),
    _f("part", pa.int32(), "the partition the chunk's file is in"),
    _f("id_order", pa.int32(), "per record batch: the row holding its k-th smallest id"),
])

SCHEMAS = {
    "files": FILES, "chunks": CHUNKS, "analyzed": ANALYZED, "lengths": LENGTHS,
    "words": WORDS, "terms": TERMS, "postings": POSTINGS, "surface": SURFACE,
    "links": LINKS,
}


def empty(name: str) -> pa.Table:
    """An empty table of artifact ``name``."""
    return SCHEMAS[name].empty_table()


def describe(name: str) -> list[tuple[str, str, str]]:
    """``(column, type, description)`` for each column of artifact ``name`` (for
    ``links``, of the resolved view ``ra sql`` shows)."""
    if name == "links":
        return LINKS_VIEW
    return [(f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode())
            for f in SCHEMAS[name]]
