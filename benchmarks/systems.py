"""ra and its peers behind one interface for the quality benchmarks: words in, documents out.

A *ranker* takes a query's words and returns document keys, best first, without
duplicates (the best chunk of a document stands for it). ra is searched through the
library (``Searcher``) as its users' agents call it; each peer indexes ra's own chunks
of the same index (see ``benchmarks.peers``) in a temporary folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import peers
from benchmarks.report import progress

Ranker = Callable[[list[str]], list[str]]
DocKey = Callable[[str, str], str]  # (doc_id, path) -> the key judged by the benchmark


def doc_id_key(doc_id: str, path: str) -> str:
    return doc_id


def unique(keys: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    return [k for k in keys if not (k in seen or seen.add(k))]


@dataclass(frozen=True)
class RaVariant:
    """How ra is asked: ``natural`` (words AND'd, partial fallback) or explicit ``or``."""

    mode: str
    options: object  # ra.query.search.SearchOptions


@dataclass
class Systems:
    """Open rankers over one indexed folder; ``close`` releases the indexes."""

    rankers: dict[str, Ranker] = field(default_factory=dict)
    partial: dict[str, int] = field(default_factory=dict)  # ra: topics answered partially
    build_seconds: dict[str, float] = field(default_factory=dict)
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in self._closers:
            close()


def open_systems(folder: Path, work: Path, key: DocKey, *, ra: dict[str, RaVariant],
                 peer_variants: dict[str, tuple[str, bool]], k: int) -> Systems:
    """Index ``folder`` with ra (if needed) and every peer; return their rankers.

    ``peer_variants`` maps a row name to ``(peer name, fuzzy)``; ``k`` is how many chunks
    a peer returns before they are collapsed into documents.
    """
    from ra.config.settings import load_config
    from ra.index.freshness import open_index
    from ra.query.search import Searcher

    config = load_config(folder)
    t = time.perf_counter()
    reader, _ = open_index(config)
    systems = Systems(build_seconds={"ra": time.perf_counter() - t})
    systems._closers.append(reader.close)
    searcher = Searcher(reader, config)
    for name, variant in ra.items():
        systems.rankers[name] = _ra_ranker(searcher, variant, key, systems.partial, name)
    chunks = peers.read_chunks(peers.export_chunks(reader, work / "chunks"))
    keys = {c.ord: key(c.doc_id, c.path) for c in chunks}
    settings = peers.Settings.from_config(config)
    built: dict[str, peers.Peer] = {}
    for name, (peer_name, fuzzy) in peer_variants.items():
        if peer_name not in built:
            progress(f"indexing {len(chunks)} chunks with {peer_name}")
            peer = built[peer_name] = peers.make(peer_name, settings)
            t = time.perf_counter()
            peer.build(chunks, work / peer_name)
            systems.build_seconds[peer_name] = time.perf_counter() - t
            systems._closers.append(peer.close)
        systems.rankers[name] = _peer_ranker(built[peer_name], keys, k, fuzzy)
    return systems


def _ra_ranker(searcher, variant: RaVariant, key: DocKey, partial: dict[str, int],
               name: str) -> Ranker:
    partial[name] = 0

    def rank(words: list[str]) -> list[str]:
        query = " OR ".join(words) if variant.mode == "or" else " ".join(words)
        topic = searcher.search([query], variant.options).queries[0]
        partial[name] += topic.match == "partial"
        return unique(key(f"{r.tree}:{r.path}", r.path) for r in topic.results)

    return rank


def _peer_ranker(peer: peers.Peer, keys: dict[int, str], k: int, fuzzy: bool) -> Ranker:
    def rank(words: list[str]) -> list[str]:
        return unique(keys[o] for o in peer.search(words, k, fuzzy=fuzzy))

    return rank
