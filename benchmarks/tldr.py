"""The pages of tldr-pages that make known-item queries (``benchmarks.known_items``).

Generator (fixed seed): every page of ``corpora/tldr`` gives its first description line
(``> ...``); the words of the command name are removed from it (``git commit`` →
"Commit files to the repository." becomes "files to the repository"), and the page's
document is the one right answer (any chunk of it counts). Pages are left out when the
query would not identify them: alias and "examples moved" stubs, descriptions shared by
several pages, and queries of fewer than two words or without a word longer than four
letters (the typo variant needs one). ``N`` pages are sampled from the rest
(``QUICK_N`` with ``--quick``).

The typo variant changes one word per query, longer than four letters: an adjacent swap
or a deletion (fixed seed), the typos agents make. ``benchmarks.known_items`` makes its
queries from the same pages, keeping the description as written.

tldr-pages © the tldr-pages team and contributors, CC BY 4.0 (``corpora/LICENSES.md``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

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
    return words[:i] + [misspell(words[i], rng)] + words[i + 1:]


def misspell(w: str, rng: random.Random) -> str:
    """``w`` with one typo: an adjacent swap (half the time, when two neighbours differ)
    or a deletion."""
    swaps = [j for j in range(len(w) - 1) if w[j].lower() != w[j + 1].lower()]
    if swaps and rng.random() < 0.5:
        j = rng.choice(swaps)
        return w[:j] + w[j + 1] + w[j] + w[j + 2:]
    j = rng.randrange(len(w))
    return w[:j] + w[j + 1:]


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
