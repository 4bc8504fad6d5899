"""The vectors a reader scores (``ra.query.semantic``).

- A short-lived reader (one command) reads them where they are: ``sem_vectors`` (ord,
  vector ``FLOAT[dims]``) is a view over the ``vectors`` artifact, which DuckDB scores
  (``ra.query.semantic_sql``).
- A long-lived reader (the daemon, the MCP server) holds them in memory once, as NumPy
  arrays (``Resident``), brought to a successor generation by the partitions that
  changed. ``sem_vectors`` is then the same memory seen as an Arrow table registered
  with the reader's connection: DuckDB scores it for a topic with filters or excluded
  words, which are SQL. A plain topic (no filter but ``archived``, no excluded word) is
  scored in NumPy on the query thread as soon as its vector is made (``nearest``), while
  the reader's connection scores the words: every vector exactly below
  ``COARSE_MIN_ROWS``; above, a coarse stage first, every vector projected on its
  ``COARSE_DIMS`` principal components, whose best ``coarse_limit(k)`` are then scored
  exactly. On the C++ docs (102,000 vectors of 384 floats) the coarse product and its
  partial sort take 0.4 to 1.5 ms, the exact products of its 1,000 candidates 0.3 ms;
  DuckDB took 3.2 ms for that exact stage (binding the query vector and the candidates,
  and reading their vectors out of its table), and 62 ms to scan every vector.

``ra.index.warm`` loads them on its loading thread (``preload``), so no search waits for
them. The projection is computed when the reader loads the vectors (NumPy: the principal
axes of a sample, the eigenvectors of its covariance), so it is a property of the reader,
not of the artifact, and nothing about it is stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cache

COARSE_DIMS = 32
COARSE_MIN_ROWS = 40_000  # below this every vector is scored exactly
COARSE_FACTOR = 10  # coarse candidates per exact one
SAMPLE = 8192  # rows the projection is fitted on
SEED = 20261124


def coarse_limit(k: int) -> int:
    return max(COARSE_FACTOR * k, 1000)


@dataclass(frozen=True)
class Resident:
    """A long-lived reader's vectors: rows in no particular order, each with its chunk's
    ord, vectors partition and archived flag, its vector and, with a coarse stage, its
    projection. Never changed in place (``drop`` and ``add`` make another), so a search
    on another thread holds a consistent one."""

    ords: object  # NumPy int64 [n]
    parts: object  # int32 [n]
    archived: object  # bool [n]
    full: object  # float32 [n, dims]
    c: object = None  # float32 [n, COARSE_DIMS], or None (no coarse stage)

    @classmethod
    def empty(cls, dims: int, coarse_dims: int | None = None) -> Resident:
        import numpy as np

        return cls(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, bool),
                   np.zeros((0, dims), np.float32),
                   None if coarse_dims is None else np.zeros((0, coarse_dims), np.float32))

    def drop(self, parts: list[int]) -> Resident:
        import numpy as np

        keep = ~np.isin(self.parts, parts)
        return Resident(self.ords[keep], self.parts[keep], self.archived[keep],
                        self.full[keep], None if self.c is None else self.c[keep])

    def add(self, other: Resident) -> Resident:
        import numpy as np

        def cat(a, b):
            return np.ascontiguousarray(np.concatenate([a, b]))

        return Resident(cat(self.ords, other.ords), cat(self.parts, other.parts),
                        cat(self.archived, other.archived), cat(self.full, other.full),
                        None if self.c is None else cat(self.c, other.c))

    def arrow(self):
        """(ord, vector) as an Arrow table over the same memory (``sem_vectors``)."""
        import pyarrow as pa

        dims = self.full.shape[1]
        values = pa.array(self.full.reshape(-1))
        return pa.table({"ord": pa.array(self.ords),
                         "vector": pa.FixedSizeListArray.from_arrays(values, dims)})

    def best(self, qc, n: int, include_archived: bool):
        """The rows (positions) of the ``n`` largest inner products of the projections
        with ``qc``, in no particular order."""
        import numpy as np

        sims = _product(self.c, np.asarray(qc, dtype=np.float32))
        if not include_archived:
            sims[self.archived] = -np.inf
        if n < len(sims):
            top = np.argpartition(sims, len(sims) - n)[len(sims) - n:]
        else:
            top = np.arange(len(sims))
        return top[np.isfinite(sims[top])]

    def exact(self, q, k: int, include_archived: bool, rows=None) -> list[tuple[int, float]]:
        """The best ``k`` of ``rows`` (default: all) by inner product with ``q``:
        ``(ord, sim)``, best first, ties by ord, as ``semantic_sql`` orders them."""
        import numpy as np

        full, ords, archived = (self.full, self.ords, self.archived) if rows is None else (
            self.full[rows], self.ords[rows], self.archived[rows])
        sims = _product(full, np.asarray(q, dtype=np.float32))
        if not include_archived:
            sims[archived] = -np.inf
        live = np.isfinite(sims)
        sims, ords = sims[live], ords[live]
        if k < len(sims):  # every row tied with the k-th, then ties by ord
            sel = np.nonzero(sims >= np.partition(sims, len(sims) - k)[len(sims) - k])[0]
            sims, ords = sims[sel], ords[sel]
        order = np.lexsort((ords, -sims))[:k]
        return list(zip(ords[order].tolist(), sims[order].tolist(), strict=True))


def _product(matrix, q):
    """``matrix @ q`` in float32: through BLAS once it is limited to one thread
    (``_one_blas_thread``), else NumPy's ``einsum`` (one thread)."""
    import numpy as np

    return matrix @ q if _one_blas_thread() else np.einsum("ij,j->i", matrix, q)


@cache
def _one_blas_thread() -> bool:
    """Whether products may go through BLAS: only once BLAS is limited to one thread
    (``threadpoolctl``, which sentence-transformers brings; without it, NumPy's
    ``einsum`` on one thread). OpenBLAS's product of 113,000 × 32 floats takes 0.4 ms
    against einsum's 1.4 with the caches cold, as they are after the keyword query; on
    its default two threads the second only spins, against the other thread of the
    search for two cores."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")  # for the whole process, once
        return True
    except Exception:  # not installed, or no BLAS it knows
        return False


@dataclass
class Tables:
    """What a reader holds for scoring vectors: the generation it reads, and for a
    long-lived reader its vectors (``held``), their partitions (file identity) and
    the projection of its coarse stage."""

    generation: str
    dims: int
    resident: bool
    parts: dict[int, tuple] = field(default_factory=dict)  # pid: identity (``_files``)
    mean: object = None  # the projection (NumPy arrays), or None (no coarse stage)
    basis: object = None
    held: Resident | None = None

    @property
    def coarse(self) -> bool:
        return self.basis is not None

    @property
    def rows(self) -> int:
        return 0 if self.held is None else len(self.held.ords)

    def snapshot(self) -> Tables:
        """A copy for a search on another thread (``nearest``): ``tables`` sets this
        one's fields when the reader moves on, and never changes the arrays they hold."""
        return replace(self)


def tables(reader, dims: int) -> Tables:
    """The vectors of ``reader``'s generation, (re)made when that generation is not the
    one they read (a long-lived reader's successor: only the vectors partitions that
    changed are read again). The caller holds ``reader.lock``."""
    have: Tables | None = reader.semantic
    name = reader.generation.path.name
    if have is not None and have.generation == name and have.dims == dims:
        return have
    if not reader.keep_vocabulary or not reader.resident:
        _view(reader, dims)
        reader.semantic = Tables(name, dims, resident=False)
    elif have is None or not have.resident or have.dims != dims:
        reader.semantic = _load(reader, dims)
    else:
        reader.semantic = _patch(reader, have)
    return reader.semantic


def nearest(t: Tables, vector, k: int, include_archived: bool) -> list[tuple[int, float]]:
    """A plain topic's best ``k`` chunks by meaning in a long-lived reader's memory:
    ``(ord, sim)``, best first, ties by ord (``semantic_sql``'s rows without filters).
    ``t``: the reader's tables as they were under its lock; no lock is needed here."""
    import numpy as np

    held = t.held
    if not t.coarse:
        return held.exact(vector, k, include_archived)
    qc = np.asarray(vector, dtype=np.float32) @ t.basis
    rows = held.best(qc, coarse_limit(k), include_archived)
    return held.exact(vector, k, include_archived=True, rows=rows)


def describe(t: Tables, k: int) -> str:
    """``--explain``'s account of ``nearest``, in place of SQL."""
    if not t.coarse:
        return f"-- in memory: the inner product of each of {t.rows:,} vectors"
    return (f"-- in memory: the best {min(coarse_limit(k), t.rows):,} of {t.rows:,} vectors "
            f"by their projection on {t.basis.shape[1]} principal axes, then their exact "
            "inner products")


def _view(reader, dims: int) -> None:
    glob = str(reader.generation.path / "vectors" / "*.parquet").replace("'", "''")
    reader.con.execute(f"CREATE OR REPLACE TEMP VIEW sem_vectors AS SELECT ord, "
                       f"vector::FLOAT[{dims}] AS vector FROM read_parquet('{glob}')")


def _files(reader) -> dict[int, tuple[str, tuple]]:
    """The vectors files of the reader's generation: pid → (path, identity). A file
    linked from the previous generation keeps its identity; one written anew gets
    another: the generation that wrote it, from the manifest (``ra.pipeline.vectors``),
    beside its inode, size and modification time (alone, an inode was reused: a file
    written anew got the number of the one it replaced, deleted a moment before, and a
    long-lived reader kept serving the old vectors)."""
    entry = reader.manifest.get("vectors") or {}
    out = {}
    for key, part in entry.get("parts", {}).items():
        path = reader.generation.path / "vectors" / f"part-{int(key):04d}.parquet"
        st = os.stat(path)
        writer = part[2] if len(part) > 2 else None  # manifests before 2026-11-27: none
        out[int(key)] = (str(path), (writer, st.st_dev, st.st_ino, st.st_size,
                                     st.st_mtime_ns))
    return out


def _read(reader, t: Tables, files: list[str]) -> Resident:
    """The vectors of ``files``, with each chunk's archived flag, projected when ``t``
    has a coarse stage."""
    import numpy as np

    if not files:
        return Resident.empty(t.dims, COARSE_DIMS if t.coarse else None)
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    # no join, no sort: DuckDB then streams the rows, and holds no copy of them after
    got = reader.con.sql(
        "SELECT ord, regexp_extract(filename, 'part-(\\d+)', 1)::INTEGER AS part, "
        f"vector::FLOAT[{t.dims}] AS vector FROM read_parquet([{quoted}], filename = true)"
    ).to_arrow_table()
    ords = np.asarray(got["ord"].to_numpy(), dtype=np.int64)
    parts = np.asarray(got["part"].to_numpy(), dtype=np.int32)
    full = _matrix(got["vector"], t.dims)
    del got
    archived = reader.con.sql("SELECT ord FROM meta WHERE status = 'archived'").fetchnumpy()
    return Resident(ords, parts, np.isin(ords, archived["ord"]), full, _projected(t, full))


def _projected(t: Tables, full):
    if not t.coarse:
        return None
    import numpy as np

    # (full − mean) @ basis, without a centred copy of every vector
    return np.ascontiguousarray(full @ t.basis - t.mean @ t.basis, dtype=np.float32)


def _register(reader, t: Tables) -> None:
    """``sem_vectors`` for DuckDB: ``t.held`` as an Arrow table over the same memory."""
    reader.con.execute("DROP VIEW IF EXISTS sem_vectors")
    reader.con.register("sem_vectors", t.held.arrow())


def _load(reader, dims: int) -> Tables:
    files = _files(reader)
    t = Tables(reader.generation.path.name, dims, True, {k: v[1] for k, v in files.items()})
    t.held = _read(reader, t, [p for p, _ in files.values()])
    if t.rows >= COARSE_MIN_ROWS and dims > COARSE_DIMS:
        _fit(t)
    _register(reader, t)
    _one_blas_thread()  # decided here, on the loading thread, not by the first search
    return t


def _patch(reader, t: Tables) -> Tables:
    """Bring a long-lived reader's vectors to its new generation by partitions."""
    files = _files(reader)
    gone = [pid for pid, ident in t.parts.items() if files.get(pid, (None, None))[1] != ident]
    fresh = [pid for pid, (_, ident) in files.items() if t.parts.get(pid) != ident]
    held = t.held.drop(gone) if gone else t.held
    if fresh:
        held = held.add(_read(reader, t, [files[p][0] for p in fresh]))
    t.held = held
    t.generation, t.parts = reader.generation.path.name, {k: v[1] for k, v in files.items()}
    _register(reader, t)
    return t


def _fit(t: Tables) -> None:
    """Fit the projection on a sample of the vectors and project them all."""
    import numpy as np

    full = t.held.full
    pick = np.random.default_rng(SEED).choice(len(full), min(SAMPLE, len(full)),
                                              replace=False)
    x = full[np.sort(pick)]
    t.mean = x.mean(axis=0)
    centred = x - t.mean
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    t.basis = np.ascontiguousarray(vectors[:, ::-1][:, :COARSE_DIMS], dtype=np.float32)
    held = t.held
    t.held = Resident(held.ords, held.parts, held.archived, held.full, _projected(t, full))


def _matrix(column, dims: int):
    import numpy as np

    flat = column.combine_chunks().flatten() if hasattr(column, "combine_chunks") \
        else column.flatten()
    return np.ascontiguousarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32
                                ).reshape(-1, dims)


def preload(reader, settings) -> None:
    """Load a long-lived reader's vectors now (``ra.index.warm``'s loading thread),
    when its generation has the vectors of ``settings``' model."""
    from ra.store.vector_state import readiness

    state = readiness(reader.manifest, settings.model_id())
    if state.dims:
        with reader.lock:
            tables(reader, state.dims)
