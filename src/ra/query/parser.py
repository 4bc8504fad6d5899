"""Query parser: tokens → AST, by recursive descent.

Grammar (tokens from ``ra.query.lexer``; precedence from loosest to tightest)::

    query    := or_expr | <nothing>                   nothing parses to None
    or_expr  := and_expr (OR and_expr)*
    and_expr := unary (AND? unary)*                   adjacent expressions are AND'd
    unary    := ('-' | NOT) unary | primary ['^' number]
    primary  := '(' or_expr ')' | FIELD ':' value | leaf
    value    := '(' or_expr ')' | leaf                no nested field without parentheses
    leaf     := WORD | WORD '*' | PHRASE ['~' int]

So ``a b OR c`` is ``(a AND b) OR c``, ``-a^2`` is ``NOT (a^2)``, and ``title:guide^2`` boosts
the field expression. ``And``/``Or`` are built with ``and_``/``or_``, which keeps trees
flat. A query of negations only (``-foo``) parses; rejecting it is the planner's job.
Field names are matched case-insensitively and stored lower-case; an unknown one is a
``QueryError`` with ``syntax=False`` at the field's offset (upstream reports it when
compiling the query). Groups and negations nest at most ``MAX_DEPTH`` deep, so that a
pathological query is a ``QueryError`` rather than a ``RecursionError``.

A search does not refuse a query that is not valid syntax: ``parse_lenient`` answers it
with its words (what is left once the characters that only make sense as syntax are
taken out), AND'd, and returns the error too, so every output can say what happened;
asked to be strict, a search raises the error with its caret instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from ra.errors import QueryError
from ra.query.ast import FIELDS, Boost, Field, Node, Not, Phrase, Prefix, Term, and_, or_
from ra.query.lexer import Token, query_error, tokenize

MAX_DEPTH = 64

_LEAVES = frozenset({"Term", "Prefix", "Phrase"})
_STARTS = _LEAVES | {"Not", "LParen", "FieldPrefix"}


def parse(query: str) -> Node | None:
    """The AST of ``query``, ``None`` when it is empty; raises ``QueryError``."""
    tokens = tokenize(query)
    return _Parser(query, tokens).parse() if tokens else None


def parse_lenient(query: str) -> tuple[Node | None, QueryError | None]:
    """``(parse(query), None)``, or when ``query`` does not parse, ``(its words AND'd, the
    error)``."""
    try:
        return parse(query), None
    except QueryError as error:
        return words_only(query), error


def typed_operators(query: str) -> bool:
    """Whether ``query`` (valid syntax) has an OR or AND typed: a boolean query, which
    is never ranked in place of being filtered (``ra.query.plan``)."""
    return any(t.kind in ("Or", "And") for t in tokenize(query))


def dash_negations(query: str) -> list[tuple[int, int]]:
    """The spans of the ``-word`` negations of ``query`` (valid syntax): a ``-`` written
    right before a bare word. Such a word may be a command-line flag an agent pasted
    (``Get-ChildItem -Recurse``, ``tar -xzf``) rather than an exclusion."""
    tokens = tokenize(query)
    return [(a.pos, b.pos + len(b.text)) for a, b in zip(tokens, tokens[1:], strict=False)
            if a.kind == "Not" and a.text == "-" and b.kind == "Term" and b.pos == a.pos + 1]


def abbreviations(query: str) -> list[tuple[tuple[str, ...], str, bool]]:
    """The abbreviations ``query`` (valid syntax) defines as prose does: a word alone in
    parentheses right after the words it abbreviates (``generic associated types
    (GATs)``, ``AMP-activated protein kinase (AMPK)``), or right before them, in
    parentheses (``RBAC (role-based access control)``). Each is ``(the words, the
    abbreviation, whether it comes first)``. A query of none of this is ``[]``.

    The test is Schwartz and Hearst's (PSB 2003) for abbreviation definitions: the
    abbreviation's letters and digits, from its last, are found in the words in order,
    its first at the start of a word; the words are the fewest that allow it, at most
    ``min(len + 5, 2 * len)`` of them. ra asks more of the abbreviation: 2 to 10
    characters, a capital or a digit among them, and shorter than its words."""
    try:
        tokens = tokenize(query)
    except QueryError:  # read as its words: its parentheses are gone
        return []
    kinds = [t.kind for t in tokens]
    found = []
    for i, token in enumerate(tokens):
        if token.kind != "LParen":
            continue
        end = kinds.index("RParen", i) if "RParen" in kinds[i:] else len(kinds)
        inside = tokens[i + 1:end]
        if any(t.kind != "Term" for t in inside) or not inside:
            continue
        start = i  # the words typed bare right before the "("
        while start > 0 and _bare_word(tokens, start - 1):
            start -= 1
        before = i - start
        if len(inside) == 1 and before:  # words (SHORT)
            short = str(inside[0].value)
            words = [str(t.value) for t in tokens[start:i]]
            n = _long_form(short, words)
            if n:
                found.append((tuple(words[-n:]), short, False))
        elif len(inside) > 1 and before:  # SHORT (words)
            short = str(tokens[i - 1].value)
            words = [str(t.value) for t in inside]
            if _long_form(short, words) == len(words):
                found.append((tuple(words), short, True))
    return found


def _bare_word(tokens: list[Token], j: int) -> bool:
    """Whether ``tokens[j]`` is a word typed bare: not negated, not a field's value."""
    return tokens[j].kind == "Term" and (j == 0 or tokens[j - 1].kind in ("Term", "LParen",
                                                                           "RParen"))


def _long_form(short: str, words: list[str]) -> int | None:
    """How many of the last of ``words`` ``short`` abbreviates (``abbreviations``), or
    None."""
    if not (2 <= len(short) <= 10 and short[0].isalnum() and any(c.isalpha() for c in short)
            and any(c.isupper() or c.isdigit() for c in short)):
        return None
    words = words[-min(len(short) + 5, 2 * len(short)):]
    text = " ".join(words)
    s, at = len(short) - 1, len(text) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while at >= 0 and (text[at].lower() != c
                           or (s == 0 and at > 0 and text[at - 1].isalnum())):
            at -= 1
        if at < 0:
            return None
        at -= 1
        s -= 1
    n = len(words) - text[:at + 1].count(" ")
    long = " ".join(words[-n:])
    if len(long) <= len(short) or short.lower() in long.lower().split():
        return None
    return n


_SYNTAX_ONLY = re.compile(r'["()^~*]')
_KEYWORDS = frozenset({"AND", "OR", "NOT"})


def words_only(query: str) -> Node | None:
    """The AND of the words of ``query`` read as plain text: quotes, parentheses, boosts,
    proximity and wildcards taken out, the capitalised keywords dropped, every other word
    a ``Term`` (so ``-x`` is the word ``x`` and ``foo:bar`` a word)."""
    words = [w for w in _SYNTAX_ONLY.sub(" ", query).split() if w not in _KEYWORDS]
    return and_([Term(w) for w in words]) if words else None


def describe(token: Token | None) -> str:
    """How an error message names ``token``."""
    if token is None:
        return "end of query"
    if token.kind in ("Or", "And"):
        return token.kind.upper()
    if token.kind == "Not":
        return "NOT" if token.text == "NOT" else "'-'"
    names = {"Boost": "boost", "Slop": "proximity", "FieldPrefix": "field"}
    return f"{names[token.kind]} '{token.text}'" if token.kind in names else f"'{token.text}'"


class _Parser:
    def __init__(self, query: str, tokens: list[Token]) -> None:
        self.query, self.tokens, self.i, self.depth = query, tokens, 0, 0

    def parse(self) -> Node:
        node = self.or_expr()
        if self.peek() is not None:
            raise self.leftover(self.peek())
        return node

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def kind(self) -> str | None:
        token = self.peek()
        return token.kind if token else None

    def take(self) -> Token:
        self.i += 1
        return self.tokens[self.i - 1]

    def error(self, message: str, token: Token | None, syntax: bool = True) -> QueryError:
        position = token.pos if token else len(self.query)
        return query_error(message, self.query, position, syntax)

    @contextmanager
    def deeper(self, token: Token) -> Iterator[None]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"query nests too deeply (more than {MAX_DEPTH} levels)", token)
        yield
        self.depth -= 1

    def or_expr(self) -> Node:
        items = [self.and_expr()]
        while self.kind() == "Or":
            self.take()
            items.append(self.and_expr())
        return or_(items)

    def and_expr(self) -> Node:
        items = [self.unary()]
        while self.kind() in _STARTS or self.kind() == "And":
            if self.kind() == "And":
                self.take()
            items.append(self.unary())
        return and_(items)

    def unary(self) -> Node:
        if self.kind() == "Not":
            with self.deeper(self.take()):
                return Not(self.unary())
        node = self.primary()
        if self.kind() == "Boost":
            node = Boost(node, self.take().value)
        return node

    def primary(self) -> Node:
        kind = self.kind()
        if kind in _LEAVES:
            return self.leaf()
        if kind == "LParen":
            return self.group()
        if kind == "FieldPrefix":
            return self.field()
        raise self.misplaced(self.peek())

    def leaf(self) -> Node:
        token = self.take()
        if token.kind == "Term":
            return Term(token.value)
        if token.kind == "Prefix":
            return Prefix(token.value)
        words = tuple(token.value.split())
        if not words:
            raise self.error("empty phrase", token)
        slop = self.take().value if self.kind() == "Slop" else 0
        return Phrase(words, slop)

    def group(self) -> Node:
        opening = self.take()
        with self.deeper(opening):
            node = self.or_expr()
        if self.kind() == "RParen":
            self.take()
            return node
        if self.peek() is None:
            raise self.error("expected closing parenthesis for this '('", opening)
        raise self.leftover(self.peek())

    def field(self) -> Node:
        token = self.take()
        name = token.value.lower()
        if name not in FIELDS:
            raise self.error(f"unknown field: {token.value}", token, syntax=False)
        if self.kind() in _LEAVES:
            return Field(name, self.leaf())
        if self.kind() == "LParen":
            return Field(name, self.group())
        found = describe(self.peek())
        raise self.error(f"expected term, phrase, or group after field '{token.text}', "
                         f"found {found}", self.peek())

    def misplaced(self, token: Token | None) -> QueryError:
        """An error for ``token`` where an expression should start."""
        previous = self.tokens[self.i - 1] if self.i else None
        if previous is None:
            return self.error(f"unexpected {describe(token)} at the start of the query", token)
        return self.error(f"expected an expression after {describe(previous)}, "
                          f"found {describe(token)}", token)

    def leftover(self, token: Token) -> QueryError:
        """An error for ``token`` where an expression has ended."""
        if token.kind == "RParen":
            return self.error("unexpected ')' without a matching '('", token)
        if token.kind == "Boost":
            return self.error(f"unexpected boost '{token.text}': one boost per expression",
                              token)
        return self.error(f"unexpected {describe(token)}", token)
