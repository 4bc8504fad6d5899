"""Query latency on an indexed corpus: in-process p50/p95 and ``ra search`` process time.

Queries are short agent-style keyword queries derived from the corpus's own headings
(fixed seed): two or three words of a heading, so every query has answers. In-process
timing runs ``Searcher.search`` on one open reader (what the MCP server does); the
process timing runs the installed ``ra search`` command end to end.
"""

from __future__ import annotations

import random
import re
import shutil
import statistics
import subprocess
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
    from ra.config import load_config
    from ra.freshness import open_index
    from ra.query.index import IndexReader
    from ra.query.search import Searcher, SearchOptions

    config = load_config(folder)
    reader, _ = open_index(config)
    if server:  # as the MCP server holds it: vocabulary in memory
        reader.close()
        reader = IndexReader.open(config.index_dir)
        reader.keep_vocabulary = True
    searcher = Searcher(reader, config)
    opts = SearchOptions(fuzzy=fuzzy)
    for q in queries[:10]:  # warm caches
        searcher.search([q], opts)
    times = []
    for q in queries:
        t = time.perf_counter()
        searcher.search([q], opts)
        times.append((time.perf_counter() - t) * 1000)
    reader.close()
    return {"fuzzy": fuzzy, "queries": len(queries), "p50_ms": round(percentile(times, .5), 2),
            "p95_ms": round(percentile(times, .95), 2), "mean_ms": round(statistics.mean(times), 2)}


def process_times(folder: Path, queries: list[str], runs: int = 20) -> dict:
    ra = shutil.which("ra") or str(Path(__file__).resolve().parents[1] / ".venv/bin/ra")
    times = []
    for q in queries[:runs]:
        t = time.perf_counter()
        subprocess.run([ra, "search", "--list", q], cwd=folder, check=True,
                       capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    help_times = []
    for _ in range(10):
        t = time.perf_counter()
        subprocess.run([ra, "--help"], check=True, capture_output=True)
        help_times.append((time.perf_counter() - t) * 1000)
    return {"ra_search_p50_ms": round(percentile(times, .5), 1),
            "ra_search_p95_ms": round(percentile(times, .95), 1),
            "ra_help_p50_ms": round(percentile(help_times, .5), 1)}
