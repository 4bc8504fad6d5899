"""ra alone on SciFact train or the known-item sets, with search settings varied in-process.

``benchmarks.scifact`` and the known-item benchmark index afresh and run every peer; this
indexes once into a folder that persists between runs (``$RA_TUNE_DIR``, default
``/tmp/ra-tune``; a change of analyzer or chunking rebuilds it, as ra's freshness check
does for any index) and scores ra alone, so trying a variant of the ranking settings
costs a minute or two::

    python -m benchmarks.tune scifact                        # defaults, all 809 claims
    python -m benchmarks.tune scifact --quick k1=0.9 b=0.4   # the 100-claim sample
    python -m benchmarks.tune known title=1.5 --save runs/a.json   # the tuning halves
    python -m benchmarks.tune known --half reporting --sets tldr,tasks
    python -m benchmarks.tune scifact --warm                 # as ra mcp / ra daemon score

Queries are sent ``--mode typed`` (as written: the default, what agents send), ``words``
(the words only, space-separated) or ``or`` (the words OR'd). Known items run on the
*tuning* halves unless ``--half reporting`` or ``all`` is given (``benchmarks.
known_items``): tune on the tuning halves only. Settings are ``[search]`` keys (``k1``,
``b``, ``fuzzy``, ``fuzzy_distance``, ``fuzzy_weight``, ...) or field boosts (``title``,
``tags``, ``path``, ``body``) or module constants by their dotted name
(``ra.query.plan.COMPOUND_PHRASE_WEIGHT=0.3``). ``--grid "k1=0.9 b=0.4; k1=1.2"`` runs
several variants over one open index. ``--save`` writes the per-query numbers (SciFact
query ids; known items by target and query); ``--against FILE`` counts the queries that
got better or worse than a saved run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from benchmarks import known_items, scifact
from benchmarks.metrics import mean, ndcg_at, recall_at

WORK = Path(os.environ.get("RA_TUNE_DIR", "/tmp/ra-tune"))  # one per engineer on a shared machine
BOOSTS = ("title", "tags", "path", "body")


def settings(config, overrides: dict[str, str]):
    """``config`` with ``[search]`` keys and field boosts replaced (dotted keys, module
    constants such as ``ra.query.plan.COMPOUND_PHRASE_WEIGHT``, are left to ``constants``)."""
    search = config.search
    boosts = {k: float(v) for k, v in overrides.items() if k in BOOSTS}
    rest = {}
    for key, value in overrides.items():
        if key not in BOOSTS and "." not in key:
            rest[key] = _value(type(getattr(search, key)), value)
    search = dataclasses.replace(search, boosts=dataclasses.replace(search.boosts, **boosts),
                                 **rest)
    return dataclasses.replace(config, search=search)


def _value(kind: type, text: str):
    """``text`` as a ``kind``; a bool from ``1``, ``true`` or ``on`` (``bool("0")`` is
    true)."""
    return text.lower() in ("1", "true", "on") if kind is bool else kind(text)


@contextmanager
def constants(overrides: dict[str, str]):
    """Module constants named by dotted keys set for the duration (then restored)."""
    import importlib

    saved = []
    for key, value in overrides.items():
        if "." in key:
            module, name = key.rsplit(".", 1)
            mod = importlib.import_module(module)
            old = getattr(mod, name)
            saved.append((mod, name, old))
            setattr(mod, name, _value(type(old), value))
    try:
        yield
    finally:
        for mod, name, old in reversed(saved):
            setattr(mod, name, old)


def open_folder(folder: Path, warm: bool = False):
    """``(reader, config)`` of the index of ``folder`` (built or refreshed first);
    ``warm``: a long-lived reader, as ``ra mcp`` and ``ra daemon`` hold it (plain queries
    scored over its impacts, ``ra.query.impacts``), not a one-shot command's."""
    from ra.config.settings import load_config
    from ra.index.freshness import open_index

    config = load_config(folder)
    reader, _ = open_index(config)
    reader.keep_vocabulary = warm
    return reader, config


def searchers(reader, config, variants: list[dict[str, str]]):
    """``(variant index, Searcher)`` per variant, with its constants set meanwhile."""
    from ra.query.search import Searcher

    for i, overrides in enumerate(variants):
        with constants(overrides):
            yield i, Searcher(reader, settings(config, overrides))


MODES = ("typed", "words", "or")


def query_text(text: str, mode: str) -> str:
    """How a query is sent: ``typed`` as written, ``words`` its words (operators and
    punctuation dropped) separated by spaces, ``or`` the words OR'd."""
    if mode == "typed":
        return text
    words = scifact.words_of(text)
    return " OR ".join(words) if mode == "or" else " ".join(words)


def ranked_results(searcher, query: str, options):
    """The results of one topic and whether ra answered it partially; a query ra refuses
    (a syntax error) has no results, as for the agent that sent it."""
    from ra.errors import QueryError

    try:
        topic = searcher.search([query], options).queries[0]
    except QueryError:
        return [], False
    return topic.results, topic.match == "partial"


def run_scifact(variants: list[dict[str, str]], quick: bool = False, mode: str = "typed",
                warm: bool = False) -> list[dict]:
    """Per variant and claim: nDCG@10, Recall@100 and whether ra answered partially."""
    from ra.query.search import SearchOptions

    corpus, queries, qrels = scifact.load()
    if quick:
        queries = scifact.subsample(queries, scifact.QUICK_QUERIES)
    folder = WORK / "scifact"
    if not (folder / ".ra.toml").exists():
        scifact.write_corpus(corpus, folder)
    reader, config = open_folder(folder, warm)
    opts = SearchOptions(limit=scifact.DEPTH, candidate_limit=1000, cutoff_ratio=0.0)
    out: list[dict] = [{} for _ in variants]
    try:
        for i, searcher in searchers(reader, config, variants):
            for qid, text in queries.items():
                results, partial = ranked_results(searcher, query_text(text, mode), opts)
                ranked = list(dict.fromkeys(scifact.doc_key(r.id, r.path) for r in results))
                out[i][qid] = {"ndcg@10": ndcg_at(ranked, qrels[qid]),
                               "recall@100": recall_at(ranked, qrels[qid]), "partial": partial}
    finally:
        reader.close()
    return out


def corpus_folder(corpus: str) -> Path:
    """A folder whose ``.ra.toml`` names one corpus of ``known_items.TREES``."""
    tree, root = known_items.TREES[corpus]
    folder = WORK / corpus
    folder.mkdir(parents=True, exist_ok=True)
    config = f'[tree.{tree}]\npath = "{root}"\n'
    if not (folder / ".ra.toml").exists() or (folder / ".ra.toml").read_text() != config:
        (folder / ".ra.toml").write_text(config)
    return folder


def run_known(variants: list[dict[str, str]], which: str = "tuning", mode: str = "typed",
              sets: tuple[str, ...] = known_items.SETS, warm: bool = False) -> list[dict]:
    """Per variant, set and variant (clean, typo) and item: reciprocal rank in the top 10."""
    from ra.query.search import SearchOptions

    opts = SearchOptions(limit=known_items.DEPTH)
    by_corpus: dict[str, list] = {}
    for name in sets:
        for it in known_items.half(name, which):
            by_corpus.setdefault(it.corpus, []).append(it)
    out: list[dict] = [{} for _ in variants]
    for corpus, found in by_corpus.items():
        reader, config = open_folder(corpus_folder(corpus), warm)
        try:
            for i, searcher in searchers(reader, config, variants):
                for it in found:
                    for variant, text in (("clean", it.query), ("typo", it.typo)):
                        results, partial = ranked_results(searcher, query_text(text, mode),
                                                          opts)
                        rank = next((k + 1 for k, r in enumerate(results) if known_items.hit(
                            r.id, r.constituents, it.targets)), None)
                        out[i].setdefault(f"{it.set} {variant}", {})[
                            it.key + " " + it.query] = {"rr": 1 / rank if rank else 0.0,
                                                        "partial": partial}
        finally:
            reader.close()
    return out


def summary(which: str, rows: dict) -> str:
    if which == "known":
        lines = []
        for name, per in rows.items():
            rr = [r["rr"] for r in per.values()]
            s1 = sum(r == 1.0 for r in rr) / len(rr)
            lines.append(f"  {name:18} MRR@10 {mean(rr):.4f}  S@1 {s1:.4f}  ({len(rr)})")
        return "\n" + "\n".join(lines)
    n = mean([r["ndcg@10"] for r in rows.values()])
    r = mean([r["recall@100"] for r in rows.values()])
    p = sum(r["partial"] for r in rows.values())
    return f"nDCG@10 {n:.4f}  R@100 {r:.4f}  ({len(rows)} claims, {p} partial)"


def versus(rows: dict, before: dict) -> str:
    if "ndcg@10" not in next(iter(rows.values())):  # known items: {set: {query: {rr}}}
        parts = []
        for name, per in rows.items():
            gaps = [per[q]["rr"] - before[name][q]["rr"] for q in per if q in before.get(name, {})]
            parts.append(f"{name}: +{sum(g > 1e-9 for g in gaps)} -{sum(g < -1e-9 for g in gaps)}")
        return "against the saved run (rr): " + ", ".join(parts)
    gaps = [rows[q]["ndcg@10"] - before[q]["ndcg@10"] for q in rows if q in before]
    return (f"against the saved run: {sum(g > 1e-9 for g in gaps)} better, "
            f"{sum(g < -1e-9 for g in gaps)} worse (ndcg@10)")


def option(argv: list[str], name: str, default: str | None = None) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv: list[str]) -> int:
    which = argv[0] if argv and argv[0] in ("scifact", "known") else "scifact"
    save, against = option(argv, "--save"), option(argv, "--against")
    mode, grid = option(argv, "--mode", "typed"), option(argv, "--grid")
    values = {save, against, grid}
    single = dict(a.split("=", 1) for a in argv
                  if "=" in a and a not in values and not a.startswith("-"))
    variants = [dict(kv.split("=", 1) for kv in part.split()) | single
                for part in grid.split(";")] if grid else [single]
    if which == "known":
        sets = tuple(option(argv, "--sets", ",".join(known_items.SETS)).split(","))
        runs = run_known(variants, option(argv, "--half", "tuning"), mode, sets,
                         "--warm" in argv)
    else:
        runs = run_scifact(variants, "--quick" in argv, mode, "--warm" in argv)
    for overrides, rows in zip(variants, runs, strict=True):
        label = " ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"
        print(f"{which} ({mode}) {label} → {summary(which, rows)}")
        if against:
            print(versus(rows, json.loads(Path(against).read_text())))
    if save:
        Path(save).parent.mkdir(parents=True, exist_ok=True)
        Path(save).write_text(json.dumps(runs[0] if len(runs) == 1 else runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
