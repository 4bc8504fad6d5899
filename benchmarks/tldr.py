"""Known-item search on tldr-pages: find a command's page from its description.

Generator (fixed seed): every page of ``corpora/tldr`` gives its first description line
(``> ...``); the words of the command name are removed from it (``git commit`` →
"Commit files to the repository." becomes "files to the repository"), and the page's
document is the one right answer (any chunk of it counts). Pages are left out when the
query would not identify them: alias and "examples moved" stubs, descriptions shared by
several pages, and queries of fewer than two words or without a word longer than four
letters (the typo variant needs one). ``N`` pages are sampled from the rest
(``QUICK_N`` with ``--quick``).

The typo variant changes one word per query, longer than four letters: an adjacent swap
or a deletion (fixed seed), the typos agents make.

Metrics: MRR@10 and Success@1 per system, on the clean and the typo queries, plus the
queries where ra ranks the page worse than the best peer.

tldr-pages © the tldr-pages team and contributors, CC BY 4.0 (``corpora/LICENSES.md``).
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.metrics import mean
from benchmarks.report import Table, progress
from benchmarks.scifact import SHARED, words_of

TLDR = SHARED / "corpora" / "tldr"
TREE = "tldr"
SEED = 20261122
N = 300
QUICK_N = 100
DEPTH = 10
STUBS = ("this command is an alias of", "the examples for this command have been moved",
         "this command is deprecated")


@dataclass(frozen=True)
class KnownItem:
    doc_id: str  # tree:path of the page
    name: str  # the command name (the page's h1)
    description: str  # the first description line, as written
    words: tuple[str, ...]  # the query: description words without the name's words
    typo: tuple[str, ...]  # the same with one typo


def pages(root: Path = TLDR) -> list[tuple[str, str, str]]:
    """``(path, name, first description line)`` of every page ra indexes, sorted."""
    out = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue  # ra skips hidden files (e.g. the page of the `..` command)
        lines = path.read_text(encoding="utf-8").splitlines()
        name = next((x[2:].strip() for x in lines if x.startswith("# ")), "")
        desc = next((x[2:].strip() for x in lines if x.startswith("> ")), "")
        out.append((rel, name, desc))
    return out


def query_words(name: str, description: str) -> list[str]:
    """The description's words minus the words of the command name."""
    drop = {w.lower() for w in re.findall(r"[^\W_]+", name)}
    return [w for w in words_of(description) if w.lower() not in drop]


def add_typo(words: list[str], rng: random.Random) -> list[str]:
    """One adjacent swap or deletion in one word longer than four letters."""
    long = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    i = rng.choice(long)
    w = words[i]
    swaps = [j for j in range(len(w) - 1) if w[j].lower() != w[j + 1].lower()]
    if swaps and rng.random() < 0.5:
        j = rng.choice(swaps)
        new = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    else:
        j = rng.randrange(len(w))
        new = w[:j] + w[j + 1:]
    return words[:i] + [new] + words[i + 1:]


def known_items(root: Path = TLDR, n: int = N, seed: int = SEED) -> list[KnownItem]:
    """``n`` known-item queries with their typo variants (deterministic)."""
    found = pages(root)
    count: dict[str, int] = {}
    for _, _, desc in found:
        count[desc.lower()] = count.get(desc.lower(), 0) + 1
    usable = []
    for path, name, desc in found:
        words = query_words(name, desc)
        if (desc and count[desc.lower()] == 1 and not desc.lower().startswith(STUBS)
                and len(words) >= 2 and any(len(w) > 4 and w.isalpha() for w in words)):
            usable.append((path, name, desc, words))
    rng = random.Random(seed)
    chosen = sorted(rng.sample(usable, min(n, len(usable))))
    return [KnownItem(f"{TREE}:{path}", name, desc, tuple(words), tuple(add_typo(words, rng)))
            for path, name, desc, words in chosen]


def rank_of(ranked: list[str], wanted: str) -> int | None:
    """1-based rank of ``wanted`` within the top ``DEPTH``, else None."""
    return ranked.index(wanted) + 1 if wanted in ranked[:DEPTH] else None


def write_config(folder: Path, root: Path = TLDR) -> None:
    (folder / ".ra.toml").write_text(f'[tree.{TREE}]\npath = "{root}"\n')


def run(quick: bool = False, root: Path = TLDR) -> dict:
    """Every system on the clean and typo queries; per-query ranks and summary metrics."""
    from benchmarks.systems import RaVariant, doc_id_key, open_systems
    from ra.query.search import SearchOptions

    items = known_items(root, QUICK_N if quick else N)
    ra = {"ra": RaVariant("natural", SearchOptions(limit=DEPTH)),
          "ra (explicit OR)": RaVariant("or", SearchOptions(limit=DEPTH)),
          "ra (fuzzy off)": RaVariant("natural", SearchOptions(limit=DEPTH, fuzzy=False))}
    peer_variants = {"tantivy": ("tantivy", False), "tantivy (fuzzy)": ("tantivy", True),
                     "tantivy-1field": ("tantivy-1field", False),
                     "tantivy-1field (fuzzy)": ("tantivy-1field", True),
                     "bm25s": ("bm25s", False), "sqlite-fts5": ("sqlite-fts5", False)}
    with tempfile.TemporaryDirectory(prefix="ra-bench-tldr-") as tmp:
        folder = Path(tmp)
        write_config(folder, root)
        progress(f"tldr: indexing {root} with ra")
        systems = open_systems(folder, folder / "peers", doc_id_key, ra=ra,
                               peer_variants=peer_variants, k=4 * DEPTH)
        try:
            ranks = {}
            for variant in ("clean", "typo"):
                progress(f"tldr: {len(items)} {variant} queries")
                ranks[variant] = {name: [rank_of(rank(list(getattr(
                    it, "words" if variant == "clean" else "typo"))), it.doc_id)
                    for it in items] for name, rank in systems.rankers.items()}
        finally:
            systems.close()
    return {"items": [asdict(it) for it in items], "ranks": ranks,
            "partial": systems.partial, "summary": summarize(ranks)}


def summarize(ranks: dict) -> dict:
    return {variant: {name: {"mrr@10": round(mean([1 / r if r else 0.0 for r in rs]), 4),
                             "success@1": round(mean([float(r == 1) for r in rs]), 4),
                             "found@10": sum(r is not None for r in rs)}
                      for name, rs in by_system.items()}
            for variant, by_system in ranks.items()}


PEER_ROWS = ("tantivy", "tantivy-1field", "bm25s", "sqlite-fts5")


def losses(result: dict, variant: str, limit: int = 15) -> list[dict]:
    """Queries where ra ranks the page below the best plain peer, worst first."""
    ranks = result["ranks"][variant]
    out = []
    for i, item in enumerate(result["items"]):
        mine = ranks["ra"][i]
        best = min((ranks[p][i] for p in PEER_ROWS if ranks[p][i]), default=None)
        if best is not None and (mine is None or mine > best):
            out.append({"query": " ".join(item["words" if variant == "clean" else "typo"]),
                        "page": item["doc_id"].split(":", 1)[1], "ra": mine,
                        **{p: ranks[p][i] for p in PEER_ROWS}})
    out.sort(key=lambda x: min(x[p] or 99 for p in PEER_ROWS) - (x["ra"] or DEPTH + 1))
    return out[:limit]


def wins(result: dict, variant: str) -> dict[str, tuple[int, int]]:
    """Per peer: (queries ra ranks better, queries the peer ranks better)."""
    ranks = result["ranks"][variant]
    ra = [r or 99 for r in ranks["ra"]]
    out = {}
    for name, rs in ranks.items():
        if name.startswith("ra"):
            continue
        rs = [r or 99 for r in rs]
        out[name] = (sum(a < b for a, b in zip(ra, rs, strict=True)),
                     sum(a > b for a, b in zip(ra, rs, strict=True)))
    return out


def tables(result: dict) -> list[Table]:
    s = result["summary"]
    n = len(result["items"])
    main = Table(f"tldr known-item search ({n} pages; MRR@10, Success@1)",
                 ["system", "MRR@10 clean", "S@1 clean", "MRR@10 typo", "S@1 typo",
                  "found@10 clean", "found@10 typo"],
                 note="ra: the words as typed (AND, partial fallback when no chunk has "
                      "them all); peers: the words OR'd. One typo per query (adjacent swap "
                      "or deletion, word longer than four letters). ra answered "
                      + ", ".join(f"{k}: {v} topics partially" for k, v in
                                  result["partial"].items()) + " (clean + typo).")
    for name in s["clean"]:
        c, t = s["clean"][name], s["typo"][name]
        main.rows.append([name, c["mrr@10"], c["success@1"], t["mrr@10"], t["success@1"],
                          c["found@10"], t["found@10"]])
    versus = Table("tldr: per-query wins of ra against each peer (better rank, top 10)",
                   ["peer", "ra better clean", "peer better clean", "ra better typo",
                    "peer better typo"])
    wc, wt = wins(result, "clean"), wins(result, "typo")
    versus.rows = [[p, *wc[p], *wt[p]] for p in wc]
    out = [main, versus]
    for variant in ("clean", "typo"):
        lost = losses(result, variant)
        t = Table(f"tldr {variant}: queries where ra ranks the page below the best peer "
                  f"(worst {len(lost)})", ["query", "page", "ra", *PEER_ROWS],
                  note="Rank within the top 10; – means not in the top 10. Query text "
                       "derived from tldr-pages (CC BY 4.0).")
        t.rows = [[x["query"], x["page"], x["ra"], *(x[p] for p in PEER_ROWS)] for x in lost]
        out.append(t)
    return out


if __name__ == "__main__":
    result = run("--quick" in sys.argv)
    for table in tables(result):
        print(table.markdown())
