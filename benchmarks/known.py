"""Known-item search on the four sets of ``benchmarks.known_items``: ra and its peers.

Each set is split into a tuning half and a reporting half (fixed seed). ra's defaults
were tuned on the tuning halves (and SciFact train), and each peer's configuration is
chosen here on the tuning half of each set (best mean of clean and typo MRR@10 among
``systems.peer_configs``), so the numbers on the tuning halves are in-sample for every
system and say so; the reporting halves are the honest comparison.

Every query is run clean and with one typo; ra as typed and with its words OR'd, each
peer with the words OR'd (``benchmarks.systems`` explains the query modes), tantivy also
with its fuzzy matching. Metrics: MRR@10 and Success@1 (the page, or any page a task
names, anywhere in the top 10; a document target counts any chunk of it).

tldr-pages © the tldr-pages team and contributors (CC BY 4.0); The Rust Programming
Language © The Rust Project Developers (MIT OR Apache-2.0); Microsoft C++ docs
© Microsoft Corporation (CC BY 4.0).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from benchmarks import known_items
from benchmarks.metrics import mean
from benchmarks.report import Table, progress
from benchmarks.systems import OR, TYPED, RaVariant, best_rows, system_of

RA_ROWS = {"ra": TYPED, "ra (words OR'd)": OR}
CJK_NOTE = (" The peers' tokenizers keep a run of CJK text whole, as one token, so they find"
            " a page only through a run it writes exactly (a heading); ra reads a run as its"
            " character bigrams, as it indexes it. A typo here drops or swaps characters,"
            " which is not how Chinese is mistyped: a stress test only.")
FUZZY_PEERS = ("tantivy",)


def run(quick: bool = False) -> dict:
    """Per set, item (clean and typo) and row: the rank of the answer in the top 10."""
    from benchmarks.systems import doc_id_key, open_systems, peer_variants
    from ra.config.settings import load_config
    from ra.query.search import SearchOptions

    sets = {name: known_items.items(name) for name in known_items.SETS}
    if quick:
        sets = {name: found[::3] for name, found in sets.items()}
    ranks: dict[str, dict[str, dict[str, list]]] = {}
    modes: dict[str, str] = {}
    for corpus, (tree, root) in known_items.TREES.items():
        with tempfile.TemporaryDirectory(prefix=f"ra-bench-{corpus}-") as tmp:
            folder = Path(tmp)
            (folder / ".ra.toml").write_text(f'[tree.{tree}]\npath = "{root}"\n')
            progress(f"known items: indexing {corpus} with ra")
            ra = {name: RaVariant(mode, SearchOptions(limit=known_items.DEPTH))
                  for name, mode in RA_ROWS.items()}
            rows = peer_variants(load_config(folder), FUZZY_PEERS)
            systems = open_systems(folder, folder / "peers", doc_id_key, ra=ra,
                                   peer_rows=rows, k=4 * known_items.DEPTH)
            modes |= systems.modes
            try:
                for name, found in sets.items():
                    mine = [it for it in found if it.corpus == corpus]
                    if mine:
                        progress(f"known items: {len(mine)} {name} queries on {corpus}")
                        _evaluate(systems.rankers, mine, ranks.setdefault(name, {}))
            finally:
                systems.close()
    halves = {name: [it.key + " " + it.query for it in known_items.halves(found)[0]]
              for name, found in sets.items()}
    return {"items": {n: [it.key + " " + it.query for it in f] for n, f in sets.items()},
            "tuning": halves, "ranks": ranks, "modes": modes, "quick": quick}


def _evaluate(rankers, items, out: dict[str, dict[str, list]]) -> None:
    for row, rank in rankers.items():
        for variant in ("clean", "typo"):
            found = out.setdefault(row, {}).setdefault(variant, [])
            for it in items:
                ranked = rank(it.query if variant == "clean" else it.typo)
                found.append(next((i + 1 for i, doc in enumerate(ranked[:known_items.DEPTH])
                                   if doc in documents(it.targets)), None))


def documents(targets: tuple[str, ...]) -> set[str]:
    """The documents of the targets (the benchmark ranks documents, not chunks)."""
    return {t.split("#", 1)[0] for t in targets}


def _metrics(rs: list) -> tuple[float, float]:
    return (round(mean([1 / r if r else 0.0 for r in rs]), 4),
            round(mean([float(r == 1) for r in rs]), 4))


def summary(result: dict, name: str) -> dict[str, dict[str, dict]]:
    """Per half and row: MRR@10 and S@1, clean and typo, and the chosen rows."""
    order = result["items"][name]
    tune = set(result["tuning"][name])
    out = {}
    for half, keep in (("tuning", lambda k: k in tune), ("reporting", lambda k: k not in tune)):
        idx = [i for i, k in enumerate(order) if keep(k)]
        out[half] = {row: {v: _metrics([rs[v][i] for i in idx]) for v in ("clean", "typo")}
                     for row, rs in result["ranks"][name].items()}
    score = {row: m["clean"][0] + m["typo"][0] for row, m in out["tuning"].items()}
    chosen = best_rows(score)
    for half in ("tuning", "reporting"):
        out[half] = {row: out[half][row] for row in chosen.values()}
    return out


def tables(result: dict) -> list[Table]:
    out = []
    for name in result["items"]:
        s = summary(result, name)
        n_tune = len(result["tuning"][name])
        n_report = len(result["items"][name]) - n_tune
        t = Table(f"Known items: {name} ({n_report} reporting + {n_tune} tuning queries; "
                  "MRR@10, Success@1)",
                  ["system", "configuration", "query mode", "half", "MRR@10 clean",
                   "S@1 clean", "MRR@10 typo", "S@1 typo"],
                  note="Reporting half: held out from all tuning. Tuning half: in-sample "
                       "(ra's defaults were tuned on it; each peer's configuration was "
                       "chosen on it). One typo per query (adjacent swap or deletion in a "
                       "word longer than four letters)." + (CJK_NOTE if name == "cjk" else ""))
        for half in ("reporting", "tuning"):
            label = "reporting" if half == "reporting" else "tuning (in-sample)"
            for row, m in s[half].items():
                config = row.split(" [", 1)[1][:-1] if " [" in row else "defaults"
                t.rows.append([system_of(row), config, result["modes"][row], label,
                               m["clean"][0], m["clean"][1], m["typo"][0], m["typo"][1]])
        out.append(t)
    return out


if __name__ == "__main__":
    result = run("--quick" in sys.argv)
    for table in tables(result):
        print(table.markdown())
