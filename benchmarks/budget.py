"""Known items within a token budget: what an agent reads in full, not only what ranks.

The MCP tools answer within ``[mcp] max_tokens`` (4,000 by default), so a result that
does not fit comes as its list entry (id, title, snippet) and the agent must ask again
for its text. ra only (the peers have no budgets): every query of the known-item sets
(``benchmarks.known_items``; clean and with one typo, tuning and reporting halves) as
an MCP ``search`` with its defaults would run it, and per set:

- MRR@10: the answer's page anywhere in the top 10, as in ``benchmarks.known``;
- MRR@10 in full: the same, counting only results given in full;
- top in full: the share of queries whose first result is given in full;
- tokens: the mean of what the answers use of the budget.

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

BUDGET = 4000  # the MCP server's default ([mcp] max_tokens)


def run(quick: bool = False) -> dict:
    """Per set, half and variant: the rank of the answer, its rank in full, whether the
    first result came in full, and the tokens used, per query."""
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher, SearchOptions

    sets = {name: known_items.halves(known_items.items(name))
            for name in known_items.SETS}
    if quick:
        sets = {name: (tune[::3], report[::3]) for name, (tune, report) in sets.items()}
    rows: dict[str, dict[str, list]] = {}
    options = SearchOptions(max_tokens=BUDGET)
    for corpus, (tree, root) in known_items.TREES.items():
        with tempfile.TemporaryDirectory(prefix=f"ra-bench-{corpus}-") as tmp:
            folder = Path(tmp)
            (folder / ".ra.toml").write_text(f'[tree.{tree}]\npath = "{root}"\n')
            progress(f"budget: indexing {corpus}")
            config = load_config(folder)
            reader, _ = open_index(config)
            searcher = Searcher(reader, config)
            try:
                for name, halves in sets.items():
                    for half, found in zip(("tuning", "reporting"), halves, strict=True):
                        for it in (it for it in found if it.corpus == corpus):
                            for variant, query in (("clean", it.query), ("typo", it.typo)):
                                answer = searcher.search([query], options)
                                rows.setdefault(f"{name}|{half}|{variant}", []).append(
                                    _row(answer, it.targets))
            finally:
                reader.close()
    return {"budget": BUDGET, "rows": rows, "quick": quick}


def _row(answer, targets: tuple[str, ...]) -> list:
    results = answer.queries[0].results[:known_items.DEPTH]
    hits = [i for i, r in enumerate(results, 1)
            if known_items.hit(r.id, (), tuple(t.split("#", 1)[0] for t in targets))]
    full = [i for i in hits if results[i - 1].tier == "full"]
    return [hits[0] if hits else None, full[0] if full else None,
            bool(results) and results[0].tier == "full", answer.tokens_used]


def tables(result: dict) -> list[Table]:
    t = Table(f"Known items within a token budget ({result['budget']:,} tokens, the MCP "
              "server's default)",
              ["set", "half", "query", "queries", "MRR@10", "MRR@10 in full",
               "top result in full", "tokens used (mean)"],
              note="ra as an MCP `search` runs a query with its defaults. MRR@10 in full "
                   "counts only results given in full (not as a list entry or an id). "
                   "Tuning halves are in-sample for ra's defaults.")
    for key, rows in result["rows"].items():
        name, half, variant = key.split("|")
        t.rows.append([name, half if half == "reporting" else "tuning (in-sample)", variant,
                       len(rows), round(mean([1 / r[0] if r[0] else 0.0 for r in rows]), 4),
                       round(mean([1 / r[1] if r[1] else 0.0 for r in rows]), 4),
                       f"{mean([float(r[2]) for r in rows]):.0%}",
                       round(mean([r[3] for r in rows]))])
    return [t]


if __name__ == "__main__":
    for table in tables(run("--quick" in sys.argv)):
        print(table.markdown())
