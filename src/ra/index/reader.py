"""Read access to one index generation through DuckDB.

``IndexReader`` pins a published generation (``ra.store.generations``) and opens an in-memory
DuckDB connection whose views name the artifacts, so every query (search SQL, ``ra sql``,
``ra ls``) reads the same generation however often the index is rebuilt meanwhile.

The search path reads four relations of its own, so that its SQL is the same however the
data is held (``RELATIONS``):

- ``meta``: per-chunk metadata, no text (ids, parents, trees, sizes; ``doc_ord`` is the
  ord of the chunk's document node, so a chunk's ancestors are found by integers);
- ``field_lengths``: tokens per field of each chunk, for BM25F length normalisation;
- ``tf_postings``: postings without positions, each with the length of its field;
- ``texts``: each chunk's own markdown (heading and body).

A short-lived reader (one CLI command) defines them as views over Parquet: opening costs
nothing, and one search reads only the columns and row groups it needs. A long-lived
reader (``keep_vocabulary``: the MCP server, in-process use) materialises ``meta``,
``field_lengths`` and ``tf_postings`` on first use, sorted by ``ord`` (``tf_postings`` by
``term_id``), together with the vocabulary and the surface words for typo expansion
(``ra.index.vocabulary.SurfaceIndex``); ``texts`` becomes a view over its
``ra.index.chunkstore.ChunkStore``: every chunk's metadata, parent and text as Arrow
columns, memory-mapped from the generation's ``hot_store.arrow``, which Python reads by
ord for the few chunks a search shows, so metadata, ancestors and content cost no
query. On the first plain search it also loads ``impacts``: each term's quantized
BM25F weight in each chunk (``ra.pipeline.impacts``), from the generation's
``hot_impacts``, which ``ra.query.impacts.top_sql`` adds up (a short-lived reader reads
them as a view; both only when they hold for the configured weights, see ``impacts``).
A search then opens no Parquet file and asks DuckDB one question: the best chunks. That
costs memory of some 40 bytes per posting and the pages of the mapped file a search
touches; phrase queries still read positions from ``postings``. After an incremental
update such a reader is carried over to the new generation by patching its memory
(``successor``) rather than loaded again.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ra.errors import IndexStateError
from ra.index.chunkstore import META_COLUMNS, RELATION_COLUMNS, ChunkMeta, ChunkStore
from ra.index.links import RAW as RAW_LINKS
from ra.index.links import links_sql
from ra.pipeline.impacts import impacts_sql, record
from ra.store import generations
from ra.store.layout import (
    COMPACT,
    FIELDS,
    GLOBAL,
    PARTITIONED,
    VECTORS,
    artifact_path,
    part_name,
)

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
                    f"{_quote(generation.scan(name))})")
    compact = compact_relations(generation)
    for name, body, _ in RELATIONS:
        con.execute(f"CREATE TEMP VIEW {name} AS {compact.get(name, body)}")
    con.execute(f"CREATE TEMP VIEW links AS {links_sql()}")
    if (generation.manifest.get("vectors") or {}).get("dims"):  # [semantic]
        con.execute(f"CREATE VIEW {VECTORS} AS SELECT * FROM read_parquet("
                    f"{_quote(generation.scan(VECTORS))})")


@dataclass(frozen=True)
class Stats:
    """Collection statistics for BM25F."""

    chunks: int
    avg_length: dict[str, float]


def field_length(m: str, field: str) -> str:
    """SQL for the length of field ``field`` (a field code expression) of chunk ``m``."""
    whens = " ".join(f"WHEN {code} THEN {m}.len_{name}" for code, name in enumerate(FIELDS))
    return f"CASE {field} {whens} END"


#: The relations the search path reads, as ``(name, definition, sort order)``. A
#: short-lived reader defines them as views over the Parquet artifacts; a long-lived one
#: materialises them in this order (later ones read earlier ones), sorted for zone maps.
RELATIONS = (
    ("meta", "SELECT " + ", ".join(META_COLUMNS) + ", status, tags, "
     "ord - position AS doc_ord FROM chunks", "ord"),
    ("field_lengths", "SELECT ord, " + ", ".join(f"{f} AS len_{f}" for f in FIELDS)
     + " FROM lengths", "ord"),
    ("tf_postings", "SELECT p.term_id, p.ord, p.field, p.tf, "
     f"{field_length('l', 'p.field')} AS len "
     "FROM postings p JOIN field_lengths l ON l.ord = p.ord", "term_id, ord"),
    ("texts", "SELECT ord, heading || body AS text FROM chunks", "ord"),
)

def compact_relations(generation) -> dict[str, str]:
    """``meta`` and ``tf_postings`` read from the generation's compact artifacts
    (``ra.pipeline.compact``): two files instead of a join over every partition, the
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
            return f"read_parquet({_quote(generation.path / artifact_path(name))})"
        files = ", ".join(_quote(generation.path / name / part_name(p)) for p in stale)
        return f"read_parquet([{files}])"

    columns = ", ".join((*META_COLUMNS, "status", "tags", "position"))
    chunks = f"SELECT {columns} FROM {read('hot_chunks')}{keep}"
    postings = f"SELECT term_id, ord, field, tf, len FROM {read('hot_postings')}{keep}"
    if stale:
        chunks += f" UNION ALL SELECT {columns} FROM {read('chunks')}"
        lengths = ", ".join(f"{f} AS len_{f}" for f in FIELDS)
        postings += (f" UNION ALL SELECT p.term_id, p.ord, p.field, p.tf, "
                     f"{field_length('l', 'p.field')} AS len FROM {read('postings')} p "
                     f"JOIN (SELECT ord, {lengths} FROM {read('lengths')}) l ON l.ord = p.ord")
    return {"meta": f"SELECT {', '.join(META_COLUMNS)}, status, tags, ord - position AS "
                    f"doc_ord FROM ({chunks})",
            "tf_postings": postings}


#: The relations a long-lived reader materialises as DuckDB tables; ``texts`` is a view
#: over its ``ChunkStore``'s Arrow table (``register_store``).
RESIDENT = ("meta", "field_lengths", "tf_postings")
STORE_VIEW = "chunk_columns"  # the name the ``ChunkStore``'s table is registered under
NORM_BATCHES = 8  # ranges of terms a long-lived reader loads ``impacts`` in

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
    return (f"SELECT {cols}, p.ord AS parent_ord, t.text FROM ({meta}) m "
            f"JOIN ({texts}) t ON t.ord = m.ord LEFT JOIN ({meta}) p ON p.id = m.parent_id")


def _stats_of(manifest: dict) -> Stats:
    stats = manifest.get("stats", {})
    return Stats(int(stats.get("chunks", 0)),
                 {f: float(stats.get("avg_length", {}).get(f, 0.0)) for f in FIELDS})


def register_store(con, store: ChunkStore) -> None:
    """Make ``texts`` a view over ``store``'s Arrow table: DuckDB reads the few texts a
    query asks for from its (memory-mapped) buffers. ``meta`` stays a table of DuckDB's
    own (``RESIDENT``): as a view over the same buffers it cost every query that joins
    it a conversion of the columns it reads (``ra context`` on cpp-docs: 26.4 ms of SQL
    against 18.4, about 100 MB less memory)."""
    con.register(STORE_VIEW, store.table())
    con.execute(f"CREATE OR REPLACE TEMP VIEW texts AS SELECT ord, text FROM {STORE_VIEW}")


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _check_files(generation: generations.Generation, parts: list[int] | None = None
                 ) -> None:
    """Every artifact file of the generation (or of its partitions ``parts``) is there
    and is framed like Parquet.

    Views read their files only when a query needs them, so a truncated or missing file
    is looked for here, at open, where freshness rebuilds a damaged index, rather than
    in the middle of a search. It costs a few small reads per file."""
    gen = generation.path
    if parts is None:
        parts = generation.manifest.get("partitions")
    files = [gen / artifact_path(name) for name in GLOBAL]
    if "compact" in generation.manifest:
        files += [gen / artifact_path(name) for name in COMPACT]
    for name in PARTITIONED:
        files += (sorted((gen / name).glob("*.parquet")) if parts is None
                  else [gen / name / part_name(int(p)) for p in parts])
    for path in files:
        if not _framed(path):
            raise IndexStateError(f"index generation {gen.name} is damaged: "
                                  f"{path.relative_to(gen)} is missing or truncated")


#: How each kind of file is framed: its magic bytes at both ends, its smallest size, and
#: the bytes around its footer (whose length is the four bytes before the last magic).
_FRAMES = {".arrow": (b"ARROW1", 22, 18),
           ".parquet": (b"PAR1", 12, 12)}


def _framed(path: Path) -> bool:
    """The file's magic at both ends and a footer that fits in the file."""
    magic, least, around = _FRAMES[".arrow" if path.suffix == ".arrow" else ".parquet"]
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size < least:
            return False
        head = os.pread(fd, len(magic), 0)
        tail = os.pread(fd, 4 + len(magic), size - 4 - len(magic))
    finally:
        os.close(fd)
    footer = int.from_bytes(tail[:4], "little")
    return head == magic and tail[4:] == magic and footer + around <= size


class IndexReader:
    """A pinned generation plus a DuckDB connection over its artifacts."""

    def __init__(self, generation: generations.Generation, *,
                 keep_vocabulary: bool = False) -> None:
        import duckdb

        self.generation = generation
        self.keep_vocabulary = keep_vocabulary
        self.manifest = generation.manifest
        self.stats = _stats_of(self.manifest)
        self.lock = threading.RLock()  # a DuckDB connection serves one query at a time
        try:
            _check_files(generation)
        except IndexStateError:
            generation.close()
            raise
        self.con = duckdb.connect(config={"threads": 2})
        self.con.execute("SET enable_progress_bar = false")  # never draw on stdout
        try:
            self._create_views()
        except duckdb.Error as exc:
            self.close()
            raise IndexStateError(f"index generation {generation.path.name} is damaged: "
                                  f"{exc}") from None
        # A short-lived reader caches the metadata its queries brought; a long-lived one
        # holds every chunk's in ``_store``.
        self._meta_by_id: dict[str, ChunkMeta | None] = {}
        self._lineage: set[int] = set()  # ords whose every ancestor is in _meta_by_id
        self._vocab = None  # the in-memory vocabulary of a long-lived reader
        self._terms: dict[str, tuple[int, int] | None] = {}
        self._term_info: dict[int, tuple[str, int]] = {}
        self._near: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self._by_ord: dict[int, ChunkMeta] = {}
        self._store: ChunkStore | None = None  # a long-lived reader's chunks (ra.index.chunkstore)
        self._impacts: tuple | None = None  # the weights ``impacts`` was loaded for
        self.patched = False  # tables patched by ``successor``: no ``impacts``
        self.semantic = None  # the vector relations' state (``ra.query.semantic_sql``)

    @classmethod
    def open(cls, index_dir: Path) -> IndexReader | None:
        """The reader of the current generation, or None when none is published."""
        gen = generations.open_current(index_dir)
        return None if gen is None else cls(gen)

    def _create_views(self) -> None:
        # A generation's files never change, so their Parquet footers can be cached.
        self.con.execute("SET parquet_metadata_cache = true")
        create_views(self.con, self.generation)

    def _resident(self):
        """The in-memory vocabulary, loading it and the search relations on first use
        (only for a reader that ``keep_vocabulary``); None for a short-lived reader."""
        if self._vocab is None and self.keep_vocabulary:
            with self.lock:
                if self._vocab is None:
                    self._load_resident()
        return self._vocab

    def _load_resident(self) -> None:
        # In-memory queries are small: a second thread only adds scheduling (p50 and p95
        # both about 10% lower with one, measured on cpp-docs).
        self.con.execute("SET threads = 1")
        compact = compact_relations(self.generation)
        for name, body, order in RELATIONS:
            if name in RESIDENT:
                self.con.execute(f"DROP VIEW {name}")
                self.con.execute(f"CREATE TEMP TABLE {name} AS {compact.get(name, body)} "
                                 f"ORDER BY {order}")
        self._store = self._load_store(compact)
        register_store(self.con, self._store)
        self._load_vocabulary()

    def _load_store(self, compact: dict[str, str]) -> ChunkStore:
        """The generation's ``hot_store.arrow`` memory-mapped, patched for the partitions
        updates rewrote since (``stale``) as ``successor`` patches a held reader; without
        that file (no compact artifacts), the rows of ``store_sql`` loaded in memory."""
        path = self.generation.path / artifact_path("hot_store")
        if "compact" not in self.manifest:
            bodies = {name: compact.get(name, body) for name, body, _ in RELATIONS}
            sql = store_sql(bodies["meta"], bodies["texts"]) + " ORDER BY m.ord"
            return ChunkStore(self.con.sql(sql).to_arrow_table())
        try:
            store = ChunkStore.mapped(path)
        except ValueError as exc:
            raise IndexStateError(f"index generation {self.generation.path.name} is "
                                  f"damaged: {exc}; run `ra update`") from None
        held = set(self.manifest.get("partitions") or ())
        stale = self.manifest["compact"]["stale"]
        if not stale:
            return store
        files = ", ".join(_quote(self.generation.path / "chunks" / part_name(p))
                          for p in stale if p in held)
        before = store.ords_of_partitions(stale)
        last = store.last_ord()
        now = {o for (o,) in self.con.execute(
            f"SELECT ord FROM read_parquet([{files}])").fetchall()} if files else set()
        store.drop(before - now)  # chunks of a stale partition not in it any more
        if files:  # and those numbered since the file was written
            rows = (f"SELECT *, ord - position AS doc_ord, heading || body AS text "
                    f"FROM read_parquet([{files}])")
            store.add(self.con.sql(store_sql(rows, rows) + f" WHERE m.ord > {last} "
                                   "ORDER BY m.ord").to_arrow_table())
        return store

    def _load_vocabulary(self) -> None:
        from ra.index.vocabulary import SurfaceIndex

        terms = self.con.execute("SELECT term, term_id, df FROM terms").fetchall()
        words = self.con.execute("SELECT word, term_id FROM words").fetchall()
        self._terms = {t: (i, df) for t, i, df in terms}
        self._term_info = {i: (t, df) for t, i, df in terms}
        self._vocab = SurfaceIndex(words)

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            self.generation.close()

    def __enter__(self) -> IndexReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- lookups -------------------------------------------------------------------------

    def query(self, sql: str, params: list | tuple | dict = ()) -> list[tuple]:
        """Run ``sql`` with bound ``params`` (positional or named) and fetch every row.

        A Parquet file of the generation that cannot be read is reported as a damaged
        index (``ra update`` rebuilds it), not as a failure of the query."""
        import duckdb

        self._resident()
        with self.lock:
            bound = params if isinstance(params, dict) else list(params)
            try:
                return self.con.execute(sql, bound).fetchall()
            except (duckdb.IOException, duckdb.InvalidInputException) as exc:
                if str(self.generation.path) not in str(exc):
                    raise
                raise IndexStateError(f"index generation {self.generation.path.name} is "
                                      f"damaged: {exc}; run `ra update`") from None

    def prefetch(self, terms: list[str], words: list[str], distance: int) -> None:
        """Look up ``terms`` and the typo candidates of ``words`` within ``distance`` (and
        their terms) in one query, so that ``lookup_terms``, ``near_words`` and
        ``term_info`` answer from the cache."""
        if self._resident() is not None:
            return
        terms = sorted({t for t in terms if t not in self._terms})
        if distance <= 0:
            words = []
        words = sorted({w for w in words if (w, distance) not in self._near})
        if not terms and not words:
            return
        from ra.index.vocabulary import anchors

        ends = [anchors(w, distance) for w in words]
        rows = self.query(VOCABULARY_SQL, {"terms": terms, "words": words, "d": distance,
                                           "prefixes": [p for p, _ in ends],
                                           "suffixes": [s for _, s in ends]})
        self._terms.update({t: None for t in terms})
        self._near.update({(w, distance): [] for w in words})
        for typed, word, term, term_id, df in rows:
            self._term_info[term_id] = (term, df)
            if typed is None:
                self._terms[term] = (term_id, df)
            else:
                self._near[(typed, distance)].append((word, term_id))

    def lookup_terms(self, terms: list[str]) -> dict[str, tuple[int, int]]:
        """``term → (term_id, df)`` for the terms that are in the vocabulary (cached)."""
        self.prefetch(terms, [], 0)
        return {t: self._terms[t] for t in terms if self._terms.get(t) is not None}

    def near_words(self, words: list[str], distance: int) -> dict[str, list[tuple[str, int]]]:
        """Candidate surface words (with term ids) for typo expansion of each of ``words``.

        A cheap necessary condition (similar length, Levenshtein distance <= 2 ×
        ``distance``: an OSA transposition is two Levenshtein edits) selects a handful of
        candidates, where rapidfuzz computes the exact distance. A long-lived reader asks
        its in-memory ``SurfaceIndex``; a short-lived one asks DuckDB (``prefetch``).
        """
        if not words or distance <= 0:
            return {}
        vocab = self._resident()
        if vocab is not None:
            return {w: vocab.near(w, distance) for w in words}
        self.prefetch([], words, distance)
        return {w: list(self._near[(w, distance)]) for w in words}

    def words_with_prefix(self, prefix: str, limit: int) -> list[tuple[str, int, int]]:
        """``(term, term_id, df)`` of terms whose surface words start with ``prefix``,
        most frequent first, then by term."""
        vocab = self._resident()
        if vocab is not None:
            ids = vocab.with_prefix(prefix)
            found = sorted(((self._term_info[i][1], self._term_info[i][0], i) for i in ids),
                           key=lambda r: (-r[0], r[1]))
            return [(term, i, df) for df, term, i in found[:limit]]
        return self.query(
            "SELECT DISTINCT t.term, t.term_id, t.df FROM words w JOIN terms t USING "
            "(term_id) WHERE starts_with(w.word, ?) ORDER BY t.df DESC, t.term LIMIT ?",
            [prefix, limit])

    def term_info(self, term_ids: list[int]) -> dict[int, tuple[str, int]]:
        """``term_id → (term, df)`` (cached)."""
        self._resident()
        missing = sorted({i for i in term_ids if i not in self._term_info})
        if missing:
            rows = self.query("SELECT term_id, term, df FROM terms "
                              "WHERE term_id = ANY($ids::INTEGER[])", {"ids": missing})
            self._term_info.update({i: (t, df) for i, t, df in rows})
        return {i: self._term_info[i] for i in term_ids if i in self._term_info}

    def _chunks(self) -> ChunkStore | None:
        """A long-lived reader's ``ChunkStore`` (loading it on first use), else None."""
        return self._store if self._resident() is not None else None

    def meta(self, chunk_id: str) -> ChunkMeta | None:
        """Ranking metadata of one chunk by id (cached per reader)."""
        if (store := self._chunks()) is not None:
            return store.meta_by_id(chunk_id)
        if chunk_id not in self._meta_by_id:
            self.metas_by_id([chunk_id])
        return self._meta_by_id[chunk_id]

    def metas_by_id(self, ids: list[str]) -> None:
        """Fetch and cache the metadata of ``ids`` in one query."""
        if self._chunks() is not None:
            return  # all in memory
        missing = sorted({i for i in ids if i not in self._meta_by_id})
        if not missing:
            return
        cols = ", ".join(META_COLUMNS)
        rows = self.query(f"SELECT {cols} FROM meta WHERE id = ANY($ids::VARCHAR[])",
                          {"ids": missing})
        self._meta_by_id.update({i: None for i in missing})
        self._meta_by_id.update({r[1]: ChunkMeta(*r) for r in rows})

    def ancestors(self, metas: list[ChunkMeta]) -> None:
        """Fetch and cache the metadata of every ancestor of ``metas`` in one query, so
        that ranking climbs the parent chain without asking DuckDB again."""
        if self._chunks() is not None:
            return  # all in memory
        todo = sorted({m.ord for m in metas
                       if m.parent_id is not None and m.ord not in self._lineage})
        if todo:
            rows = self.query(ANCESTORS_SQL, {"ords": todo})
            found = [ChunkMeta(*r) for r in rows]
            self.remember(found)
            self._lineage.update(todo, (m.ord for m in found))
        self._lineage.update(m.ord for m in metas if m.parent_id is None)

    def remember_lineage(self, metas: list[ChunkMeta]) -> None:
        """Cache chunks that arrived together with every one of their ancestors."""
        self.remember(metas)
        self._lineage.update(m.ord for m in metas)

    def remember(self, metas: list[ChunkMeta]) -> None:
        """Cache metadata that arrived with another query (e.g. the scoring query)."""
        if self._store is not None:
            return  # a long-lived reader holds every chunk's
        self._meta_by_id.update({m.id: m for m in metas})
        self._by_ord.update({m.ord: m for m in metas})

    @property
    def resident(self) -> bool:
        """Whether the search relations are in memory (a long-lived reader; loads them)."""
        return self._resident() is not None

    def lineage(self, ords: list[int], ancestors: list[int] | None = None
                ) -> dict[int, ChunkMeta]:
        """The metadata of the chunks ``ords`` and of all their ancestors, by ord, cached,
        in one query at most (none when all are cached). ``ancestors``: their ords, when
        the caller has them (the scoring query's ancestor rows); else a short-lived
        reader asks DuckDB. A long-lived reader has them all in its ``ChunkStore``."""
        if (store := self._chunks()) is not None:
            return store.lineage(ords)
        if ancestors is None:
            ancestors = [o for (o,) in self.query(ANCESTOR_ORDS_SQL, {"ords": ords})]
        wanted = sorted({*ords, *ancestors})
        missing = [o for o in wanted if o not in self._by_ord]
        if missing:
            rows = self.query(f"SELECT {', '.join(META_COLUMNS)} FROM meta "
                              "WHERE ord = ANY($ords::INTEGER[])", {"ords": missing})
            self.remember([ChunkMeta(*r) for r in rows])
        self._lineage.update(wanted)
        return {o: self._by_ord[o] for o in wanted if o in self._by_ord}

    def impacts(self, weights) -> bool:
        """Whether relation ``impacts`` holds the impacts under ``weights`` (rows
        ``term_id, ord, impact, is_global, archived``; ``ra.query.impacts.top_sql`` reads
        it). A short-lived reader reads the generation's ``hot_impacts`` as a view when
        they were computed under these weights and its statistics
        (``ra.pipeline.impacts.record``) and no update has made a partition stale since;
        otherwise its plain queries take ``bm25f_sql``. A long-lived reader loads the
        file's for the first weights it is asked about, or, when they do not hold (an
        incremental update, other weights), computes them from its ``tf_postings``
        unrounded (``impacts_sql(exact=True)``): ``top_sql`` then gives ``bm25f_sql``'s
        scores to the last bits of a double, as the one-shot reader beside it does, at
        the speed of impacts (cpp-docs after one edit: 5.5 ms p50 against 9.7 with the
        formula). A reader carried over to an update (``patched``) takes the formula
        until a fresh load."""
        hold = self._impacts_hold(weights)
        if self.patched or (not hold and self._resident() is None):
            return False
        key = (tuple(weights.boosts), weights.b, weights.k1)
        with self.lock:
            if self._impacts is None:
                self._load_impacts(None if hold else weights)
                self._impacts = key
        return self._impacts == key

    def _impacts_hold(self, weights) -> bool:
        entry = self.manifest.get("compact") or {}
        return not entry.get("stale") and entry.get("impacts") == record(
            weights, self.stats.avg_length)

    def _load_impacts(self, computed=None) -> None:
        """The view over ``hot_impacts``, or (long-lived) the table made from it, or
        with ``computed`` (weights) from ``tf_postings``, in ``NORM_BATCHES`` ranges of
        terms, which bounds the memory of the sort."""
        flags = ("m.is_global, m.status IS NOT DISTINCT FROM 'archived' AS archived "
                 "FROM {} i JOIN meta m ON m.ord = i.ord")
        path = _quote(self.generation.path / artifact_path("hot_impacts"))
        rows = f"SELECT i.term_id, i.ord, i.impact, {flags.format(f'read_parquet({path})')}"
        if self._resident() is None:
            self.con.execute(f"CREATE TEMP VIEW impacts AS {rows}")
            return

        def batch(low: int, high: int) -> tuple[str, dict]:  # the rows of terms [low, high)
            if computed is None:
                return (f"{rows} WHERE i.term_id >= $lo AND i.term_id < $hi",
                        {"lo": low, "hi": high})
            text, params = impacts_sql("tf_postings", self.stats.avg_length, computed,
                                       (low, high), exact=True)
            return f"SELECT i.term_id, i.ord, i.impact, {flags.format(f'({text})')}", params

        end = max(self._term_info, default=-1) + 1
        step = max(1, -(-end // NORM_BATCHES))
        for low in range(0, max(end, 1), step):
            sql, params = batch(low, low + step)
            if low == 0:
                self.con.execute(f"CREATE TEMP TABLE impacts AS {sql} LIMIT 0", params)
            self.con.execute(f"INSERT INTO impacts {sql} ORDER BY i.term_id, i.ord", params)

    def contents(self, ords: list[tuple[int, int]]) -> dict[int, str]:
        """Markdown of each chunk incl. its subsections, keyed by ``ord``.

        ``ords`` holds ``(ord, descendants)``; the subtree of a chunk is the contiguous
        ord range ``ord .. ord + descendants``, read with one list of ords so DuckDB skips
        the row groups that hold none of them.
        """
        wanted = sorted({o for start, d in ords for o in range(start, start + d + 1)})
        if not wanted:
            return {}
        if (store := self._chunks()) is not None:
            text = {o: t for o in wanted if (t := store.text(o)) is not None}
        else:
            text = dict(self.query("SELECT ord, text FROM texts "
                                   "WHERE ord = ANY($ords::INTEGER[])", {"ords": wanted}))
        return {start: "".join(text.get(o, "") for o in range(start, start + d + 1))
                for start, d in ords}
