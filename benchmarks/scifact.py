"""SciFact training split: nDCG@10 and Recall@100 of ra's ranking.

Each abstract becomes one markdown file (``# title``, blank line, text), the folder is
indexed with ra, and each claim is searched as ra's users would send it: natural (words
AND'd, partial fallback when no chunk has them all) and as an explicit OR of its words.
The best chunk per document counts. The Lucene BM25 baseline of ``BASELINE-train.md`` is
quoted for comparison (flat: 0.6974 / 0.9289).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from benchmarks.metrics import mean, ndcg_at, recall_at

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


def _words(text: str) -> list[str]:
    """The claim's words, without the ones the query language reads as operators."""
    return [w for w in re.findall(r"[^\W_]+", text) if w.lower() not in KEYWORDS]


def or_query(text: str) -> str:
    return " OR ".join(_words(text))


def run(folder: Path, queries, qrels, *, mode: str = "natural", **options):
    from ra.config import load_config
    from ra.freshness import open_index
    from ra.query.search import SearchOptions, Searcher

    config = load_config(folder)
    reader, _ = open_index(config)
    searcher = Searcher(reader, config)
    opts = SearchOptions(limit=100, candidate_limit=1000, cutoff_ratio=0.0,
                         aggregation=False, **options)
    ndcg, recall, partial, times = [], [], 0, []
    for qid, text in queries.items():
        query = or_query(text) if mode == "or" else _natural(text)
        t0 = time.perf_counter()
        topic = searcher.search([query], opts).queries[0]
        times.append(time.perf_counter() - t0)
        partial += topic.match == "partial"
        ranked = _best_per_doc(r.path for r in topic.results)
        ndcg.append(ndcg_at(ranked, qrels[qid]))
        recall.append(recall_at(ranked, qrels[qid]))
    reader.close()
    times.sort()
    return {"mode": mode, "ndcg@10": round(mean(ndcg), 4), "recall@100": round(mean(recall), 4),
            "partial": partial, "queries": len(queries),
            "p50_ms": round(times[len(times) // 2] * 1000, 2)}


def _natural(text: str) -> str:
    """A claim as a plain keyword query: punctuation that is query syntax removed."""
    return " ".join(_words(text))


def _best_per_doc(paths) -> list[str]:
    seen, out = set(), []
    for p in paths:
        doc = p.rsplit("/", 1)[-1].removesuffix(".md")
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def main(argv: list[str]) -> int:
    import tempfile

    corpus, queries, qrels = load()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_corpus(corpus, folder)
        rows = [run(folder, queries, qrels, mode=m) for m in ("natural", "or")]
    for name, (n, r) in BASELINE.items():
        rows.append({"mode": name, "ndcg@10": n, "recall@100": r})
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
