"""What a long-lived reader keeps of every chunk in Python: metadata, parent and text.

A search asks for the metadata of its hundred best chunks and of their ancestors (to
rank, aggregate and label them), and for the text of the few it shows. DuckDB answers
such a lookup in 3–5 ms, most of it fixed cost and the materialisation of strings, which
is a third of a whole search on a long-lived reader; this store answers it in
microseconds.

It is held by column, indexed by ``ord``, so it costs about what the strings do: the
numbers sit in ``array``s, a document's tree, path and id are one shared string for all
its chunks, and a chunk's parent and document are ords. On the C++ docs (113,000 chunks)
that is some 45 MB beside the text; a dict of ``ChunkMeta`` objects would take 117 MB.

Chunks are added a document at a time in ``ord`` order (a load, or the chunks an
incremental update numbered after every earlier one) and dropped by ``ord``; ords are
never reused, so a dropped chunk leaves a hole (``None``) and a changed document comes
back under new ords with its old ids.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple


class ChunkMeta(NamedTuple):
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


#: The columns of ``ChunkMeta``, in order: what a query selects to build one.
META_COLUMNS = ChunkMeta._fields

#: What ``ChunkStore.add`` takes per chunk: the metadata, the ord of the chunk's
#: document node, and the chunk's own markdown.
STORE_COLUMNS = (*META_COLUMNS, "doc_ord", "text")

_NONE = -1  # "no such chunk" in ``doc`` and ``parent``; "unknown" in ``tokens``


class ChunkStore:
    """Every chunk's ``ChunkMeta``, parent and text, by ``ord``."""

    def __init__(self) -> None:
        self.ids: list[str | None] = []  # None: no chunk has this ord (now)
        self.texts: list[str | None] = []
        self._ord_of: dict[str, int] = {}
        self._strings: dict[str, str] = {}  # trees, paths: one object per distinct value
        self._tree: list[str | None] = []
        self._path: list[str | None] = []
        self._title: list[str | None] = []
        self._breadcrumb: list[str | None] = []
        self._numbers = {name: array(code) for name, code in _NUMBERS}

    def __len__(self) -> int:
        return len(self._ord_of)

    def add(self, rows) -> None:
        """Add chunks, rows of ``STORE_COLUMNS`` in ``ord`` order, numbered after every
        chunk held so far; a parent comes before its children (documents are whole)."""
        rows = list(rows)
        if not rows:
            return
        (ords, ids, _doc_ids, parents, trees, paths, depth, siblings, descendants, titles,
         breadcrumbs, is_global, tokens, lines, mtimes, doc_ords, texts) = zip(*rows, strict=True)
        self._grow(ords[-1] + 1)
        _put(self.ids, ords, ids)
        self._ord_of.update(zip(ids, ords, strict=True))
        share = self._strings.setdefault
        ord_of = self._ord_of
        for column, values in (
                (self.texts, texts), (self._title, titles), (self._breadcrumb, breadcrumbs),
                (self._tree, [share(t, t) for t in trees]),
                (self._path, [share(p, p) for p in paths])):
            _put(column, ords, values)
        n = self._numbers
        for name, values in (
                ("doc", doc_ords), ("depth", depth), ("siblings", siblings),
                ("descendants", descendants), ("line", lines), ("mtime", mtimes),
                ("parent", [_NONE if p is None else ord_of[p] for p in parents]),
                ("tokens", [_NONE if t is None else t for t in tokens]),
                ("global", [int(g) for g in is_global])):
            _put(n[name], ords, array(n[name].typecode, values))

    def _grow(self, n: int) -> None:
        more = n - len(self.ids)
        if more <= 0:
            return
        for column in (self.ids, self.texts, self._tree, self._path, self._title,
                       self._breadcrumb):
            column.extend([None] * more)
        for column in self._numbers.values():
            column.extend(array(column.typecode, [_NONE]) * more)

    def drop(self, ords) -> None:
        """Forget the chunks ``ords`` (those an update removed)."""
        for o in ords:
            if 0 <= o < len(self.ids) and self.ids[o] is not None:
                if self._ord_of.get(self.ids[o]) == o:
                    del self._ord_of[self.ids[o]]
                self.ids[o] = self.texts[o] = None
                self._title[o] = self._breadcrumb[o] = self._tree[o] = self._path[o] = None

    def has(self, o: int) -> bool:
        return 0 <= o < len(self.ids) and self.ids[o] is not None

    def ord_of(self, chunk_id: str) -> int | None:
        return self._ord_of.get(chunk_id)

    def meta(self, o: int) -> ChunkMeta:
        """The metadata of chunk ``o`` (which ``has``)."""
        n = self._numbers
        parent, tokens = n["parent"][o], n["tokens"][o]
        return ChunkMeta(
            o, self.ids[o], self.ids[n["doc"][o]],
            None if parent == _NONE else self.ids[parent], self._tree[o], self._path[o],
            n["depth"][o], n["siblings"][o], n["descendants"][o], self._title[o],
            self._breadcrumb[o], bool(n["global"][o]), None if tokens == _NONE else tokens,
            n["line"][o], n["mtime"][o])

    def ancestors(self, o: int) -> list[int]:
        """The proper ancestors of chunk ``o``, nearest first."""
        parent, out = self._numbers["parent"], []
        while 0 <= o < len(parent) and (o := parent[o]) != _NONE:
            out.append(o)
        return out


#: The numeric columns, with their ``array`` type codes.
_NUMBERS = (("doc", "i"), ("parent", "i"), ("depth", "i"), ("siblings", "i"),
            ("descendants", "i"), ("tokens", "i"), ("line", "i"), ("global", "b"),
            ("mtime", "q"))


def _put(column, ords: tuple[int, ...], values) -> None:
    """``column[o] = value`` for each pair; one slice when the ords are consecutive."""
    if ords[-1] - ords[0] + 1 == len(ords):
        column[ords[0]:ords[-1] + 1] = values
    else:
        for o, value in zip(ords, values, strict=True):
            column[o] = value
