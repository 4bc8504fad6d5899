"""What a long-lived reader keeps of every chunk: metadata, parent and text, as Arrow columns.

A search asks for the metadata of its hundred best chunks and of their ancestors (to
rank, aggregate and label them), and for the text of the few it shows. DuckDB answers
such a lookup in 3–5 ms, most of it fixed cost and the materialisation of strings, which
is a third of a whole search on a long-lived reader; this store answers it in
microseconds.

It holds Arrow record batches of every chunk, sorted by ``ord``: memory-mapped from the
generation's ``hot_store.arrow`` (``mapped``; written by ``ra.pipeline.compact``), whose
pages are read when a lookup first touches them, or loaded from DuckDB for an index
without that file. It builds Python objects only for the chunks a search asks about: the
numbers are read through ``memoryview``s of the Arrow buffers, a string is decoded from
its slice of the data buffer, the metadata of many chunks is one Arrow ``take``, an id is
found by binary search over the ids' sort order; the markdown and plain text of the
chunks a search shows, a subtree's rows at once, are read from the file with ``pread``,
not through the map (``_File``). Opening builds no per-chunk Python
object (the dict-and-list store it replaces took 163 MB and 0.7 s to load on the C++
docs, 113,000 chunks; the mapped file is 85 MB of pages the kernel reads on demand and
shares between processes). The same batches are DuckDB's ``meta`` and ``texts``
(``con.register``: DuckDB scans the Arrow buffers, there is no second copy), which scores as
fast as a table of its own.

Chunks are added a batch at a time in ``ord`` order (a load, or the chunks an incremental
update numbered after every earlier one) and dropped by ``ord`` by slicing the batches
around them (no copy); ords are never reused, so a changed document comes back under new
ords with its old ids.
"""

from __future__ import annotations

import os
import weakref
from bisect import bisect_left, bisect_right
from functools import partial
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

#: The columns of the store's table: those of the reader's ``meta`` relation
#: (``RELATION_COLUMNS``), then the ord of the chunk's parent, its own markdown and what a
#: reader sees of it (``chunks.plain``).
STORE_COLUMNS = (*META_COLUMNS, "status", "tags", "doc_ord", "parent_ord", "text", "plain")
RELATION_COLUMNS = STORE_COLUMNS[:-3]

TAKE_ROWS = 48  # rows of a part ``_Part.metas`` reads by Arrow ``take`` rather than one by one

#: The fixed-width columns read by ``memoryview``, with their ``struct`` codes.
_NUMBERS = {"ord": "i", "depth": "b", "sibling_count": "i", "descendants": "i",
            "tokens": "i", "line": "i", "mtime_ns": "q", "doc_ord": "i", "parent_ord": "i"}
_STRINGS = ("id", "title", "breadcrumb", "text", "doc_id", "parent_id", "plain")
#: The string columns a search reads for the few chunks it shows only, from the file
#: rather than through its map where the store is mapped (``_File``).
_TEXTS = ("text", "plain")
#: The columns of ``ChunkMeta`` a part reads as they are. The others follow from ids: a
#: chunk's ``doc_id`` and ``parent_id`` are the ids of its document's and parent's rows
#: (``doc_ord``, ``parent_ord``: the same batch, mostly the same page), and ``tree`` and
#: ``path`` are its document id's two sides of the first ``:`` (a tree name has none). So
#: a lookup reads three string columns instead of seven: the pages a search maps of the
#: file (the kernel maps 64 KB around each page it reads) are fewer. (When those rows
#: are not held, which no update does, as it drops whole documents, the columns
#: ``doc_id`` and ``parent_id`` are read.)
_DIRECT = tuple(c for c in META_COLUMNS if c not in ("doc_id", "parent_id", "tree", "path"))


def schema():
    """The Arrow schema of the store's table (a load is cast to it, so the buffers'
    layouts are the ones ``_Part`` reads): ``file_schema`` without its last two."""
    schema = file_schema()
    return schema.remove(len(schema) - 1).remove(len(schema) - 2)


def file_schema():
    """The schema of ``hot_store.arrow`` (``ra.store.artifacts.HOT_STORE``): the
    store's columns, the chunk's partition, and per record batch the sort order of its
    ids (``id_order[k]``: the row of the batch holding its k-th smallest id)."""
    from ra.store.artifacts import HOT_STORE

    return HOT_STORE


class ChunkStore:
    """Every chunk's ``ChunkMeta``, parent and text, by ``ord``, in Arrow batches."""

    def __init__(self, table=None) -> None:
        self._parts: list[_Part] = []
        self._firsts: list[int] = []  # the first ord of each part, for bisect
        # The chunks the last ``lineage`` read, by id: ranking then looks up the parents
        # of the chunks it ranks by id, which a binary search finds in 13 µs, a dict in
        # 0.1. Only the last: a cache of many searches' chunks kept thousands of tuples
        # alive, and the garbage collector's full passes over them doubled the cost.
        self._recent: dict[str, ChunkMeta] = {}
        if table is not None:
            self.add(table)

    @classmethod
    def mapped(cls, path) -> ChunkStore:
        """The store of a ``hot_store.arrow`` file (``file_schema``), memory-mapped: a
        page of it is read when a lookup or a DuckDB scan first touches it. Raises
        ``ValueError`` for a file that is not one."""
        import pyarrow as pa

        try:
            mapping = pa.memory_map(str(path))
            file = _File(path, mapping) if hasattr(os, "pread") else None
            source = pa.ipc.open_file(mapping)
        except (OSError, pa.ArrowInvalid) as exc:
            raise ValueError(f"{path.name}: {exc}") from None
        if not source.schema.equals(file_schema()):
            raise ValueError(f"{path.name}: not a chunk store of this version")
        store = cls()
        for i in range(source.num_record_batches):
            batch = source.get_batch(i)
            if batch.num_rows:
                store._parts.append(_Part(batch.select(list(STORE_COLUMNS)),
                                          batch.column("id_order"), batch.column("part"),
                                          file))
        store._firsts = [p.first for p in store._parts]
        return store

    def ords_of_partitions(self, partitions) -> set[int]:
        """The ords held from the partitions ``partitions`` of a mapped file."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = pa.array(sorted(set(partitions)), pa.int32())
        return {o for p in self._parts if p.partition is not None
                for o in p.batch.column("ord").filter(pc.is_in(p.partition, wanted)).to_pylist()}

    def last_ord(self) -> int:
        """The largest ord held (-1 when none)."""
        return self._parts[-1].ords[-1] if self._parts else -1

    def __len__(self) -> int:
        return sum(p.n for p in self._parts)

    def table(self):
        """Every chunk held, by ord, as one Arrow table (its batches are the store's:
        nothing is copied)."""
        import pyarrow as pa

        return pa.Table.from_batches([p.batch for p in self._parts], schema())

    def add(self, table) -> None:
        """Add the chunks of an Arrow table of ``STORE_COLUMNS`` sorted by ``ord``,
        numbered after every chunk held so far."""
        table = table.select(list(STORE_COLUMNS)).cast(schema())
        for batch in table.to_batches():
            if batch.num_rows:
                self._parts.append(_Part(batch))
        self._firsts = [p.ords[0] for p in self._parts]

    def drop(self, ords) -> None:
        """Forget the chunks ``ords`` (those an update removed): each batch holding some
        is cut into the slices around them."""
        gone = sorted(set(ords))
        if gone:
            self._parts = [kept for p in self._parts for kept in p.without(gone)]
            self._firsts = [p.ords[0] for p in self._parts]
            self._recent = {}

    def _find(self, o: int) -> tuple[_Part, int] | None:
        """The part holding chunk ``o`` and its row there."""
        k = bisect_right(self._firsts, o) - 1
        if k < 0:
            return None
        part = self._parts[k]
        r = o - part.first if part.dense else bisect_left(part.ords, o)
        return (part, r) if r < part.n and part.ords[r] == o else None

    def has(self, o: int) -> bool:
        return self._find(o) is not None

    def ord_of(self, chunk_id: str) -> int | None:
        if (m := self._recent.get(chunk_id)) is not None:
            return m.ord
        key = chunk_id.encode()
        for part in self._parts:
            r = part.row_of(key)
            if r is not None:
                return part.ords[r]
        return None

    def meta(self, o: int) -> ChunkMeta:
        """The metadata of chunk ``o`` (which ``has``)."""
        part, r = self._find(o)
        return part.meta(r)

    def meta_by_id(self, chunk_id: str) -> ChunkMeta | None:
        """The metadata of chunk ``chunk_id``, None when not held."""
        if (m := self._recent.get(chunk_id)) is not None:
            return m
        o = self.ord_of(chunk_id)
        return None if o is None else self.meta(o)

    def lineage(self, ords) -> dict[int, ChunkMeta]:
        """The metadata of those of the chunks ``ords`` that are held and of all their
        ancestors, by ord (a document is whole in one part: its chunks' parents are rows
        of the same batch)."""
        rows: dict[int, list] = {}
        seen: set[int] = set()
        for o in ords:
            if o in seen or (found := self._find(o)) is None:
                continue
            part, r = found
            where = rows.setdefault(id(part), [part])
            while o is not None and o not in seen:
                seen.add(o)
                where.append(r)
                if (o := part.parent_ord(r)) is not None:
                    r = part.row(o)
        metas = sorted(m for part, *where in rows.values() for m in part.metas(where))
        self._recent = {m.id: m for m in metas}
        return {m.ord: m for m in metas}

    def strings(self, o: int, markdown: bool, plain: bool) -> tuple[str, str] | None:
        """The markdown of chunk ``o`` (its heading and body) and what a reader sees of
        it (``chunks.plain``), each empty unless asked for; None when not held."""
        return self.joined(o, o + 1, markdown, plain) if self.has(o) else None

    def joined(self, start: int, stop: int, markdown: bool, plain: bool) -> tuple[str, str]:
        """The markdown of the chunks held among the ords ``start:stop`` (a chunk and its
        subsections), joined, and what a reader sees of them, those not empty joined by
        spaces; each empty unless asked for. The rows of each part are read at once
        (``_Part.joined``), each column's bytes decoded once."""
        texts: list[str] = []
        plains: list[str] = []
        for part in self._parts[max(bisect_right(self._firsts, start) - 1, 0):]:
            if part.first >= stop:
                break
            low = start - part.first if part.dense else bisect_left(part.ords, start)
            high = stop - part.first if part.dense else bisect_left(part.ords, stop)
            low, high = max(low, 0), min(high, part.n)
            if low < high:
                if markdown:
                    texts.append(part.joined("text", low, high, ""))
                if plain and (line := part.joined("plain", low, high, " ")):
                    plains.append(line)
        return "".join(texts), " ".join(plains)

    def ancestors(self, o: int) -> list[int]:
        """The proper ancestors of chunk ``o``, nearest first."""
        out = []
        found = self._find(o)
        if found is None:
            return out
        part, r = found  # a document is whole in one part
        while (o := part.parent_ord(r)) is not None:
            out.append(o)
            r = part.row(o)
        return out


class _Part:
    """One Arrow batch of the store (rows sorted by ord) read without copies."""

    def __init__(self, batch, id_order=None, partition=None, file=None) -> None:
        import pyarrow.compute as pc

        self.batch, self.n, self.partition, self._file = batch, batch.num_rows, partition, file
        # where the data of each column of _TEXTS starts in the mapped file, when it is
        # read from there (``joined``)
        self._at = {} if file is None else {
            name: at for name in _TEXTS
            if (at := file.at(batch.column(name).buffers()[2])) is not None}
        self._cols = {}
        for name, code in _NUMBERS.items():
            self._cols[name] = _fixed(batch.column(name), code)
        for name in _STRINGS:
            self._cols[name] = _strings(batch.column(name))
        self._global = _bits(batch.column("is_global"))
        self.ords = self._cols["ord"][1]
        # never null: read directly
        self._depth, self._siblings, self._descendants, self._line, self._mtime = (
            self._cols[c][1] for c in ("depth", "sibling_count", "descendants", "line",
                                       "mtime_ns"))
        self._meta = batch.select(list(_DIRECT))
        self._text = tuple(self._cols[c] for c in _STRINGS[:3])
        # (offsets, data) of each when none has nulls
        self._plain = None if any(v is not None for v, *_ in self._text) else tuple(
            (offsets, data) for _, offsets, data, _ in self._text)
        self._doc = self._cols["doc_ord"][1]
        self._parent = _filled(batch.column("parent_ord"))
        self._tokens = _filled(batch.column("tokens"))
        self.first = self.ords[0]
        self.dense = self.ords[-1] - self.first + 1 == self.n  # row = ord - first
        if id_order is None:
            id_order = pc.sort_indices(batch.column("id")).cast("int32")
        self.id_order = id_order
        self._order = _fixed(id_order, "i")[1]

    def without(self, gone: list[int]) -> list[_Part]:
        """The slices of this part around the chunks ``gone`` (sorted ords)."""
        import pyarrow.compute as pc

        cuts = sorted({bisect_left(self.ords, o) for o in gone
                       if bisect_left(self.ords, o) < self.n
                       and self.ords[bisect_left(self.ords, o)] == o})
        if not cuts:
            return [self]
        out, start = [], 0
        for cut in [*cuts, self.n]:
            if cut > start:
                inside = pc.and_(pc.greater_equal(self.id_order, start),
                                 pc.less(self.id_order, cut))
                order = pc.subtract(pc.filter(self.id_order, inside), start).cast("int32")
                out.append(_Part(self.batch.slice(start, cut - start), order, None
                                 if self.partition is None else
                                 self.partition.slice(start, cut - start), self._file))
            start = cut + 1
        return out

    def row(self, o: int) -> int:
        """The row of chunk ``o``, which this part holds."""
        return o - self.first if self.dense else bisect_left(self.ords, o)

    def parent_ord(self, r: int) -> int | None:
        o = self._parent[r]
        return None if o < 0 else o

    def string(self, name: str, r: int) -> str | None:
        valid, offsets, data, off = self._cols[name]
        if valid is not None and not valid[(off + r) >> 3] >> ((off + r) & 7) & 1:
            return None
        return str(data[offsets[r]:offsets[r + 1]], "utf-8")

    def joined(self, name: str, start: int, stop: int, sep: str) -> str:
        """The strings of column ``name`` (of ``_TEXTS``) in rows ``start:stop``, those
        not empty joined by ``sep``: their bytes read at once, from the file where the
        part is mapped (``_File``), and decoded once (each row's bytes are whole
        characters)."""
        valid, offsets, data, off = self._cols[name]
        low, high = offsets[start], offsets[stop]
        at = self._at.get(name)
        blob = data[low:high] if at is None else self._file.read(at + low, high - low)
        if not sep and valid is None:  # the rows' bytes, one after another
            return str(blob, "utf-8")
        blob = memoryview(blob)
        return str(sep.encode().join(
            blob[offsets[r] - low:offsets[r + 1] - low] for r in range(start, stop)
            if offsets[r + 1] > offsets[r] and (
                valid is None or valid[(off + r) >> 3] >> ((off + r) & 7) & 1)), "utf-8")

    def row_of(self, key: bytes) -> int | None:
        """The row whose id is ``key`` (UTF-8), by binary search over the id order."""
        _, offsets, data, _ = self._cols["id"]
        order, lo, hi = self._order, 0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            i = order[mid]
            if bytes(data[offsets[i]:offsets[i + 1]]) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n:
            i = order[lo]
            if data[offsets[i]:offsets[i + 1]] == key:
                return i
        return None

    def metas(self, rows: list[int]) -> list[ChunkMeta]:
        """The metadata of ``rows``: one by one for a few, else column by column (an
        Arrow ``take`` costs some 50 µs and 1.2 a row, a row alone 2)."""
        if len(rows) < TAKE_ROWS:
            return [self.meta(r) for r in rows]
        import pyarrow as pa

        taken = self._meta.take(pa.array(rows, pa.int32()))
        o, ids, *rest = (c.to_pylist() for c in taken.columns)
        return list(map(_NEW, zip(o, ids, *self._families(rows, ids), *rest, strict=True)))

    def _families(self, rows: list[int], ids: list) -> tuple[list, list, list, list]:
        """``_family`` of many rows, as columns: their documents' and parents' ids read by
        one Arrow ``take`` each (a dense part: row = ord - first)."""
        import pyarrow as pa

        first, n, doc, parent = self.first, self.n, self._doc, self._parent
        doc_rows = [doc[r] - first for r in rows]
        parents = [parent[r] for r in rows]
        parent_rows = [r if p < 0 else p - first for r, p in zip(rows, parents, strict=True)]
        if not self.dense or min(doc_rows) < 0 or max(doc_rows) >= n or min(
                parent_rows) < 0 or max(parent_rows) >= n:
            return tuple(map(list, zip(*map(self._family, rows, ids), strict=True)))
        column = self.batch.column("id")
        docs = column.take(pa.array(doc_rows, pa.int32())).to_pylist()
        of_parents = column.take(pa.array(parent_rows, pa.int32())).to_pylist()
        sides = [d.partition(":") for d in docs]
        return (docs, [None if p < 0 else i for p, i in zip(parents, of_parents, strict=True)],
                [s[0] for s in sides], [s[2] for s in sides])

    def _id(self, r: int) -> str | None:
        if self._plain is None:
            return _decode(self._text[0], r)
        offsets, data = self._plain[0]
        return str(data[offsets[r]:offsets[r + 1]], "utf-8")

    def _family(self, r: int, chunk: str | None) -> tuple:
        """``doc_id, parent_id, tree, path`` of row ``r``, whose id is ``chunk``."""
        d, p = self._doc[r], self._parent[r]
        doc = chunk if d == self.ords[r] else self._id_of(d, r, "doc_id")
        parent = None if p < 0 else doc if p == d else self._id_of(p, r, "parent_id")
        tree, _, path = (doc or "").partition(":")
        return doc, parent, tree, path

    def _id_of(self, o: int, r: int, column: str) -> str | None:
        """The id of chunk ``o``, which row ``r``'s ``column`` names (read there when this
        part does not hold ``o``)."""
        k = self.row(o)
        if 0 <= k < self.n and self.ords[k] == o:
            return self._id(k)
        return self.string(column, r)

    def meta(self, r: int) -> ChunkMeta:
        _, bits, off = self._global
        tokens = self._tokens[r]
        if self._plain is None:  # a string column with nulls
            (ids, titles, crumbs), text = self._text, _decode
            chunk, title, crumb = text(ids, r), text(titles, r), text(crumbs, r)
        else:  # inlined: a third of the time of a call per string
            (io, iv), (lo, lv), (bo, bv) = self._plain
            chunk = str(iv[io[r]:io[r + 1]], "utf-8")
            title, crumb = str(lv[lo[r]:lo[r + 1]], "utf-8"), str(bv[bo[r]:bo[r + 1]], "utf-8")
        return ChunkMeta(
            self.ords[r], chunk, *self._family(r, chunk),
            self._depth[r], self._siblings[r], self._descendants[r], title, crumb,
            bool(bits[(off + r) >> 3] >> ((off + r) & 7) & 1),
            None if tokens < 0 else tokens, self._line[r], self._mtime[r])


class _File:
    """The ``hot_store.arrow`` a store maps, opened a second time to read the chunks'
    markdown and plain text with ``pread`` (``_Part.joined``), not through the map: the
    kernel maps a whole page-cache folio around each page a process touches (2 MB on
    ext4 with large folios), so the texts of the five results a search shows made 12 MB
    of the file resident in the process, and 100 searches 55 MB (cpp-docs). Read so,
    they go through the page cache the map shares, but none stays in the process."""

    def __init__(self, path, mapping) -> None:
        mapping.seek(0)
        self._base = mapping.read_buffer(1).address  # the map's first byte
        mapping.seek(0)
        self._size = mapping.size()
        self._fd = os.open(path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._fd)

    def at(self, buffer) -> int | None:
        """Where ``buffer`` starts in the file: None when it is not a part of the map
        (a buffer pyarrow made, which the part reads in memory)."""
        at = buffer.address - self._base
        return at if 0 <= at and at + buffer.size <= self._size else None

    def read(self, at: int, size: int) -> bytes:
        return os.pread(self._fd, size, at)


# Each reader returns the array's buffers as ``memoryview``s with the array's ``offset``
# (a slice's first row in them): values and string offsets are sliced to the array's rows,
# so ``[r]`` is row ``r``; bitmaps (validity, booleans) are indexed at ``offset + r``.

_NEW = partial(tuple.__new__, ChunkMeta)  # ChunkMeta._make without a Python call


def _decode(column, r: int) -> str | None:
    """Row ``r`` of a string column read by ``_strings``."""
    valid, offsets, data, off = column
    if valid is not None and not valid[(off + r) >> 3] >> ((off + r) & 7) & 1:
        return None
    return str(data[offsets[r]:offsets[r + 1]], "utf-8")


def _filled(array):
    """A nullable int32 column with its nulls as -1 (held in memory: 4 bytes a row), so
    that the few read per query need no validity test."""
    import pyarrow.compute as pc

    return _fixed(pc.fill_null(array, -1).cast("int32"), "i")[1]


def _validity(array):
    buf = array.buffers()[0]
    return None if buf is None or array.null_count == 0 else memoryview(buf)


def _cast(buf, code: str, start: int, stop: int) -> memoryview:
    size = {"b": 1, "i": 4, "q": 8}[code]
    return memoryview(buf)[:len(buf) // size * size].cast(code)[start:stop]


def _fixed(array, code: str):
    """``(validity, values, offset)`` of a fixed-width array."""
    off = array.offset
    return _validity(array), _cast(array.buffers()[1], code, off, off + len(array)), off


def _strings(array):
    """``(validity, offsets, data, offset)`` of a string array."""
    _, offsets, data = array.buffers()
    off = array.offset
    return (_validity(array), _cast(offsets, "i", off, off + len(array) + 1),
            memoryview(data) if data is not None else memoryview(b""), off)


def _bits(array):
    """``(validity, bitmap, offset)`` of a boolean array."""
    return _validity(array), memoryview(array.buffers()[1]), array.offset
