"""Query latency on an indexed corpus: in-process and one-shot p50/p95.

Queries are short agent-style keyword queries derived from the corpus's own headings
(fixed seed): two or three words of a heading, so every query has answers. In-process
timing runs ``Searcher.search`` on one open reader (what the MCP server does); the
one-shot timing opens a reader per query, as a CLI command does (views over Parquet);
``benchmarks.speed`` times ``ra search`` as a process (``timed_process``). Besides wall
time, the in-process figures give the thread's CPU time: DuckDB runs a long-lived
reader's queries on the calling thread, so on a shared machine CPU time shows the
search's own cost when wall time also counts waiting for a core.

    python -m benchmarks.latency FOLDER   # a folder with an indexed .ra.toml
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

SEED = 20261121
STOP = {"the", "a", "an", "and", "or", "not", "of", "in", "to", "for", "with", "on", "by",
        "is", "how", "what", "from", "as", "at", "be", "your", "use", "using"}


def agent_queries(reader, n: int = 100, seed: int = SEED) -> list[str]:
    """``n`` short queries made of words from randomly chosen headings."""
    titles = [t for (t,) in reader.query(
        "SELECT DISTINCT title FROM chunks WHERE depth >= 2 ORDER BY title")]
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n and titles:
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", rng.choice(titles))
                 if w.lower() not in STOP]
        if len(words) >= 2:
            k = min(len(words), rng.choice((2, 2, 3)))
            out.append(" ".join(words[:k]))
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def in_process(folder: Path, queries: list[str], *, fuzzy: bool = True,
               server: bool = True) -> dict:
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.index.reader import IndexReader
    from ra.query.search import Searcher, SearchOptions

    config = load_config(folder)
    reader, _ = open_index(config)
    if server:  # as the MCP server holds it: vocabulary in memory
        reader.close()
        reader = IndexReader.open(config.index_dir, keep_vocabulary=True)
    searcher = Searcher(reader, config)
    opts = SearchOptions(fuzzy=fuzzy)
    for q in queries[:10]:  # warm caches
        searcher.search([q], opts)
    times, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.thread_time()
        searcher.search([q], opts)
        cpu.append((time.thread_time() - c) * 1000)
        times.append((time.perf_counter() - t) * 1000)
    reader.close()
    return {"fuzzy": fuzzy, "queries": len(queries), "p50_ms": round(percentile(times, .5), 2),
            "p95_ms": round(percentile(times, .95), 2), "mean_ms": round(statistics.mean(times), 2),
            "cpu_p50_ms": round(percentile(cpu, .5), 2),
            "cpu_p95_ms": round(percentile(cpu, .95), 2)}


def one_shot(folder: Path, queries: list[str]) -> dict:
    """Per query, a fresh reader (views over Parquet, as one CLI command opens) and one
    search: p50/p95 of the open, the whole search and its stages (``--explain`` timings)."""
    from ra.config.settings import load_config
    from ra.index.reader import IndexReader
    from ra.query.search import Searcher, SearchOptions

    config = load_config(folder)
    stages: dict[str, list[float]] = {}
    for q in queries:
        t = time.perf_counter()
        reader = IndexReader.open(config.index_dir)
        opened = time.perf_counter()
        topic = Searcher(reader, config).search([q], SearchOptions(explain=True)).queries[0]
        done = time.perf_counter()
        reader.close()
        for name, ms in {"open": (opened - t) * 1000, "search": (done - opened) * 1000,
                         **topic.explain["timings_ms"]}.items():
            stages.setdefault(name, []).append(ms)
    return {f"{name}_{q}_ms": round(percentile(v, p), 1) for name, v in stages.items()
            for q, p in (("p50", .5), ("p95", .95))}


def main(argv: list[str]) -> None:
    from ra.config.settings import load_config
    from ra.index.reader import IndexReader

    folder = Path(argv[0]).resolve()
    reader = IndexReader.open(load_config(folder).index_dir)
    queries = agent_queries(reader)
    reader.close()
    for fuzzy in (True, False):
        print(json.dumps(in_process(folder, queries, fuzzy=fuzzy)))
    print(json.dumps({"one_shot": one_shot(folder, queries[:20])}))


if __name__ == "__main__":
    main(sys.argv[1:])
