"""Planning: a parsed query → clauses over vocabulary terms plus a boolean expression.

Every leaf of the query becomes a numbered *clause*:

- a word → a term clause whose alternatives are its exact term and, for words longer
  than four characters, fuzzy expansions (weighted ``fuzzy_weight`` below exact);
- a compound word, one that analyses to several tokens (``tldr-pages``, ``file.test.ts``,
  ``src/api``) → its parts, each a term clause with its own fuzzy expansions, all
  required, or else its joined word (``tldrpages``) when the vocabulary has it (when
  it analyses to one of the parts, ``what's`` → ``what``, that part's clause); plus a
  phrase clause over its parts that only adds score (``COMPOUND_PHRASE_WEIGHT`` × its
  BM25F), so the compound as written ranks first while a typo in one part
  (``tldr-pagoes``) or the parts apart still match; a slug's comparison word and
  opening question (``strict-mode-vs-lax-mode``, ``how-to-…``) only add score, as
  typed apart. Under a NOT a compound stays a phrase;
- a run of CJK text → its bigrams (the analyzer's tokens), each an exact term clause of
  the query's top-level AND, so a question typed without spaces is a long query and
  ranked, plus the run's phrase for score only; under a NOT, a phrase;
- a ``::`` path (``std::sync::Mutex``) → the name after its leading lowercase namespaces
  (``Mutex``), required, plus the path's phrase for score only: docs say "a Mutex";
- a path to a file ra reads (``concepts/validators.md``, ``docs/guide/index.md``) → its
  file's name without the suffix, required; its folders' words and the path without the
  suffix as a phrase, for score only: the path field holds the tree-relative path
  without its suffix, so neither ``md`` nor the folders above the tree can be required;
- a word under a NOT excludes that word only, not its typo neighbours (``-thalassemia``
  must not exclude ``thalassaemia``);
- ``"a b"`` / ``"a b"~N`` → a phrase clause over exact terms (no fuzzy inside phrases);
- ``prefix*`` → a term clause whose alternatives are the terms of every surface word that
  starts with the prefix (capped at ``MAX_PREFIX_TERMS``, most frequent first);
- ``tree:NAME`` → a filter clause.

``field:`` and ``^boost`` are pushed down into the clauses below them. The boolean shape
(AND/OR/NOT) is kept as an expression over clause numbers, which the SQL builder turns
into a WHERE condition. Planning reads the vocabulary (through ``IndexReader``) but
never the postings.

A plan also lists its *groups*: the positive parts of the query a chunk may match or
miss (each word with its compound alternatives, each phrase or parenthesised group at
the top level), which the coordination factor counts. A query of at least
``long_query_words`` groups, with no OR or AND typed, is *ranked* rather than filtered
(``Plan.ranked``): natural-language questions and claims rarely have a chunk holding
every word, and the chunk holding most of them is not always the best. So is a shorter
one that holds the word "or" ("sqlite or postgres database"). A question's frame (``how
to``, ``what is a``) and the words of a comparison (``vs``, ``versus``) are score-only in
a query with no OR or AND typed (``Planner._needed``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from ra.errors import QueryError
from ra.query import ast
from ra.query.fuzzy import MIN_FUZZY_LENGTH, expansions
from ra.query.parser import abbreviations
from ra.store.layout import FIELD_CODE, FIELDS
from ra.text import MARKDOWN_SUFFIXES
from ra.text.analysis import Analyzer, analyzer_for, has_cjk, split_words

MAX_PREFIX_TERMS = 64
#: Terms a word the index lacks may go on to (``Planner._continued``), and the letters
#: such a word has at least
CONTINUATIONS = 4
MIN_CONTINUED = 5
MAX_CLAUSES = 256  # words and phrases per topic; longer queries are refused
COMPOUND_PHRASE_WEIGHT = 0.5  # the bonus of a compound's phrase over its parts
#: What a word written as code weighs in a ranked query (``_IDENTIFIER``): an error message
#: pasted whole names its exception once among common words ("httpx.RemoteProtocolError:
#: Server disconnected without sending a response." put httpx's exceptions page 6th, the
#: two chunks naming the class scoring less than pages saying "server" and "response").
#: docs/ranking.md has the numbers.
IDENTIFIER_BOOST = 2.0
#: A word written as code: two humps of camel case (``RemoteProtocolError``, not a gene's
#: ``PrimPol`` or ``scFv``), a snake's underscore, a dotted name of two letters a side
#: (``httpx.Client``, ``crates.io``, not ``H2A.Z``) or a path of ``::``
_IDENTIFIER = re.compile(
    r"[a-z][A-Z][a-z]\w*[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]|[A-Za-z]{2}\.[A-Za-z]{2}|::")
_NAMESPACE = re.compile(r"[a-z_][a-z0-9_]*")  # std, collections, boost: not HashMap, Vec
#: A word and its ``'s``, possessive or "is" (``vite's``, ``what's``): the word alone. Its
#: "s" had added score to every chunk holding a lone "s" (another's possessive), and kept
#: "what's" from a question's frame ("what's new in vite 8.1" put the 2.0 announcement
#: first, "what" required)
_POSSESSIVE = re.compile(r"[^\s'’]+['’][sS]")
#: A path to a file of a kind ra reads (``Planner._document``): folders, a name, a suffix
_SUFFIXES = "|".join(re.escape(s) for s in (*MARKDOWN_SUFFIXES, ".txt"))
_DOCUMENT = re.compile(rf"(?P<folders>(?:[^\s/]*/)*)(?P<name>[^\s/]+?)(?:{_SUFFIXES})", re.I)
ALL_FIELDS = tuple(range(len(FIELDS)))


def _version(words: list[str]) -> bool:
    """Whether a compound's parts are a version's numbers: ``1.0``, ``v2.3.1``, a date's
    ``2024-01-02``, whose joined digits (``10``) are another number."""
    first = words[0]
    return len(words) > 1 and all(w.isdigit() for w in words[1:]) and (
        first.isdigit() or (first[0] in "vV" and first[1:].isdigit()))


#: Digits a file's number is padded to with zeros: Rust's RFCs, Swift's proposals,
#: Python's PEPs and ADRs number theirs with four
PADDED = 4


def _padded(digits: str) -> list[str]:
    """``digits`` and, when shorter than ``PADDED``, it padded with zeros: ``296``,
    ``0296``."""
    return [digits, *("0" * k + digits for k in range(1, PADDED - len(digits) + 1))]


def _other_spelling(number: str) -> str:
    """A version's first number with its ``v`` if it has none, else without."""
    return number[1:] if number[0] in "vV" else f"v{number}"


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
    feedback: bool = False  # an expansion term (ra.query.feedback): scores, never required

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
class Parts(AllOf):
    """The parts of one compound word: all required, but one word of the query."""


@dataclass(frozen=True)
class Abbreviated(AnyOf):
    """A word of the query or the abbreviation the query gives for it and the words
    beside it (``Planner._abbreviated``): coordination weighs the word's idf, met by
    either."""


@dataclass(frozen=True)
class NoneOf:
    expr: object


Expr = Ref | AllOf | AnyOf | NoneOf  # Parts is an AllOf


@dataclass
class Plan:
    """Clauses, the boolean expression over them, and which clauses score."""

    clauses: list[Clause] = field(default_factory=list)
    expr: Expr | None = None
    positive: tuple[int, ...] = ()  # clauses that contribute score (not under NOT)
    negative: tuple[int, ...] = ()  # clauses under a NOT
    groups: tuple = ()  # the expressions the coordination factor counts (module docstring)
    ranked: bool = False  # ranked by BM25F and coordination, not filtered
    #: the paths to files the query typed (``SUMMARY.md``, ``docs/concepts/validators.md``),
    #: lowercased: what is in such a file ranks first (``ra.query.search.in_files``)
    files: tuple[str, ...] = ()
    #: the numbers the query names documents by (``KEP-1287``, ``RFC 243``, ``ADR-0005``),
    #: without leading zeros: a page whose file or folder name starts with one ranks
    #: first (``ra.query.search.numbered``)
    numbers: tuple[str, ...] = ()
    #: the words typed with no letter or digit (``==``, ``=>``), which nothing matches: not
    #: searched, and said so (``ra.query.search``)
    unsearchable: tuple[str, ...] = ()

    def counted(self) -> tuple:
        """The groups coordination counts (for a plan built by hand without groups: each
        positive clause)."""
        return self.groups or tuple(Ref(i) for i in self.positive)

    def score_only(self) -> set[int]:
        """The positive clauses no chunk needs to match: they only add score (the phrase
        of a compound or of a ``::`` path, a question's frame, feedback terms)."""
        return set(self.positive) - refs(self.expr)

    def terms(self) -> list[str]:
        """Every matched term of the positive clauses."""
        return sorted({a.term for i in self.positive for a in self.clauses[i].alts
                       if a.term_id is not None and not self.clauses[i].feedback})

    def variants(self) -> dict[str, str]:
        """The terms a positive clause matches for the word typed, not as typed (its typo's
        expansions, its continuations), by that word's term: snippets count them as the
        word (``ra.query.snippets.VARIANT``). A term one clause has as typed is none."""
        typed = {a.term for i in self.positive for a in self.clauses[i].alts
                 if a.distance == 0 and a.term_id is not None}
        out: dict[str, str] = {}
        for i in self.positive:
            alts = self.clauses[i].alts
            word = next((a.term for a in alts if a.distance == 0 and a.term_id is not None),
                        None)
            for a in alts:
                if word is not None and a.distance and a.term_id is not None \
                        and a.term not in typed:
                    out.setdefault(a.term, word)
        return out

    def highlighted(self, language: str) -> list[str]:
        """The ``terms`` snippets and highlights mark: not the function words
        (``LIGHT_WORDS``, as ``language``'s stemmer reads them) unless nothing else is
        left. They scored, but marking them drew the eye to every "a", "to" and "in":
        "how to add a middleware to a route" marked "**Add** Plugins Plugins are **a**
        common way for **a** module **to** **add**", and they pulled a snippet's window
        to where they crowd."""
        terms = self.terms()
        light = _light_terms(language)
        return [t for t in terms if t not in light] or terms


#: The first words of a question, and the words of its frame (``Planner._needed``).
QUESTION_WORDS = frozenset("how what whats why when where which who can could should would "
                           "do does did is are".split())
FRAME_WORDS = QUESTION_WORDS | frozenset("to i we you a an the my our there any much many".split())
#: The last words of a question's frame: "what does temperature do", "what does
#: idempotent mean" (a page on a thing rarely says so: the settings page of the Prompt
#: Engineering Guide had no "do", and the four chunks that did, boilerplate code, came alone)
CLOSING_WORDS = frozenset({"do", "mean"})
#: A question's frame words wherever they are in it: "how much vacation do we get"
#: needed "do" and "we" (the page says "20 days of vacation"); "how do I make a variable
#: that I can change later?", the second "I"; "how much free space is left", "is"
INNER_FRAME = frozenset("do does did i we you my our am is are was were be".split())
#: The words of a comparison, score-only as the frame is (``Planner._needed``).
COMPARISON_WORDS = frozenset({"vs", "versus"})
#: Articles and possessive pronouns: score-only in a query that is filtered, not ranked,
#: where two other words are left (``Planner._without_articles``): "scale my app
#: horizontally" on GOV.UK's developer docs needed "my", and no chunk held every word.
ARTICLES = frozenset("a an the my our your their".split())
#: Function words: searched for as typed, but not marked in snippets (``Plan.highlighted``).
LIGHT_WORDS = FRAME_WORDS | COMPARISON_WORDS | frozenset(
    "of in on at for from with by and or into as it its be this that if so".split())


@lru_cache(maxsize=8)
def _light_terms(language: str) -> frozenset[str]:
    """``LIGHT_WORDS`` as index terms of ``language``."""
    stem = analyzer_for(language).stem
    return frozenset(stem(w) for w in LIGHT_WORDS)


@dataclass
class PlanOptions:
    fuzzy: bool = True
    distance: int = 1
    fuzzy_weight: float = 0.5
    long_query_words: int = 6  # groups from which a rankable query is ranked


class Planner:
    """Turns an AST into a ``Plan`` against one index's vocabulary."""

    def __init__(self, reader, analyzer: Analyzer, options: PlanOptions) -> None:
        self.reader, self.analyzer, self.options = reader, analyzer, options
        self.plan = Plan()
        self._fuzzy_cache: dict[str, list] = {}
        self._negations = 0  # how many NOTs enclose the node being planned
        self._rankable = False
        self._numbers: list[str] = []  # numbers that may name pages, as typed (``_number``)
        self._joined_number = False  # a word and a number joined by a dash (``_compound``)

    def build(self, node: ast.Node, query: str = "", rankable: bool = False) -> Plan:
        """The plan of ``node``; ``rankable``: a long query may be ranked (no OR or AND
        was typed)."""
        self.query, self._rankable = query, rankable
        self._abbreviations = abbreviations(query) if rankable else []
        self._prefetch(node)
        expr = self._node(node, None, 1.0)
        if expr is None:
            raise QueryError("the query has no searchable words", query=query,
                             syntax=False, hint=_unsearchable_hint(self.plan.unsearchable))
        if rankable:
            expr = self._without_score_only(expr)
        self.plan.expr = expr
        neg = _negated(expr)
        self.plan.negative = tuple(sorted(neg))
        self.plan.positive = tuple(c.index for c in self.plan.clauses
                                   if c.index not in neg and c.kind != "tree")
        if not self.plan.positive:
            raise QueryError("a query needs at least one word that is not negated",
                             query=query, syntax=False,
                             hint="e.g. 'rust -unsafe' or 'tree:docs install'")
        self.plan.groups = self._groups(expr)
        self.plan.ranked = rankable and (
            len(self.plan.groups) >= self.options.long_query_words or self._says_or()
            or self._compares())
        if rankable and not self.plan.ranked and expr is not (
                expr := self._without_articles(expr)):
            self.plan.expr, self.plan.groups = expr, self._groups(expr)
        # In a query of two words at most ("1287", "RFC 243", "KEP-1287 rollback") a number
        # names a numbered page; in a longer one it is a word, or a word's part ("IL-6
        # levels rise in serum"), and a page named 6.md is no answer
        if rankable and len(self.plan.groups) <= 2:
            for item in self.plan.groups:
                if (word := self._word(item)) is not None and word.isdigit():
                    self._number(word)
            self.plan.numbers = tuple(dict.fromkeys(n.lstrip("0") or "0"
                                                    for n in self._numbers))
            if self._numbers and not self.plan.negative and self._name_only():
                self._page_by_number()
        return self.plan

    def _name_only(self) -> bool:
        """Whether the query is a page's name and nothing else: a number and at most one
        word (``1287``, ``RFC 243``), or a word and a number joined (``KEP-1287``)."""
        words = [self._word(g) for g in self.plan.groups]
        digits = sum(1 for w in words if w is not None and w.isdigit())
        plain = sum(1 for w in words if w is not None and not w.isdigit())
        if len(words) == digits + plain:
            return digits == 1 and plain <= 1
        return len(words) == 1 and self._joined_number

    def _page_by_number(self) -> None:
        """A query that is a page's name (``_name_only``: "KEP-1287", "RFC 243") also
        matches the pages whose path holds the number: every section of the page
        numbered so, which ranks first (``Plan.numbers``), not only those that say
        "KEP" (its title, "In-place Update of Pod Resources", does not). A number
        typed without the zeros its files are numbered with matches them too: "SE-296"
        is ``0296-async-await.md``, "ADR 5" ``0005-….md``."""
        forms = [f for digits in self._numbers for f in _padded(digits)]
        held = self.reader.lookup_terms([self.analyzer.stem(f) for f in forms])
        paths = tuple(filter(None, (self._term(f, "path", 1.0, fuzzy=False) for f in forms
                                    if f in self._numbers or self.analyzer.stem(f) in held)))
        self.plan.expr = AnyOf((self.plan.expr, *paths))
        self.plan.groups = self._groups(self.plan.expr)
        self.plan.positive += tuple(r.index for r in paths)

    def _without_score_only(self, expr: Expr) -> Expr:
        """``expr`` but the words of a top-level AND that only add score
        (``_needed``)."""
        if type(expr) is not AllOf:
            return expr
        rest = self._needed(expr.items)
        if rest == expr.items:
            return expr
        return rest[0] if len(rest) == 1 else AllOf(rest)

    def _without_articles(self, expr: Expr) -> Expr:
        """``expr`` but the articles of a top-level AND, when two other words are left:
        they add score, and as words to AND they kept out the answer that says "an" or
        nothing where the query says "a" ("how do I add a custom font" on Material for
        MkDocs' docs: "Additional fonts" says "to add the corresponding @font-face")."""
        if type(expr) is not AllOf:
            return expr
        word = self._word
        rest = tuple(i for i in expr.items if word(i) not in ARTICLES)
        left = [i for i in self._groups(AllOf(rest)) if word(i) not in FRAME_WORDS]
        return expr if len(rest) == len(expr.items) or len(left) < 2 else AllOf(rest)

    def _needed(self, items: tuple) -> tuple:
        """``items`` but those that add score and are neither required nor counted: a
        question's frame (``how to``, ``what is a``, ``how do I``: the page on a thing
        rarely asks about it) and the words of a comparison (``vs``, ``versus``, "Box vs
        Rc": a page that compares two things rarely writes "vs", and as a word to AND it
        kept, on the Rust book, the table of contents alone). Each is dropped only when
        something is left. A question's last word closes its frame when it is "do" or
        "mean" (``CLOSING_WORDS``), and its frame's pronouns and "do" further on frame it
        too (``INNER_FRAME``). Of a query's words, and of a slug's parts
        (``_compound``)."""
        word = self._word
        n = 0
        while n < len(items) and word(items[n]) in (QUESTION_WORDS if n == 0 else FRAME_WORDS):
            n += 1
        end = len(items)
        if n and end - n > 1 and word(items[-1]) in CLOSING_WORDS:
            end -= 1  # "what does X do": the question's frame closes it
        rest = items[n:end]
        if n and rest:  # a question: its frame's words further on frame it ("do we get")
            rest = tuple(i for i in rest if word(i) not in INNER_FRAME) or rest
        rest = rest or items
        kept = tuple(i for i in rest if (w := word(i)) is None
                     or (w.rstrip(".") not in COMPARISON_WORDS and w != "or"))
        return kept or rest

    def _number(self, digits: str) -> None:
        """``digits`` may name a numbered page (``Plan.numbers``), if the query is short."""
        if digits not in self._numbers:
            self._numbers.append(digits)

    def _word(self, item) -> str | None:
        """The word of a term clause ``item``, lowercased; None for anything else."""
        clause = self.plan.clauses[item.index] if isinstance(item, Ref) else None
        return clause.text.lower() if clause is not None and clause.kind == "term" else None

    def _says_or(self) -> bool:
        """Whether the query holds the word "or" (not the operator ``OR``): "sqlite or
        postgres database" asks for either, and as a filter it kept only the chunks that
        hold the word "or" besides every other word (one, on the Nuxt Content docs)."""
        return any(c.kind == "term" and c.text.lower() == "or"
                   for c in self.plan.clauses if c.index in self.plan.positive)

    def _compares(self) -> bool:
        """Whether the query compares (``vs``, ``versus``): "cache-aside vs write-through"
        asks about each, and a section on each answers it. As a filter it kept the
        chunks holding both (a list of disadvantages, a table of contents) and never the
        two sections (the System Design Primer's "Cache-aside" and "Write-through")."""
        return any(c.kind == "term" and c.text.lower().rstrip(".") in COMPARISON_WORDS
                   for c in self.plan.clauses if c.index in self.plan.positive)

    def _groups(self, expr: Expr) -> tuple:
        """The positive items of the top-level AND (the expression itself otherwise)."""
        items = expr.items if type(expr) is AllOf else (expr,)
        return tuple(i for i in items if not isinstance(i, NoneOf)
                     and not (isinstance(i, Ref) and self.plan.clauses[i.index].kind == "tree"))

    def _prefetch(self, node: ast.Node) -> None:
        """Look every exact term and every typo candidate of the query up at once."""
        words, fuzzy = [], []
        for occ in ast.walk(node):
            if isinstance(occ.node, ast.Term | ast.Phrase) and occ.field != "tree":
                text = occ.node.text if isinstance(occ.node, ast.Term) else " ".join(
                    occ.node.words)
                found = split_words(text)
                words += found
                if isinstance(occ.node, ast.Term) and not occ.negated and not has_cjk(text):
                    fuzzy += found  # a word, or the parts of a compound word
        d = self.options.distance if self.options.fuzzy else 0
        eligible = sorted({w for w in fuzzy if len(w) > MIN_FUZZY_LENGTH
                           and _may_be_typo(w)}) if d > 0 else []
        self.reader.prefetch(self.analyzer.stem_all(words), eligible, d)
        if self.options.fuzzy:
            self._fuzzy_cache.update(expansions(self.reader, eligible, d))
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
                self._negations += 1
                inner = self._node(expr, fld, boost)
                self._negations -= 1
                return None if inner is None else NoneOf(inner)
            case ast.And(items) | ast.Or(items):
                planned = [(i, self._node(i, fld, boost)) for i in items]
                kind = AllOf if isinstance(node, ast.And) else AnyOf
                if kind is AllOf and self._abbreviations and not self._negations:
                    planned = self._abbreviated(planned)
                # a CJK run's words are words of the query (``_cjk``)
                kids = tuple(x for i, k in planned if k for x in (
                    k.items if kind is AllOf and type(k) is AllOf and isinstance(i, ast.Term)
                    else (k,)))
                if not kids:
                    return None
                return kids[0] if len(kids) == 1 else kind(kids)
        raise TypeError(f"unknown query node {node!r}")  # pragma: no cover

    def _abbreviated(self, planned: list[tuple]) -> list[tuple]:
        """An AND's items with each abbreviation the query defines (``abbreviations``:
        ``generic associated types (GATs)``) an alternative of each of its words, and no
        item of its own: a chunk may say either (the GAT RFC never says "GATs"), or
        both, which score both; coordination counts each word, met by the abbreviation
        too."""
        items = [i for i, _ in planned]
        for words, short, first in self._abbreviations:
            long, n = [ast.Term(w) for w in words], len(words)
            for k in range(len(items) - n):
                at, lo = (k, k + 1) if first else (k + n, k)
                if (items[at] != ast.Term(short) or items[lo:lo + n] != long
                        or planned[at][1] is None):
                    continue
                ref = planned[at][1]
                planned = [(i, None if j == at else Abbreviated((e, ref))
                            if e is not None and lo <= j < lo + n else e)
                           for j, (i, e) in enumerate(planned)]
                items[at] = None
                break
        return planned

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
        if len(words) > 1 and self._negations and (
                document := self._document(text, fld, boost)) is not None:
            return document
        if len(words) > 1 and fuzzy and not self._negations:
            if has_cjk(text):
                return self._cjk(text, words, fld, boost)
            if "::" in text and (qualified := self._qualified(text, words, fld, boost)):
                return qualified
            if (document := self._document(text, fld, boost)) is not None:
                return document
            return self._compound(text, words, fld, boost)
        if not words:
            return self._unsearchable(text)
        if len(words) != 1:
            return self._phrase(text, fld, boost, 0)
        word = words[0]
        exact = self.analyzer.stem(word)
        alts = {exact: self._exact(exact, word)}
        # -word excludes the word only
        if fuzzy and self.options.fuzzy and not self._negations and _may_be_typo(word):
            self._fuzzy(word, alts)
            if all(a.term_id is None for a in alts.values()):
                self._continued(word, alts)
        if self._rankable and _IDENTIFIER.search(text):  # a ranked query's code
            boost *= IDENTIFIER_BOOST
        return self._add(kind="term", text=text, fields=self._fields(fld),
                         alts=tuple(alts.values()), boost=boost)

    def _unsearchable(self, text: str) -> None:
        """Nothing: ``text`` has no letter or digit (``==``), and the plan says so unless it
        is punctuation (a lone dash, an ellipsis)."""
        if text not in self.plan.unsearchable and not _PUNCTUATION.fullmatch(text):
            self.plan.unsearchable += (text,)

    def _compound(self, text: str, words: list[str], fld: str | None, boost: float) -> Expr:
        """``tldr-pages``: its parts (each fuzzy) or its joined word, plus its phrase for
        score only (see the module docstring)."""
        if _version(words):
            return self._version(text, words, fld, boost)
        if len(words) == 2 and _POSSESSIVE.fullmatch(text):
            return self._term(words[0], fld, boost)
        if self._rankable and _IDENTIFIER.search(text):  # its parts: a ranked query's code
            boost *= IDENTIFIER_BOOST
        parts = tuple(self._term(w, fld, boost) for w in words)
        # a slug's frame and comparison word add score, as typed apart: a page's address
        # writes its title so ("strict-mode-vs-lax-mode", "how-to-write-custom-validators")
        parts = Parts(self._needed(parts) if self._rankable and len(parts) > 2 else parts)
        if (len(words) == 2 and words[0].isalpha() and words[1].isdigit()
                and not self._negations and fld in (None, "path")):
            self._number(words[1])  # KEP-1287, ADR-0005: the page numbered so
            self._joined_number = True
        self._bonus_phrase(text, words, fld, boost)
        joined = "".join(words)
        alt = self._exact(self.analyzer.stem(joined), joined)
        if alt.term_id is None:
            return parts
        for item in parts.items:  # "what's" joins to "whats", which stems to "what": the
            if (isinstance(item, Ref)  # part itself, not a second clause scoring it again
                    and self.plan.clauses[item.index].alts[0].term_id == alt.term_id):
                return AnyOf((item, parts))
        whole = self._add(kind="term", text=joined, fields=self._fields(fld), alts=(alt,),
                          boost=boost)
        return AnyOf((whole, parts))

    def _version(self, text: str, words: list[str], fld: str | None, boost: float) -> Expr:
        """A version (``1.0``, ``v2.3.1``, a date): its numbers adjacent, as typed or with
        its first number spelled the other way (``v1.0.0`` for ``1.0``, ``2.5`` for
        ``v2.5``). Not its parts anywhere: "2.5" matched the "2" and "5" of "4.1.2 ->
        5.2.0"; nor its joined digits: "1.0" is no "10"."""
        typed = self._phrase(text, fld, boost, 0)
        other = [_other_spelling(words[0]), *words[1:]]
        alts = tuple(self._exact(self.analyzer.stem(w), w) for w in other)
        if alts[0].term_id is None:
            return typed
        spelled = self._add(kind="phrase", text=".".join(other), fields=self._fields(fld),
                            alts=alts, boost=boost)
        return AnyOf((typed, spelled))

    def _cjk(self, text: str, words: list[str], fld: str | None, boost: float) -> Expr:
        """A run of CJK text, which the analyzer reads as overlapping bigrams (and any
        other words typed with it, ``列表渲染中的key``): each distinct bigram a word of the
        query, plus the run's phrase for score only (see the module docstring)."""
        items = tuple(self._term(w, fld, boost, fuzzy=not has_cjk(w))
                      for w in dict.fromkeys(words))
        self._bonus_phrase(text, words, fld, boost)
        return AllOf(items) if len(items) > 1 else items[0]

    def _qualified(self, text: str, words: list[str], fld: str | None, boost: float
                   ) -> Expr | None:
        """``std::vector``, ``std::collections::HashMap``: the name after the leading
        lowercase namespaces is required, and the path as written adds score (a phrase,
        as a compound's); the namespaces alone do not count, because prose names the
        thing without them ("the vector class"). A capitalized qualifier is a type
        (``HashMap::new``): the path is then a compound like any other (None)."""
        segments = text.split("::")
        n = 0
        while n < len(segments) - 1 and _NAMESPACE.fullmatch(segments[n]):
            n += 1
        rest = "::".join(segments[n:])
        if n == 0 or not split_words(rest):
            return None
        self._bonus_phrase(text, words, fld, boost)
        return self._term(rest, fld, boost)

    def _document(self, text: str, fld: str | None, boost: float) -> Expr | None:
        """``concepts/validators.md``, ``docs/concepts/validators.md``: the file's name
        without its suffix is required; its folders' words and the path without the
        suffix (a phrase) add score. Not the suffix: the path field holds a path
        without it, and a chunk that writes ".md" is no better for it. Not the folders:
        a path typed from the project's root names folders above the tree's, which no
        path field holds (``docs/`` for a tree at ``./docs``, ``docs/index.md`` for the
        tree's own index). The path is one of the plan's ``files``: a word of a file's
        name is also a section's title ("SUMMARY.md", "CONTRIBUTING.md"), and the file
        ranks first. Negated (``NOT CHANGELOG.md``, ``-api/validators.md``), the pages
        at that path: its words in the path field, as a phrase (the words with "md",
        which no path holds, excluded nothing). None when ``text`` is not such a path."""
        found = _DOCUMENT.fullmatch(text)
        if found is None or not (named := split_words(found["name"])):
            return None
        if self._negations:
            return self._term(text[:found.end("name")], "path", boost) if fld in (
                None, "path") else None
        required = self._term(found["name"], fld, boost)
        if fld in (None, "path"):
            self.plan.files += (text.lower().removeprefix("./"),)
        for word in dict.fromkeys(split_words(found["folders"])):
            self._term(word, fld, boost)  # score only: in no expression
        path = text[:found.end("name")]
        if len(words := split_words(path)) > len(named):
            self._bonus_phrase(path, words, fld, boost)
        return required

    def _bonus_phrase(self, text: str, words: list[str], fld: str | None, boost: float
                      ) -> None:
        """The words as written, adjacent: a clause that only adds score
        (``COMPOUND_PHRASE_WEIGHT`` × its BM25F), so the compound or path as typed ranks
        first."""
        self._add(kind="phrase", text=text, fields=self._fields(fld),
                  alts=tuple(self._exact(self.analyzer.stem(w), w) for w in words),
                  boost=boost * COMPOUND_PHRASE_WEIGHT)

    def _exact(self, term: str, word: str) -> Alt:
        found = self.reader.lookup_terms([term]).get(term)
        return Alt(term, found[0] if found else None, found[1] if found else 0, word=word)

    def _expansions(self, word: str) -> list:
        if word not in self._fuzzy_cache:
            d = self.options.distance
            self._fuzzy_cache[word] = expansions(self.reader, [word], d).get(word, [])
        return self._fuzzy_cache[word]

    def _fuzzy(self, word: str, alts: dict[str, Alt]) -> None:
        hits = self._expansions(word)
        info = self.reader.term_info([h.term_id for h in hits])
        for hit in hits:
            term, df = info[hit.term_id]
            if term not in alts:
                weight = self.options.fuzzy_weight ** max(hit.distance, 1)
                alts[term] = Alt(term, hit.term_id, df, weight, hit.distance, hit.word)

    def _continued(self, word: str, alts: dict[str, Alt]) -> None:
        """A word the index lacks, with no typo of it either, is the start of the words
        it has that go on from it, the ``CONTINUATIONS`` most frequent, weighed as a typo:
        "postgres" is "postgresql" (two letters more than a typo's reach), "kube" is not
        looked at (too short: ``MIN_CONTINUED`` letters)."""
        if len(word) < MIN_CONTINUED or not word.isalpha():
            return
        for term, term_id, df in self.reader.words_with_prefix(word, CONTINUATIONS):
            if term not in alts:
                alts[term] = Alt(term, term_id, df, self.options.fuzzy_weight, 1, word + "*")

    def _prefix(self, text: str, fld: str | None, boost: float) -> Expr | None:
        if fld == "tree":  # tree names are matched whole: ``tree:doc*`` names no tree
            return self._add(kind="tree", text=text + "*", tree=text + "*")
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
            return self._unsearchable(text)
        if len(words) == 1:  # a quoted single word: exact, no fuzzy
            return self._term(words[0], fld, boost, fuzzy=False)
        alts = tuple(self._exact(self.analyzer.stem(w), w) for w in words)
        return self._add(kind="phrase", text=text, fields=self._fields(fld), alts=alts,
                         slop=slop, boost=boost)


def shortened(node: ast.Node, reader, analyzer: Analyzer) -> tuple[ast.Node, str] | None:
    """A query typed with no OR or AND that would need more than ``MAX_CLAUSES`` clauses
    (a log or a page pasted whole), cut to fit, with what a topic says of it: each word
    once, then the rarest words in the index, in the order typed; None when it fits (or
    is no AND of words). The clauses a word needs: one, or a compound's parts, joined
    word and phrase."""
    if type(node) is not ast.And:
        return None

    def cost(item) -> int:
        total = 0
        for o in ast.walk(item):
            text = " ".join(o.node.words) if isinstance(o.node, ast.Phrase) else o.node.text
            n = len(split_words(text))
            total += 1 if n <= 1 else n + 2
        return total

    costs = [cost(i) for i in node.items]
    if sum(costs) <= MAX_CLAUSES:
        return None
    seen: set = set()
    once = []
    for item, c in zip(node.items, costs, strict=True):
        key = item.text.lower() if isinstance(item, ast.Term) else item
        if key not in seen:
            seen.add(key)
            once.append((item, c))
    kept = once
    if sum(c for _, c in once) > MAX_CLAUSES:
        # a word's stems (a compound's: its parts'); it is as rare as its rarest part
        stems = {k: [analyzer.stem(w) for w in split_words(i.text)]
                 for k, (i, _) in enumerate(once) if isinstance(i, ast.Term)}
        found = reader.lookup_terms(sorted({t for ts in stems.values() for t in ts}))
        df = {k: min((found[t][1] for t in ts if t in found), default=0)
              for k, ts in stems.items()}
        # in the index, rarest first; then phrases and words the index lacks
        order = sorted(range(len(once)), key=lambda k: (df.get(k, 0) == 0, df.get(k, 0), k))
        budget, chosen = MAX_CLAUSES, set()
        for k in order:
            if once[k][1] <= budget:
                chosen.add(k)
                budget -= once[k][1]
        kept = [once[k] for k in sorted(chosen)]
    n = sum(1 for o in ast.walk(node) if not o.negated)
    m = sum(1 for i, _ in kept for o in ast.walk(i) if not o.negated)
    note = (f"a long query of {n:,} words: searched for each word once ({m:,})"
            if kept is once else f"a long query of {n:,} words: searched for the {m:,} "
            "rarest in the index, each once")
    return ast.and_([i for i, _ in kept]), note


def refs(expr: Expr | None) -> set[int]:
    """Every clause ``expr`` names."""
    match expr:
        case Ref(i):
            return {i}
        case NoneOf(inner):
            return refs(inner)
        case AllOf(items) | AnyOf(items):
            return set().union(*map(refs, items))
    return set()


def _negated(expr: Expr, under: bool = False) -> set[int]:
    match expr:
        case Ref(i):
            return {i} if under else set()
        case NoneOf(inner):
            return _negated(inner, True)
        case AllOf(items) | AnyOf(items):
            return set().union(*(_negated(i, under) for i in items))
    return set()  # pragma: no cover


def _may_be_typo(word: str) -> bool:
    """Whether ``word`` is looked up with its typos (``_prefetch`` and ``_term`` alike): not
    a function word ("there" matched here, these, three and where: every section of a
    handbook, merged into one page)."""
    return word.lower() not in LIGHT_WORDS


#: What prose puts between words, unsaid when it is dropped: one character, an ellipsis
_PUNCTUATION = re.compile(r"\W|\.\.\.|…|[-–—]+")


def unsearchable_note(words: tuple[str, ...]) -> str:
    """What a query is told of the words it typed that nothing can match; a control
    character is shown as its escape (``\x01``): printed as it is, it reached an agent's
    terminal raw."""
    said = ", ".join(f"`{_visible(w)}`" for w in words)
    return (f"not searched: {said} (no letter or digit: ra searches words; the words "
            "around an operator find its page)")


def _visible(text: str) -> str:
    """``text`` with its control characters escaped, as ``repr`` shows them."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)


def _unsearchable_hint(words: tuple[str, ...]) -> str:
    if not words:
        return "use letters or digits, e.g. 'error handling'"
    said = ", ".join(f"'{_visible(w)}'" for w in words)
    return (f"{said}: no letter or digit, and ra searches words; search for what it is "
            "called, e.g. 'equality operators', 'range operator'")


def plan_query(node: ast.Node, reader, analyzer: Analyzer, options: PlanOptions,
               query: str = "", rankable: bool = False) -> Plan:
    """The plan of a parsed query against ``reader``'s vocabulary."""
    return Planner(reader, analyzer, options).build(node, query, rankable)
