"""BM25F in DuckDB against an independent reference written plainly in Python.

The reference below does not import ``ra.query.bm25f``'s scoring: it reads the formula
from DESIGN.md ("Scoring and ranking") and the bm25f.py docstring and computes, for every
chunk of a small corpus, the four fields (title = breadcrumb, tags joined, path without
extension, body with the frontmatter description prepended on document nodes; none at
all for a chunk with sections below it and no words of its own), their lengths, N and df
over the chunks with words, average lengths over the chunks that have the field, and the
field-weighted, length-normalised tf summed *before* saturation. It tokenises with
``ra.text.analysis`` (one analyzer serves indexing and querying) and takes the chunk tree
(breadcrumbs, bodies, parents) from ``chunks.parquet``, whose construction is tested
elsewhere; tags, paths and descriptions come from the corpus written here, not from the
index.

DuckDB's scores must equal the reference to 1e-9 for every matching chunk, and the
matching sets must be equal. Then fuzzy expansions (``fuzzy_weight`` × the BM25F of the
expanded term, with the typed word's idf when that is lower, best alternative wins),
phrases (tf = occurrences, idf = sum of the words' idf), NOT, field restrictions, boosts,
partial answers (score × share of the words matched) and ``local_boost`` (a global tree
from ``~/.ra.toml`` is not boosted). The query plain plans take on a long-lived reader
(``top_sql`` over quantized impacts) must give ``bm25f_sql``'s rows, each score within the
quantization bound (``ra.query.impacts.bound``). Last, golden
files pin the SQL text and parameters of hand-built plans; regenerate them with
``RA_UPDATE_GOLDEN=1``.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import pytest

import ra.config.settings
import ra.index.freshness
from ra.index.reader import IndexReader
from ra.pipeline.impacts import SCALE, exact_impacts, impacts_sql
from ra.query import phrases
from ra.query.bm25f import (
    Filters,
    Sql,
    Weights,
    alternative_idf,
    bm25f_sql,
    idf,
)
from ra.query.impacts import (
    bonus_phrases,
    bound,
    is_plain,
    top_rows,
    top_sql,
    with_phrases,
)
from ra.query.parser import parse, typed_operators
from ra.query.plan import (
    COMPOUND_PHRASE_WEIGHT,
    AllOf,
    Alt,
    AnyOf,
    Clause,
    NoneOf,
    Plan,
    PlanOptions,
    Ref,
    plan_query,
)
from ra.query.search import Searcher, SearchOptions
from ra.text.analysis import Analyzer, split_words

GOLDEN = Path(__file__).parent / "golden" / "sql"
UPDATE = os.environ.get("RA_UPDATE_GOLDEN") == "1"

K1, B = 1.2, 0.75
# The configured defaults (ra.config.settings.FieldBoosts), written out for the reference.
W = {"title": 2.0, "tags": 2.5, "path": 2.0, "body": 1.0}
LOCAL_BOOST = 1.5
COORD = 1.0  # ranked and partial answers ([search] coordination)
FIELD_NAMES = ("title", "tags", "path", "body")
NO_CUTOFF = SearchOptions(fuzzy=False, aggregation=False, cutoff_ratio=0.0, limit=1000,
                          candidate_limit=1000)

# --- the corpus -------------------------------------------------------------------------
# path → (tags, description, text). Tags and descriptions are also written as frontmatter;
# the reference takes them from here.

LOCAL = {
    "guides/error-handling.md": (["rust", "errors"], "How to handle errors in Rust", """\
# Error Handling Guide

Error handling in Rust separates recoverable errors from bugs. Good error handling
makes failures visible.

## The Result type

A function that can fail returns Result. The caller decides: propagate the error with
the question mark, or handle it. Error handling with Result is explicit error handling.

## Panics

A panic stops the thread. Use panic for bugs, not for expected error conditions.

### Unwinding

When a panic happens the stack unwinds and destructors run; error handling code is
skipped.
"""),
    "guides/ownership.md": ("rust, memory", None, """\
# Ownership

Every value in Rust has one owner. Ownership moves on assignment.

## Borrowing

References borrow a value without taking ownership. Borrowing rules prevent data
races: many readers or one writer.

## Lifetimes

Lifetimes name how long a borrow lasts. The borrow checker compares lifetimes.
"""),
    "python/asyncio-basics.md": (["python", "async"], "Coroutines and the event loop", """\
# Asyncio basics

An event loop runs coroutines. Await yields control back to the loop.

## Error handling in async code

Exceptions propagate through await. Error handling wraps the await in try; a failed
task stores its error until someone awaits it. Python reports never-retrieved errors.

## Cancellation

Cancel a task to stop it; the task receives CancelledError at its next await.
"""),
    "python/testing.md": ([], None, """\
# Testing with pytest

Pytest collects test functions and fixtures.

## Fixtures

A fixture yields a resource to the test and cleans up afterwards. Fields of a
dataclass fixture are plain attributes. Fixtures that yield run teardown code.

## Parametrize

Parametrize runs one test with many inputs.
"""),
    "ops/kubernetes.md": (["ops", "deployment"], "Running services on a cluster", """\
# Kubernetes deployment

A deployment keeps replicas running. Rolling updates replace pods gradually.

## Services

A service gives pods a stable address. Traffic reaches ready pods only.
"""),
    "ops/caching.md": (["ops", "performance"], None, """\
# Caching

A cache keeps recent answers close. Cache invalidation is hard: a stale cache serves
old answers, an empty cache serves none. Measure the cache hit rate before tuning the
cache size. Write-through caches update the cache and the store together; write-back
caches delay the store. Every cache needs an eviction policy, and every eviction policy
trades memory for misses. This section is long on purpose, so that length normalisation
matters: the cache, the cache, the cache.

## Eviction

Least recently used eviction drops the oldest entry.
"""),
    "notes.txt": ([], None, """\
Plain text notes: rust error handling checklist, cache warming, deployment freeze.
"""),
    "readme.md": ([], None, """\
A readme with no headings at all. It mentions python and rust once each.
"""),
}

GLOBAL = {
    "scratch.md": (["rust"], "Scratch notes", """\
# Scratch

Rust error handling idea: one error type per crate. Borrowing from a cache.
"""),
    "ideas.md": ([], None, """\
# Ideas

Kubernetes operators, python tooling, and a faster cache.
"""),
}


def _source(tags, description, text) -> str:
    front = []
    if isinstance(tags, list) and tags:
        front.append("tags: [" + ", ".join(tags) + "]")
    elif isinstance(tags, str):
        front.append(f"tags: {tags}")
    if description:
        front.append(f"description: {description}")
    return ("---\n" + "\n".join(front) + "\n---\n" if front else "") + text


def _write(root: Path, files: dict) -> None:
    for rel, (tags, description, text) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_source(tags, description, text) if rel.endswith(".md") else text)


# --- the reference ----------------------------------------------------------------------

@dataclass
class RefChunk:
    id: str
    ord: int
    parent_id: str | None
    is_global: bool
    fields: dict[str, list[str]]  # field → terms in order (positions = list indexes)


class Reference:
    """BM25F written out term by term (Robertson & Zaragoza 2009, §3.7; Lucene's idf)."""

    def __init__(self, chunks: list[RefChunk], analyzer: Analyzer) -> None:
        self.chunks = chunks
        self.analyzer = analyzer
        # N counts the chunks with words (one with sections below it and no words of its
        # own has no fields); a field's average length is over the chunks that have it
        self.n = sum(1 for c in chunks if any(c.fields.values()))
        self.avg = {f: sum(len(c.fields[f]) for c in chunks)
                    / sum(1 for c in chunks if c.fields[f]) for f in FIELD_NAMES}
        self.df: dict[str, int] = {}
        for c in chunks:
            for term in {t for f in FIELD_NAMES for t in c.fields[f]}:
                self.df[term] = self.df.get(term, 0) + 1

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def saturate(self, idf: float, tf_tilde: float) -> float:
        return idf * tf_tilde * (K1 + 1) / (K1 + tf_tilde)

    def tf_tilde(self, chunk: RefChunk, count, fields) -> float:
        total = 0.0
        for f in fields:
            tf = count(chunk.fields[f])
            if tf:
                norm = 1 - B + B * len(chunk.fields[f]) / self.avg[f]
                total += W[f] * tf / norm
        return total

    def term(self, chunk: RefChunk, term: str, fields=FIELD_NAMES,
             typed: str | None = None) -> float | None:
        """BM25F of one term in one chunk; None when it does not occur in ``fields``.
        ``typed``: the term is a fuzzy expansion of that one, and when that is in the
        vocabulary the expansion scores with the lower of the two idfs."""
        tft = self.tf_tilde(chunk, lambda terms: terms.count(term), fields)
        term_idf = self.idf(term)
        if typed is not None and typed in self.df:
            term_idf = min(term_idf, self.idf(typed))
        return self.saturate(term_idf, tft) if tft else None

    def phrase(self, chunk: RefChunk, terms: list[str], fields=FIELD_NAMES) -> float | None:
        """tf = occurrences of the adjacent sequence in a field; idf = Σ idf of its words."""
        def occurrences(seq: list[str]) -> int:
            k = len(terms)
            return sum(seq[i:i + k] == terms for i in range(len(seq) - k + 1))

        tft = self.tf_tilde(chunk, occurrences, fields)
        return self.saturate(sum(self.idf(t) for t in terms), tft) if tft else None

    def boosted(self, chunk: RefChunk, score: float) -> float:
        return score if chunk.is_global else score * LOCAL_BOOST


# Reference queries: a tiny expression language evaluated by the reference.

@dataclass(frozen=True)
class T:
    word: str
    fields: tuple[str, ...] = FIELD_NAMES
    boost: float = 1.0
    fuzzy: bool = False


@dataclass(frozen=True)
class P:
    words: tuple[str, ...]
    fields: tuple[str, ...] = FIELD_NAMES
    boost: float = 1.0


@dataclass(frozen=True)
class C:
    """A compound word (``error-handling``): all its parts (each fuzzy, like a word), or
    its joined word when the vocabulary has it; scores its parts, the joined word and
    ``COMPOUND_PHRASE_WEIGHT`` × its phrase, whichever occur."""

    words: tuple[str, ...]
    fields: tuple[str, ...] = FIELD_NAMES
    boost: float = 1.0
    fuzzy: bool = False

    def parts(self) -> list[T]:
        return [T(w, self.fields, self.boost, self.fuzzy) for w in self.words]


@dataclass(frozen=True)
class Pre:
    prefix: str
    fields: tuple[str, ...] = FIELD_NAMES


@dataclass(frozen=True)
class And:
    items: tuple


@dataclass(frozen=True)
class Or:
    items: tuple


@dataclass(frozen=True)
class Not:
    item: object


@dataclass(frozen=True)
class InTree:
    tree: str


def osa(a: str, b: str) -> int:
    """Optimal string alignment distance, written out (a transposition counts 1)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


class Evaluator:
    """Which chunks a reference query matches, and their scores."""

    def __init__(self, ref: Reference, surface: dict[str, str], trees: dict[str, str],
                 fuzzy_weight: float = 0.5) -> None:
        self.ref, self.surface, self.trees = ref, surface, trees
        self.fuzzy_weight = fuzzy_weight

    def alternatives(self, leaf: T | Pre) -> dict[str, float]:
        """term → weight: the exact stem, plus surface words within one edit (len > 4);
        for a prefix, the term of every surface word starting with it."""
        if isinstance(leaf, Pre):
            return {term: 1.0 for surface, term in self.surface.items()
                    if surface.startswith(leaf.prefix)}
        word = split_words(leaf.word)[0]
        alts = {self.ref.analyzer.stem(word): 1.0}
        if leaf.fuzzy and len(word) > 4:
            for surface, term in sorted(self.surface.items()):
                if abs(len(surface) - len(word)) <= 1 and osa(word, surface) <= 1:
                    alts.setdefault(term, self.fuzzy_weight)
        return alts

    def joined(self, leaf: C) -> T | None:
        """The compound's joined word as an exact word, when the vocabulary has it."""
        word = "".join(leaf.words)
        return T(word, leaf.fields, leaf.boost) if self.ref.analyzer.stem(word) in \
            self.ref.df else None

    def compound_score(self, leaf: C, chunk: RefChunk) -> float | None:
        pieces = [self.leaf_score(t, chunk) for t in leaf.parts()]
        if (joined := self.joined(leaf)) is not None:
            pieces.append(self.leaf_score(joined, chunk))
        phrase = self.leaf_score(P(leaf.words, leaf.fields, leaf.boost), chunk)
        pieces.append(None if phrase is None else COMPOUND_PHRASE_WEIGHT * phrase)
        found = [p for p in pieces if p is not None]
        return sum(found) if found else None

    def leaf_score(self, leaf, chunk: RefChunk) -> float | None:
        if isinstance(leaf, C):
            return self.compound_score(leaf, chunk)
        if isinstance(leaf, P):
            terms = [self.ref.analyzer.stem(w) for w in leaf.words]
            score = self.ref.phrase(chunk, terms, leaf.fields)
            return None if score is None else leaf.boost * score
        alts = self.alternatives(leaf)
        # a word's exact stem comes first, its fuzzy expansions after it
        typed = next(iter(alts)) if isinstance(leaf, T) else None
        scores = [weight * s for term, weight in alts.items()
                  if (s := self.ref.term(chunk, term, leaf.fields,
                                         None if term == typed else typed)) is not None]
        boost = getattr(leaf, "boost", 1.0)
        return boost * max(scores) if scores else None

    def subtree(self, chunk: RefChunk) -> list[RefChunk]:
        """The chunk and every chunk below it (by parent links)."""
        below = {chunk.id}
        for c in self.ref.chunks:  # chunks are in preorder: parents come first
            if c.parent_id in below:
                below.add(c.id)
        return [c for c in self.ref.chunks if c.id in below]

    def excluded(self, expr, chunk: RefChunk) -> bool:
        """A word negated at the top level must not occur anywhere in the result's
        subtree (results are shown with their subsections)."""
        top = expr.items if isinstance(expr, And) else (expr,)
        negs = [i.item for i in top if isinstance(i, Not) and not isinstance(i.item, InTree)]
        return any(self.matches(n, c) for n in negs for c in self.subtree(chunk))

    def matches(self, expr, chunk: RefChunk) -> bool:
        match expr:
            case And(items):
                return all(self.matches(i, chunk) for i in items)
            case Or(items):
                return any(self.matches(i, chunk) for i in items)
            case Not(item):
                return not self.matches(item, chunk)
            case InTree(tree):
                return self.trees[chunk.id] == tree
            case C():
                joined = self.joined(expr)
                return (all(self.leaf_score(t, chunk) is not None for t in expr.parts())
                        or joined is not None and self.leaf_score(joined, chunk) is not None)
        return self.leaf_score(expr, chunk) is not None

    def positive_leaves(self, expr, under_not: bool = False) -> list:
        match expr:
            case And(items) | Or(items):
                return [x for i in items for x in self.positive_leaves(i, under_not)]
            case Not(item):
                return self.positive_leaves(item, True)
            case InTree():
                return []
        return [] if under_not else [expr]

    def negative_leaves(self, expr, under_not: bool = False) -> list:
        match expr:
            case And(items) | Or(items):
                return [x for i in items for x in self.negative_leaves(i, under_not)]
            case Not(item):
                return self.negative_leaves(item, True)
            case InTree():
                return []
        return [expr] if under_not else []

    def score(self, expr, chunk: RefChunk) -> float:
        total = sum(s for leaf in self.positive_leaves(expr)
                    if (s := self.leaf_score(leaf, chunk)) is not None)
        return self.ref.boosted(chunk, total)

    def weight(self, group) -> float:
        """A group's weight in coordination: the idf it scores with (0 when nothing in
        the vocabulary can match it); the sum over parts, the best of alternatives."""
        match group:
            case And(items):
                return sum(self.weight(i) for i in items)
            case Or(items):
                return max(self.weight(i) for i in items)
            case C():
                joined = self.joined(group)
                parts = sum(self.weight(t) for t in group.parts())
                return max(parts, self.weight(joined)) if joined is not None else parts
            case InTree() | Not():
                return 0.0
            case P(words):
                terms = [self.ref.analyzer.stem(w) for w in words]
                return (sum(self.ref.idf(t) for t in terms)
                        if all(t in self.ref.df for t in terms) else 0.0)
        alts = self.alternatives(group)
        typed = next(iter(alts)) if isinstance(group, T) else None
        return max((min(self.ref.idf(t), self.ref.idf(typed))
                    if typed is not None and t != typed and typed in self.ref.df
                    else self.ref.idf(t) for t in alts if t in self.ref.df), default=0.0)

    def groups(self, expr) -> list:
        """What coordination counts: the positive items of a top-level And."""
        top = expr.items if isinstance(expr, And) else (expr,)
        return [i for i in top if not isinstance(i, Not | InTree)]

    def run(self, expr, ranked: bool = False, coord: float = COORD
            ) -> tuple[dict[str, float], bool]:
        """``({chunk id: score}, complete)``.

        Only a chunk that some positive word or phrase matches is a candidate: a ``tree:``
        clause filters but does not score, so ``tree:a OR b`` is ``b``; the pipeline has
        no score for a chunk without hits. When no chunk satisfies the whole expression,
        the answer is partial: every chunk matching some group (a positive item of the
        top-level And) and no negated word (and any top-level tree), scored × (weight of
        the groups matched / weight of all groups) ** coord, a group weighing the idf it
        scores with. A ``ranked`` query (a long one) is answered that way whether or not
        some chunk satisfies the whole expression.
        """
        pos, neg, groups = (self.positive_leaves(expr), self.negative_leaves(expr),
                            self.groups(expr))

        def matched(c):  # the idf-weighted share of the groups
            return sum(self.weight(g) for g in groups if self.matches(g, c)) / total

        total = sum(self.weight(g) for g in groups)

        def scored(c):
            return any(self.leaf_score(leaf, c) is not None for leaf in pos)

        full = {c.id: self.score(expr, c) for c in self.ref.chunks
                if scored(c) and self.matches(expr, c) and not self.excluded(expr, c)}
        if full and not ranked:
            return full, True
        top = expr.items if isinstance(expr, And) else (expr,)
        trees = [i for i in top if isinstance(i, InTree)]  # a top-level tree: still a filter
        ok = [c for c in self.ref.chunks
              if not any(self.leaf_score(leaf, c) is not None for leaf in neg)
              and all(self.matches(t, c) for t in trees) and matched(c)
              and not self.excluded(expr, c)]
        return {c.id: self.score(expr, c) * matched(c) ** coord for c in ok}, bool(full)


# --- fixtures ---------------------------------------------------------------------------

@dataclass
class Setup:
    reader: object
    config: object
    searcher: Searcher
    ref: Reference
    eval: Evaluator
    ids: dict[int, str]  # ord → id
    parents: dict[str, str | None]


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Setup:
    home = tmp_path_factory.mktemp("bm25f-home")
    root = tmp_path_factory.mktemp("bm25f")
    _write(root / "docs", LOCAL)
    _write(home / "notes", GLOBAL)
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    (home / ".ra.toml").write_text(f'[tree.notes]\npath = "{home / "notes"}"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    analyzer = Analyzer("english")
    rows = reader.query("SELECT ord, id, parent_id, tree, path, breadcrumb, body, is_global, "
                        "descendants FROM chunks ORDER BY ord")
    corpus = {("docs", k): v for k, v in LOCAL.items()} | {("notes", k): v
                                                           for k, v in GLOBAL.items()}
    chunks, surface, trees = [], {}, {}
    for ord_, cid, parent, tree, path, breadcrumb, body, is_global, below in rows:
        tags, description, _ = corpus[(tree, path)]
        tag_list = tags if isinstance(tags, list) else [t.strip() for t in tags.split(",")]
        if parent is None and description:
            body = f"{description}\n{body}"
        texts = {"title": breadcrumb, "tags": " ".join(tag_list),
                 "path": str(PurePosixPath(path).with_suffix("")), "body": body}
        if below and not split_words(body):  # sections below, no words of its own
            texts = dict.fromkeys(texts, "")
        for text in texts.values():
            surface.update((w, analyzer.stem(w)) for w in split_words(text))
        chunks.append(RefChunk(cid, ord_, parent, is_global,
                               {f: analyzer.terms(t) for f, t in texts.items()}))
        trees[cid] = tree
    ref = Reference(chunks, analyzer)
    yield Setup(reader, config, Searcher(reader, config), ref, Evaluator(ref, surface, trees),
                {c.ord: c.id for c in chunks}, {c.id: c.parent_id for c in chunks})
    reader.close()


def duck(s: Setup, query: str, fuzzy: bool = False, weight: float = 0.5,
         ranked: bool = False, coord: float = COORD) -> tuple[dict[str, float], bool]:
    """Every candidate row of the scoring SQL: ``({chunk id: score}, complete)``."""
    plan = plan_query(parse(query), s.reader, s.ref.analyzer,
                      PlanOptions(fuzzy=fuzzy, distance=1, fuzzy_weight=weight), query,
                      rankable=ranked)
    assert plan.ranked == ranked
    sql = bm25f_sql(plan, s.reader.stats.chunks, s.reader.stats.avg_length,
                    replace(Weights(), coord=coord), Filters(), 10_000)
    with s.reader.lock:  # read rows by column name: the SELECT list may grow
        cursor = s.reader.con.execute(sql.text, sql.params)
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    ids = {s.ids[r["ord"]] if "ord" in r else r["id"]: r["score"] for r in rows}
    assert len(ids) == len(rows)
    return ids, bool(rows and rows[0]["complete"])


def assert_same(got: dict[str, float], want: dict[str, float], tol: float = 0.0) -> None:
    """Equal chunks, equal scores: to 1e-9, or within ``tol`` (``quantum``)."""
    assert set(got) == set(want)
    for cid, score in want.items():
        assert got[cid] == pytest.approx(score, rel=1e-9, abs=tol), cid


def quantum(setup, words: int = 3, boost: float = 3.0) -> float:
    """What the searcher's scores of plain queries may differ from the reference by: they
    come from impacts quantized to 16 bits (``ra.pipeline.impacts``), off by at most half
    a step per clause, ``weight · idf · (k1 + 1) / (2 · 65535)``, here for up to
    ``words`` clauses of weight ``boost`` at the highest idf of the corpus, times the local
    boost. About 5e-4 here, while the scores are around 1 to 10."""
    return words * boost * idf(setup.ref.n, 1) * (K1 + 1) / (2 * SCALE) * LOCAL_BOOST


# --- statistics -------------------------------------------------------------------------

def test_collection_statistics_match_the_reference(setup):
    assert setup.reader.stats.chunks == setup.ref.n
    for f in FIELD_NAMES:
        assert setup.reader.stats.avg_length[f] == pytest.approx(setup.ref.avg[f], rel=1e-12)


def test_document_frequency_counts_chunks_over_all_fields(setup):
    rows = dict(setup.reader.query("SELECT term, df FROM terms"))
    assert rows == setup.ref.df


def test_field_lengths_match_the_reference(setup):
    rows = setup.reader.query("SELECT ord, title, tags, path, body FROM lengths")
    by_ord = {c.ord: c for c in setup.ref.chunks}
    for ord_, *lengths in rows:
        assert lengths == [len(by_ord[ord_].fields[f]) for f in FIELD_NAMES]


# --- scores -----------------------------------------------------------------------------

QUERIES = [
    ("rust", T("rust")),
    ("error handling", And((T("error"), T("handling")))),
    ("rust error handling", And((T("rust"), T("error"), T("handling")))),
    ("cache eviction", And((T("cache"), T("eviction")))),
    ("rust OR python", Or((T("rust"), T("python")))),
    ("cache OR deployment OR borrowing", Or((T("cache"), T("deployment"), T("borrowing")))),
    ("(error OR panic) rust", And((Or((T("error"), T("panic"))), T("rust")))),
    ("error -python", And((T("error"), Not(T("python"))))),
    ("rust NOT (cache OR borrowing)", And((T("rust"), Not(Or((T("cache"), T("borrowing"))))))),
    ("title:ownership", T("ownership", ("title",))),
    ("tags:rust error", And((T("rust", ("tags",)), T("error")))),
    ("path:guides", T("guides", ("path",))),
    ("body:cache", T("cache", ("body",))),
    ("title:(error OR cache)", Or((T("error", ("title",)), T("cache", ("title",))))),
    ("cache^3 OR deployment", Or((T("cache", boost=3.0), T("deployment")))),
    ("rust^2.5 error", And((T("rust", boost=2.5), T("error")))),
    ('"error handling"', P(("error", "handling"))),
    ('"error handling" rust', And((P(("error", "handling")), T("rust")))),
    ('title:"error handling"', P(("error", "handling"), ("title",))),
    ('"event loop" OR "stale cache"', Or((P(("event", "loop")), P(("stale", "cache"))))),
    ("tree:docs error", And((InTree("docs"), T("error")))),
    ("tree:notes OR deployment", Or((InTree("notes"), T("deployment")))),
    ("error-handling", C(("error", "handling"))),
    ("rust error-handling", And((T("rust"), C(("error", "handling"))))),
    ("-error-handling rust", And((Not(P(("error", "handling"))), T("rust")))),
    ('"error handling"^2 OR panic', Or((P(("error", "handling"), boost=2.0), T("panic")))),
    ("po*", Pre("po")),
    ("title:cach* evict*", And((Pre("cach", ("title",)), Pre("evict")))),
    ("kubernetes ownership", And((T("kubernetes"), T("ownership")))),  # partial
    ("tree:notes kubernetes ownership",
     And((InTree("notes"), T("kubernetes"), T("ownership")))),  # partial, in one tree
    ("pods lifetimes -rust", And((T("pods"), T("lifetimes"), Not(T("rust"))))),  # partial
]


@pytest.mark.parametrize("query, expr", QUERIES, ids=[q for q, _ in QUERIES])
def test_duckdb_scores_equal_the_reference(setup, query, expr):
    want, complete = setup.eval.run(expr)
    assert want, "the reference query should match something"
    got, got_complete = duck(setup, query)
    assert got_complete == complete
    assert_same(got, want)


RANKED = [
    ("rust error handling cache eviction ownership lifetimes",
     And((T("rust"), T("error"), T("handling"), T("cache"), T("eviction"), T("ownership"),
          T("lifetimes")))),
    ("rust error-handling cache eviction ownership lifetimes -python",
     And((T("rust"), C(("error", "handling")), T("cache"), T("eviction"), T("ownership"),
          T("lifetimes"), Not(T("python"))))),
    ("tree:docs rust error borrowing cache kubernetes deployment",
     And((InTree("docs"), T("rust"), T("error"), T("borrowing"), T("cache"),
          T("kubernetes"), T("deployment")))),
    ('"error handling" rust cache (eviction OR borrowing) lifetimes pods',
     And((P(("error", "handling")), T("rust"), T("cache"), Or((T("eviction"),
                                                                T("borrowing"))),
          T("lifetimes"), T("pods")))),
]


@pytest.mark.parametrize("coord", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("query, expr", RANKED, ids=[q for q, _ in RANKED])
def test_ranked_scores_equal_the_reference(setup, query, expr, coord):
    """A long query: every chunk with a group of it (and no excluded word), its score ×
    the idf-weighted share of the groups it matches ** coord."""
    want, complete = setup.eval.run(expr, ranked=True, coord=coord)
    assert want
    got, got_complete = duck(setup, query, ranked=True, coord=coord)
    assert got_complete == complete
    assert_same(got, want)


@pytest.mark.parametrize("coord", [1.0, 2.5])
def test_partial_scores_use_the_same_coordination(setup, coord):
    expr = And((T("pods"), T("lifetimes"), Not(T("rust"))))
    want, complete = setup.eval.run(expr, coord=coord)
    got, got_complete = duck(setup, "pods lifetimes -rust", coord=coord)
    assert not complete and not got_complete
    assert_same(got, want)


def test_the_partial_queries_are_partial(setup):
    for query in ("kubernetes ownership", "pods lifetimes -rust",
                  "tree:notes kubernetes ownership"):
        assert setup.searcher.search([query], NO_CUTOFF).queries[0].match == "partial"


@pytest.mark.parametrize("query, expr", QUERIES, ids=[q for q, _ in QUERIES])
def test_searcher_returns_the_reference_minus_nested_chunks(setup, query, expr,
                                                           monkeypatch):
    """Through the library API: a chunk whose ancestor matched is dropped, and the
    ancestor, which shows its text, keeps the best score of its matching subtree. (A
    result named for the query, "error handling" for guides/error-handling.md, scores
    more after ranking: ``ra.query.named``, tested in test_named.py; off here.)"""
    monkeypatch.setattr("ra.query.named.BOOST", 0.0)
    want, _ = setup.eval.run(expr)

    def ancestors(cid):
        while (cid := setup.parents[cid]) is not None:
            yield cid

    def outermost(found: dict[str, float]) -> dict[str, float]:
        outer = {c: s for c, s in found.items() if not set(ancestors(c)) & set(found)}
        for c, s in found.items():
            for a in set(ancestors(c)) & set(outer):
                outer[a] = max(outer[a], s)
        return outer

    outer = outermost(want)
    topic = setup.searcher.search([query], NO_CUTOFF).queries[0]
    complete = [r for r in topic.results if not r.partial]
    assert_same({r.id: r.score for r in complete}, outer, quantum(setup))
    # Fewer chunks than asked for hold every word, so those holding some follow
    # (``[search] fill``), scored as a long query's, none of them overlapping one above;
    # not for a boolean query (OR or AND typed), whose operators are what was asked.
    wide = {} if typed_operators(query) else setup.eval.run(expr, ranked=True)[0]
    rest = outermost({c: s for c, s in wide.items() if c not in want})
    rest = {c: s for c, s in rest.items() if c not in outer
            and not set(ancestors(c)) & set(outer)
            and not any(c in set(ancestors(o)) for o in outer)}
    some = topic.results[len(complete):]
    assert all(r.partial for r in some)
    assert_same({r.id: r.score for r in some}, rest, quantum(setup))
    for part in (complete, some):
        scores = [r.score for r in part]
        assert scores == sorted(scores, reverse=True)


def test_global_trees_are_not_boosted_and_local_trees_are(setup):
    got, _ = duck(setup, "rust")
    scratch = "notes:scratch.md#scratch"
    plain = {c.id: setup.ref.term(c, "rust") for c in setup.ref.chunks}
    assert got[scratch] == pytest.approx(plain[scratch], rel=1e-9)
    local = "docs:guides/ownership.md#ownership"
    assert got[local] == pytest.approx(LOCAL_BOOST * plain[local], rel=1e-9)


def test_not_excludes_every_chunk_holding_the_negated_word(setup):
    got, _ = duck(setup, "error -python")
    python = {c.id for c in setup.ref.chunks if setup.ref.term(c, "python") is not None}
    assert python and got and not python & set(got)


def test_field_query_ignores_the_other_fields(setup):
    """``path:guides`` matches chunks by their path only, never a body mention."""
    got, _ = duck(setup, "path:guides")
    assert got and all(i.startswith("docs:guides/") for i in got)
    body_only, _ = duck(setup, "body:ownership")
    in_title = "docs:guides/ownership.md#lifetimes"  # "Ownership" in its breadcrumb only
    assert in_title not in body_only and in_title in duck(setup, "ownership")[0]


# --- fuzzy ------------------------------------------------------------------------------

def test_fuzzy_expansion_scores_fuzzy_weight_times_the_expanded_term(setup):
    got, _ = duck(setup, "borowing", fuzzy=True)  # stems to "borow": not in the vocabulary
    want = {c.id: 0.5 * setup.ref.boosted(c, s) for c in setup.ref.chunks
            if (s := setup.ref.term(c, "borrow")) is not None}
    assert_same(got, want)


@pytest.mark.parametrize("query, expr", [
    ("borowing", T("borowing", fuzzy=True)),
    ("fields", T("fields", fuzzy=True)),  # exact "field" and "yields" → "yield" at 0.5
    ("fixtures yeilds", And((T("fixtures", fuzzy=True), T("yeilds", fuzzy=True)))),
    ("kubernetse OR cahce", Or((T("kubernetse", fuzzy=True), T("cahce", fuzzy=True)))),
    ("rust errors", And((T("rust"), T("errors", fuzzy=True)))),
    ("title:borowing", T("borowing", ("title",), fuzzy=True)),
    ("rust -borowing", And((T("rust"), Not(T("borowing"))))),  # a negated word: exact only
    ("lifetimse^2 borrow", And((T("lifetimse", boost=2.0, fuzzy=True), T("borrow")))),
])
def test_fuzzy_scores_equal_the_reference(setup, query, expr):
    want, complete = setup.eval.run(expr)
    got, got_complete = duck(setup, query, fuzzy=True)
    assert (got_complete, complete) == (True, True)
    assert_same(got, want)


def test_fields_expands_to_yield_at_half_weight_and_the_best_alternative_wins(setup):
    got, _ = duck(setup, "fields", fuzzy=True)
    ref = setup.ref
    for c in ref.chunks:
        exact, near = ref.term(c, "field"), ref.term(c, "yield", typed="field")
        if exact is None and near is None:
            assert c.id not in got
            continue
        best = max(s for s in (exact, None if near is None else 0.5 * near) if s is not None)
        assert got[c.id] == pytest.approx(ref.boosted(c, best), rel=1e-9)
    assert any(ref.term(c, "field") is None for c in ref.chunks if c.id in got)


def test_an_expansion_is_never_rarer_than_the_word_typed():
    """A fuzzy expansion of a word in the vocabulary scores with the word's idf when its
    own is higher; one of a word not in the vocabulary, and every prefix alternative,
    keep their own."""
    clause = _term(0, "store", 1, 100, Alt("score", 2, 3, 0.5, 1, "score"),
                   Alt("stores", 3, 200, 0.5, 1, "stores"))
    assert [alternative_idf(1000, clause, a) for a in clause.alts] == [
        idf(1000, 100), idf(1000, 100), idf(1000, 200)]
    typo = _term(0, "stroe", None, 0, Alt("store", 1, 100, 0.5, 1, "store"))
    assert alternative_idf(1000, typo, typo.alts[1]) == idf(1000, 100)
    prefix = Clause(0, "term", "sto*", alts=(Alt("store", 1, 100), Alt("stori", 4, 2)))
    assert alternative_idf(1000, prefix, prefix.alts[1]) == idf(1000, 2)


def test_configured_fuzzy_weight_is_used(setup, monkeypatch):
    monkeypatch.setattr("ra.query.named.BOOST", 0.0)  # "Borrowing" is named for the typo
    config = replace(setup.config, search=replace(setup.config.search, fuzzy_weight=0.25))
    searcher = Searcher(setup.reader, config)
    options = replace(NO_CUTOFF, fuzzy=True)
    topic = searcher.search(["borowing"], options).queries[0]
    evaluator = Evaluator(setup.ref, setup.eval.surface, setup.eval.trees, fuzzy_weight=0.25)
    want, _ = evaluator.run(T("borowing", fuzzy=True))
    assert topic.results
    for r in topic.results:
        assert r.score == pytest.approx(want[r.id], rel=1e-9, abs=quantum(setup, 1))


def test_fuzzy_does_not_touch_short_words(setup):
    """``cahe`` (four letters) is not expanded: no chunk matches, exact or fuzzy."""
    got, _ = duck(setup, "cahe", fuzzy=True)
    assert got == {}


# --- golden SQL -------------------------------------------------------------------------

def _term(i, text, term_id, df, *extra, fields=(0, 1, 2, 3), boost=1.0):
    alts = (Alt(text, term_id, df, word=text), *extra)
    return Clause(i, "term", text, fields=fields, alts=alts, boost=boost)


GOLDEN_PLANS = {
    "term": Plan([_term(0, "rust", 7, 3)], Ref(0), (0,), ()),
    "and_fuzzy": Plan(
        [_term(0, "borrow", 2, 4, Alt("borrown", 3, 1, 0.5, 1, "borrown"),
               Alt("burrow", 9, 2, 0.5, 1, "burrow")),
         _term(1, "check", 4, 10)],
        AllOf((Ref(0), Ref(1))), (0, 1), ()),
    "phrase": Plan(
        [Clause(0, "phrase", "error handling",
                alts=(Alt("error", 5, 12), Alt("handl", 6, 4))),
         _term(1, "rust", 7, 3)],
        AllOf((Ref(0), Ref(1))), (0, 1), ()),
    "compound": Plan(  # rust error-handling: the parts required, their phrase for score only
        [_term(0, "error", 5, 12), _term(1, "handl", 6, 4),
         Clause(2, "phrase", "error-handling", alts=(Alt("error", 5, 12), Alt("handl", 6, 4)),
                boost=COMPOUND_PHRASE_WEIGHT),
         _term(3, "rust", 7, 3)],
        AllOf((Ref(0), Ref(1), Ref(3))), (0, 1, 2, 3), (),
        groups=(AllOf((Ref(0), Ref(1))), Ref(3))),
    "proximity_title_boost": Plan(
        [Clause(0, "phrase", "event loop", fields=(0,),
                alts=(Alt("event", 1, 2), Alt("loop", 8, 3)), slop=2, boost=2.0),
         _term(1, "cach", 11, 5, fields=(3,), boost=3.0)],
        AnyOf((Ref(0), Ref(1))), (0, 1), ()),
    "or_not": Plan(
        [_term(0, "cach", 11, 5), _term(1, "deploy", 12, 2), _term(2, "python", 13, 4)],
        AllOf((AnyOf((Ref(0), Ref(1))), NoneOf(Ref(2)))), (0, 1), (2,)),
    "tree_filter": Plan(
        [Clause(0, "tree", "docs", tree="docs"), _term(1, "error", 5, 12)],
        AllOf((Ref(0), Ref(1))), (1,), ()),
    "unknown_words": Plan(
        [_term(0, "zzz", None, 0),
         Clause(1, "phrase", "no such", alts=(Alt("no", None, 0), Alt("such", 3, 1)))],
        AllOf((Ref(0), Ref(1))), (0, 1), ()),
}
GOLDEN_FILTERS = {
    "tree_filter": Filters(trees=("docs", "notes")),
    "or_not": Filters(include_archived=True, exclude_ids=("docs:a.md", "docs:b.md#x")),
}
AVG = {"title": 6.5, "tags": 1.25, "path": 2.0, "body": 40.0}


@pytest.mark.parametrize("name", sorted(GOLDEN_PLANS))
def test_sql_matches_golden_file(name):
    sql = bm25f_sql(GOLDEN_PLANS[name], 42, AVG, Weights(), GOLDEN_FILTERS.get(name, Filters()),
                    25)
    text_file, params_file = GOLDEN / f"{name}.sql", GOLDEN / f"{name}.params.json"
    params = json.dumps(sql.params, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        text_file.write_text(sql.text + "\n")
        params_file.write_text(params)
    assert sql.text + "\n" == text_file.read_text()
    assert json.loads(params) == json.loads(params_file.read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN_PLANS))
def test_golden_sql_runs(setup, name):
    """The hand-built plans are valid SQL over a real index (ids may match nothing)."""
    sql = bm25f_sql(GOLDEN_PLANS[name], 42, AVG, Weights(), GOLDEN_FILTERS.get(name, Filters()),
                    25)
    setup.reader.query(sql.text, sql.params)


def test_sql_with_ancestor_rows_matches_golden_file(setup):
    """The search path's variant: the best rows, then their ancestors' metadata."""
    sql = bm25f_sql(GOLDEN_PLANS["or_not"], 42, AVG, Weights(), GOLDEN_FILTERS["or_not"], 25,
                    ancestors=True)
    text_file = GOLDEN / "or_not.ancestors.sql"
    if UPDATE:
        text_file.write_text(sql.text + "\n")
    assert sql.text + "\n" == text_file.read_text()
    setup.reader.query(sql.text, sql.params)


def test_sql_text_depends_on_the_shape_of_the_plan_only():
    """Terms, ids, document frequencies, fuzzy weights and boosts are bound parameters:
    two plans of the same shape give the same text (so its parse and bind work is the
    same), and differ in their parameters only."""
    a = Plan([_term(0, "borrow", 2, 4, Alt("borrown", 3, 1, 0.5, 1, "borrown")),
              _term(1, "check", 4, 10)], AllOf((Ref(0), Ref(1))), (0, 1), ())
    b = Plan([_term(0, "cache", 11, 5, Alt("caches", 12, 2, 0.25, 1, "caches"),
                    Alt("cached", 13, 7, 0.25, 1, "cached"), boost=2.0),
              _term(1, "evict", 40, 1)], AllOf((Ref(0), Ref(1))), (0, 1), ())
    for ancestors in (False, True):
        sa, sb = (bm25f_sql(p, 42, AVG, Weights(), Filters(), 25, ancestors=ancestors)
                  for p in (a, b))
        assert sa.text == sb.text and sa.params != sb.params


def test_query_text_is_never_spliced_into_the_sql(setup):
    query = "o'brien \"drop table\" tree:x'y"
    plan = plan_query(parse(query), setup.reader, setup.ref.analyzer, PlanOptions(), query)
    sql = bm25f_sql(plan, 10, AVG, Weights(), Filters(trees=("a'b",)), 5)
    assert "brien" not in sql.text and "drop" not in sql.text and "x'y" not in sql.text
    assert "a'b" not in sql.text
    setup.reader.query(sql.text, sql.params)


# --- plain plans over impacts ----------------------------------------------------------

@pytest.fixture(scope="module")
def resident(setup):
    """A long-lived reader of the same index, its impacts loaded from ``hot_impacts`` as
    arrays (``ra.index.impact_arrays``), which ``top_rows`` adds up."""
    reader = IndexReader.open(setup.config.index_dir)
    reader.keep_vocabulary = True
    assert reader.impacts(Weights()) and reader.impact_arrays is not None
    yield reader
    reader.close()


@pytest.fixture(scope="module")
def viewed(setup):
    """The short-lived reader, its relation ``impacts`` a view over ``hot_impacts``, which
    ``top_sql`` adds up."""
    assert setup.reader.impacts(Weights()) and setup.reader.impact_arrays is None
    return setup.reader


PLAIN = [(q, False) for q, _ in QUERIES] + [
    (q, True) for q in ("borowing", "fields", "fixtures yeilds", "kubernetse OR cahce",
                        "rust errors", "lifetimse^2 borrow", "rust OR kubernetes")]


def _plan_bound(plan, n: int, weights: Weights) -> float:
    """The most a chunk's score over impacts may differ from ``bm25f_sql``'s: half a
    quantization step per clause (its largest alternative's), times the local boost (the
    coordination factor is at most 1), plus room for float rounding."""
    per_clause = [max((bound(a.weight * c.boost, alternative_idf(n, c, a), weights.k1)
                       for a in c.alts if a.term_id is not None), default=0.0)
                  for c in plan.clauses]
    return sum(per_clause) * max(1.0, weights.local_boost) + 1e-12


def _assert_within_bound(reader, plan, weights: Weights, filters: Filters,
                         held=None) -> None:
    """``top_sql``'s rows are ``bm25f_sql``'s: the same chunks, matched groups, complete
    and total exactly, each score within the quantization bound (and not exactly equal
    everywhere: the impacts are quantized, so an equality test could not fail). With
    ``held`` (a long-lived reader), ``top_rows`` gives ``top_sql``'s rows too."""
    n, avg = reader.stats.chunks, reader.stats.avg_length
    top = top_sql(plan, n, weights, filters, 10_000)
    general = bm25f_sql(plan, n, avg, weights, filters, 10_000, metadata=False)
    got, want = (sorted(reader.query(q.text, q.params), key=lambda r: r[5])
                 for q in (top, general))
    assert got and [r[1:] for r in got] == [r[1:] for r in want]
    if held is not None:
        summed = sorted(top_rows(plan, held.impact_arrays, n, weights, filters, 10_000),
                        key=lambda r: r[5])
        assert [r[2:] for r in summed] == [r[2:] for r in got]
        for a, b in zip(summed, got, strict=True):
            assert a[:2] == pytest.approx(b[:2], rel=1e-12, abs=1e-12)
    limit = _plan_bound(plan, n, weights)
    errors = [abs(g[0] - w[0]) for g, w in zip(got, want, strict=True)]
    assert max(errors) <= limit
    return errors


@pytest.mark.parametrize("query, fuzzy", PLAIN, ids=[f"{q}|{f}" for q, f in PLAIN])
def test_top_sql_gives_the_rows_of_bm25f_sql_within_the_quantization_step(viewed, resident,
                                                                            query, fuzzy):
    plan = plan_query(parse(query), resident, Analyzer("english"),
                      PlanOptions(fuzzy=fuzzy, distance=1), query)
    for filters in (Filters(), Filters(include_archived=True)):
        if not is_plain(plan, filters):
            assert plan.negative or any(c.kind != "term" or c.field_mask != 15
                                        for c in plan.clauses)
            return
        _assert_within_bound(viewed, plan, Weights(), filters, resident)


def test_quantization_moves_scores_but_less_than_the_bound(viewed):
    """The impacts are quantized: some score differs from the exact one (so the bound
    test above measures something), by less than a step."""
    plan = plan_query(parse("rust errors"), viewed, Analyzer("english"),
                      PlanOptions(), "rust errors")
    errors = _assert_within_bound(viewed, plan, Weights(), Filters())
    assert max(errors) > 0
    assert SCALE == 65_535  # 16 bits: docs/ranking.md gives the bound for this step


@pytest.mark.parametrize("query", ["rust error handling cache eviction ownership lifetimes",
                                   "rust errors kubernetse cahce ownership lifetimes pods",
                                   "kubernetes ownership", "pods lifetimes"])
@pytest.mark.parametrize("coord", [0.0, 1.5])
def test_top_sql_ranks_long_and_partial_queries_as_bm25f_sql_does(viewed, resident, query,
                                                                   coord):
    plan = plan_query(parse(query), resident, Analyzer("english"),
                      PlanOptions(fuzzy=True, distance=1), query, rankable=True)
    assert is_plain(plan, Filters()) and plan.ranked == (len(query.split()) >= 6)
    _assert_within_bound(viewed, plan, replace(Weights(), coord=coord), Filters(), resident)


@pytest.mark.parametrize("query", ["rust error handling cache eviction ownership lifetimes",
                                   "kubernetes ownership", "rust errors"])
def test_top_sql_keeps_the_best_final_scores_under_a_limit(viewed, resident, query):
    """Under a limit, the rows kept are those of the best *final* scores (coordinated, for
    ranked and partial answers), as ``bm25f_sql`` keeps: ranking by the score before
    coordination would keep chunks that match fewer words."""
    plan = plan_query(parse(query), resident, Analyzer("english"),
                      PlanOptions(fuzzy=True, distance=1), query, rankable=True)
    weights = replace(Weights(), coord=2.0)
    n, avg = viewed.stats.chunks, viewed.stats.avg_length
    for limit in (1, 2, 3, 5):
        top = top_sql(plan, n, weights, Filters(), limit)
        general = bm25f_sql(plan, n, avg, weights, Filters(), limit, metadata=False)
        got, want = (sorted(viewed.query(q.text, q.params), key=lambda r: r[5])
                     for q in (top, general))
        assert [r[5] for r in got] == [r[5] for r in want], (query, limit)
        summed = top_rows(plan, resident.impact_arrays, n, weights, Filters(), limit)
        assert sorted(r[5] for r in summed) == [r[5] for r in want], (query, limit)


# --- compounds: words from impacts, their phrase from positions -------------------------

COMPOUNDS = ["error-handling", "rust error-handling", "error-handling cache-eviction",
             "rust error-handling cache eviction ownership lifetimes", "rust::cache eviction",
             "cache-evictoin rust"]


@pytest.mark.parametrize("query", COMPOUNDS)
@pytest.mark.parametrize("coord", [0.0, 1.5])
def test_compound_phrases_scored_in_two_steps_give_the_rows_of_bm25f_sql(viewed, resident,
                                                                         query, coord):
    """A compound's phrase only adds score: a long-lived reader scores the words from its
    impacts and the phrase from the positions of the chunks it could lift to the best
    (``top_rows`` with ``phrases``), and answers with ``bm25f_sql``'s rows under every
    limit: the same chunks, matched groups, complete and total, each score within the
    quantization bound of its words (the phrase's is exact). A one-shot reader does the
    same in DuckDB (``top_sql``, then ``with_phrases``): ``top_rows``' rows and scores."""
    plan = plan_query(parse(query), resident, Analyzer("english"),
                      PlanOptions(fuzzy=True, distance=1), query, rankable=True)
    assert bonus_phrases(plan) and not is_plain(plan, Filters())
    assert is_plain(plan, Filters(), phrases=True)
    weights = replace(Weights(), coord=coord)
    n, avg = viewed.stats.chunks, viewed.stats.avg_length
    scorer = phrases.PhraseScorer(resident, weights)
    for limit in (10_000, 1, 2, 3, 5):
        general = bm25f_sql(plan, n, avg, weights, Filters(), limit, metadata=False)
        want = sorted(viewed.query(general.text, general.params), key=lambda r: r[5])
        got = sorted(top_rows(plan, resident.impact_arrays, n, weights, Filters(), limit,
                              scorer), key=lambda r: r[5])
        assert want and [r[2:] for r in got] == [r[2:] for r in want], (query, limit)
        for g, w in zip(got, want, strict=True):
            assert g[1] == pytest.approx(w[1], rel=1e-12)
            assert abs(g[0] - w[0]) <= _plan_bound(plan, n, weights)
        top = top_sql(plan, n, weights, Filters(), limit)
        viewed_rows = sorted(with_phrases(viewed.query(top.text, top.params), plan, limit,
                                          phrases.PhraseScorer(viewed, weights)),
                             key=lambda r: r[5])
        assert [r[2:] for r in viewed_rows] == [r[2:] for r in got], (query, limit)
        for v, g in zip(viewed_rows, got, strict=True):
            assert v[:2] == pytest.approx(g[:2], rel=1e-12, abs=1e-12)


def test_a_phrase_is_read_only_in_the_chunks_it_could_lift(viewed, resident):
    """Under a limit of one, the positions are read for the chunks whose words' score
    plus the phrase's largest possible one reaches the best words' score, not for every
    chunk holding the phrase's words."""
    query = "rust error-handling"
    plan = plan_query(parse(query), resident, Analyzer("english"), PlanOptions(), query)
    words = [a.term_id for i in bonus_phrases(plan) for a in plan.clauses[i].alts]
    holding = set.intersection(*({o for (o,) in viewed.query(
        "SELECT DISTINCT ord FROM tf_postings WHERE term_id = ?", [t])} for t in words))
    asked = []
    n = viewed.stats.chunks

    def scorer(clauses, ords):
        asked.append(ords)
        return phrases.PhraseScorer(resident, Weights())(clauses, ords)

    full = top_rows(plan, resident.impact_arrays, n, Weights(), Filters(), 10_000, scorer)
    assert set(asked.pop()) == holding & {r[5] for r in full}
    best = top_rows(plan, resident.impact_arrays, n, Weights(), Filters(), 1, scorer)
    assert len(best) == 1 and 0 < len(asked.pop()) < len(holding)


@pytest.mark.parametrize("query", ['"error handling"', '"stale cache"', '"event loop"',
                                   '"error handling"~2'])
def test_a_phrase_scored_from_positions_in_python_equals_the_sqls_to_the_bit(viewed, query):
    """``ra.query.phrases.scores`` finds and scores a phrase as ``bm25f_sql`` does, to the
    last bit (the local boost 1, so the SQL's product changes nothing)."""
    plan = plan_query(parse(query), viewed, Analyzer("english"), PlanOptions(), query)
    (clause,) = plan.clauses
    weights = replace(Weights(), local_boost=1.0)
    n, avg = viewed.stats.chunks, viewed.stats.avg_length
    sql = bm25f_sql(plan, n, avg, weights, Filters(), 10_000, metadata=False)
    want = {r[5]: r[0] for r in viewed.query(sql.text, sql.params)}
    assert want
    ords = sorted({*want, *range(0, n, 3)})  # and chunks without it: 0
    rows = viewed.phrase_positions(phrases.words([clause]), ords)
    got = phrases.scores([clause], rows, ords, n, avg, weights)
    assert dict(zip(ords, got, strict=True)) == {o: want.get(o, 0.0) for o in ords}


def test_positions_read_with_pyarrow_are_duckdbs(viewed, resident):
    """A long-lived reader reads a few terms' positions in a few chunks from the row
    groups of ``hot_postings`` that may hold them (``ra.index.positions``); they are the
    rows DuckDB reads from ``phrase_postings``, also when no footer statistics narrow the
    row groups down."""
    from ra.index.positions import HotPositions

    assert resident.keep_vocabulary and not viewed.keep_vocabulary
    n = viewed.stats.chunks
    common = [t for (t,) in viewed.query(
        "SELECT term_id FROM terms ORDER BY df DESC, term_id LIMIT 12")]
    cases = [(common[:2], list(range(n))), (common[3:9], list(range(1, n, 5))),
             (common[:1], [n - 1]), ([common[0], 10**6], list(range(0, n, 2))), (common, [])]
    found = []
    for terms, ords in cases:
        want = sorted(viewed.phrase_positions(terms, ords))
        assert sorted(resident.phrase_positions(terms, ords)) == want
        found.append(len(want))
    assert found[0] > 10 and found[1] > 10 and found[-1] == 0
    hot = resident.memo("hot_positions", lambda: None)
    every = HotPositions(hot.path)
    every.every = True
    terms, ords = common[:3], list(range(0, n, 3))
    assert sorted(every.rows(terms, ords)) == sorted(viewed.phrase_positions(terms, ords))


def test_other_weights_than_the_builds_take_the_formula_or_the_readers_own_impacts(setup):
    """``[search] k1``, ``b`` and the field weights do not shape the index: under weights
    the build's impacts were not computed with, no reader uses them. A one-shot reader's
    plain queries are scored by ``bm25f_sql``; a long-lived one computes impacts for the
    first weights it is asked about, unrounded: the same scores (under those weights)."""
    other = Weights(k1=2.0, b=0.3, boosts=(5.0, 1.0, 1.0, 1.0))
    config = replace(setup.config, search=replace(
        setup.config.search, k1=2.0, b=0.3,
        boosts=replace(setup.config.search.boosts, title=5.0, tags=1.0, path=1.0)))
    for keep in (False, True):
        reader = IndexReader.open(setup.config.index_dir)
        reader.keep_vocabulary = keep
        try:
            if keep:
                assert reader.impacts(other) and not reader.impacts(Weights())
            else:
                assert not reader.impacts(other) and reader.impacts(Weights())
            searcher = Searcher(reader, config)
            assert searcher.weights() == replace(other, coord=searcher.weights().coord)
            topic = searcher.search(["rust errors"], replace(NO_CUTOFF, explain=True))
            assert ("FROM impacts" in topic.queries[0].explain["sql"]) is keep
            plan = plan_query(parse("rust errors"), reader, Analyzer("english"),
                              PlanOptions(), "rust errors")
            exact = bm25f_sql(plan, reader.stats.chunks, reader.stats.avg_length,
                              searcher.weights(), Filters(), 10, metadata=False)
            best = max(r[0] for r in reader.query(exact.text, exact.params))
            assert topic.queries[0].results[0].score == pytest.approx(best, abs=1e-6)
        finally:
            reader.close()


def test_impacts_read_from_the_build_equal_those_computed_at_load(viewed, resident):
    """``hot_impacts`` holds exactly what a reader computes from its postings under the
    same weights and statistics, and a long-lived reader's arrays hold its rows."""
    computed = resident.query(*impacts_sql("tf_postings", resident.stats.avg_length,
                                           Weights()))
    stored = viewed.query("SELECT term_id, ord, impact FROM impacts ORDER BY term_id, ord")
    assert len(stored) > 100 and stored == computed == resident.impact_arrays.rows()


@pytest.mark.parametrize("weights", [Weights(), Weights(k1=2.0, b=0.3, boosts=(5.0, 1.0, 1.0,
                                                                                1.0))])
def test_impacts_computed_in_numpy_are_the_sqls_to_the_bit(resident, weights):
    """``exact_impacts`` (what a reader carried over to an update computes) gives the
    doubles of ``impacts_sql(exact=True)`` (what a reader loaded afresh computes), bit for
    bit, from the postings in any order."""
    import numpy as np

    avg = resident.stats.avg_length
    want = resident.con.execute(*impacts_sql("tf_postings", avg, weights, exact=True)
                                ).fetchnumpy()
    rows = resident.con.execute("SELECT term_id, ord, field, tf, len FROM tf_postings "
                                "ORDER BY hash(ord, field)").fetchnumpy()
    got = exact_impacts(rows, avg, weights)
    assert len(want["ord"]) > 100
    for name in ("term_id", "ord", "impact"):
        assert np.array_equal(got[name], want[name]), name

def test_top_sql_keeps_the_ties_with_the_last_best_row(viewed, resident):
    """Every chunk scoring at least the limit-th best comes back, so the caller can break
    ties by id; a limit of one returns every chunk tied for first. ``top_rows`` too."""
    plan = plan_query(parse("rust"), viewed, Analyzer("english"), PlanOptions(), "rust")
    n = viewed.stats.chunks
    rows = viewed.query(*_bound(top_sql(plan, n, Weights(), Filters(), 10_000)))
    scores = sorted((r[0] for r in rows), reverse=True)
    assert len(set(scores)) < len(scores)  # ties to keep
    for limit in (1, 2, 3, len(scores)):
        want = sorted(s for s in scores if s >= scores[limit - 1])
        cut = viewed.query(*_bound(top_sql(plan, n, Weights(), Filters(), limit)))
        assert sorted(r[0] for r in cut) == want
        summed = top_rows(plan, resident.impact_arrays, n, Weights(), Filters(), limit)
        assert sorted(r[0] for r in summed) == pytest.approx(want, rel=1e-12)


def test_only_plain_plans_take_the_top_query():
    plain = GOLDEN_PLANS["and_fuzzy"]
    assert is_plain(plain, Filters()) and is_plain(plain, Filters(include_archived=True))
    for filters in (Filters(trees=("docs",)), Filters(tags=("x",)), Filters(path_regex="a"),
                    Filters(exclude_ids=("docs:a.md",)), Filters(since_ns=1),
                    Filters(until_ns=1)):
        assert not is_plain(plain, filters)
    for name in ("phrase", "proximity_title_boost", "or_not", "tree_filter", "compound"):
        assert not is_plain(GOLDEN_PLANS[name], Filters())
    # a phrase that only adds score is scored in two steps (``top_rows``); one required
    # by the query (quoted) is not
    assert is_plain(GOLDEN_PLANS["compound"], Filters(), phrases=True)
    assert not is_plain(GOLDEN_PLANS["phrase"], Filters(), phrases=True)
    title_only = Plan([_term(0, "rust", 7, 3, fields=(0,))], Ref(0), (0,), ())
    assert not is_plain(title_only, Filters())


def test_searcher_scores_plain_queries_over_impacts_on_every_reader(setup, resident):
    options = replace(NO_CUTOFF, explain=True)
    for reader in (setup.reader, resident):  # a view over hot_impacts, arrays
        topic = Searcher(reader, setup.config).search(["rust error"], options).queries[0]
        assert "FROM impacts" in topic.explain["sql"]
        assert topic.explain["sql"].startswith("-- in memory:") is (reader is resident)
        topic = Searcher(reader, setup.config).search(["rust -python"], options).queries[0]
        assert "FROM impacts" not in topic.explain["sql"]


def _bound(sql):
    return sql.text, sql.params


def _golden(stem: str, sql) -> None:
    text_file, params_file = GOLDEN / f"{stem}.sql", GOLDEN / f"{stem}.params.json"
    params = json.dumps(sql.params, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        text_file.write_text(sql.text + "\n")
        params_file.write_text(params)
    assert sql.text + "\n" == text_file.read_text()
    assert json.loads(params) == json.loads(params_file.read_text())


@pytest.mark.parametrize("name", ["term", "and_fuzzy", "compound"])
def test_top_sql_matches_golden_file(viewed, name):
    sql = top_sql(GOLDEN_PLANS[name], 42, Weights(), Filters(), 25)
    _golden(f"{name}.top", sql)
    viewed.query(sql.text, sql.params)


def test_impacts_sql_matches_golden_file(setup):
    sql = Sql(*impacts_sql("tf_postings", AVG, Weights(), (0, 1000)))
    _golden("impacts", sql)
    setup.reader.query(sql.text, sql.params)


@pytest.mark.parametrize("ancestors", [False, True])
def test_sql_without_metadata_matches_golden_file(setup, ancestors):
    """The search path's variant: ords instead of metadata (the reader fetches it)."""
    sql = bm25f_sql(GOLDEN_PLANS["or_not"], 42, AVG, Weights(), GOLDEN_FILTERS["or_not"], 25,
                    ancestors=ancestors, metadata=False)
    _golden("or_not.ords" + (".ancestors" if ancestors else ""), sql)
    setup.reader.query(sql.text, sql.params)


def test_the_bit_for_bit_comparison_covers_many_plain_plans(resident):
    plans = [plan_query(parse(q), resident, Analyzer("english"), PlanOptions(fuzzy=f), q)
             for q, f in PLAIN]
    assert sum(is_plain(p, Filters()) for p in plans) >= 15
