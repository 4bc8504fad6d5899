"""Planning: a parsed query → clauses over vocabulary terms plus a boolean expression.

Every leaf of the query becomes a numbered *clause*:

- a word → a term clause whose alternatives are its exact term and, for words longer
  than four characters, fuzzy expansions (weighted ``fuzzy_weight`` below exact);
  a word that analyses to several tokens (``foo-bar``, CJK text) becomes a phrase;
- ``"a b"`` / ``"a b"~N`` → a phrase clause over exact terms (no fuzzy inside phrases);
- ``prefix*`` → a term clause whose alternatives are the terms of every surface word that
  starts with the prefix (capped at ``MAX_PREFIX_TERMS``, most frequent first);
- ``tree:NAME`` → a filter clause.

``field:`` and ``^boost`` are pushed down into the clauses below them. The boolean shape
(AND/OR/NOT) is kept as an expression over clause numbers, which the SQL builder turns
into a WHERE condition. Planning reads the vocabulary (through ``IndexReader``) but
never the postings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ra.errors import QueryError
from ra.query import ast
from ra.query.fuzzy import MIN_FUZZY_LENGTH, expand
from ra.store.layout import FIELD_CODE, FIELDS
from ra.text.analysis import Analyzer, split_words

MAX_PREFIX_TERMS = 64
MAX_CLAUSES = 256  # words and phrases per topic; longer queries are refused
ALL_FIELDS = tuple(range(len(FIELDS)))


@dataclass(frozen=True)
class Alt:
    """One vocabulary term a clause may match."""

    term: str
    term_id: int | None  # None: not in the vocabulary (matches nothing)
    df: int
    weight: float = 1.0
    distance: int = 0  # 0 exact, else the fuzzy edit distance
    word: str = ""  # the surface word that led here


@dataclass(frozen=True)
class Clause:
    """A matchable unit of the query."""

    index: int
    kind: str  # "term" | "phrase" | "tree"
    text: str  # as typed
    fields: tuple[int, ...] = ALL_FIELDS
    alts: tuple[Alt, ...] = ()  # term: alternatives; phrase: one per word, in order
    slop: int = 0
    boost: float = 1.0
    tree: str | None = None

    @property
    def field_mask(self) -> int:
        return sum(1 << f for f in self.fields)


@dataclass(frozen=True)
class Ref:
    index: int


@dataclass(frozen=True)
class AllOf:
    items: tuple


@dataclass(frozen=True)
class AnyOf:
    items: tuple


@dataclass(frozen=True)
class NoneOf:
    expr: object


Expr = Ref | AllOf | AnyOf | NoneOf


@dataclass
class Plan:
    """Clauses, the boolean expression over them, and which clauses score."""

    clauses: list[Clause] = field(default_factory=list)
    expr: Expr | None = None
    positive: tuple[int, ...] = ()  # clauses that contribute score (not under NOT)
    negative: tuple[int, ...] = ()  # clauses under a NOT

    def terms(self) -> list[str]:
        """Every matched term of the positive clauses (for snippets and highlights)."""
        return sorted({a.term for i in self.positive for a in self.clauses[i].alts
                       if a.term_id is not None})


@dataclass
class PlanOptions:
    fuzzy: bool = True
    distance: int = 1
    fuzzy_weight: float = 0.5


class Planner:
    """Turns an AST into a ``Plan`` against one index's vocabulary."""

    def __init__(self, reader, analyzer: Analyzer, options: PlanOptions) -> None:
        self.reader, self.analyzer, self.options = reader, analyzer, options
        self.plan = Plan()
        self._fuzzy_cache: dict[str, list] = {}

    def build(self, node: ast.Node, query: str = "") -> Plan:
        self.query = query
        self._prefetch(node)
        expr = self._node(node, None, 1.0)
        if expr is None:
            raise QueryError("the query has no searchable words", query=query,
                             syntax=False, hint="use letters or digits, e.g. 'error handling'")
        self.plan.expr = expr
        neg = _negated(expr)
        self.plan.negative = tuple(sorted(neg))
        self.plan.positive = tuple(c.index for c in self.plan.clauses
                                   if c.index not in neg and c.kind != "tree")
        if not self.plan.positive:
            raise QueryError("a query needs at least one word that is not negated",
                             query=query, syntax=False,
                             hint="e.g. 'rust -unsafe' or 'tree:docs install'")
        return self.plan

    def _prefetch(self, node: ast.Node) -> None:
        """Look every exact term and every typo candidate of the query up at once."""
        words, fuzzy = [], []
        for occ in ast.walk(node):
            if isinstance(occ.node, ast.Term | ast.Phrase) and occ.field != "tree":
                text = occ.node.text if isinstance(occ.node, ast.Term) else " ".join(
                    occ.node.words)
                found = split_words(text)
                words += found
                if isinstance(occ.node, ast.Term) and len(found) == 1:
                    fuzzy += found
        d = self.options.distance if self.options.fuzzy else 0
        eligible = sorted({w for w in fuzzy if len(w) > MIN_FUZZY_LENGTH}) if d > 0 else []
        self.reader.prefetch(self.analyzer.stem_all(words), eligible, d)
        if self.options.fuzzy:
            near = self.reader.near_words(eligible, d)
            for w in eligible:
                self._fuzzy_cache[w] = expand(w, near.get(w, []), d)
            self.reader.term_info([h.term_id for w in eligible for h in self._fuzzy_cache[w]])

    def _node(self, node, fld: str | None, boost: float) -> Expr | None:
        match node:
            case ast.Term(text):
                return self._term(text, fld, boost)
            case ast.Prefix(text):
                return self._prefix(text, fld, boost)
            case ast.Phrase(words, slop):
                return self._phrase(" ".join(words), fld, boost, slop)
            case ast.Field(name, expr):
                return self._node(expr, name.lower(), boost)
            case ast.Boost(expr, factor):
                return self._node(expr, fld, boost * factor)
            case ast.Not(expr):
                inner = self._node(expr, fld, boost)
                return None if inner is None else NoneOf(inner)
            case ast.And(items) | ast.Or(items):
                kids = tuple(k for k in (self._node(i, fld, boost) for i in items) if k)
                if not kids:
                    return None
                kind = AllOf if isinstance(node, ast.And) else AnyOf
                return kids[0] if len(kids) == 1 else kind(kids)
        raise TypeError(f"unknown query node {node!r}")  # pragma: no cover

    def _add(self, **kwargs) -> Ref:
        if len(self.plan.clauses) >= MAX_CLAUSES:
            raise QueryError(f"the query has more than {MAX_CLAUSES} words or phrases",
                             query=self.query[:200], syntax=False,
                             hint="search for the few words that matter most")
        clause = Clause(index=len(self.plan.clauses), **kwargs)
        self.plan.clauses.append(clause)
        return Ref(clause.index)

    def _fields(self, fld: str | None) -> tuple[int, ...]:
        return ALL_FIELDS if fld is None else (FIELD_CODE[fld],)

    def _term(self, text: str, fld: str | None, boost: float, fuzzy: bool = True
              ) -> Expr | None:
        if fld == "tree":
            return self._add(kind="tree", text=text, tree=text)
        words = split_words(text)
        if len(words) != 1:
            return self._phrase(text, fld, boost, 0) if words else None
        word = words[0]
        exact = self.analyzer.stem(word)
        alts = {exact: self._exact(exact, word)}
        if fuzzy and self.options.fuzzy:
            self._fuzzy(word, alts)
        return self._add(kind="term", text=text, fields=self._fields(fld),
                         alts=tuple(alts.values()), boost=boost)

    def _exact(self, term: str, word: str) -> Alt:
        found = self.reader.lookup_terms([term]).get(term)
        return Alt(term, found[0] if found else None, found[1] if found else 0, word=word)

    def _expansions(self, word: str) -> list:
        if word not in self._fuzzy_cache:
            d = self.options.distance
            near = self.reader.near_words([word], d) if len(word) > MIN_FUZZY_LENGTH else {}
            self._fuzzy_cache[word] = expand(word, near.get(word, []), d)
        return self._fuzzy_cache[word]

    def _fuzzy(self, word: str, alts: dict[str, Alt]) -> None:
        hits = self._expansions(word)
        info = self.reader.term_info([h.term_id for h in hits])
        for hit in hits:
            term, df = info[hit.term_id]
            if term not in alts:
                weight = self.options.fuzzy_weight ** max(hit.distance, 1)
                alts[term] = Alt(term, hit.term_id, df, weight, hit.distance, hit.word)

    def _prefix(self, text: str, fld: str | None, boost: float) -> Expr | None:
        words = split_words(text)
        if not words:
            return None
        rows = self.reader.words_with_prefix(words[-1], MAX_PREFIX_TERMS)
        alts = tuple(Alt(t, i, df, word=words[-1] + "*") for t, i, df in rows)
        return self._add(kind="term", text=text + "*", fields=self._fields(fld),
                         alts=alts or (Alt(words[-1], None, 0),), boost=boost)

    def _phrase(self, text: str, fld: str | None, boost: float, slop: int) -> Expr | None:
        if fld == "tree":
            return self._add(kind="tree", text=text, tree=text)
        words = split_words(text)
        if not words:
            return None
        if len(words) == 1:  # a quoted single word: exact, no fuzzy
            return self._term(words[0], fld, boost, fuzzy=False)
        alts = tuple(self._exact(self.analyzer.stem(w), w) for w in words)
        return self._add(kind="phrase", text=text, fields=self._fields(fld), alts=alts,
                         slop=slop, boost=boost)


def _negated(expr: Expr, under: bool = False) -> set[int]:
    match expr:
        case Ref(i):
            return {i} if under else set()
        case NoneOf(inner):
            return _negated(inner, True)
        case AllOf(items) | AnyOf(items):
            return set().union(*(_negated(i, under) for i in items))
    return set()  # pragma: no cover


def plan_query(node: ast.Node, reader, analyzer: Analyzer, options: PlanOptions,
               query: str = "") -> Plan:
    """The plan of a parsed query against ``reader``'s vocabulary."""
    return Planner(reader, analyzer, options).build(node, query)
