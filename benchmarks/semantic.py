"""Hybrid retrieval (``[semantic]``): what meaning adds to words, and what it costs.

Three sets, each indexed once into a folder that persists between runs (``WORK``), with
its vectors embedded once (the embedding cache and the vectors artifact carry them from
run to run; a run embeds only what it lacks):

- SciFact, training split only (809 claims; the test split is never read): nDCG@10 and
  Recall@100 of the natural query, as ``benchmarks.scifact`` asks it;
- the known-item cases of ``tests/test_known_items.py`` (rust-book and the tldr subset,
  clean, typo and syntax variants): MRR@10 and how many rank within their bound;
- tldr known items (``benchmarks.tldr``, 300 generated description queries, clean and
  typo): MRR@10.

``tune`` scores keyword search alone and fused with meaning for a grid of weights and
both fusions, on SciFact train and the known-item sets, so the default weight is chosen
on them (``python -m benchmarks.semantic tune``). ``run`` (``make bench``) reports the
configured default against keywords alone, with the embedding time and memory and the
warm query latency with and without. SciFact is CC BY-NC 2.0: claim and abstract text
never enters a report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import resource
import shutil
import sys
import time
from pathlib import Path

from benchmarks import scifact, tldr
from benchmarks.metrics import mean, ndcg_at, recall_at
from benchmarks.report import Table, progress

WORK = Path("/tmp/ra-semantic")
REPO = Path(__file__).resolve().parents[1]
WEIGHTS = (0.2, 0.3, 0.4, 0.5)  # tried: convex, keyword scores over the query's bound
SCALED = (0.3, 0.4)  # tried: convex, keyword scores over the best found


def _config_text(tree: str, path: str, backend: str, model: str) -> str:
    return (f'[tree.{tree}]\npath = "{path}"\n\n[semantic]\nenabled = true\n'
            f'backend = "{backend}"\nmodel = "{model}"\n')


def prepare(name: str, backend: str = "auto", model: str = "all-MiniLM-L6-v2") -> dict:
    """Index set ``name`` in ``WORK/name`` and embed its chunks; returns the folder and
    what embedding cost (seconds, texts, peak resident memory of this process)."""
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    if name == "scifact":
        if not (folder / "docs").exists():
            corpus, _, _ = scifact.load()
            scifact.write_corpus(corpus, folder)
        tree, path = "docs", "./docs"
    elif name == "rust-book":
        if not (folder / "docs").exists():
            shutil.copytree(scifact.SHARED / "corpora" / "rust-book" / "src", folder / "docs")
        tree, path = "docs", "./docs"
    elif name == "tldr-subset":
        _tldr_subset(folder)
        tree, path = "docs", "./docs"
    else:
        tree, path = tldr.TREE, str(tldr.TLDR)
    (folder / ".ra.toml").write_text(_config_text(tree, path, backend, model))
    return {"folder": folder, **embed(folder)}


def _tldr_subset(folder: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from test_known_items import TLDR_SUBSET

    for platform, initials in TLDR_SUBSET:
        target = folder / "docs" / platform
        if target.exists():
            continue
        target.mkdir(parents=True)
        for page in sorted((tldr.TLDR / "pages" / platform).glob("*.md")):
            if page.name[0] in initials:
                shutil.copy(page, target / page.name)


def embed(folder: Path) -> dict:
    from ra.config.settings import load_config
    from ra.index.embedding import embed_index
    from ra.index.freshness import refresh_index
    from ra.text import embedder_runtime as runtime

    config = load_config(folder)
    refresh_index(config)
    t = time.perf_counter()
    report = embed_index(config, lambda: runtime.embedder(config.semantic),
                         progress=_progress(folder.name))
    return {"seconds": time.perf_counter() - t, "embedded": report.embedded,
            "resumed": report.resumed, "missing": report.missing,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _progress(name: str):
    last = [0.0]

    def report(done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 30 or done == total:
            last[0] = time.perf_counter()
            progress(f"{name}: embedded {done}/{total}")
    return report


def _scaled(change: dict):
    """A context in which keyword scores are scaled by the best found (``scale=max``)
    rather than by the query's bound: the alternative the default was measured against."""
    import contextlib
    from unittest import mock

    import ra.query.semantic as side

    if change.get("scale") != "max":
        return contextlib.nullcontext()
    return mock.patch.object(side, "keyword_bound", lambda *a: None)


def searchers(folder: Path, variants: dict[str, dict]):
    """A long-lived reader of ``folder`` and one ``Searcher`` per variant: ``{}`` is
    keywords alone, else ``[semantic]`` values replaced."""
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher

    config = load_config(folder)
    reader, _ = open_index(config)
    reader.keep_vocabulary = True
    out = {}
    for label, change in variants.items():
        settings = {k: v for k, v in change.items() if k != "scale"}
        semantic = dataclasses.replace(config.semantic, enabled=bool(change), **settings)
        out[label] = Searcher(reader, dataclasses.replace(config, semantic=semantic))
    return reader, out


def scifact_scores(searcher, quick: bool = False) -> dict[str, dict]:
    from ra.query.search import SearchOptions

    _, queries, qrels = scifact.load("train")
    if quick:
        queries = scifact.subsample(queries, scifact.QUICK_QUERIES)
    opts = SearchOptions(limit=scifact.DEPTH, candidate_limit=1000, cutoff_ratio=0.0)
    out = {}
    for qid, text in queries.items():
        topic = searcher.search([text], opts).queries[0]  # as typed, as agents send it
        ranked = list(dict.fromkeys(scifact.doc_key(r.id, r.path) for r in topic.results))
        out[qid] = {"ndcg@10": ndcg_at(ranked, qrels[qid]),
                    "recall@100": recall_at(ranked, qrels[qid])}
    return out


def known_cases(which: str) -> list:
    sys.path.insert(0, str(REPO / "tests"))
    import test_known_items as k

    lists = ((k.RUST_CLEAN, k.RUST_TYPO, k.RUST_SYNTAX) if which == "rust-book"
             else (k.TLDR_CLEAN, k.TLDR_TYPO, k.TLDR_SYNTAX))
    return [p.values[0] for cases in lists for p in cases]


def known_scores(searcher, cases) -> dict[str, dict]:
    """Per case: reciprocal rank within the top 10, and whether it ranks within its
    bound (the test's pass condition)."""
    sys.path.insert(0, str(REPO / "tests"))
    from test_known_items import OPTIONS, hit

    out = {}
    for case in cases:
        results = searcher.search([case.query], OPTIONS).queries[0].results
        rank = next((i + 1 for i, r in enumerate(results) if hit(r, case.target)), None)
        out[case.query] = {"rr": 1 / rank if rank else 0.0,
                           "within": rank is not None and rank <= case.within}
    return out


def tldr_scores(searcher, items) -> dict[str, dict]:
    from ra.query.search import SearchOptions

    out = {}
    for it in items:
        for variant, words in (("clean", it.words), ("typo", it.typo)):
            topic = searcher.search([" ".join(words)], SearchOptions(limit=tldr.DEPTH))
            ranked = list(dict.fromkeys(r.id.split("#")[0] for r in topic.queries[0].results))
            rank = tldr.rank_of(ranked, it.doc_id)
            out[f"{variant} {it.doc_id}"] = {"rr": 1 / rank if rank else 0.0}
    return out


def grid(weights=WEIGHTS, alternatives: bool = True) -> dict[str, dict]:
    """Keywords alone; convex fusion at each weight, keyword scores scaled by the query's
    bound (the default) and (``alternatives``) by the best found; rank fusion."""
    out: dict[str, dict] = {"keywords": {}}
    for w in weights:
        out[f"convex {w}"] = {"fusion": "convex", "weight": w}
    if alternatives:
        for w in SCALED:
            out[f"convex/max {w}"] = {"fusion": "convex", "weight": w, "scale": "max"}
        out["rrf"] = {"fusion": "rrf", "weight": 0.5}
    return out


@contextlib.contextmanager
def no_snippets():
    """Rankings without their snippets (60% of a SciFact query's time at depth 100):
    the grid compares orders, and a snippet changes none."""
    from unittest import mock

    with mock.patch("ra.query.search.make_snippet", lambda *a, **k: ""):
        yield


def summarise(rows: dict[str, dict]) -> dict[str, float]:
    keys = next(iter(rows.values())).keys()
    return {k: round(mean([r[k] for r in rows.values()]), 4) for k in keys}


def evaluate(variants: dict[str, dict], sets: tuple[str, ...], backend: str,
             model: str, quick: bool = False) -> dict:
    """Every variant on every set: per-query rows and their means."""
    result: dict = {"variants": variants, "sets": {}, "embedding": {}}
    for name in sets:
        prep = prepare(name, backend, model)
        result["embedding"][name] = {k: v for k, v in prep.items() if k != "folder"}
        reader, by_label = searchers(prep["folder"], variants)
        try:
            per = {}
            for label, searcher in by_label.items():
                progress(f"{name}: {label}")
                with _scaled(variants[label]), no_snippets():
                    if name == "scifact":
                        per[label] = scifact_scores(searcher, quick)
                    elif name == "tldr":
                        per[label] = tldr_scores(searcher, tldr.known_items(n=tldr.N))
                    else:
                        per[label] = known_scores(searcher, known_cases(name))
            result["sets"][name] = {"per_query": per,
                                    "summary": {k: summarise(v) for k, v in per.items()}}
        finally:
            reader.close()
    return result


def run(quick: bool = False) -> dict:
    """``make bench``: the configured default against keywords alone on SciFact train
    and the known-item sets, what embedding them cost, and warm query latency."""
    from ra.config.semantic import SemanticSettings

    default = SemanticSettings()
    variants = {"keywords": {}, f"fused ({default.fusion}, weight {default.weight})":
                {"fusion": default.fusion, "weight": default.weight}}
    result = evaluate(variants, ("scifact", "rust-book", "tldr-subset"), "auto",
                      default.model, quick)
    progress("semantic: warm latency on SciFact (its claims as queries)")
    _, claims, _ = scifact.load("train")
    result["latency"] = {"scifact": latency(
        WORK / "scifact", n=50 if quick else 100,
        queries=[" ".join(scifact.words_of(t)) for t in claims.values()])}
    return result


def tables(result: dict) -> list[Table]:
    out = tune_tables(result)
    cost = Table("Embedding (this run; 0 when the vectors were already there)",
                 ["set", "seconds", "embedded", "resumed", "peak RSS MB"])
    cost.rows = [[name, round(e["seconds"], 1), e["embedded"], e["resumed"],
                  round(e["max_rss_mb"])] for name, e in result["embedding"].items()]
    lat = Table("Warm query latency, ms (long-lived reader; query vectors not cached)",
                ["set", "vectors", "keywords p50", "fused p50", "added p50", "added p95",
                 "embed p50", "scoring the vectors p50"])
    for name, r in result.get("latency", {}).items():
        ms = r["ms"]
        lat.rows.append([name, r["vectors"], ms["keywords"]["p50"], ms["fused"]["p50"],
                         ms["added"]["p50"], ms["added"]["p95"], ms["embed"]["p50"],
                         ms["sql"]["p50"]])
    return [*out, cost, lat]


def tune_tables(result: dict) -> list[Table]:
    tables = []
    for name, data in result["sets"].items():
        summary = data["summary"]
        cols = list(next(iter(summary.values())).keys())
        t = Table(f"{name}: keywords alone and fused with meaning", ["variant", *cols])
        t.rows = [[label, *s.values()] for label, s in summary.items()]
        tables.append(t)
    return tables


def main(argv: list[str]) -> int:
    if argv[:1] == ["latency"]:
        folder = Path(argv[1])
        if "--embed" in argv:
            progress(f"real vectors: {embed_some(folder, int(argv[argv.index('--embed') + 1]))}")
        if "--synthetic" in argv:
            progress(f"synthetic vectors: {fill_synthetic(folder)}")
        print(json.dumps(latency(folder), indent=1))
        return 0
    backend = next((a.split("=", 1)[1] for a in argv if a.startswith("backend=")), "auto")
    model = next((a.split("=", 1)[1] for a in argv if a.startswith("model=")),
                 "all-MiniLM-L6-v2")
    sets = tuple(a for a in argv if a in ("scifact", "rust-book", "tldr-subset", "tldr")) \
        or ("scifact", "rust-book", "tldr-subset", "tldr")
    weights = next((tuple(float(w) for w in a.split("=", 1)[1].split(","))
                    for a in argv if a.startswith("weights=")), WEIGHTS)
    result = evaluate(grid(weights, "--weights-only" not in argv), sets, backend, model)
    for table in tune_tables(result):
        print(table.markdown())
    out = WORK / f"tune-{'-'.join(sets)}.json"
    out.write_text(json.dumps({k: v for k, v in result.items()}, indent=1, default=str))
    progress(f"wrote {out}")
    return 0



# --- latency -------------------------------------------------------------------------------------

def latency(folder: Path, n: int = 100, queries: list[str] | None = None) -> dict:
    """Warm in-process latency of short agent queries (``benchmarks.latency``) on a
    long-lived reader, words alone and fused, with the query vectors' cache emptied
    before each query (every query pays for its embedding), plus the two costs the
    semantic side adds: embedding the query and its SQL (``--explain``'s timings)."""
    import statistics

    from benchmarks.latency import agent_queries, percentile
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher, SearchOptions
    from ra.text import embedder_runtime as runtime

    config = load_config(folder)
    reader, _ = open_index(config)
    reader.keep_vocabulary = True
    off = Searcher(reader, dataclasses.replace(
        config, semantic=dataclasses.replace(config.semantic, enabled=False)))
    on = Searcher(reader, config)
    queries = queries[:n] if queries else agent_queries(reader, n)
    try:
        for q in queries[:10]:  # warm: tables, vocabulary, model, vectors in memory
            off.search([q]), on.search([q])
        times: dict[str, list[float]] = {"keywords": [], "fused": [], "embed": [], "sql": []}
        for q in queries:
            t = time.perf_counter()
            off.search([q])
            times["keywords"].append((time.perf_counter() - t) * 1000)
            runtime._queries.clear()
            t = time.perf_counter()
            topic = on.search([q], SearchOptions(explain=True)).queries[0]
            times["fused"].append((time.perf_counter() - t) * 1000)
            sem = (topic.explain or {}).get("semantic", {}).get("timings_ms", {})
            times["embed"].append(sem.get("embed", float("nan")))
            times["sql"].append(sem.get("sql", float("nan")))
        coarse = bool(reader.semantic and reader.semantic.coarse)
        rows = reader.semantic.rows if reader.semantic else 0
    finally:
        reader.close()
    out = {k: {"p50": round(statistics.median(v), 2), "p95": round(percentile(v, 0.95), 2)}
           for k, v in times.items()}
    added = [b - a for a, b in zip(times["keywords"], times["fused"], strict=True)]
    out["added"] = {"p50": round(statistics.median(added), 2),
                    "p95": round(percentile(added, 0.95), 2)}
    return {"queries": len(queries), "vectors": rows, "coarse": coarse, "ms": out}


def fill_synthetic(folder: Path, seed: int = 20261124) -> dict:
    """For timing at scale only, never for quality: give every chunk that still lacks a
    vector a real one of another chunk plus noise (normalised), through the embedding
    cache, and publish. The vectors then have the shape and spread of real ones where
    embedding them all would take an hour of CPU."""
    import numpy as np

    from ra.config.settings import load_config
    from ra.index.embedding import embed_index
    from ra.pipeline.vector_cache import Cache
    from ra.pipeline.vectors import VECTORS, missing_rows
    from ra.store import generations

    config = load_config(folder)
    gen = config.index_dir / generations.current_name(config.index_dir)
    cache = Cache(config.index_dir, config.semantic.model_id())
    pool = cache.load()  # real vectors of an embedding stopped early, if any
    real = (pq_vectors(gen / VECTORS) if pool.table is None
            else _numpy(pool.table["vector"], pool.dims))
    hashes = [h for h in missing_rows(gen, config.semantic.model_id())[0]
              if h not in pool.where]
    rng = np.random.default_rng(seed)
    picks = real[rng.integers(0, len(real), len(hashes))]
    noisy = picks + rng.normal(0, 0.02, picks.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    for i in range(0, len(hashes), 8192):
        cache.save(hashes[i:i + 8192], noisy[i:i + 8192].tolist(), real.shape[1])

    def refuse():
        raise RuntimeError("every missing vector should be in the cache")

    report = embed_index(config, refuse)
    return {"real": len(real), "synthetic": len(hashes), "missing": report.missing}


def pq_vectors(folder: Path):
    import pyarrow.parquet as pq

    table = pq.read_table(folder)
    return _numpy(table["vector"], table.schema.field("vector").type.list_size)


def _numpy(column, dims: int):
    import numpy as np

    flat = column.combine_chunks().flatten().to_numpy()
    return np.asarray(flat, dtype=np.float32).reshape(-1, dims)


def embed_some(folder: Path, n: int) -> dict:
    """Embed ``n`` chunks for real (into the embedding cache, unpublished)."""
    from ra.config.settings import load_config
    from ra.index.embedding import embed_index
    from ra.text import embedder_runtime as runtime

    config = load_config(folder)
    size = config.semantic.batch_size
    done = [0]

    def count(d: int, total: int) -> None:
        done[0] = d

    t = time.perf_counter()
    embed_index(config, lambda: runtime.embedder(config.semantic), progress=count,
                stop=lambda: done[0] >= n - size + 1)
    return {"embedded": done[0], "seconds": round(time.perf_counter() - t, 1)}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
