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


def semantic_side(reader, settings, node, plan, filters, k: int, explain: bool) -> Side:
    """The best ``k`` chunks by meaning for a topic, or a note saying why none."""
    from ra.store.vector_state import readiness
    from ra.text import embedder_runtime as runtime
    from ra.text import embedders
    from ra.text.embedders import EmbedderError

    if ":" not in settings.backend and not embedders.available():
        return Side(note=f"semantic search is enabled but no embedder is installed: "
                         f"{embedders.INSTALL_HINT}; answered with keywords alone")
    state = readiness(reader.manifest, settings.model_id())
    if not state.ready:
        return Side(note=f"semantic: vectors not ready ({state.describe()}); answered with "
                         "keywords alone")
    t0 = time.perf_counter()
    try:
        model = runtime.embedder(settings, wait=False)
    except EmbedderError as exc:
        return Side(note=f"{exc}; answered with keywords alone")
    if model is None:
        return Side(note="semantic: the model is loading; answered with keywords alone")
    text = query_text(node, plan)
    if not text.strip():
        return Side()
    vector = runtime.query_vector(settings, model, text)
    t1 = time.perf_counter()
    return _scored(reader, settings, state.dims, vector, plan, filters, k, explain,
                   {"embed": t1 - t0, "text": text})


def _scored(reader, settings, dims: int, vector, plan, filters, k: int, explain: bool,
            info: dict) -> Side:
    from ra.index.vector_tables import query_params, tables
    from ra.query.semantic_sql import plain, semantic_sql

    t0 = time.perf_counter()
    filters, negated = tree_filter(plan, filters), negated_terms(plan)
    with reader.lock:
        held = tables(reader, dims)
    coarse = held.coarse and plain(filters, negated)
    sql = semantic_sql(dims, filters, negated, k, coarse=coarse)
    rows = reader.query(sql.text, {**sql.params, **query_params(held, vector, coarse)})
    side = Side([(int(o), float(s)) for o, s in rows], used=True)
    if explain:
        side.explain = {
            "model": settings.model_id(), "fusion": settings.fusion,
            "weight": settings.weight, "query_text": info["text"],
            "candidates": len(rows), "sql": sql.text, "params": sql.params,
            "timings_ms": {"embed": round(info["embed"] * 1000, 3),
                           "sql": round((time.perf_counter() - t0) * 1000, 3)}}
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
