"""The relations a reader names, as SQL: views over a generation's artifacts, the four
relations the search path reads (``RELATIONS``) and what a long-lived reader asks of
them (``ra.index.reader.IndexReader``).

- ``create_views``: a view per artifact (``VIEWS``), the search relations over them (or
  over the compact artifacts: ``compact_relations``), the resolved ``links`` and, with
  ``[semantic]``, the ``vectors``; a reader's connection and ``ra sql``'s have them all;
- ``RELATIONS``: ``meta``, ``field_lengths``, ``tf_postings``, ``phrase_postings`` (the
  postings with their positions and field length, for phrases) and ``texts``, whose
  SQL is the same however the data is held (views over Parquet, or tables in memory:
  ``RESIDENT``, and ``texts`` over the ``ChunkStore``: ``register_store``);
- the lookups of a long-lived reader: the vocabulary and typo candidates
  (``VOCABULARY_SQL``), a chunk's ancestors (``ANCESTORS_SQL``) and the rows of its
  ``ChunkStore`` (``store_sql``).
"""

from __future__ import annotations

from pathlib import Path

from ra.index.chunkstore import META_COLUMNS, RELATION_COLUMNS, ChunkStore
from ra.index.links import RAW as RAW_LINKS
from ra.index.links import links_sql
from ra.store.layout import COMPACT, FIELDS, VECTORS, artifact_path, part_name

#: Artifacts read as views; ``view_name`` gives the view of each (the links artifact is
#: ``link_rows``: the view ``links`` resolves it, ``ra.index.links``).
VIEWS = ("files", "chunks", "terms", "postings", "words", "lengths", "analyzed", "surface",
         "links")


def view_name(artifact: str) -> str:
    """The view an artifact is read as."""
    return RAW_LINKS if artifact == "links" else artifact


def create_views(con, generation) -> None:
    """The views over ``generation``'s artifacts, the relations over them and the resolved
    ``links`` (a reader's, and ``ra sql``'s sandboxed connection's)."""
    for name in VIEWS:
        con.execute(f"CREATE VIEW {view_name(name)} AS SELECT * FROM read_parquet("
                    f"{quote(generation.scan(name))})")
    define_relations(con, generation)
    con.execute(f"CREATE TEMP VIEW links AS {links_sql()}")
    if (generation.manifest.get("vectors") or {}).get("dims"):  # [semantic]
        con.execute(f"CREATE VIEW {VECTORS} AS SELECT * FROM read_parquet("
                    f"{quote(generation.scan(VECTORS))})")


def define_relations(con, generation, names=None) -> None:
    """(Re)define the relations ``names`` (default: all of ``RELATIONS``) as views over
    ``generation``'s files, read from its compact artifacts where it has them."""
    compact = compact_relations(generation)
    for name, body, _ in RELATIONS:
        if names is None or name in names:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {compact.get(name, body)}")


def field_length(m: str, field: str) -> str:
    """SQL for the length of field ``field`` (a field code expression) of chunk ``m``."""
    whens = " ".join(f"WHEN {code} THEN {m}.len_{name}" for code, name in enumerate(FIELDS))
    return f"CASE {field} {whens} END"


#: The end of a select list over ``postings p``: each posting's field length, and the join.
_WITH_LENGTH = (f"{field_length('l', 'p.field')} AS len "
                "FROM postings p JOIN field_lengths l ON l.ord = p.ord")

#: The relations the search path reads, as ``(name, definition, sort order)``. A
#: short-lived reader defines them as views over the Parquet artifacts; a long-lived one
#: materialises them in this order (later ones read earlier ones), sorted for zone maps.
RELATIONS = (
    ("meta", "SELECT " + ", ".join(META_COLUMNS) + ", status, tags, "
     "ord - position AS doc_ord FROM chunks", "ord"),
    ("field_lengths", "SELECT ord, " + ", ".join(f"{f} AS len_{f}" for f in FIELDS)
     + " FROM lengths", "ord"),
    ("tf_postings", f"SELECT p.term_id, p.ord, p.field, p.tf, {_WITH_LENGTH}", "term_id, ord"),
    ("phrase_postings", f"SELECT p.term_id, p.ord, p.field, p.positions, {_WITH_LENGTH}",
     "term_id, ord"),
    ("texts", "SELECT ord, heading || body AS text, plain FROM chunks", "ord"),
)


def compact_relations(generation) -> dict[str, str]:
    """``meta``, ``tf_postings`` and ``phrase_postings`` read from the generation's compact
    artifacts (``ra.pipeline.compact``): two files instead of a join over every partition, the
    partitions an update rewrote since (``stale``) read from their own files. Empty when
    the generation has no compact artifacts."""
    entry = generation.manifest.get("compact")
    if entry is None:
        return {}
    held = set(generation.manifest.get("partitions") or ())
    stale = [p for p in entry["stale"] if p in held]
    keep = f" WHERE part NOT IN ({', '.join(map(str, entry['stale']))})" if entry["stale"] else ""

    def read(name: str) -> str:
        if name in COMPACT:
            return f"read_parquet({quote(generation.path / artifact_path(name))})"
        files = ", ".join(quote(generation.path / name / part_name(p)) for p in stale)
        return f"read_parquet([{files}])"

    columns = ", ".join((*META_COLUMNS, "status", "tags", "position"))
    chunks = f"SELECT {columns} FROM {read('hot_chunks')}{keep}"
    postings = f"SELECT term_id, ord, field, tf, len FROM {read('hot_postings')}{keep}"
    positions = (f"SELECT term_id, ord, field, positions, len FROM {read('hot_postings')}"
                 f"{keep}")
    if stale:
        chunks += f" UNION ALL SELECT {columns} FROM {read('chunks')}"
        lengths = ", ".join(f"{f} AS len_{f}" for f in FIELDS)
        joined = (f"{field_length('l', 'p.field')} AS len FROM {read('postings')} p "
                  f"JOIN (SELECT ord, {lengths} FROM {read('lengths')}) l ON l.ord = p.ord")
        postings += f" UNION ALL SELECT p.term_id, p.ord, p.field, p.tf, {joined}"
        positions += f" UNION ALL SELECT p.term_id, p.ord, p.field, p.positions, {joined}"
    return {"meta": f"SELECT {', '.join(META_COLUMNS)}, status, tags, ord - position AS "
                    f"doc_ord FROM ({chunks})",
            "tf_postings": postings, "phrase_postings": positions}


#: The positions of terms ``$terms`` in the chunks ``$ords`` (sorted; their range lets
#: DuckDB skip row groups), with each field's length: what a phrase is found in
#: (``ra.query.phrases``; ``IndexReader.phrase_positions``).
POSITIONS_SQL = ("SELECT term_id, ord, field, len, positions FROM phrase_postings "
                 "WHERE term_id = ANY($terms::INTEGER[]) AND ord BETWEEN $low AND $high "
                 "AND ord = ANY($ords::INTEGER[])")


#: The relations a long-lived reader materialises as DuckDB tables, each when a query
#: first needs it (``IndexReader.hold``); ``texts`` is a view over its ``ChunkStore``'s
#: Arrow table (``register_store``).
RESIDENT = ("meta", "field_lengths", "tf_postings")
STORE_VIEW = "chunk_columns"  # the name the ``ChunkStore``'s table is registered under

#: Exact terms plus typo candidates (with their terms) in one query; ``$d`` is the edit
#: distance. Levenshtein <= 2d bounds OSA <= d (a transposition is two Levenshtein edits);
#: for d = 1 a candidate must also share the word's anchored prefix or suffix
#: (``ra.index.vocabulary.anchors``; empty anchors match every word).
VOCABULARY_SQL = """\
SELECT NULL AS typed, t.term AS word, t.term, t.term_id, t.df FROM terms t
WHERE t.term = ANY($terms::VARCHAR[])
UNION ALL
SELECT q.w, v.word, v.term, v.term_id, t.df
FROM (SELECT unnest($words::VARCHAR[]) AS w, unnest($prefixes::VARCHAR[]) AS pre,
             unnest($suffixes::VARCHAR[]) AS suf) q,
     words v JOIN terms t ON t.term_id = v.term_id
WHERE length(v.word) BETWEEN length(q.w) - $d AND length(q.w) + $d
  AND (starts_with(v.word, q.pre) OR ends_with(v.word, q.suf))
  AND levenshtein(v.word, q.w) <= 2 * $d"""

#: Every proper ancestor of the chunks ``$ords``: the chunks of the same document (its
#: node is ``ord - position``) whose subtree range ``ord .. ord + descendants`` holds one.
_ANCESTORS = (
    "WITH c AS (SELECT ord AS o, doc_ord FROM meta WHERE ord = ANY($ords::INTEGER[])) "
    "SELECT DISTINCT {} FROM meta m "
    "JOIN c ON m.doc_ord = c.doc_ord AND m.ord < c.o AND c.o <= m.ord + m.descendants")
ANCESTORS_SQL = _ANCESTORS.format(", ".join("m." + c for c in META_COLUMNS))
ANCESTOR_ORDS_SQL = _ANCESTORS.format("m.ord")


def store_sql(meta: str, texts: str) -> str:
    """Rows of ``ra.index.chunkstore.STORE_COLUMNS`` for a long-lived reader's
    ``ChunkStore``, from the queries ``meta`` and ``texts`` of those relations (a
    chunk's parent is in the same rows: documents are whole)."""
    cols = ", ".join(f"m.{c}" for c in RELATION_COLUMNS)
    return (f"SELECT {cols}, p.ord AS parent_ord, t.text, t.plain FROM ({meta}) m "
            f"JOIN ({texts}) t ON t.ord = m.ord LEFT JOIN ({meta}) p ON p.id = m.parent_id")


def store_rows(chunks):
    """The rows ``store_sql`` gives, from chunk rows held in memory (``CHUNKS`` of whole
    documents, each chunk's parent among them): what a reader carried over to an update
    made in the same process adds for the update's new chunks (``ra.index.successor``),
    without reading them back from the partition just written."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = chunks.sort_by("ord")
    parent = pc.index_in(chunks["parent_id"], value_set=chunks["id"].combine_chunks())
    columns = {name: chunks[name] for name in RELATION_COLUMNS if name != "doc_ord"}
    columns["doc_ord"] = pc.subtract(chunks["ord"], chunks["position"])
    columns["parent_ord"] = chunks["ord"].take(parent)
    columns["text"] = pc.binary_join_element_wise(chunks["heading"], chunks["body"],
                                                  pa.scalar("", pa.string()))
    columns["plain"] = chunks["plain"]
    return pa.table(columns)


def register_store(con, store: ChunkStore) -> None:
    """Make ``texts`` a view over ``store``'s Arrow table: DuckDB reads the few texts a
    query asks for from its (memory-mapped) buffers. ``meta`` becomes a table of DuckDB's
    own (compressed: ``IndexReader._materialise``) when a query needs it (``RESIDENT``):
    as a view over the same buffers it cost every query that joins it a conversion of the
    columns it reads (``ra context`` on cpp-docs: 26.4 ms of SQL against 18.4, about 100
    MB less memory)."""
    con.register(STORE_VIEW, store.table())
    con.execute(f"CREATE OR REPLACE TEMP VIEW texts AS SELECT ord, text, plain "
                f"FROM {STORE_VIEW}")


def quote(path: Path) -> str:
    """``path`` as an SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"
