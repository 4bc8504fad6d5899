"""A page named for the query: a short query that is a page's name ranks that page higher.

Agents type the name of a subject ("closures", "smart pointers", "templates") and want
the page about it. BM25F scores the page's words; a page of many sections that each use
the word, or one whose title holds the word among others ("Class Templates", "x64
Calling Convention"), can outscore the page that is *named* for it ("Templates (C++)",
the Rust book's ``ch15-03-drop.md``). The peers' one-field BM25 over chunks rewards such
a title for being short; ra's aggregation of a page's sections does not.

A result is named for the query when the words of one of its names are the query's
words, no more and no fewer, English function words left out on both sides (a word of
their own, "References and Borrowing", not a part of one: "is_pointer"):

- its title, without a trailing parenthesis (``Templates (C++)``, ``auto (C++)``: a
  disambiguator, not part of the name);
- its title without a trailing kind word in the singular: "vector Class", "pair
  Structure" (not "<string_view> operators", a list of a header's operators);
- the last name of a title that is a path of ``::`` (``axum::middleware::from_fn`` is
  named ``from_fn``: ``QUALIFIED``);
- for a whole page, or a page's one top heading (the Rust book's pages each hold one
  ``##`` heading, which a search finds rather than the page), its file's name without
  the numbering at its start (the Rust book's ``ch15-00-smart-pointers``, an RFC's
  ``2000-const-generics``), or its folder's for an ``index`` or ``README`` file.

Words match as the query's clauses do, their fuzzy alternatives included, so a typo
finds the name too. Such a result's score is multiplied by ``1 + BOOST`` (docs/ranking.md
has the numbers: topics, symbols and short queries gain; SciFact and the longer sets are
unchanged). Only plain queries of at most ``MAX_WORDS`` words are looked at (no phrase,
field, NOT, or OR), and only the best ``DEPTH`` of the results the elbow kept: the boost
reorders them and keeps them all (before the elbow, a boosted first result left "const
generics" on the Rust RFCs one result of three).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from ra.query.plan import ALL_FIELDS, Abbreviated, AllOf, AnyOf, Parts, Plan, Ref
from ra.query.rank import Candidate, best_first
from ra.text import unescaped

BOOST = 0.4
MAX_WORDS = 4
DEPTH = 20
#: Whether a section's own title can name it, not only a page's names (off: known items
#: symbols lose 4 queries, "std::sort" finding the section "sort"; rust-book 1; cjk typo
#: gains 1; on the Rust RFCs "procedural macros" then keeps 1566-proc-macros first)
SECTIONS = True
#: Whether a title that is a path of ``::`` (``axum::middleware::from_fn``) is named by
#: its last name too: "middleware::from_fn" put axum's section of that title 2nd, after
#: "Accessing state in middleware" (``middleware::from_fn_with_state`` again and again).
#: Known items: no query moves (cpp-docs' titles name a class or a function after a space)
QUALIFIED = True

_TRAILING_PARENTHESIS = re.compile(r"\s*\([^()]*\)\s*$")
#: What numbers a file at the start of its name: the Rust book's "ch15-03-drop", an RFC's
#: "2000-const-generics", "appendix-02-operators" (not "x64-calling-convention": x64 is a
#: word of the name)
_NUMBERING = re.compile(r"\d+|(?:ch|chapter|part|appendix|section|sec|step|lesson)\d*", re.I)
_FILE_WORD = re.compile(r"[-\s.]+")
_PUNCTUATION = "\"'`.,:;!?()[]{}<>"
#: What an API reference's title says after the name of the one thing it documents:
#: "vector Class", "pair Structure", "sizeof Operator" (not a plural: "<string_view>
#: operators" lists a header's operators, it is not the page about string_view)
_KIND = re.compile(r"(?<=\S)\s+(?:class|struct|structure|enum|enumeration|union|interface|"
                   r"function|method|macro|namespace|header|keyword|operator|trait|module|"
                   r"property|event|typedef)\s*$", re.I)
_FOLDER_FILES = frozenset({"index", "readme", "_index"})


def query_names(plan: Plan, analyzer, max_words: int = MAX_WORDS
                ) -> tuple[frozenset[str], ...] | None:
    """Per word of a plain short query (``max_words`` at most), the terms it matches
    (itself, or for a word the index lacks, its fuzzy alternatives), English function
    words left out; None when the query is not one such a name can be."""
    required = _word_clauses(plan.expr) if not plan.negative else None
    if not required or _typed(plan.expr) > max_words:
        return None
    stop = _function_terms(analyzer.language)
    words = []
    for i, part in required:
        clause = plan.clauses[i]
        if clause.kind != "term" or clause.fields != ALL_FIELDS:
            return None
        terms = _meant(clause.alts)
        if terms and (part or not terms & stop):  # "get" of Get-ChildItem stays
            words.append(terms)
    return tuple(words) or None


def _word_clauses(expr, part: bool = False) -> list[tuple[int, bool]] | None:
    """The clauses of the words a query is made of, in order, each with whether it is
    part of a word: each word, each part of a compound (``Get-ChildItem`` is "get" and
    "childitem", not also "getchilditem", its joined form), each word an abbreviation
    stands for (not the abbreviation); None for what is no such list of words (an OR
    typed)."""
    match expr:
        case Ref(i):
            return [(i, part)]
        case Abbreviated(items):  # a word, or the abbreviation the query defines for it
            return _word_clauses(items[0], part)
        case AnyOf(items):  # a compound: its parts, or its joined form
            parts = [it for it in items if isinstance(it, Parts)]
            if len(parts) == 1 and all(isinstance(it, Ref | Parts) for it in items):
                return _word_clauses(parts[0], True)
            return None
        case AllOf(items):
            words: list[tuple[int, bool]] = []
            for item in items:
                if (more := _word_clauses(item, part or isinstance(expr, Parts))) is None:
                    return None
                words += more
            return words
    return None


def _typed(expr) -> int:
    """How many words a query of words (``_word_clauses``) was typed as: a compound is
    one (cargo's key ``net.git-fetch-with-cli``, five parts, names its section): its
    ``Parts`` is an ``AllOf`` of another type."""
    return sum(map(_typed, expr.items)) if type(expr) is AllOf else 1


def _meant(alts) -> frozenset[str]:
    """The terms a query word names a page by: the word as typed when the index has it
    at least as often as any fuzzy alternative ("drop" is not named "prop"), else the
    alternatives too (the typo "fried" of "friend" is a word of cpp-docs, 1 chunk
    against 192)."""
    found = [a for a in alts if a.term_id is not None]
    exact = [a for a in found if a.distance == 0]
    if exact and max(a.df for a in exact) >= max(a.df for a in found):
        return frozenset(a.term for a in exact)
    return frozenset(a.term for a in found)


@lru_cache(maxsize=8)
def _function_terms(language: str) -> frozenset[str]:
    """The terms of the English function words, as ``language``'s analyzer stems them."""
    from ra.text.analysis import analyzer_for
    from ra.text.stopwords import ENGLISH

    analyzer = analyzer_for(language)
    return frozenset(analyzer.stem(w) for w in ENGLISH)


def names(meta, analyzer) -> tuple[frozenset[str], ...]:
    """The term sets of a chunk's names (module docstring)."""
    page = meta.depth == 0 or (meta.parent_id == meta.doc_id and meta.sibling_count == 1)
    if not (page or SECTIONS):
        return ()
    return _names(meta.title or "", meta.path if page else None, analyzer.language)


@lru_cache(maxsize=1 << 16)
def _names(title: str, path: str | None, language: str) -> tuple[frozenset[str], ...]:
    """``names`` by what they depend on: a page's names are looked up again by every
    query that finds it (0.08 ms a query median, 0.3 at p95 on cpp-docs, uncached)."""
    from ra.text.analysis import analyzer_for
    from ra.text.stopwords import ENGLISH

    analyzer = analyzer_for(language)
    title = _TRAILING_PARENTHESIS.sub("", title)
    found = [_words(title.split(), analyzer, ENGLISH)]
    if (bare := _KIND.sub("", title)) != title:
        found.append(_words(bare.split(), analyzer, ENGLISH))
    if QUALIFIED and "::" in title and " " not in title.strip():  # a path's last name
        found.append(_words([title.strip().rsplit("::", 1)[1]], analyzer, ENGLISH))
    if path is not None:  # a whole page: its file's name too, without its numbering
        file = PurePosixPath(path)
        stem = file.parent.name if file.stem.lower() in _FOLDER_FILES else file.stem
        pieces = _FILE_WORD.split(unescaped(stem))  # ODO%2D1.md: Azure DevOps' "ODO-1"
        while pieces and _NUMBERING.fullmatch(pieces[0]):
            pieces.pop(0)
        found.append(_words(pieces, analyzer, ENGLISH))
    return tuple(n for n in found if n)


def _words(pieces: list[str], analyzer, function_words: frozenset[str]) -> frozenset[str]:
    """The terms of a name's words, a function word left out when it is a word of its own
    ("References and Borrowing"), not when it is part of one ("is_pointer Class": the
    page on ``is_pointer`` is not named "pointer")."""
    return frozenset(t for piece in pieces
                     if piece.strip(_PUNCTUATION).lower() not in function_words
                     for t in analyzer.terms(piece))


def is_named(words: tuple[frozenset[str], ...], name: frozenset[str]) -> bool:
    """Whether ``name``'s terms are the query's words: as many, each word matched by one
    of them, each of them matching a word."""
    if len(name) != len(words):
        return False
    return all(w & name for w in words) and all(any(t in w for w in words) for t in name)


class NamedBoost:
    """The re-weighing ranking applies to the results the elbow kept: those named for
    the query score ``factor`` times as much. ``boosted``: their ids, for --explain."""

    def __init__(self, words: tuple[frozenset[str], ...], analyzer,
                 meta: Callable[[str], object | None], factor: float) -> None:
        self.words, self.analyzer, self.meta, self.factor = words, analyzer, meta, factor
        self.boosted: list[str] = []

    def __call__(self, results: Sequence[Candidate]) -> list[Candidate]:
        """``results`` (best first) with those named for the query boosted; only the
        best ``DEPTH`` can change places (a boost only raises a score)."""
        top = list(results[:DEPTH])
        for k, r in enumerate(top):
            m = self.meta(r.id)
            if m is not None and any(is_named(self.words, n) for n in names(m, self.analyzer)):
                top[k] = r._replace(score=r.score * self.factor)
                self.boosted.append(r.id)
        if not self.boosted:
            return list(results)
        return [*sorted(top, key=best_first), *results[DEPTH:]]

def boost_named(plan: Plan | None, analyzer, meta: Callable[[str], object | None]
                ) -> NamedBoost | None:
    """The re-weighing for ``plan``'s query, or None when it has nothing to do (``BOOST``
    0, or a query no name can be)."""
    if BOOST <= 0 or plan is None or (words := query_names(plan, analyzer)) is None:
        return None
    return NamedBoost(words, analyzer, meta, 1 + BOOST)


#: The words at most of a query whose heading ``heads_of`` looks for: "finding a project
#: to contribute to" is opensource.guide's section of that title
HEADS_WORDS = 8


def heads_of(plan: Plan | None, analyzer, meta: Callable[[str], object | None]
             ) -> Callable[[Candidate], bool] | None:
    """Whether a chunk's own heading holds each word of ``plan``'s query (a plain query of
    ``HEADS_WORDS`` at most, words as ``query_names`` reads them): the part of a page too
    large for the budget that is about the query (``rank.fit_parts``). None for a query
    no heading can hold so."""
    if plan is None or (words := query_names(plan, analyzer, HEADS_WORDS)) is None:
        return None
    from ra.text.stopwords import ENGLISH

    def heads(c: Candidate) -> bool:
        m = meta(c.id)
        held = _words(m.title.split(), analyzer, ENGLISH) if m is not None and m.title else ()
        return bool(held) and all(w & held for w in words)
    return heads
