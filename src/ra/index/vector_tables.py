"""The relations a reader holds for scoring vectors (``ra.query.semantic_sql``).

- ``sem_vectors`` (ord, vector ``FLOAT[dims]``): a view over the ``vectors`` artifact
  for a short-lived reader (one command); a table in memory, sorted by ord, for a
  long-lived one (the daemon, the MCP server), brought to a successor generation by
  the partitions that changed;
- the coarse stage (``Coarse``), long-lived readers of large indexes only: every vector
  projected on its ``COARSE_DIMS`` principal components, as NumPy arrays. It only picks
  the candidates DuckDB then scores exactly: a product of 113,000 × 32 floats and a
  partial sort take 0.6 to 1.6 ms in NumPy (BLAS limited to one thread, else ``einsum``:
  ``_one_blas_thread``) against about 4 ms as a DuckDB scan.

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
COARSE_MIN_ROWS = 40_000  # below this an exact scan is cheaper than the two stages
SAMPLE = 8192  # rows the projection is fitted on


@dataclass
class Coarse:
    """The projected vectors of a long-lived reader: rows in no particular order, each
    with its chunk's ord, vectors partition and archived flag."""

    ords: object  # NumPy int64 [n]
    parts: object  # int32 [n]
    archived: object  # bool [n]
    c: object  # float32 [n, COARSE_DIMS]

    @classmethod
    def empty(cls, dims: int) -> Coarse:
        import numpy as np

        return cls(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, bool),
                   np.zeros((0, dims), np.float32))

    def drop(self, parts: list[int]) -> None:
        import numpy as np

        keep = ~np.isin(self.parts, parts)
        self.ords, self.parts = self.ords[keep], self.parts[keep]
        self.archived, self.c = self.archived[keep], self.c[keep]

    def add(self, ords, parts, archived, c) -> None:
        import numpy as np

        self.ords = np.concatenate([self.ords, ords])
        self.parts = np.concatenate([self.parts, parts])
        self.archived = np.concatenate([self.archived, archived])
        self.c = np.ascontiguousarray(np.concatenate([self.c, c]), dtype=np.float32)

    def best(self, qc, n: int, include_archived: bool) -> list[int]:
        """The ords of the ``n`` rows with the largest inner product with ``qc``,
        ascending (the exact stage sorts them)."""
        import numpy as np

        q = np.asarray(qc, dtype=np.float32)
        sims = self.c @ q if _one_blas_thread() else np.einsum("ij,j->i", self.c, q)
        if not include_archived:
            sims[self.archived] = -np.inf
        if n < len(sims):
            top = np.argpartition(sims, len(sims) - n)[len(sims) - n:]
        else:
            top = np.arange(len(sims))
        top = top[np.isfinite(sims[top])]
        return sorted(self.ords[top].tolist())


@cache
def _one_blas_thread() -> bool:
    """Whether the coarse product may go through BLAS: only once BLAS is limited to one
    thread (``threadpoolctl``, which sentence-transformers brings; without it, NumPy's
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
    """What a reader holds for ``semantic_sql``: the generation its relations read,
    and for a long-lived reader its tables' partitions (file identity) and projection."""

    generation: str
    dims: int
    resident: bool
    parts: dict[int, tuple[int, int]] = field(default_factory=dict)  # pid: (dev, inode)
    mean: object = None  # NumPy arrays of the projection, or None (no coarse stage)
    basis: object = None
    rows: int = 0
    projected: Coarse | None = None
    cursor: object = None  # a second connection to the reader's database (``snapshot``)

    @property
    def coarse(self) -> bool:
        return self.basis is not None


def tables(reader, dims: int) -> Tables:
    """The relations of ``reader``'s generation, (re)made when that generation is not
    the one they read (a long-lived reader's successor: only the vectors partitions
    that changed are read again)."""
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


def snapshot(reader, dims: int) -> tuple[Tables, object] | None:
    """For scoring on another thread while the reader's connection scores the words
    (``ra.query.semantic``): the reader's tables with their coarse stage as it is now
    (arrays are replaced, never changed in place, so a shallow copy is consistent),
    and a second connection to the reader's database, which sees ``sem_vectors`` (a
    table of the database, not of one connection); None without a coarse stage. The
    caller holds ``reader.lock``."""
    t = tables(reader, dims)
    if not t.coarse:
        return None
    if t.cursor is None:
        t.cursor = reader.con.cursor()  # closed with the reader's connection
    return replace(t, projected=replace(t.projected)), t.cursor


def _view(reader, dims: int) -> None:
    glob = str(reader.generation.path / "vectors" / "*.parquet").replace("'", "''")
    reader.con.execute(f"CREATE OR REPLACE TEMP VIEW sem_vectors AS SELECT ord, "
                       f"vector::FLOAT[{dims}] AS vector FROM read_parquet('{glob}')")


def _files(reader) -> dict[int, tuple[str, tuple[int, int]]]:
    """The vectors files of the reader's generation: pid → (path, (dev, inode))."""
    entry = reader.manifest.get("vectors") or {}
    out = {}
    for key in entry.get("parts", {}):
        path = reader.generation.path / "vectors" / f"part-{int(key):04d}.parquet"
        st = os.stat(path)
        out[int(key)] = (str(path), (st.st_dev, st.st_ino))
    return out


def _insert(reader, dims: int, files: list[str]) -> None:
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    reader.con.execute(
        f"INSERT INTO sem_vectors SELECT ord, regexp_extract(filename, 'part-(\\d+)', 1)"
        f"::INTEGER, vector::FLOAT[{dims}] FROM read_parquet([{quoted}], filename = true) "
        "ORDER BY ord")


def _load(reader, dims: int) -> Tables:
    files = _files(reader)
    con = reader.con
    con.execute("DROP VIEW IF EXISTS sem_vectors")
    # not TEMP: a second connection (``snapshot``) reads it
    con.execute(f"CREATE OR REPLACE TABLE sem_vectors (ord INTEGER, part INTEGER, "
                f"vector FLOAT[{dims}])")
    if files:
        _insert(reader, dims, [p for p, _ in files.values()])
    rows = con.execute("SELECT count(*) FROM sem_vectors").fetchall()[0][0]
    t = Tables(reader.generation.path.name, dims, True, {k: v[1] for k, v in files.items()},
               rows=rows)
    if rows >= COARSE_MIN_ROWS and dims > COARSE_DIMS:
        _project(reader, t)
    return t


def _patch(reader, t: Tables) -> Tables:
    """Bring a long-lived reader's tables to its new generation by partitions."""
    files = _files(reader)
    gone = [pid for pid, ident in t.parts.items() if files.get(pid, (None, None))[1] != ident]
    fresh = [pid for pid, (_, ident) in files.items() if t.parts.get(pid) != ident]
    con = reader.con
    if gone:
        if t.coarse:
            t.projected.drop(gone)
        con.execute("DELETE FROM sem_vectors WHERE part = ANY($p::INTEGER[])", {"p": gone})
    if fresh:
        _insert(reader, t.dims, [files[p][0] for p in fresh])
        if t.coarse:
            _coarse_rows(reader, t, "WHERE v.part = ANY($p::INTEGER[])", {"p": fresh})
    t.generation, t.parts = reader.generation.path.name, {k: v[1] for k, v in files.items()}
    return t


def _project(reader, t: Tables) -> None:
    """Fit the projection on a sample of the vectors and project them all."""
    import numpy as np

    sample = reader.con.sql(f"SELECT vector FROM sem_vectors USING SAMPLE {SAMPLE} ROWS "
                            "(reservoir, 20261124)").to_arrow_table()
    x = _matrix(sample["vector"], t.dims)
    t.mean = x.mean(axis=0)
    centred = x - t.mean
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    t.basis = np.ascontiguousarray(vectors[:, ::-1][:, :COARSE_DIMS], dtype=np.float32)
    t.projected = Coarse.empty(COARSE_DIMS)
    _coarse_rows(reader, t, "", {})
    _one_blas_thread()  # decided here, on the loading thread, not by the first search


def _coarse_rows(reader, t: Tables, where: str, params: dict) -> None:
    """Project the vectors of ``sem_vectors`` selected by ``where`` into the coarse
    stage (``t.projected``)."""
    import numpy as np

    got = reader.con.sql(
        "SELECT v.ord, v.part, m.status IS NOT DISTINCT FROM 'archived' AS archived, "
        f"v.vector FROM sem_vectors v JOIN meta m ON m.ord = v.ord {where}",
        params=params or None).to_arrow_table()
    if not got.num_rows:
        return
    c = (_matrix(got["vector"], t.dims) - t.mean) @ t.basis
    t.projected.add(np.asarray(got["ord"].to_numpy(), dtype=np.int64),
                    np.asarray(got["part"].to_numpy(), dtype=np.int32),
                    np.asarray(got["archived"].to_numpy(zero_copy_only=False), dtype=bool),
                    c.astype(np.float32))


def _matrix(column, dims: int):
    import numpy as np

    flat = column.combine_chunks().flatten() if hasattr(column, "combine_chunks") \
        else column.flatten()
    return np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dims)


def query_params(t: Tables, vector: list[float], coarse: int | None = None,
                 include_archived: bool = False) -> dict:
    """The bound values of ``semantic_sql``: ``q``, the query's vector, and with the
    coarse stage (``coarse``: how many candidates) ``cands``, the ords it picked."""
    params = {"q": vector}
    if coarse:
        import numpy as np

        qc = np.einsum("i,ij->j", np.asarray(vector, dtype=np.float32), t.basis)
        params["cands"] = t.projected.best(qc, coarse, include_archived)
    return params


def preload(reader, settings) -> None:
    """Load a long-lived reader's vector relations now (``ra.index.warm``'s loading
    thread), when its generation has the vectors of ``settings``' model."""
    from ra.store.vector_state import readiness

    state = readiness(reader.manifest, settings.model_id())
    if state.dims:
        with reader.lock:
            tables(reader, state.dims)
