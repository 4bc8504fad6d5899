"""SciFact training split: nDCG@10 and Recall@100 of ra and its peers.

Each abstract becomes one markdown file (``# title``, blank line, text), the folder is
indexed with ra, and each claim is searched as ra's users would send it: as typed, and
with its words OR'd. The peers (``benchmarks.peers``) index ra's chunks of the same
folder and get the words OR'd, each in the configuration of ``systems.peer_configs`` that
does best here. The best chunk per document counts. Every number is in-sample: ra's
defaults were tuned on this split, and each peer's configuration is chosen on it. The
Lucene BM25 baseline of ``BASELINE-train.md`` is quoted for comparison (flat: 0.6974 /
0.9289).

SciFact is CC BY-NC 2.0: it is read from ``../shared`` for evaluation only, and no claim
or abstract text is written into a report (query ids only).
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.metrics import mean, ndcg_at, recall_at
from benchmarks.report import Table, progress

SHARED = Path(__file__).resolve().parents[2] / "shared"
SCIFACT = SHARED / "eval" / "scifact"
BASELINE = {"lucene_bm25_flat": (0.6974, 0.9289), "lucene_bm25_multifield": (0.6734, 0.9178)}


def load(split: str = "train"):
    corpus = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").open()]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT / "queries.jsonl").open())}
    qrels: dict[str, dict[str, int]] = {}
    for line in list((SCIFACT / "qrels" / f"{split}.tsv").open())[1:]:
        qid, did, score = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(score)
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def write_corpus(corpus, folder: Path) -> None:
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for doc in corpus:
        title = " ".join(doc["title"].split()) or doc["_id"]
        (docs / f"{doc['_id']}.md").write_text(f"# {title}\n\n{doc['text']}\n")
    (folder / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')


KEYWORDS = {"or", "and", "not"}
SEED = 20261123
QUICK_QUERIES = 100
DEPTH = 100


def words_of(text: str) -> list[str]:
    """The text's words, without the ones the query language reads as operators."""
    return [w for w in re.findall(r"[^\W_]+", text) if w.lower() not in KEYWORDS]


def or_query(text: str) -> str:
    return " OR ".join(words_of(text))


def doc_key(doc_id: str, path: str) -> str:
    """SciFact's document id: the file name without ``.md``."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def subsample(queries: dict[str, str], n: int, seed: int = SEED) -> dict[str, str]:
    chosen = set(random.Random(seed).sample(sorted(queries), min(n, len(queries))))
    return {q: t for q, t in queries.items() if q in chosen}


def run(quick: bool = False) -> dict:
    """Every system on the training claims: per-query nDCG@10 / Recall@100 and means."""
    from benchmarks.systems import OR, TYPED, RaVariant, open_systems, peer_variants
    from ra.config.settings import load_config
    from ra.query.search import SearchOptions

    corpus, queries, qrels = load()
    if quick:
        queries = subsample(queries, QUICK_QUERIES)
    # ra's default ranking (aggregation on): with aggregation=False, ``drop_nested``
    # replaces a section by its title-only document node at the node's lower score
    opts = SearchOptions(limit=DEPTH, candidate_limit=1000, cutoff_ratio=0.0)
    ra = {"ra": RaVariant(TYPED, opts), "ra (words OR'd)": RaVariant(OR, opts)}
    with tempfile.TemporaryDirectory(prefix="ra-bench-scifact-") as tmp:
        folder = Path(tmp)
        write_corpus(corpus, folder)
        progress(f"scifact: indexing {len(corpus)} abstracts with ra")
        systems = open_systems(folder, folder / "peers", doc_key, ra=ra,
                               peer_rows=peer_variants(load_config(folder)), k=3 * DEPTH)
        try:
            per_query = {name: _evaluate(rank, name, queries, qrels)
                         for name, rank in systems.rankers.items()}
        finally:
            systems.close()
    return {"queries": len(queries), "quick": quick, "per_query": per_query,
            "modes": systems.modes, "partial": systems.partial,
            "summary": _summary(per_query)}


def _evaluate(rank, name: str, queries, qrels) -> dict[str, dict]:
    progress(f"scifact: {len(queries)} claims with {name}")
    out = {}
    for qid, text in queries.items():
        t = time.perf_counter()
        ranked = rank(text)
        ms = (time.perf_counter() - t) * 1000
        out[qid] = {"ndcg@10": ndcg_at(ranked, qrels[qid]),
                    "recall@100": recall_at(ranked, qrels[qid]), "ms": ms}
    return out


def _summary(per_query: dict) -> dict:
    out = {}
    for name, rows in per_query.items():
        ms = sorted(r["ms"] for r in rows.values())
        out[name] = {"ndcg@10": round(mean([r["ndcg@10"] for r in rows.values()]), 4),
                     "recall@100": round(mean([r["recall@100"] for r in rows.values()]), 4),
                     "p50_ms": round(ms[len(ms) // 2], 2) if ms else None}
    return out


def _versus(per_query: dict, mine: str, peer: str) -> tuple[int, int, list[str]]:
    """(ra better, peer better, the ids of the peer's biggest nDCG@10 wins)."""
    gaps = [(per_query[peer][q]["ndcg@10"] - r["ndcg@10"], q)
            for q, r in per_query[mine].items()]
    better = sum(g < -1e-9 for g, _ in gaps)
    worse = sum(g > 1e-9 for g, _ in gaps)
    return better, worse, [q for g, q in sorted(gaps, reverse=True)[:8] if g > 0.3]


def tables(result: dict) -> list[Table]:
    from benchmarks.systems import best_rows, system_of

    s = result["summary"]
    chosen = best_rows({row: v["ndcg@10"] for row, v in s.items()})
    sample = " (quick subsample)" if result["quick"] else ""
    main = Table(f"SciFact train, {result['queries']} claims{sample}: nDCG@10, Recall@100 "
                 "(in-sample)",
                 ["system", "configuration", "query mode", "nDCG@10", "Recall@100",
                  "p50 ms/query"],
                 note="In-sample for every system: ra's defaults were tuned on this split "
                      "and each peer's configuration (of systems.peer_configs) is the one "
                      "that scores best here. ra: limit 100, candidate_limit 1000, no elbow "
                      "cutoff, default aggregation; best chunk per document. "
                      "Lucene rows quoted from BASELINE-train.md (Anserini BM25, k1 0.9, "
                      "b 0.4, all 809 claims, Porter + stopwords). ra answered "
                      + ", ".join(f"{k}: {v} claims partially"
                                  for k, v in result["partial"].items()) + ".")
    for row in chosen.values():
        v = s[row]
        config = row.split(" [", 1)[1][:-1] if " [" in row else "defaults"
        main.rows.append([system_of(row), config, result["modes"][row], v["ndcg@10"],
                          v["recall@100"], v["p50_ms"]])
    main.rows += [[name.replace("_", " "), "k1 0.9, b 0.4", "words OR'd (Anserini)", n, r,
                   None] for name, (n, r) in BASELINE.items()]
    versus = Table("SciFact: per-claim nDCG@10 of ra (as typed) against each system",
                   ["system", "ra better", "system better", "claims the system wins by "
                    "> 0.3 (ids, worst first)"])
    for row in chosen.values():
        if row != "ra":
            better, worse, ids = _versus(result["per_query"], "ra", row)
            versus.rows.append([system_of(row), better, worse, " ".join(ids)])
    return [main, versus]


def main(argv: list[str]) -> int:
    result = run("--quick" in argv)
    for table in tables(result):
        print(table.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
