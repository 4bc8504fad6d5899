"""ra and its peers behind one interface for the quality benchmarks: a query in, documents out.

A *ranker* takes a query as written and returns document keys, best first, without
duplicates (the best chunk of a document stands for it). How each system gets the query
is its *query mode*, which every table names:

- ``as typed``: the text as written, what agents send (ra only: to tantivy's and FTS5's
  query parsers, natural text is often invalid syntax);
- ``words OR'd``: the text's words (``benchmarks.scifact.words_of``) joined by OR, the
  usual way to run a BM25 engine on a sentence (a long claim would match nothing as an
  AND in FTS5 or tantivy).

ra is searched through the library (``Searcher``) as its users' agents call it; each
peer indexes ra's own chunks of the same index (see ``benchmarks.peers``) in a temporary
folder, once per configuration (``PeerVariant``): every peer is measured with each of its
candidate configurations (``peer_configs``) and reported with the one that did best on
the data it may be tuned on, never simply with ra's settings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import peers
from benchmarks.report import progress
from benchmarks.scifact import words_of

Ranker = Callable[[str], list[str]]
DocKey = Callable[[str, str], str]  # (doc_id, path) -> the key judged by the benchmark
TYPED, OR = "as typed", "words OR'd"


def doc_id_key(doc_id: str, path: str) -> str:
    return doc_id


def unique(keys: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    return [k for k in keys if not (k in seen or seen.add(k))]


@dataclass(frozen=True)
class RaVariant:
    """How ra is asked: ``mode`` TYPED or OR, with these search options."""

    mode: str
    options: object  # ra.query.search.SearchOptions


@dataclass(frozen=True)
class PeerVariant:
    """A peer in one configuration (``label`` says which), words OR'd."""

    peer: str  # a name of peers.PEERS
    label: str
    settings: peers.Settings
    fuzzy: bool = False

    @property
    def key(self) -> tuple:
        """What an index depends on: one build serves every variant with the same key."""
        s = self.settings
        return self.peer, tuple(sorted(s.boosts.items())), s.k1, s.b


def peer_configs(config) -> dict[str, list[tuple[str, peers.Settings]]]:
    """Each peer's candidate configurations: its own defaults, ra's settings where they
    apply, and the usual BM25 alternatives (tantivy and FTS5 fix k1 1.2 and b 0.75)."""
    ra = peers.Settings.from_config(config)
    ones = {f: 1.0 for f in peers.FIELDS}
    return {
        "tantivy": [("boosts 1.0", peers.Settings(ones)),
                    ("ra's field boosts", peers.Settings(ra.boosts))],
        "tantivy-1field": [("one field", peers.Settings({}))],
        "bm25s": [("k1 1.5, b 0.75 (bm25s default)", peers.Settings({}, 1.5, 0.75)),
                  ("k1 1.2, b 0.75", peers.Settings({}, 1.2, 0.75)),
                  ("k1 0.9, b 0.4 (Anserini)", peers.Settings({}, 0.9, 0.4))],
        "sqlite-fts5": [("weights 1.0", peers.Settings(ones)),
                        ("ra's field boosts", peers.Settings(ra.boosts))],
    }


def peer_variants(config, fuzzy: tuple[str, ...] = ()) -> dict[str, PeerVariant]:
    """Every configuration of every peer by row name; peers named in ``fuzzy`` also get
    a typo-tolerant variant of each."""
    out = {}
    for peer, configs in peer_configs(config).items():
        for label, settings in configs:
            out[f"{peer} [{label}]"] = PeerVariant(peer, label, settings)
            if peer in fuzzy:
                out[f"{peer} (fuzzy) [{label}]"] = PeerVariant(peer, label, settings, True)
    return out


def system_of(row: str) -> str:
    """The system a row name stands for, without its configuration label."""
    return row.split(" [", 1)[0]


@dataclass
class Systems:
    """Open rankers over one indexed folder; ``close`` releases the indexes."""

    rankers: dict[str, Ranker] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)  # row name → query mode
    partial: dict[str, int] = field(default_factory=dict)  # ra: topics answered partially
    build_seconds: dict[str, float] = field(default_factory=dict)
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in self._closers:
            close()


def open_systems(folder: Path, work: Path, key: DocKey, *, ra: dict[str, RaVariant],
                 peer_rows: dict[str, PeerVariant], k: int) -> Systems:
    """Index ``folder`` with ra (if needed) and every peer configuration; their rankers.

    ``k`` is how many chunks a peer returns before they are collapsed into documents.
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
        systems.modes[name] = variant.mode
    chunks = peers.read_chunks(peers.export_chunks(reader, work / "chunks"))
    keys = {c.ord: key(c.doc_id, c.path) for c in chunks}
    built: dict[tuple, peers.Peer] = {}
    for name, variant in peer_rows.items():
        if variant.key not in built:
            progress(f"indexing {len(chunks)} chunks with {variant.peer} [{variant.label}]")
            peer = built[variant.key] = peers.make(variant.peer, variant.settings)
            t = time.perf_counter()
            peer.build(chunks, work / f"{variant.peer}-{len(built)}")
            systems.build_seconds.setdefault(variant.peer, time.perf_counter() - t)
            systems._closers.append(peer.close)
        systems.rankers[name] = _peer_ranker(built[variant.key], keys, k, variant.fuzzy)
        systems.modes[name] = OR
    return systems


def ra_query(text: str, mode: str) -> str:
    """The query ra is sent in ``mode``."""
    return text if mode == TYPED else " OR ".join(words_of(text))


def _ra_ranker(searcher, variant: RaVariant, key: DocKey, partial: dict[str, int],
               name: str) -> Ranker:
    from ra.errors import QueryError

    partial[name] = 0

    def rank(text: str) -> list[str]:
        try:
            topic = searcher.search([ra_query(text, variant.mode)], variant.options).queries[0]
        except QueryError:  # refused: nothing found, as for the agent that asked
            return []
        partial[name] += topic.match == "partial"
        return unique(key(f"{r.tree}:{r.path}", r.path) for r in topic.results)

    return rank


def _peer_ranker(peer: peers.Peer, keys: dict[int, str], k: int, fuzzy: bool) -> Ranker:
    def rank(text: str) -> list[str]:
        return unique(keys[o] for o in peer.search(words_of(text), k, fuzzy=fuzzy))

    return rank


def best_rows(scores: dict[str, float]) -> dict[str, str]:
    """For each system, the row (configuration) with the best score in ``scores``
    (ties: the first listed); ra's rows stand for themselves."""
    best: dict[str, str] = {}
    for row, value in scores.items():
        system = system_of(row)
        if system not in best or value > scores[best[system]]:
            best[system] = row
    return best
