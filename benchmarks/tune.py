"""ra alone on SciFact train or the tldr known items, with search settings varied in-process.

``benchmarks.scifact`` and ``benchmarks.tldr`` index afresh and run every peer; this
indexes once into a folder that persists between runs (a change of analyzer or chunking
rebuilds it, as ra's freshness check does for any index) and scores ra's natural
queries alone, so trying a variant of the ranking settings costs a minute or two::

    python -m benchmarks.tune scifact                       # defaults, all 809 claims
    python -m benchmarks.tune scifact --quick k1=0.9 b=0.4  # the 100-claim sample
    python -m benchmarks.tune tldr title=1.5 --save runs/a.json

Settings are ``[search]`` keys (``k1``, ``b``, ``fuzzy``, ``fuzzy_distance``,
``fuzzy_weight``) or field boosts (``title``, ``tags``, ``path``, ``body``). ``--save``
writes the per-query numbers (query ids or page paths only, no text); ``--against FILE``
counts the queries that got better or worse than a saved run.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from benchmarks import scifact, tldr
from benchmarks.metrics import mean, ndcg_at, recall_at

WORK = Path("/tmp/ra-tune")
BOOSTS = ("title", "tags", "path", "body")


def settings(config, overrides: dict[str, str]):
    """``config`` with ``[search]`` keys and field boosts replaced."""
    search = config.search
    boosts = {k: float(v) for k, v in overrides.items() if k in BOOSTS}
    rest = {}
    for key, value in overrides.items():
        if key not in BOOSTS:
            kind = type(getattr(search, key))
            rest[key] = value.lower() in ("1", "true", "on") if kind is bool else kind(value)
    search = dataclasses.replace(search, boosts=dataclasses.replace(search.boosts, **boosts),
                                 **rest)
    return dataclasses.replace(config, search=search)


def searcher_for(folder: Path, overrides: dict[str, str]):
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher

    config = settings(load_config(folder), overrides)
    reader, _ = open_index(config)
    return reader, Searcher(reader, config)


def doc_keys(searcher, words: list[str], options, key) -> tuple[list[str], bool]:
    """Documents in rank order (best chunk of each), and whether the match was partial."""
    topic = searcher.search([" ".join(words)], options).queries[0]
    seen: dict[str, None] = {}
    for r in topic.results:
        seen.setdefault(key(r))
    return list(seen), topic.match == "partial"


def run_scifact(overrides: dict[str, str], quick: bool = False) -> dict:
    """Per claim: nDCG@10, Recall@100 and whether ra answered partially."""
    from ra.query.search import SearchOptions

    corpus, queries, qrels = scifact.load()
    if quick:
        queries = scifact.subsample(queries, scifact.QUICK_QUERIES)
    folder = WORK / "scifact"
    if not (folder / ".ra.toml").exists():
        scifact.write_corpus(corpus, folder)
    reader, searcher = searcher_for(folder, overrides)
    opts = SearchOptions(limit=scifact.DEPTH, candidate_limit=1000, cutoff_ratio=0.0)
    out = {}
    try:
        for qid, text in queries.items():
            ranked, partial = doc_keys(searcher, scifact.words_of(text), opts,
                                       lambda r: scifact.doc_key(r.id, r.path))
            out[qid] = {"ndcg@10": ndcg_at(ranked, qrels[qid]),
                        "recall@100": recall_at(ranked, qrels[qid]), "partial": partial}
    finally:
        reader.close()
    return out


def run_tldr(overrides: dict[str, str], quick: bool = False) -> dict:
    """Per page and variant (clean, typo): reciprocal rank within the top 10."""
    from ra.query.search import SearchOptions

    items = tldr.known_items(n=tldr.QUICK_N if quick else tldr.N)
    folder = WORK / "tldr"
    folder.mkdir(parents=True, exist_ok=True)
    tldr.write_config(folder)
    reader, searcher = searcher_for(folder, overrides)
    opts = SearchOptions(limit=tldr.DEPTH)
    out = {}
    try:
        for it in items:
            for variant, words in (("clean", it.words), ("typo", it.typo)):
                ranked, partial = doc_keys(searcher, list(words), opts,
                                           lambda r: r.id.split("#")[0])
                rank = tldr.rank_of(ranked, it.doc_id)
                out[f"{variant} {it.doc_id}"] = {"rr": 1 / rank if rank else 0.0,
                                                 "partial": partial}
    finally:
        reader.close()
    return out


def summary(which: str, rows: dict) -> str:
    if which == "tldr":
        rr = {v: [r["rr"] for k, r in rows.items() if k.startswith(v)]
              for v in ("clean", "typo")}
        return (f"MRR@10 clean {mean(rr['clean']):.4f}  typo {mean(rr['typo']):.4f}  "
                f"({len(rr['clean'])} pages)")
    n = mean([r["ndcg@10"] for r in rows.values()])
    r = mean([r["recall@100"] for r in rows.values()])
    p = sum(r["partial"] for r in rows.values())
    return f"nDCG@10 {n:.4f}  R@100 {r:.4f}  ({len(rows)} claims, {p} partial)"


def versus(rows: dict, before: dict) -> str:
    metric = "rr" if "rr" in next(iter(rows.values())) else "ndcg@10"
    gaps = [rows[q][metric] - before[q][metric] for q in rows if q in before]
    return (f"against the saved run: {sum(g > 1e-9 for g in gaps)} better, "
            f"{sum(g < -1e-9 for g in gaps)} worse ({metric})")


def main(argv: list[str]) -> int:
    which = argv[0] if argv and argv[0] in ("scifact", "tldr") else "scifact"
    save = argv[argv.index("--save") + 1] if "--save" in argv else None
    against = argv[argv.index("--against") + 1] if "--against" in argv else None
    overrides = dict(a.split("=", 1) for a in argv if "=" in a and a not in (save, against))
    run = run_tldr if which == "tldr" else run_scifact
    rows = run(overrides, "--quick" in argv)
    label = " ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"
    print(f"{which} {label} → {summary(which, rows)}")
    if against:
        print(versus(rows, json.loads(Path(against).read_text())))
    if save:
        Path(save).parent.mkdir(parents=True, exist_ok=True)
        Path(save).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
