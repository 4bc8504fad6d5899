"""Read access to one index generation through DuckDB.

``IndexReader`` pins a published generation (``ra.generations``) and opens an in-memory
DuckDB connection whose views name the artifacts, so every query (search SQL, ``ra sql``,
``ra ls``) reads the same generation however often the index is rebuilt meanwhile.

Small per-chunk metadata (ids, parents, trees, field lengths: no text) is loaded into a
DuckDB table ``meta`` once per reader: scoring joins it for every candidate and ranking
looks parents up in it. Postings and chunk text stay in Parquet and are read by
``term_id`` / ``ord`` ranges, which their sort order lets DuckDB prune.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ra import generations
from ra.errors import IndexStateError
from ra.layout import FIELDS

VIEWS = ("files", "chunks", "terms", "postings", "words", "lengths", "analyzed", "surface")


@dataclass(frozen=True)
class Stats:
    """Collection statistics for BM25F."""

    chunks: int
    avg_length: dict[str, float]


@dataclass(frozen=True)
class ChunkMeta:
    """What ranking needs to know about a chunk."""

    ord: int
    id: str
    doc_id: str
    parent_id: str | None
    tree: str
    path: str
    depth: int
    sibling_count: int
    descendants: int
    title: str
    breadcrumb: str
    is_global: bool
    tokens: int
    line: int
    mtime_ns: int


META_COLUMNS = _META_COLUMNS = ("ord", "id", "doc_id", "parent_id", "tree", "path", "depth",
                 "sibling_count", "descendants", "title", "breadcrumb", "is_global", "tokens",
                 "line", "mtime_ns")


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class IndexReader:
    """A pinned generation plus a DuckDB connection over its artifacts."""

    def __init__(self, generation: generations.Generation, *,
                 keep_vocabulary: bool = False) -> None:
        import duckdb

        self.generation = generation
        self.keep_vocabulary = keep_vocabulary
        self.manifest = generation.manifest
        stats = self.manifest.get("stats", {})
        self.stats = Stats(int(stats.get("chunks", 0)),
                           {f: float(stats.get("avg_length", {}).get(f, 0.0)) for f in FIELDS})
        self.lock = threading.RLock()  # a DuckDB connection serves one query at a time
        self.con = duckdb.connect(config={"threads": 2})
        try:
            self._create_views()
        except duckdb.Error as exc:
            self.close()
            raise IndexStateError(f"index generation {generation.path.name} is damaged: "
                                  f"{exc}") from None
        self._meta_by_id: dict[str, ChunkMeta | None] = {}
        self._words: dict[int, list[tuple[str, int]]] = {}
        self._terms: dict[str, tuple[int, int] | None] = {}
        self._term_info: dict[int, tuple[str, int]] = {}

    @classmethod
    def open(cls, index_dir: Path) -> IndexReader | None:
        """The reader of the current generation, or None when none is published."""
        gen = generations.open_current(index_dir)
        return None if gen is None else cls(gen)

    def _create_views(self) -> None:
        for name in VIEWS:
            self.con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet("
                             f"{_quote(self.generation.scan(name))})")
        cols = ", ".join(f"c.{c}" for c in _META_COLUMNS)
        lens = ", ".join(f"l.{f} AS len_{f}" for f in FIELDS)
        self.con.execute(f"CREATE TEMP TABLE meta AS SELECT {cols}, c.status, "
                         f"c.tags, {lens} FROM chunks c JOIN lengths l USING (ord) "
                         "ORDER BY ord")

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
        """Run ``sql`` with bound ``params`` (positional or named) and fetch every row."""
        with self.lock:
            bound = params if isinstance(params, dict) else list(params)
            return self.con.execute(sql, bound).fetchall()

    def lookup_terms(self, terms: list[str]) -> dict[str, tuple[int, int]]:
        """``term → (term_id, df)`` for the terms that are in the vocabulary (cached)."""
        missing = sorted({t for t in terms if t not in self._terms})
        if missing:
            marks = ", ".join("?" * len(missing))
            rows = self.query(f"SELECT term, term_id, df FROM terms WHERE term IN ({marks})",
                              missing)
            found = {t: (i, df) for t, i, df in rows}
            self._terms.update({t: found.get(t) for t in missing})
        return {t: self._terms[t] for t in terms if self._terms.get(t) is not None}

    def near_words(self, words: list[str], distance: int) -> dict[str, list[tuple[str, int]]]:
        """Candidate surface words (with term ids) for typo expansion of each of ``words``.

        A cheap necessary condition runs inside DuckDB over the whole surface vocabulary:
        similar length and Levenshtein distance <= 2 × ``distance`` (an OSA transposition
        is two Levenshtein edits), so only a handful of candidates reach Python, where
        rapidfuzz computes the exact distance. A long-lived reader (the MCP server) keeps
        the vocabulary in memory instead (``keep_vocabulary``).
        """
        if not words or distance <= 0:
            return {}
        if self.keep_vocabulary:
            return {w: self._vocab_near(w, distance) for w in words}
        values = ", ".join("(?)" for _ in words)
        rows = self.query(
            f"WITH q(w) AS (VALUES {values}) SELECT q.w, v.word, v.term_id FROM q, words v "
            "WHERE length(v.word) BETWEEN length(q.w) - ? AND length(q.w) + ? "
            "AND levenshtein(v.word, q.w) <= ?", [*words, distance, distance, 2 * distance])
        out: dict[str, list[tuple[str, int]]] = {w: [] for w in words}
        for w, word, term_id in rows:
            out[w].append((word, term_id))
        return out

    def _vocab_near(self, word: str, distance: int) -> list[tuple[str, int]]:
        if not self._words:
            for surface, term_id in self.query("SELECT word, term_id FROM words"):
                self._words.setdefault(len(surface), []).append((surface, term_id))
        return [w for n in range(max(len(word) - distance, 1), len(word) + distance + 1)
                for w in self._words.get(n, ())]

    def words_with_prefix(self, prefix: str, limit: int) -> list[tuple[str, int, int]]:
        """``(term, term_id, df)`` of terms whose surface words start with ``prefix``."""
        return self.query(
            "SELECT DISTINCT t.term, t.term_id, t.df FROM words w JOIN terms t USING "
            "(term_id) WHERE starts_with(w.word, ?) ORDER BY t.df DESC, t.term LIMIT ?",
            [prefix, limit])

    def term_info(self, term_ids: list[int]) -> dict[int, tuple[str, int]]:
        """``term_id → (term, df)`` (cached)."""
        missing = sorted({i for i in term_ids if i not in self._term_info})
        if missing:
            marks = ", ".join("?" * len(missing))
            rows = self.query(f"SELECT term_id, term, df FROM terms WHERE term_id IN ({marks})",
                              missing)
            self._term_info.update({i: (t, df) for i, t, df in rows})
        return {i: self._term_info[i] for i in term_ids if i in self._term_info}

    def meta(self, chunk_id: str) -> ChunkMeta | None:
        """Ranking metadata of one chunk by id (cached per reader)."""
        if chunk_id not in self._meta_by_id:
            self.metas_by_id([chunk_id])
        return self._meta_by_id[chunk_id]

    def metas_by_id(self, ids: list[str]) -> None:
        """Fetch and cache the metadata of ``ids`` in one query."""
        missing = sorted({i for i in ids if i not in self._meta_by_id})
        if not missing:
            return
        cols = ", ".join(_META_COLUMNS)
        rows = self.query(f"SELECT {cols} FROM meta WHERE id IN "
                          f"({', '.join('?' * len(missing))})", missing)
        self._meta_by_id.update({i: None for i in missing})
        self._meta_by_id.update({r[1]: ChunkMeta(*r) for r in rows})

    def remember(self, metas: list[ChunkMeta]) -> None:
        """Cache metadata that arrived with another query (e.g. the scoring query)."""
        self._meta_by_id.update({m.id: m for m in metas})

    def contents(self, ords: list[tuple[int, int]]) -> dict[int, str]:
        """Markdown of each chunk incl. its subsections, keyed by ``ord``.

        ``ords`` holds ``(ord, descendants)``; the subtree of a chunk is the contiguous
        ord range ``ord .. ord + descendants``, read with one ``IN`` list so DuckDB skips
        the row groups that hold none of them.
        """
        wanted = sorted({o for start, d in ords for o in range(start, start + d + 1)})
        if not wanted:
            return {}
        rows = self.query(f"SELECT ord, heading || body FROM chunks WHERE ord IN "
                          f"({', '.join('?' * len(wanted))})", wanted)
        text = dict(rows)
        return {start: "".join(text.get(o, "") for o in range(start, start + d + 1))
                for start, d in ords}
