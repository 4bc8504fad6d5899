"""Peer search engines indexing the same chunks as ra, for side-by-side benchmarks.

Every peer reads ra's own ``chunks.parquet`` of the current generation, so all systems
rank exactly the same units, with the same field texts (``ra.pipeline.analyze.
field_texts``: title = breadcrumb, tags, path without extension, body + description;
chunks ra does not index are left out).
Each gets the closest equivalent of ra's configuration:

- tantivy (tantivy-py): fields title/tags/path/body with the ``en_stem`` tokenizer
  (split on non-alphanumerics, lowercase, drop 40+ byte tokens, Snowball English: the
  pipeline ra's analyzer follows) and ra's field boosts at query time. Tantivy scores
  each field with its own BM25 and sums them (not BM25F). Its fuzzy variant adds, for
  words longer than four characters, a fuzzy term query (distance 1, transposition
  counts one) next to the exact one; tantivy scores fuzzy matches with a constant.
  ``tantivy-1field`` indexes the four texts as one field (no boosts), for contrast.
- bm25s: one text field (all four fields concatenated), k1/b from ra's config,
  PyStemmer English, no stopwords, ra's token pattern (so one-letter words count too).
- SQLite FTS5 (stdlib ``sqlite3``): the four fields as columns, the ``porter unicode61``
  tokenizer (Porter, the predecessor of Snowball English), ``bm25()`` with ra's field
  boosts as column weights (FTS5's k1 1.2 and b 0.75 are fixed, and equal ra's).

Query semantics: ra ANDs words and falls back to partial matches; the peers get the
words OR'd, the usual way to run a BM25 engine (a long claim would match nothing as an
AND in FTS5 or tantivy). Every peer stores the chunk text with its index (as ra does) so
that sizes compare like with like; a search returns chunk ``ord``s only.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

FIELDS = ("title", "tags", "path", "body")
TOKEN_PATTERN = r"(?u)[^\W_]+"  # ra's analyzer splits on every non-alphanumeric
MAX_FUZZY_SHORT = 4  # ra: words of four characters or fewer match exactly


@dataclass(frozen=True)
class Chunk:
    """One of ra's chunks as the peers see it."""

    ord: int
    doc_id: str
    path: str
    fields: dict[str, str]

    @property
    def text(self) -> str:
        return "\n".join(self.fields[f] for f in FIELDS if self.fields[f])


@dataclass(frozen=True)
class Settings:
    """ra's ranking parameters, copied into each peer's closest equivalent."""

    boosts: dict[str, float]
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def from_config(cls, config) -> Settings:
        s = config.search
        return cls({f: float(getattr(s.boosts, f)) for f in FIELDS}, s.k1, s.b)


def export_chunks(reader, dest: Path) -> Path:
    """Copy the chunks of ``reader``'s generation to ``dest`` (peers read the copy).

    The artifact is one Parquet file or a folder of partitions; ``read_chunks`` reads both.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    source = reader.generation.file("chunks")
    if source.is_dir():
        shutil.copytree(source, dest)
    else:
        shutil.copyfile(source, dest)
    return dest


def read_chunks(path: Path) -> list[Chunk]:
    """The chunks ra indexes of a ``chunks.parquet``, with ra's own field texts, in ord
    order (ra leaves out a chunk with sections below it and no words of its own)."""
    import pyarrow.parquet as pq

    from ra.pipeline.analyze import body_texts, field_texts

    cols = ["ord", "doc_id", "breadcrumb", "tags", "path", "heading", "body",
            "description", "descendants", "position"]
    rows = sorted(pq.read_table(path, columns=cols).to_pylist(), key=lambda r: r["ord"])
    texts = [(r, field_texts(r, body)) for r, body in zip(rows, body_texts(rows), strict=True)]
    return [Chunk(r["ord"], r["doc_id"], r["path"], t) for r, t in texts if any(t.values())]


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


class Peer:
    """A peer engine: build an on-disk index, open it, search it, update one document."""

    name = "peer"
    fuzzy = False  # whether the engine has typo-tolerant matching

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def build(self, chunks: list[Chunk], folder: Path) -> None:
        raise NotImplementedError

    def open(self, folder: Path) -> None:
        raise NotImplementedError

    def search(self, words: list[str], k: int, fuzzy: bool = False) -> list[int]:
        """Chunk ords of the best ``k`` chunks for the words OR'd, best first."""
        raise NotImplementedError

    def update(self, doc_id: str, chunks: list[Chunk]) -> None:
        """Replace document ``doc_id`` by its chunks in ``chunks`` (the whole new set)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def cold_code(self, folder: Path, words: list[str], k: int) -> str:
        """A standalone script: open the on-disk index, run one query, print the ords."""
        raise NotImplementedError


class Tantivy(Peer):
    name = "tantivy"
    fuzzy = True

    def _schema(self):
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("ord", stored=True, indexed=False)
        sb.add_text_field("doc", stored=False, tokenizer_name="raw")
        for f in self.fields:
            sb.add_text_field(f, stored=True, tokenizer_name="en_stem")
        return sb.build()

    fields: tuple[str, ...] = FIELDS

    def texts(self, chunk: Chunk) -> dict[str, str]:
        return chunk.fields

    def boosts(self) -> dict[str, float]:
        return self.settings.boosts

    def build(self, chunks: list[Chunk], folder: Path) -> None:
        import tantivy

        folder.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(self._schema(), path=str(folder))
        writer = self.index.writer()
        self._add(writer, chunks)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def _add(self, writer, chunks: Iterable[Chunk]) -> None:
        import tantivy

        for c in chunks:
            writer.add_document(tantivy.Document(ord=c.ord, doc=c.doc_id, **self.texts(c)))

    def open(self, folder: Path) -> None:
        import tantivy

        self.index = tantivy.Index.open(str(folder))
        self.searcher = self.index.searcher()

    def query(self, words: list[str], fuzzy: bool = False):
        import tantivy

        exact = self.index.parse_query(" ".join(words), list(self.fields),
                                       field_boosts=self.boosts())
        long = [w for w in words if len(w) > MAX_FUZZY_SHORT]
        if not fuzzy or not long:
            return exact
        near = self.index.parse_query(" ".join(long), list(self.fields),
                                      field_boosts=self.boosts(),
                                      fuzzy_fields={f: (False, 1, True) for f in self.fields})
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, exact),
                                            (tantivy.Occur.Should, near)])

    def search(self, words: list[str], k: int, fuzzy: bool = False) -> list[int]:
        if not words:
            return []
        hits = self.searcher.search(self.query(words, fuzzy), k).hits
        return [self.searcher.doc(addr)["ord"][0] for _, addr in hits]

    def update(self, doc_id: str, chunks: list[Chunk]) -> None:
        writer = self.index.writer()
        writer.delete_documents_by_term("doc", doc_id)
        self._add(writer, (c for c in chunks if c.doc_id == doc_id))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def cold_code(self, folder: Path, words: list[str], k: int) -> str:
        return (
            "import tantivy\n"
            f"ix = tantivy.Index.open({str(folder)!r})\n"
            "s = ix.searcher()\n"
            f"q = ix.parse_query({' '.join(words)!r}, {list(self.fields)!r}, "
            f"field_boosts={self.boosts()!r})\n"
            f"print([s.doc(a)['ord'][0] for _, a in s.search(q, {k}).hits])\n")


class TantivyOneField(Tantivy):
    """Tantivy with the four fields concatenated into one, as bm25s sees them: separates
    what the engine does from what per-field saturation does to multi-field ranking."""

    name = "tantivy-1field"
    fields = ("text",)

    def texts(self, chunk: Chunk) -> dict[str, str]:
        return {"text": chunk.text}

    def boosts(self) -> dict[str, float]:
        return {}


class BM25S(Peer):
    name = "bm25s"

    def _stemmer(self):
        import Stemmer

        return Stemmer.Stemmer("english")

    def _tokens(self, texts: list[str]):
        import bm25s

        return bm25s.tokenize(texts, stopwords=None, stemmer=self._stemmer(),
                              token_pattern=TOKEN_PATTERN, show_progress=False)

    def build(self, chunks: list[Chunk], folder: Path) -> None:
        import bm25s

        texts = [c.text for c in chunks]
        self.retriever = bm25s.BM25(k1=self.settings.k1, b=self.settings.b)
        self.retriever.index(self._tokens(texts), show_progress=False)
        self.ords = [c.ord for c in chunks]
        self.retriever.save(str(folder), corpus=texts, show_progress=False)
        (folder / "ords.json").write_text(json.dumps(self.ords))

    def open(self, folder: Path) -> None:
        import bm25s

        self.retriever = bm25s.BM25.load(str(folder), load_corpus=False, mmap=True)
        self.ords = json.loads((folder / "ords.json").read_text())

    def search(self, words: list[str], k: int, fuzzy: bool = False) -> list[int]:
        import bm25s

        tokens = bm25s.tokenize([" ".join(words)], stopwords=None, stemmer=self._stemmer(),
                                token_pattern=TOKEN_PATTERN, return_ids=False,
                                show_progress=False)
        if not any(t in self.retriever.vocab_dict for t in tokens[0]):
            return []
        docs, scores = self.retriever.retrieve(tokens, k=min(k, len(self.ords)),
                                               show_progress=False, n_threads=1)
        return [self.ords[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def update(self, doc_id: str, chunks: list[Chunk]) -> None:
        """bm25s has no incremental update: the whole index is rebuilt."""
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            self.build(chunks, Path(tmp))

    def cold_code(self, folder: Path, words: list[str], k: int) -> str:
        return (
            "import json, bm25s, Stemmer\n"
            f"r = bm25s.BM25.load({str(folder)!r}, load_corpus=False, mmap=True)\n"
            f"ords = json.loads(open({str(folder / 'ords.json')!r}).read())\n"
            f"t = bm25s.tokenize([{' '.join(words)!r}], stopwords=None, "
            f"stemmer=Stemmer.Stemmer('english'), token_pattern={TOKEN_PATTERN!r}, "
            "return_ids=False, show_progress=False)\n"
            f"d, s = r.retrieve(t, k={k}, show_progress=False)\n"
            "print([ords[i] for i, x in zip(d[0], s[0]) if x > 0])\n")


class FTS5(Peer):
    name = "sqlite-fts5"

    def _weights(self) -> str:
        return ", ".join(str(self.settings.boosts[f]) for f in FIELDS)

    def build(self, chunks: list[Chunk], folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(folder / "fts.db")
        self.con.executescript(
            f"CREATE VIRTUAL TABLE chunks USING fts5({', '.join(FIELDS)}, "
            "tokenize='porter unicode61');"
            "CREATE TABLE docs (ord INTEGER PRIMARY KEY, doc TEXT NOT NULL);"
            "CREATE INDEX docs_doc ON docs (doc);")
        self._insert(chunks)
        self.con.commit()

    def _insert(self, chunks: Iterable[Chunk], base: int = 0) -> None:
        rows = [(base + c.ord, c.doc_id, *(c.fields[f] for f in FIELDS)) for c in chunks]
        self.con.executemany(f"INSERT INTO chunks (rowid, {', '.join(FIELDS)}) VALUES "
                             "(?, ?, ?, ?, ?)", [(r[0], *r[2:]) for r in rows])
        self.con.executemany("INSERT INTO docs VALUES (?, ?)", [r[:2] for r in rows])

    def open(self, folder: Path) -> None:
        self.con = sqlite3.connect(folder / "fts.db")

    def sql(self) -> str:
        return (f"SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY "
                f"bm25(chunks, {self._weights()}) LIMIT ?")

    @staticmethod
    def match(words: list[str]) -> str:
        return " OR ".join(f'"{w}"' for w in words)

    def search(self, words: list[str], k: int, fuzzy: bool = False) -> list[int]:
        if not words:
            return []
        return [r for (r,) in self.con.execute(self.sql(), (self.match(words), k))]

    def update(self, doc_id: str, chunks: list[Chunk]) -> None:
        with self.con:
            self.con.execute("DELETE FROM chunks WHERE rowid IN "
                             "(SELECT ord FROM docs WHERE doc = ?)", (doc_id,))
            self.con.execute("DELETE FROM docs WHERE doc = ?", (doc_id,))
            (top,) = self.con.execute("SELECT coalesce(max(ord), 0) + 1 FROM docs").fetchone()
            self._insert((c for c in chunks if c.doc_id == doc_id), base=top)

    def close(self) -> None:
        self.con.close()

    def cold_code(self, folder: Path, words: list[str], k: int) -> str:
        return (
            "import sqlite3\n"
            f"c = sqlite3.connect({str(folder / 'fts.db')!r})\n"
            f"print([r for (r,) in c.execute({self.sql()!r}, "
            f"({self.match(words)!r}, {k}))])\n")


PEERS: dict[str, type[Peer]] = {p.name: p for p in (Tantivy, TantivyOneField, BM25S, FTS5)}


def make(name: str, settings: Settings) -> Peer:
    return PEERS[name](settings)
