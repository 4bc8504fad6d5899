"""Read access to one index generation through DuckDB.

``IndexReader`` pins a published generation (``ra.store.generations``) and opens an in-memory
DuckDB connection whose views name the artifacts, so every query (search SQL, ``ra sql``,
``ra ls``) reads the same generation however often the index is rebuilt meanwhile.

The search path reads four relations of its own, so that its SQL is the same however the
data is held (``ra.index.relations.RELATIONS``, with the SQL of the views and lookups;
``ra.index.integrity`` checks the files at open):

- ``meta``: per-chunk metadata, no text (ids, parents, trees, sizes; ``doc_ord`` is the
  ord of the chunk's document node, so a chunk's ancestors are found by integers);
- ``field_lengths``: tokens per field of each chunk, for BM25F length normalisation;
- ``tf_postings``: postings without positions, each with the length of its field;
- ``texts``: each chunk's own markdown (heading and body).

A short-lived reader (one CLI command) defines them as views over Parquet: opening costs
nothing, and one search reads only the columns and row groups it needs. A long-lived
reader (``keep_vocabulary``: the MCP server, in-process use) materialises each of
``meta``, ``field_lengths`` (sorted by ``ord``) and ``tf_postings`` (by ``term_id``)
when a query first needs it (``hold``: plain searches never do); on first use it loads
the vocabulary and the surface words for typo expansion
(``ra.index.vocabulary.SurfaceIndex``); ``texts`` becomes a view over its
``ra.index.chunkstore.ChunkStore``: every chunk's metadata, parent and text as Arrow
columns, memory-mapped from the generation's ``hot_store.arrow``, which Python reads by
ord for the few chunks a search shows, so metadata, ancestors and content cost no
query. On the first plain search it also loads ``impacts``: each term's quantized
BM25F weight in each chunk (``ra.pipeline.impacts``), from the generation's
``hot_impacts``, as arrays (``impact_arrays``) that ``ra.query.impacts.top_rows`` adds
up in NumPy (a short-lived reader reads them as the view ``impacts``, which
``ra.query.impacts.top_sql`` adds up in DuckDB; both only when they hold for the
configured weights, see ``impacts``). A plain search then asks DuckDB nothing, any other
one question: the best chunks. Such a reader loads the vocabulary, the store and the
impacts with pyarrow and connects to DuckDB only when a query first needs it (``con``):
a process that serves plain queries alone never imports it. That costs memory of some
6 bytes per posting, 4 more once ``tf_postings`` is held (compressed: ``HELD``), and the
pages of the mapped file a search touches; phrases read their words' positions from
``phrase_postings`` (the compact ``hot_postings``), a compound's only in the chunks it
could lift (``ra.query.impacts.top_rows``). After an incremental update such a reader
is carried over to the new generation by patching its memory (``successor``) rather
than loaded again.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ra.errors import IndexStateError
from ra.index.chunkstore import META_COLUMNS, ChunkMeta, ChunkStore
from ra.index.integrity import check_files
from ra.index.relations import (
    ANCESTOR_ORDS_SQL,
    ANCESTORS_SQL,
    POSITIONS_SQL,
    RELATIONS,
    RESIDENT,
    VOCABULARY_SQL,
    compact_relations,
    create_views,
    quote,
    register_store,
    store_sql,
)
from ra.pipeline.impacts import POSTINGS_ROWS_SQL, exact_impacts, impacts_sql, record
from ra.store import generations
from ra.store.layout import FIELDS, artifact_path, part_name

NORM_BATCHES = 8  # ranges of terms a long-lived reader loads ``impacts`` in
HELD = "held"  # the compressed in-memory database of the relations a reader holds
#: How a query names each relation a long-lived reader loads on first need (``hold``).
_NAMED = {name: re.compile(rf"\b{name}\b") for name in RESIDENT}


@dataclass(frozen=True)
class Stats:
    """Collection statistics for BM25F."""

    chunks: int
    avg_length: dict[str, float]


def _stats_of(manifest: dict) -> Stats:
    stats = manifest.get("stats", {})
    return Stats(int(stats.get("chunks", 0)),
                 {f: float(stats.get("avg_length", {}).get(f, 0.0)) for f in FIELDS})


def release_unused() -> None:
    """Hand back to the system the memory pyarrow's pool holds on to once it was freed,
    as a build does after each partition: a long-lived process keeps none of what its
    reader's loads, an update or its rehearsal used (cpp-docs: 32 of the rehearsal's 81
    MB)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _in_memory(con, store: ChunkStore) -> None:
    """Set ``con`` up for a long-lived reader holding ``store``: its ``texts`` over the
    store, and one thread, as in-memory queries are small (a second only adds
    scheduling: p50 and p95 both about 10% lower with one, measured on cpp-docs)."""
    con.execute("SET threads = 1")
    register_store(con, store)


class IndexReader:
    """A pinned generation plus a DuckDB connection over its artifacts."""

    def __init__(self, generation: generations.Generation, *,
                 keep_vocabulary: bool = False) -> None:
        self.generation = generation
        self.keep_vocabulary = keep_vocabulary
        self.manifest = generation.manifest
        self.stats = _stats_of(self.manifest)
        self.lock = threading.RLock()  # a DuckDB connection serves one query at a time
        try:
            check_files(generation)
        except IndexStateError:
            generation.close()
            raise
        self._con = None  # the DuckDB connection (``con``)
        # A short-lived reader caches the metadata its queries brought; a long-lived one
        # holds every chunk's in ``_store``.
        self._meta_by_id: dict[str, ChunkMeta | None] = {}
        self._lineage: set[int] = set()  # ords whose every ancestor is in _meta_by_id
        self._vocab = None  # the in-memory vocabulary of a long-lived reader
        self._terms: MutableMapping[str, tuple[int, int] | None] = {}  # TermTable when held
        self._term_info: dict[int, tuple[str, int]] = {}  # a long-lived one: TermsById
        self._near: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self._by_ord: dict[int, ChunkMeta] = {}
        self._store: ChunkStore | None = None  # a long-lived reader's chunks (ra.index.chunkstore)
        self._impacts: tuple | None = None  # the weights ``impacts`` was loaded for
        self.impact_arrays = None  # a long-lived reader's ``impacts`` (ra.index.impact_arrays)
        self._held: set[str] = set()  # the relations of RESIDENT a long-lived reader loaded
        self.patched = False  # tables patched by ``successor``: no ``impacts``
        self.semantic = None  # the vector relations' state (``ra.query.semantic_sql``)
        self._memo: dict[str, tuple] = {}  # ``memo``: key -> (generation, value)
        if not keep_vocabulary:  # a damaged generation is reported at once
            self._con = self._connect()

    @property
    def con(self):
        """The DuckDB connection over the generation's artifacts. A reader opened
        long-lived (``keep_vocabulary``) connects when a query first needs DuckDB: it
        loads its vocabulary, chunks and impacts with pyarrow and answers plain queries
        from them, so a process that only serves those never starts DuckDB (cpp-docs: 30
        MB of DuckDB's code and memory less, warm reader 232 -> 196 MB)."""
        if self._con is None:
            with self.lock:
                if self._con is None:
                    self._con = self._connect()
        return self._con

    @con.setter
    def con(self, value) -> None:
        self._con = value

    def _connect(self):
        import duckdb

        con = duckdb.connect(config={"threads": 2})
        try:
            con.execute("SET enable_progress_bar = false")  # never draw on stdout
            # A generation's files never change, so their Parquet footers can be cached.
            con.execute("SET parquet_metadata_cache = true")
            create_views(con, self.generation)
            if self._store is not None:
                _in_memory(con, self._store)
        except duckdb.Error as exc:
            con.close()
            if self._con is None and not self.keep_vocabulary:
                self.generation.close()
            raise IndexStateError(f"index generation {self.generation.path.name} is "
                                  f"damaged: {exc}") from None
        return con

    def interrupt(self) -> None:
        """Interrupt the query DuckDB is running, if it was ever asked one."""
        if self._con is not None:
            self._con.interrupt()

    @classmethod
    def open(cls, index_dir: Path, *, keep_vocabulary: bool = False) -> IndexReader | None:
        """The reader of the current generation, or None when none is published."""
        gen = generations.open_current(index_dir)
        return None if gen is None else cls(gen, keep_vocabulary=keep_vocabulary)

    def _resident(self):
        """The in-memory vocabulary, loading it and the search relations on first use
        (only for a reader that ``keep_vocabulary``); None for a short-lived reader."""
        if self._vocab is None and self.keep_vocabulary:
            with self.lock:
                if self._vocab is None:
                    self._load_resident()
        return self._vocab

    def _load_resident(self) -> None:
        store = self._load_store(compact_relations(self.generation))
        if self._con is not None:
            _in_memory(self._con, store)
        self._store = store
        self._load_vocabulary()

    def hold(self, *names: str) -> None:
        """Load the relations ``names`` (of ``RESIDENT``) in memory: a long-lived reader
        (nothing for another, or for one held). Such a reader scores plain queries from
        its impact arrays and finds chunks in its ``ChunkStore``; it needs ``meta``,
        ``field_lengths`` and ``tf_postings`` only for the other queries (fields,
        negations, filters, phrases' chunk metadata), ``ra context``, links and an update
        carried over. Until one comes, each stays a view over the
        generation's files, which saves its load (cpp-docs, compressed in ``HELD``:
        ``tf_postings`` 16 MB, ``meta`` 10 MB, ``field_lengths`` 0.5 MB; loading the
        three took 1.8 s on a machine where a full build took 26 s).
        ``query`` calls this for the relations its SQL names, except on a reader carried
        over to an update (``patched``), which a reader loaded afresh replaces seconds
        later: it reads the views (a search in 20-35 ms on cpp-docs, where loading them
        first cost the first search after an edit 0.37 s, 2 s at five times the size)."""
        wanted = [n for n in RESIDENT if n in names and n not in self._held]
        if not wanted or self._resident() is None:
            return
        with self.lock:
            compact = compact_relations(self.generation)
            for name in wanted:  # in RESIDENT's order: a later one may read an earlier one
                if name not in self._held:
                    self._materialise(name, compact)
                    self._held.add(name)

    def _materialise(self, name: str, compact: dict[str, str]) -> None:
        """Replace the view ``name`` (of ``RELATIONS``) by a table of its rows, in order,
        read from the compact artifacts where the generation has them.

        The tables live in an in-memory database of their own that DuckDB compresses
        (``HELD``), found by their names through the search path: as temporary tables,
        which DuckDB keeps uncompressed, ``meta`` and ``tf_postings`` took 118 MB on
        cpp-docs, 27 MB compressed, and a query over them took as long."""
        body, order = next((b, o) for n, b, o in RELATIONS if n == name)
        if not self._held:  # the first: attach the database (a successor shares it)
            database = self.con.execute("SELECT current_database()").fetchone()[0]
            self.con.execute(f"ATTACH ':memory:' AS {HELD} (COMPRESS)")
            self.con.execute(f"SET search_path = '{database}.main,{HELD}.main'")
        self.con.execute(f"DROP VIEW {name}")
        self.con.execute(f"CREATE TABLE {HELD}.{name} AS {compact.get(name, body)} "
                         f"ORDER BY {order}")
        self.con.execute(f"CHECKPOINT {HELD}")  # compresses what was just written

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
        files = ", ".join(quote(self.generation.path / "chunks" / part_name(p))
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
        from ra.index.vocabulary import SurfaceIndex, TermsById, TermTable, surface_words

        table = self._table("terms", "term", "term_id", "df")
        terms, ids, dfs = (table.column(name).to_pylist() for name in table.column_names)
        self._terms = TermTable(terms, ids, dfs)
        self._term_info = TermsById(self._terms)
        self._vocab = SurfaceIndex(surface_words(self._table("words", "word", "term_id"),
                                                 table, terms, ids))
        del table, dfs
        release_unused()  # what pyarrow read goes back to the system

    def _table(self, artifact: str, *names: str):
        """The columns ``names`` of the generation's (unpartitioned) ``artifact``, as an
        Arrow table read by pyarrow."""
        import pyarrow as pa

        from ra.store.parquet import ParquetSource

        path = self.generation.path / artifact_path(artifact)
        try:
            # not pq.read_table, whose dataset layer (pyarrow.dataset, with Acero and
            # Substrait) a reader that serves plain queries would hold in memory: 5 MB;
            # nor pq.ParquetFile, whose pyarrow.fs holds 8 MB more (ra.store.parquet)
            with ParquetSource(path) as source:
                return source.read(list(names))
        except (OSError, pa.ArrowException) as exc:
            raise IndexStateError(f"index generation {self.generation.path.name} is "
                                  f"damaged: {path.name}: {exc}; run `ra update`") from None

    def close(self) -> None:
        """Close the connection and unpin the generation, and let go of what the reader
        holds in memory (rebinding, not clearing: a successor shares some of it). A
        reader carried over to an update is in a reference cycle (its ``TermImpacts``
        calls back into it), which only the cyclic collector frees, late: a daemon
        editing cpp-docs grew some 30 MB an edit until it ran (287 -> 901 MB after 5)."""
        try:
            if self._con is not None:
                self._con.close()
        finally:
            self.generation.close()
            self._vocab = self._store = self.impact_arrays = self.semantic = None
            self._terms, self._term_info, self._near = {}, {}, {}
            self._meta_by_id, self._by_ord, self._lineage = {}, {}, set()
            self._impacts, self.keep_vocabulary = None, False

    def __enter__(self) -> IndexReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- lookups -------------------------------------------------------------------------

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, computed once for the generation this reader reads: a reader
        carried over to an update (``ra.index.successor``) reads another, and computes it
        again."""
        held = self._memo.get(key)
        if held is None or held[0] is not self.generation:
            held = self._memo[key] = (self.generation, compute())
        return held[1]

    def phrase_positions(self, terms: list[int], ords: list[int]) -> list[tuple]:
        """Rows ``(term_id, ord, field, len, positions)`` of the terms ``terms`` in the
        chunks ``ords`` (sorted), from ``phrase_postings`` (``POSITIONS_SQL``). A
        long-lived reader of a generation whose compact files hold every partition reads
        them from ``hot_postings`` with pyarrow instead (``HotPositions``): the compound
        queries of cpp-docs' known items, 15 ms at the median in DuckDB, 6 so."""
        if not ords or not terms:
            return []
        entry = self.manifest.get("compact")
        if self.keep_vocabulary and not self.patched and entry and not entry["stale"]:
            from ra.index.positions import HotPositions

            hot = self.memo("hot_positions", lambda: HotPositions(
                self.generation.path / artifact_path("hot_postings")))
            return hot.rows(terms, ords)
        return self.query(POSITIONS_SQL, {"terms": terms, "low": ords[0], "high": ords[-1],
                                          "ords": ords})

    def query(self, sql: str, params: list | tuple | dict = ()) -> list[tuple]:
        """Run ``sql`` with bound ``params`` (positional or named) and fetch every row.

        A Parquet file of the generation that cannot be read is reported as a damaged
        index (``ra update`` rebuilds it), not as a failure of the query."""
        import duckdb

        if (self._resident() is not None and len(self._held) < len(RESIDENT)
                and not self.patched):
            self.hold(*(n for n in RESIDENT if n not in self._held and _NAMED[n].search(sql)))
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

    def near_hits(self, words: list[str], distance: int
                  ) -> dict[str, list[tuple[str, float, int]]] | None:
        """For each of ``words``, ``(surface word, distance, term_id)`` of the surface
        words within ``distance`` of it (``SurfaceIndex.within``); None for a short-lived
        reader, which has ``near_words``."""
        vocab = self._resident() if words and distance > 0 else None
        return None if vocab is None else {w: vocab.within(w, distance) for w in words}

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
        """Whether the reader holds the impacts under ``weights``: a short-lived one as
        relation ``impacts`` (rows ``term_id, ord, impact, is_global, archived``, which
        ``ra.query.impacts.top_sql`` reads), a long-lived one as ``impact_arrays``
        (``top_rows``). A short-lived reader reads the generation's ``hot_impacts`` as a
        view when they were computed under these weights and its statistics
        (``ra.pipeline.impacts.record``) and no update has made a partition stale since;
        otherwise its plain queries take ``bm25f_sql``. A long-lived reader loads the
        file's for the first weights it is asked about, or, when they do not hold (an
        incremental update, other weights), computes them from the postings (its
        ``tf_postings`` when held, else where the files have them) unrounded
        (``impacts_sql(exact=True)``): ``top_rows`` then gives ``bm25f_sql``'s
        scores to the last bits of a double, as the one-shot reader beside it does, at
        the speed of impacts (cpp-docs after one edit: 5.5 ms p50 against 9.7 with the
        formula). A reader carried over to an update (``patched``) computes them the same
        way, but only for the terms its queries ask about, when they first do
        (``_term_impacts``)."""
        if self.patched:
            return self._term_impacts(weights)
        hold = self._impacts_hold(weights)
        if not hold and self._resident() is None:
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
        """The view over ``hot_impacts``, or (long-lived) its rows held as arrays
        (``impact_arrays``, read from the file), or with ``computed`` (weights) those
        computed from the postings, in ``NORM_BATCHES`` ranges of terms, which bounds
        the memory of the sort."""
        flags = ("m.is_global, m.status IS NOT DISTINCT FROM 'archived' AS archived "
                 "FROM {} i JOIN meta m ON m.ord = i.ord")
        path = self.generation.path / artifact_path("hot_impacts")
        if self._resident() is None:
            source = flags.format(f"read_parquet({quote(path)})")
            self.con.execute(f"CREATE TEMP VIEW impacts AS SELECT i.term_id, i.ord, "
                             f"i.impact, {source}")
            return

        from ra.index.impact_arrays import build, read_file

        end = self._term_info.end()
        # the chunks the reader holds, as ``meta`` has them, from its store: neither
        # ``meta`` nor ``tf_postings`` is loaded for this (100 MB more on cpp-docs, and
        # no faster)
        chunks = self._chunk_flags()
        if computed is None:
            batches, capacity = read_file(path)
            self.impact_arrays = build(batches, end, chunks, capacity)
            release_unused()
            return
        step = max(1, -(-end // NORM_BATCHES))
        # a pass over every posting, not a search: both cores (cpp-docs, one edit after
        # the build: 1.03 -> 0.70 s); ``tf_postings`` as held, else its view, which reads
        # the compact files (and the stale partitions'), by name, not through ``query``,
        # which would load it
        self.con.execute("SET threads = 2")
        try:
            capacity = self.con.execute("SELECT count(*) FROM tf_postings").fetchone()[0]
            batches = (self.con.execute(*impacts_sql(
                "tf_postings", self.stats.avg_length, computed, (low, low + step),
                exact=True)).fetchnumpy() for low in range(0, max(end, 1), step))
            self.impact_arrays = build(batches, end, chunks, capacity)
        finally:
            self.con.execute("SET threads = 1")

    def _chunk_flags(self) -> dict:
        """The arrays ``ord``, ``is_global`` and ``archived`` (status 'archived') of the
        chunks a long-lived reader holds, from its store."""
        import pyarrow as pa
        import pyarrow.compute as pc

        held = self._store.table()
        archived = pc.fill_null(pc.equal(held["status"], pa.scalar("archived", pa.string())),
                                pa.scalar(False, pa.bool_()))
        return {"ord": held["ord"].to_numpy(), "is_global": held["is_global"].to_numpy(),
                "archived": archived.to_numpy()}

    def _term_impacts(self, weights) -> bool:
        """``impacts`` of a reader carried over to an update (``patched``): computed term
        by term as queries ask for them (``impact_arrays.TermImpacts``), under these
        weights and the statistics now, with the chunk flags read from its store."""
        from ra.index.impact_arrays import TermImpacts, flags

        key = (tuple(weights.boosts), weights.b, weights.k1)
        with self.lock:
            if self._impacts != key:
                chunks = self._chunk_flags()
                self.impact_arrays = TermImpacts(
                    partial(self._impacts_of, weights),
                    *flags(chunks["ord"], chunks["is_global"], chunks["archived"],
                           int(self.manifest["next_ord"])), self.lock)
                self._impacts = key
        return True

    def _impacts_of(self, weights, term_ids: list[int]) -> dict:
        """The exact impacts of ``term_ids`` under ``weights`` (``TermImpacts``): their
        postings read by DuckDB, the impacts computed in NumPy (``exact_impacts``)."""
        with self.lock:
            rows = self.con.execute(POSTINGS_ROWS_SQL.format("tf_postings"),
                                    {"ids": term_ids}).fetchnumpy()
        return exact_impacts(rows, self.stats.avg_length, weights)

    def drop_impacts(self) -> None:
        """Forget a long-lived reader's impacts (``successor``: they hold for the old
        statistics only)."""
        self._impacts, self.impact_arrays = None, None

    def contents(self, ords: list[tuple[int, int]]) -> dict[int, str]:
        """Markdown of each chunk incl. its subsections, keyed by ``ord``.

        ``ords`` holds ``(ord, descendants)``; the subtree of a chunk is the contiguous
        ord range ``ord .. ord + descendants``, read with one list of ords so DuckDB skips
        the row groups that hold none of them.
        """
        return {o: markdown for o, (markdown, _) in self._subtrees(ords, True, False).items()}

    def plains(self, ords: list[tuple[int, int]]) -> dict[int, str]:
        """What a reader sees of each chunk incl. its subsections, as one line (the
        ``chunks.plain`` of the subtree's chunks joined by spaces), keyed by ``ord``."""
        return {o: plain for o, (_, plain) in self._subtrees(ords, False, True).items()}

    def texts(self, ords: list[tuple[int, int]]) -> dict[int, tuple[str, str]]:
        """``contents`` and ``plains`` of each chunk, read at once."""
        return self._subtrees(ords, True, True)

    def _subtrees(self, ords: list[tuple[int, int]], markdown: bool, plain: bool
                  ) -> dict[int, tuple[str, str]]:
        """``(markdown, plain)`` of each subtree, each empty unless asked for."""
        if (store := self._chunks()) is not None:
            return {start: store.joined(start, start + d + 1, markdown, plain)
                    for start, d in ords}
        wanted = sorted({o for start, d in ords for o in range(start, start + d + 1)})
        if not wanted:
            return {}
        text, line = "text" if markdown else "''", "plain" if plain else "''"
        rows = {o: (t, p) for o, t, p in self.query(
            f"SELECT ord, {text}, {line} FROM texts WHERE ord = ANY($ords::INTEGER[])",
            {"ords": wanted})}
        none = ("", "")
        return {start: ("".join(rows.get(o, none)[0] for o in range(start, start + d + 1))
                        if markdown else "",
                        " ".join(p for o in range(start, start + d + 1)
                                 if (p := rows.get(o, none)[1])) if plain else "")
                for start, d in ords}
