"""Impacts: the query-independent part of BM25F, computed once per build and quantized.

With fixed field weights, k1 and b, the saturated term frequency of a term t in a chunk d

    tf~(t, d) = Σ_f  w_f · tf_f(t, d) / (1 − b + b · len_f(d) / avglen_f)
    u(t, d)   = tf~ · (k1 + 1) / (k1 + tf~)        in [0, k1 + 1)

does not depend on the query, which only multiplies it by the weight and idf of the
alternative it matches (``ra.query.bm25f``). A full build stores it per term and chunk as
a 16-bit integer

    impact(t, d) = round(u / (k1 + 1) · SCALE)

in ``hot_impacts.parquet`` (``ImpactWriter``, called by ``ra.pipeline.compact``); a
long-lived reader loads it and ``ra.query.impacts.top_sql`` scores an alternative as
``weight · idf · (k1 + 1) / SCALE · impact``.

Why 16 bits: a clause's score is then off by at most half a step, ``weight · idf ·
(k1 + 1) / (2 · SCALE)``, about 2e-4 for a word of idf 10, well below the score gaps that
order results (``docs/ranking.md`` has the quality numbers). Eight bits, as tantivy's and
Lucene's norms, would make the step 0.009·idf: a single occurrence in a long body (u ≈
0.3) off by 3%, and many near-ties collapsed into ties broken by id.

The impacts hold for the parameters and statistics they were computed under, which the
manifest keeps (``compact.impacts``, ``record``). When a reader's configuration differs
(``[search] k1``, ``b``, ``[search.boosts]``: they do not shape the index, so changing
them rebuilds nothing) or an update has changed the generation since (the averages move:
``compact.stale``), a one-shot reader scores with the formula instead and a long-lived
one computes the impacts from its postings unrounded (``impacts_sql(exact=True)``,
``ra.index.reader.IndexReader.impacts``), so a query's scores do not depend on which
reader answers it.

This module sits in the pipeline layer because the build writes them; the query layer's
``tf~`` is this module's ``tf_norm_sql``, so the two can never compute it differently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ra.store.layout import FIELDS, artifact_path

#: The largest impact: u = k1 + 1 (never reached: u < k1 + 1).
SCALE = 65_535



def hot_impacts_schema():
    """The schema of ``hot_impacts``, sorted by term and chunk (a function: ``ra search``
    reads this module's SQL and must not import pyarrow)."""
    import pyarrow as pa

    return pa.schema([
        pa.field("term_id", pa.int32(), False, {"description": "the term (terms.term_id)"}),
        pa.field("ord", pa.int32(), False, {"description": "the chunk (chunks.ord)"}),
        pa.field("impact", pa.uint16(), False, {"description": (
            "saturated field-weighted tf / (k1 + 1) x 65535, under the manifest's "
            "compact.impacts (ra.pipeline.impacts)")}),
    ])


@dataclass(frozen=True)
class Parameters:
    """What impacts depend on besides the statistics: k1, b and the field weights (in
    ``FIELDS`` order). ``ra.query.bm25f.Weights`` has the same attributes."""

    k1: float
    b: float
    boosts: tuple[float, ...]


def parameters(config) -> Parameters:
    """The BM25F parameters a configuration (``ra.config.settings.Config``) sets."""
    s = config.search
    return Parameters(s.k1, s.b, (s.boosts.title, s.boosts.tags, s.boosts.path, s.boosts.body))


def tf_norm_sql(bind: Callable[[object], str], avg_length: dict[str, float], w) -> str:
    """tf~ of the rows of a group (columns ``field, tf, len``) under ``w`` (``b`` and
    ``boosts``), each value passed through ``bind`` (a parameter's placeholder): the
    weighted, length-normalised tf summed over the fields in field order (a field has one
    row, so the sum is exact and equal chunks get bit-equal scores, whatever order DuckDB
    meets the rows in)."""
    b = bind(w.b)
    fields = []
    for code, name in enumerate(FIELDS):
        avg = bind(avg_length.get(name) or 1.0)
        fields.append(f"coalesce(sum(tf * ({bind(w.boosts[code])} / (1 - {b} + {b} * len "
                      f"/ {avg}))) FILTER (WHERE field = {code}), 0)")
    return " + ".join(fields)


def impacts_sql(source: str, avg_length: dict[str, float], w,
                terms: tuple[int, int] = (0, 2**31 - 1), *,
                exact: bool = False) -> tuple[str, dict]:
    """SQL text and parameters of the rows ``(term_id, ord, impact)`` of the postings in
    relation ``source`` (columns ``term_id, ord, field, tf, len``) with a term id in
    ``[terms[0], terms[1])``, ordered by term and chunk, under ``w`` (``k1``, ``b``,
    ``boosts``). ``exact``: the impact before rounding, a DOUBLE (a long-lived reader's
    when the build's do not hold: ``IndexReader.impacts``)."""
    params: dict = {}

    def bind(value) -> str:
        name = f"p{len(params)}"
        params[name] = value
        return f"${name}"

    tfn = tf_norm_sql(bind, avg_length, w)
    k1 = bind(float(w.k1))
    low, high = bind(terms[0]), bind(terms[1])
    scale = bind(float(SCALE))
    impact = f"tfn * ({k1} + 1) / ({k1} + tfn) / ({k1} + 1) * {scale}"
    impact = impact if exact else f"round({impact})::USMALLINT"
    return (f"SELECT term_id, ord, {impact} AS impact FROM (SELECT term_id, ord, "
            f"{tfn} AS tfn "
            f"FROM {source} WHERE term_id >= {low} AND term_id < {high} "
            "GROUP BY term_id, ord) ORDER BY term_id, ord"), params


#: The postings rows ``exact_impacts`` reads.
POSTINGS_ROWS_SQL = ("SELECT term_id, ord, field, tf, len FROM {} "
                     "WHERE term_id = ANY($ids::INTEGER[])")


def exact_impacts(rows: dict, avg_length: dict[str, float], w, *,
                  ordered: bool = False) -> dict:
    """``impacts_sql(exact=True)``'s rows, computed in NumPy from postings rows (a dict of
    arrays ``term_id, ord, field, tf, len``, any order, or sorted by them: ``ordered``):
    ``term_id, ord, impact``, sorted by term and chunk. Each double is the SQL's: the
    same operations in the same order (``tf_norm``, then saturated), as a test holds
    them, bit for bit. Without the grouping of the SQL this is a few milliseconds where
    DuckDB took tens (a reader carried over to an update computes its queries' terms
    this way: ``ra.index.impact_arrays.TermImpacts``)."""
    term, ords, tfn = tf_norm(rows, avg_length, w, ordered=ordered)
    k1 = float(w.k1)
    return {"term_id": term, "ord": ords,
            "impact": tfn * (k1 + 1) / (k1 + tfn) / (k1 + 1) * float(SCALE)}


def rounded_impacts(rows: dict, avg_length: dict[str, float], w) -> dict:
    """``impacts_sql``'s rows (the stored impacts, ``uint16``) of postings rows sorted by
    term, chunk and field (a dict of arrays ``term_id, ord, field, tf, len``): the doubles
    of ``exact_impacts`` rounded as DuckDB's ``round`` rounds them, half away from zero
    (``round_half_away``). A build computes ``hot_impacts`` so (``ImpactWriter``): on
    cpp-docs 0.09 s of CPU where DuckDB's grouping took 0.65 s."""
    import numpy as np

    exact = exact_impacts(rows, avg_length, w, ordered=True)
    impact = round_half_away(exact["impact"])
    if len(impact) and not (impact.min() >= 0 and impact.max() <= SCALE):
        raise ValueError(f"impacts out of 0..{SCALE} (k1 {w.k1}, b {w.b}, boosts {w.boosts})")
    return {"term_id": exact["term_id"], "ord": exact["ord"], "impact": impact.astype(np.uint16)}


def round_half_away(values):
    """C's (and DuckDB's) ``round`` of a NumPy array of doubles: to the nearest integer,
    halves away from zero (NumPy's ``round`` takes halves to even). Exact: the fraction
    ``a - floor(a)`` of a double is a double, where ``floor(a + 0.5)`` would round up
    0.49999999999999994."""
    import numpy as np

    size = np.abs(values)
    whole = np.floor(size)
    return np.copysign(whole + (size - whole >= 0.5), values)


def tf_norm(rows: dict, avg_length: dict[str, float], w, *, ordered: bool = False) -> tuple:
    """``tf_norm_sql`` in NumPy: ``(term_id, ord, tfn)`` per term and chunk of ``rows`` (a
    dict of arrays ``term_id, ord, field, tf, len``, any order, or sorted by term, chunk
    and field: ``ordered``, which is checked), sorted by term and chunk, each tf~ the
    SQL's to the bit (a field's term frequency over its normalised length, the fields
    summed in field order)."""
    import numpy as np

    term, ords, field = (np.asarray(rows[k]) for k in ("term_id", "ord", "field"))
    tf, length = np.asarray(rows["tf"]), np.asarray(rows["len"])
    if ordered:
        if not _sorted(term, ords, field):
            raise ValueError("postings rows out of (term, chunk, field) order")
    else:
        order = np.lexsort((field, ords, term))
        term, ords, field, tf, length = (a[order] for a in (term, ords, field, tf, length))
    field = field.astype(np.intp)
    tf, length = tf.astype(np.float64), length.astype(np.float64)
    b = float(w.b)
    boost = np.array([float(x) for x in w.boosts])[field]
    avg = np.array([float(avg_length.get(name) or 1.0) for name in FIELDS])[field]
    first = np.ones(len(term), dtype=bool)
    first[1:] = (term[1:] != term[:-1]) | (ords[1:] != ords[:-1])
    starts = np.flatnonzero(first)
    by_field = np.zeros((len(starts), len(FIELDS)))  # a field's row, else the SQL's 0
    by_field[np.cumsum(first) - 1, field] = tf * (boost / (1 - b + b * length / avg))
    tfn = by_field[:, 0]
    for code in range(1, len(FIELDS)):  # in field order, one addition at a time
        tfn = tfn + by_field[:, code]
    return term[starts], ords[starts], tfn


def _sorted(term, ords, field) -> bool:
    """Whether rows are in strictly increasing (term, ord, field) order."""
    same_term = term[1:] == term[:-1]
    same_ord = same_term & (ords[1:] == ords[:-1])
    return bool(((term[1:] > term[:-1]) | same_term & (ords[1:] > ords[:-1])
                 | same_ord & (field[1:] > field[:-1])).all())


def record(w, avg_length: dict[str, float]) -> dict:
    """What impacts computed under ``w`` and ``avg_length`` depend on, as the manifest
    keeps it (JSON: lists, floats); a reader compares it with its own."""
    return {"scale": SCALE, "k1": float(w.k1), "b": float(w.b),
            "boosts": [float(x) for x in w.boosts],
            "avg_length": {f: float(avg_length.get(f) or 0.0) for f in FIELDS}}


class ImpactWriter:
    """Writes ``hot_impacts`` into ``out`` a batch of ``hot_postings`` rows (whole terms,
    in term, chunk and field order) at a time, each computed in NumPy
    (``rounded_impacts``: the rows of ``impacts_sql``, which a reader computes, to the
    bit)."""

    def __init__(self, out: Path, w, avg_length: dict, row_group: int) -> None:
        import pyarrow.parquet as pq

        self.w, self.avg_length = w, avg_length
        self.row_group = row_group
        self.schema = hot_impacts_schema()
        self.writer = pq.ParquetWriter(out / artifact_path("hot_impacts"), self.schema,
                                       compression="zstd", use_dictionary=False)

    def write(self, batch) -> None:
        """The impacts of ``batch`` (a ``pa.Table`` of ``hot_postings`` rows holding every
        row of their terms, in order)."""
        import pyarrow as pa

        rows = rounded_impacts({name: batch[name].to_numpy() for name in
                                ("term_id", "ord", "field", "tf", "len")},
                               self.avg_length, self.w)
        self.writer.write_table(pa.table(rows).cast(self.schema),
                                row_group_size=self.row_group)

    def __enter__(self) -> ImpactWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.writer.close()
