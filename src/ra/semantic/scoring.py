"""Scoring vectors in DuckDB, beside BM25F: a pure SQL builder and the relations it reads.

``semantic_sql`` returns the best ``k`` chunks by inner product with the query vector
(the vectors are unit length, so it is their cosine), under the same filters as the
keyword query (``ra.query.bm25f.Filters``) and the same rule for words the query
excludes: no chunk whose subtree holds one (``bm25f.BLOCKED``). It reads two relations:

- ``sem_vectors`` (ord, vector ``FLOAT[dims]``): a view over the ``vectors`` artifact
  for a short-lived reader (one command); a table in memory, sorted by ord, for a
  long-lived one (the daemon, the MCP server);
- ``sem_coarse`` (ord, archived, c ``FLOAT[COARSE_DIMS]``), long-lived readers of large
  indexes only: every vector projected on its ``COARSE_DIMS`` principal components.

Why the second: an exact scan of 113,000 chunks of 384 floats costs about 62 ms on this
hardware, ten times a whole keyword search. A scan of 32-float projections costs about
4 ms; its best ``coarse_limit(k)`` chunks held 99.7% of the exact best 10 and 98.9% of
the best 100 on SciFact (``docs/semantic.md``), and only those are scored exactly, in
about 4 ms more. ``ra.warm`` loads these relations on its loading
thread, so no search waits for them. Filtered queries (trees, tags, paths, dates) scan
exactly the chunks that pass the filters. The projection is computed when the reader
loads the vectors (NumPy; an SVD of a sample), so it is a property of the reader, not
of the artifact, and nothing about it is stored (principal axes of a sample: the
eigenvectors of its covariance).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ra.query.bm25f import BLOCKED, Filters, Sql

COARSE_DIMS = 32
COARSE_FACTOR = 10  # coarse candidates per exact one
COARSE_MIN_ROWS = 40_000  # below this an exact scan is cheaper than the two stages
SAMPLE = 8192  # rows the projection is fitted on


def coarse_limit(k: int) -> int:
    return max(COARSE_FACTOR * k, 1000)


def semantic_sql(dims: int, filters: Filters, negated: list[int], k: int, *,
                 coarse: bool = False) -> Sql:
    """The best ``k`` chunks for the query vector ``$q`` (and ``$qc``, its projection,
    when ``coarse``; both bound by the caller, ``query_params``): rows ``(ord, sim)``,
    best first, ties by ord. ``negated``: term ids of words the query excludes."""
    sql = Sql("")
    parts = []
    if negated:
        parts.append("tainted AS (SELECT DISTINCT ord FROM tf_postings WHERE term_id = "
                     f"ANY({sql.bind(sorted(negated))}::INTEGER[]))")
        parts.append(f"blocked AS ({BLOCKED})")
    where = filters.conditions(sql)
    if negated:
        where.append("v.ord NOT IN (SELECT ord FROM blocked)")
    if coarse:
        archived = "" if filters.include_archived else " WHERE NOT archived"
        parts.append(f"coarse AS (SELECT ord FROM sem_coarse{archived} ORDER BY "
                     f"array_inner_product(c, $qc::FLOAT[{COARSE_DIMS}]) DESC LIMIT "
                     f"{sql.bind(coarse_limit(k))})")
        source, where = "sem_vectors v", ["v.ord IN (SELECT ord FROM coarse)"]
    else:
        source = "sem_vectors v JOIN meta m ON m.ord = v.ord"
    head = ("WITH " + ",\n".join(parts) + "\n") if parts else ""
    sql.text = (f"{head}SELECT v.ord, array_inner_product(v.vector, $q::FLOAT[{dims}]) AS sim "
                f"FROM {source}" + (f" WHERE {' AND '.join(where)}" if where else "")
                + f" ORDER BY sim DESC, v.ord LIMIT {sql.bind(int(k))}")
    return sql


def plain(filters: Filters, negated: list[int]) -> bool:
    """Whether the coarse stage may serve: no filter but ``archived``, no exclusion."""
    return not negated and filters == Filters(include_archived=filters.include_archived)


# --- the relations -------------------------------------------------------------------------

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
