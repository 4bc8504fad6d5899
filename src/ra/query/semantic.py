"""The semantic side of a search: what ``ra.query.search.Searcher`` asks when
``[semantic]`` is enabled.

Per topic: is there anything to use (the option, the vectors of the configured model,
the embedder), then the query's vector, then the best chunks by meaning under the
topic's filters and exclusions (``ra.query.semantic_sql``), then their fusion with the
keyword candidates (``ra.query.fusion``). When anything is missing, the topic is
answered with keywords alone and ``note`` says why, once per search, in every output:
the extra is not installed, the vectors are not ready (how many are embedded), the
model is still loading. The query's vector is made from its positive words as typed
(what a word excludes, and ``tree:`` restrictions, are not meaning).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ra.query import ast


@dataclass
class Side:
    """The semantic candidates of one topic, or why there are none."""

    candidates: list[tuple[int, float]] = field(default_factory=list)  # (ord, cosine)
    used: bool = False
    note: str | None = None
    explain: dict = field(default_factory=dict)


def query_text(node, plan=None) -> str:
    """The words of a query that say what it is about: every leaf not negated, outside
    ``tree:``, in order; a word the index lacks is replaced by the surface word its
    nearest typo expansion found (``plan``), since a model reads a typo as other word
    pieces: on the 300 tldr typo queries that cost meaning more than it added."""
    fixed = _corrections(plan) if plan is not None else {}
    words = []
    for occ in ast.walk(node):
        if occ.negated or occ.field == "tree":
            continue
        leaf = occ.node
        text = " ".join(leaf.words) if isinstance(leaf, ast.Phrase) else leaf.text
        words.append(fixed.get(text, text))
    return " ".join(words)


def _corrections(plan) -> dict[str, str]:
    """Typed word → the surface word of its best fuzzy expansion, for the term clauses
    with no exact match in the vocabulary (fewest edits, then most frequent)."""
    out = {}
    for c in plan.clauses:
        if c.kind != "term" or any(a.distance == 0 and a.term_id is not None for a in c.alts):
            continue
        near = [a for a in c.alts if a.distance > 0 and a.term_id is not None and a.word]
        if near:
            out[c.text] = min(near, key=lambda a: (a.distance, -a.df, a.word)).word
    return out


def negated_terms(plan) -> list[int]:
    """Term ids of the words excluded at the top level (their chunks are not results)."""
    from ra.query.bm25f import top_negations

    return sorted({a.term_id for i in top_negations(plan) if plan.clauses[i].kind == "term"
                   for a in plan.clauses[i].alts if a.term_id is not None})


def tree_filter(plan, filters):
    """``filters`` narrowed by ``tree:`` clauses AND'ed at the top of the query."""
    from dataclasses import replace

    from ra.query.plan import AllOf, Ref

    items = plan.expr.items if isinstance(plan.expr, AllOf) else (plan.expr,)
    trees = [plan.clauses[i.index].tree for i in items
             if isinstance(i, Ref) and plan.clauses[i.index].kind == "tree"]
    if not trees:
        return filters
    wanted = [t for t in (filters.trees or trees) if t in trees]
    return replace(filters, trees=tuple(wanted) or ("\0none",))


@dataclass
class Pending:
    """A topic's semantic side under way (``start``): its query vector being embedded,
    and with ``early`` its candidates being scored too, or the side it already is (a
    note saying why meaning is not used, or nothing to embed)."""

    side: Side | None = None
    vector: object = None  # a Future: the query's vector, or with ``early`` what _Early gives
    dims: int = 0
    text: str = ""
    started: float = 0.0
    early: bool = False


def start(reader, settings, node, plan, filters=None, k: int = 0) -> Pending:
    """Check what meaning needs for this topic and start embedding the query, so that
    the keyword side is scored while the vector is made (``semantic_side``). Given the
    topic's ``filters`` and ``k``, a long-lived reader's coarse stage also scores the
    candidates on the query thread (``_early``): the whole semantic side then overlaps
    the keyword side."""
    from ra.store.vector_state import readiness
    from ra.text import embedder_runtime as runtime
    from ra.text import embedders
    from ra.text.embedders import EmbedderError

    if ":" not in settings.backend and not embedders.available():
        return Pending(Side(note=f"semantic search is enabled but no embedder is installed: "
                                 f"{embedders.INSTALL_HINT}; answered with keywords alone"))
    state = readiness(reader.manifest, settings.model_id())
    if not state.ready:
        return Pending(Side(note=f"semantic: vectors not ready ({state.describe()}); "
                                 "answered with keywords alone"))
    t0 = time.perf_counter()
    try:
        model = runtime.embedder(settings, wait=False)
    except EmbedderError as exc:
        return Pending(Side(note=f"{exc}; answered with keywords alone"))
    if model is None:
        return Pending(Side(note="semantic: the model is loading; answered with keywords "
                                 "alone"))
    text = query_text(node, plan)
    if not text.strip():
        return Pending(Side())
    early = _early(reader, state.dims, plan, filters, k) if filters is not None else None
    return Pending(None, runtime.query_vector_soon(settings, model, text, then=early),
                   state.dims, text, t0, early=early is not None)


class _Early:
    """A plain topic's side, scored on the query thread as soon as its vector is made,
    in the reader's memory (``ra.index.vector_tables.nearest``), while the reader's
    connection scores the words."""

    def __init__(self, held, k: int, include_archived: bool) -> None:
        self.held, self.k, self.include_archived = held, k, include_archived

    def __call__(self, vector: list[float]) -> tuple:
        from ra.index.vector_tables import nearest

        t0 = time.perf_counter()
        rows = nearest(self.held, vector, self.k, self.include_archived)
        return rows, self.held, t0, time.perf_counter() - t0


def _early(reader, dims: int, plan, filters, k: int) -> _Early | None:
    """Scoring for the query thread, when this topic is scored in memory: a long-lived
    reader, no filter but ``archived``, no excluded word; else None, and DuckDB scores
    the side after the words."""
    from ra.index.vector_tables import tables
    from ra.query.semantic_sql import plain

    filters, negated = tree_filter(plan, filters), negated_terms(plan)
    if not (reader.keep_vocabulary and reader.resident and plain(filters, negated)):
        return None
    with reader.lock:  # a long-lived reader's tables: its vectors in memory
        held = tables(reader, dims)
    return _Early(held.snapshot(), k, filters.include_archived)


def semantic_side(reader, settings, node, plan, filters, k: int, explain: bool,
                  pending: Pending | None = None) -> Side:
    """The best ``k`` chunks by meaning for a topic, or a note saying why none;
    ``pending``: what ``start`` began for it (else it starts now)."""
    from ra.text.embedders import EmbedderError

    pending = pending or start(reader, settings, node, plan)
    if pending.side is not None:
        return pending.side
    try:
        got = pending.vector.result()
    except EmbedderError as exc:
        return Side(note=f"{exc}; answered with keywords alone")
    if pending.early:  # embedded, then scored, on the query thread
        rows, held, embedded, took = got
        info = {"embed": embedded - pending.started, "text": pending.text}
        return _side(rows, settings, explain, info, took, _described(held, k))
    info = {"embed": time.perf_counter() - pending.started, "text": pending.text}
    return _scored(reader, settings, pending.dims, got, plan, filters, k, explain, info)


def _scored(reader, settings, dims: int, vector, plan, filters, k: int, explain: bool,
            info: dict) -> Side:
    from ra.index.vector_tables import nearest, tables
    from ra.query.semantic_sql import plain, semantic_sql

    t0 = time.perf_counter()
    filters, negated = tree_filter(plan, filters), negated_terms(plan)
    with reader.lock:
        held = tables(reader, dims)
    if held.resident and plain(filters, negated):
        rows = nearest(held.snapshot(), vector, k, filters.include_archived)
        return _side(rows, settings, explain, info, time.perf_counter() - t0,
                     _described(held, k))
    sql = semantic_sql(dims, filters, negated, k)
    rows = reader.query(sql.text, {**sql.params, "q": vector})
    return _side(rows, settings, explain, info, time.perf_counter() - t0, sql)


def _described(held, k: int):
    from ra.index.vector_tables import describe
    from ra.query.bm25f import Sql

    return Sql(describe(held, k))


def _side(rows, settings, explain: bool, info: dict, took: float, sql) -> Side:
    side = Side([(int(o), float(s)) for o, s in rows], used=True)
    if explain:
        side.explain = {
            "model": settings.model_id(), "fusion": settings.fusion,
            "weight": settings.weight, "query_text": info["text"],
            "candidates": len(rows), "sql": sql.text, "params": sql.params,
            "timings_ms": {"embed": round(info["embed"] * 1000, 3),
                           "sql": round(took * 1000, 3)}}
    return side


def keyword_bound(plan, n_chunks: int, weights) -> float:
    """The highest BM25F score ``plan`` can give a chunk: each positive clause saturates
    at its best alternative's weight · idf · (k1 + 1) (``ra.query.bm25f``), and a local
    chunk is multiplied by ``local_boost``. A word the index lacks counts with the idf
    of a word in no chunk: the question holds it, and no chunk answers it by its words."""
    from ra.query.bm25f import alternative_idf, idf

    total = 0.0
    for i in plan.positive:
        c = plan.clauses[i]
        if c.kind == "term":
            best = max((a.weight * alternative_idf(n_chunks, c, a) for a in c.alts
                        if a.term_id is not None), default=idf(n_chunks, 0))
        elif c.kind == "phrase":
            best = sum(alternative_idf(n_chunks, c, a) for a in c.alts)
        else:
            continue
        total += best * c.boost * (weights.k1 + 1)
    return total * max(weights.local_boost, 1.0)


def fused_rows(rows: list[tuple], side: Side, settings, limit: int,
               bound: float | None = None) -> list[tuple]:
    """The keyword rows ``(score, matched, complete, total, tainted, ord)`` and the
    side's candidates fused (``ra.query.fusion``): the best ``limit``, in the same
    shape; a chunk found by meaning alone matched no word. ``total`` counts both.
    ``bound``: the keyword query's highest possible score (``keyword_bound``)."""
    from ra.query.fusion import fuse

    fused = fuse([(r[5], r[0]) for r in rows], side.candidates, method=settings.fusion,
                 weight=settings.weight, rrf_k=settings.rrf_k, keyword_bound=bound)
    by_ord = {r[5]: r for r in rows}
    complete, total, tainted = (rows[0][2], rows[0][3], rows[0][4]) if rows else (
        False, 0, None)
    total += sum(1 for o, _ in side.candidates if o not in by_ord)
    side.explain["fused"] = {f.ord: f for f in fused}
    return [(f.score, by_ord[f.ord][1] if f.ord in by_ord else 0, complete, total, tainted,
             f.ord) for f in fused[:limit]]


def explain_scores(side: Side, ranked, meta) -> dict:
    """``--explain``'s semantic section: the side's query and SQL, and for each result
    its keyword score (BM25F), its cosine and the fused score (an aggregated parent
    has only the fused score of its sections)."""
    info = {k: v for k, v in side.explain.items() if k != "fused"}
    fused = side.explain.get("fused", {})
    info["params"] = {k: v for k, v in info.get("params", {}).items()}
    scores = []
    for cand in ranked:
        m = meta(cand.id)
        f = fused.get(m.ord) if m is not None else None
        scores.append({"id": cand.id, "keyword": None if f is None else f.keyword,
                       "semantic": None if f is None else f.semantic,
                       "fused": round(cand.score, 6)})
    info["scores"] = scores
    return info
