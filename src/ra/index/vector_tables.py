"""The relations a reader holds for scoring vectors (``ra.query.semantic_sql``).

- ``sem_vectors`` (ord, vector ``FLOAT[dims]``): a view over the ``vectors`` artifact
  for a short-lived reader (one command); a table in memory, sorted by ord, for a
  long-lived one (the daemon, the MCP server), brought to a successor generation by
  the partitions that changed;
- ``sem_coarse`` (ord, archived, c ``FLOAT[COARSE_DIMS]``), long-lived readers of large
  indexes only: every vector projected on its ``COARSE_DIMS`` principal components.

``ra.index.warm`` loads them on its loading thread (``preload``), so no search waits for
them. The projection is computed when the reader loads the vectors (NumPy: the principal
axes of a sample, the eigenvectors of its covariance), so it is a property of the reader,
not of the artifact, and nothing about it is stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

COARSE_DIMS = 32
COARSE_MIN_ROWS = 40_000  # below this an exact scan is cheaper than the two stages
SAMPLE = 8192  # rows the projection is fitted on


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
    con.execute(f"CREATE OR REPLACE TEMP TABLE sem_vectors (ord INTEGER, part INTEGER, "
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
            con.execute("DELETE FROM sem_coarse WHERE ord IN (SELECT ord FROM sem_vectors "
                        "WHERE part = ANY($p::INTEGER[]))", {"p": gone})
        con.execute("DELETE FROM sem_vectors WHERE part = ANY($p::INTEGER[])", {"p": gone})
    if fresh:
        _insert(reader, t.dims, [files[p][0] for p in fresh])
        if t.coarse:
            _coarse_rows(reader, t, "WHERE v.part = ANY($p::INTEGER[])", {"p": fresh})
    t.generation, t.parts = reader.generation.path.name, {k: v[1] for k, v in files.items()}
    return t


def _project(reader, t: Tables) -> None:
    """Fit the projection on a sample of the vectors and build ``sem_coarse``."""
    import numpy as np

    sample = reader.con.sql(f"SELECT vector FROM sem_vectors USING SAMPLE {SAMPLE} ROWS "
                            "(reservoir, 20261124)").to_arrow_table()
    x = _matrix(sample["vector"], t.dims)
    t.mean = x.mean(axis=0)
    centred = x - t.mean
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    t.basis = np.ascontiguousarray(vectors[:, ::-1][:, :COARSE_DIMS], dtype=np.float32)
    reader.con.execute(f"CREATE OR REPLACE TEMP TABLE sem_coarse (ord INTEGER, archived "
                       f"BOOLEAN, c FLOAT[{COARSE_DIMS}])")
    _coarse_rows(reader, t, "", {})


def _coarse_rows(reader, t: Tables, where: str, params: dict) -> None:
    """Project the vectors of ``sem_vectors`` selected by ``where`` into ``sem_coarse``."""
    import pyarrow as pa

    got = reader.con.sql(
        "SELECT v.ord, m.status IS NOT DISTINCT FROM 'archived' AS archived, v.vector "
        f"FROM sem_vectors v JOIN meta m ON m.ord = v.ord {where}",
        params=params or None).to_arrow_table()
    if not got.num_rows:
        return
    c = (_matrix(got["vector"], t.dims) - t.mean) @ t.basis
    coarse = pa.table({"ord": got["ord"], "archived": got["archived"],
                       "c": pa.FixedSizeListArray.from_arrays(pa.array(c.ravel()),
                                                              COARSE_DIMS)})
    reader.con.register("sem_coarse_new", coarse)
    try:
        reader.con.execute(f"INSERT INTO sem_coarse SELECT ord, archived, "
                           f"c::FLOAT[{COARSE_DIMS}] FROM sem_coarse_new ORDER BY ord")
    finally:
        reader.con.unregister("sem_coarse_new")


def _matrix(column, dims: int):
    import numpy as np

    flat = column.combine_chunks().flatten() if hasattr(column, "combine_chunks") \
        else column.flatten()
    return np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dims)


def query_params(t: Tables, vector: list[float], coarse: bool) -> dict:
    """The bound vectors of ``semantic_sql``: ``q`` and, for the coarse stage, ``qc``."""
    params = {"q": vector}
    if coarse:
        import numpy as np

        params["qc"] = (np.asarray(vector, dtype=np.float32) @ t.basis).tolist()
    return params


def preload(reader, settings) -> None:
    """Load a long-lived reader's vector relations now (``ra.index.warm``'s loading
    thread), when its generation has the vectors of ``settings``' model."""
    from ra.store.vector_state import readiness

    state = readiness(reader.manifest, settings.model_id())
    if state.dims:
        with reader.lock:
            tables(reader, state.dims)
