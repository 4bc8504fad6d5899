"""The query AST: immutable nodes, normalising constructors, and three views of a tree.

Nodes are frozen dataclasses so trees compare by value (tests and the round-trip property
depend on it) and can be cached. The parser builds ``And``/``Or`` through ``and_``/``or_``,
which flatten nested nodes of the same kind and unwrap a single child, so every parsed
tree is in one normal form: ``a b c`` and ``a (b c)`` give the same ``And``.

The views:

- ``to_query_string`` writes a tree back as query text that parses to the same tree,
  adding parentheses only where precedence needs them;
- ``to_dict`` is the JSON encoding of the upstream conformance cases, extended with
  ``{"prefix": text}`` and a ``"slop"`` key on proximity phrases;
- ``walk``/``positive_words`` list the leaves (terms, phrases, prefixes) with the field and
  boost in force, which is what planning needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal

#: Fields a query may name, in the order error hints list them.
FIELDS = ("title", "tags", "body", "path", "tree")

#: What may end a one-letter command-line flag besides whitespace: the characters that end
#: a word (``ra.query.lexer``: ``-p^2`` is the flag boosted) and punctuation after one
#: (``-v,``, ``-j=4``). Such a ``-`` is text, not a negation.
_FLAG_END = frozenset('()"^,;.=')


#: Query text that ends with a boost or a phrase's slop (``^2``, ``"a b"~3``): a word
#: written right after it starts a word of its own (``to_query_string``).
_NUMBER_END = re.compile(r'(\^[0-9.]+|"~[0-9]+)$')


def negates(text: str, i: int) -> bool:
    """Whether the ``-`` at ``text[i]`` is a negation: at the start of a word that follows
    whitespace, ``(``, a phrase (``"a b"-c``, ``“a b”-c``) or group, or the start of the
    text, before a letter, a quote or ``(``, and not a one-letter flag (``what does -p
    do``: excluding the letter would hide the page that documents the flag). The lexer
    reads text with it, and ``to_query_string`` writes a negation so that it reads back
    as one."""
    before = text[i - 1] if i else " "
    if not (before.isspace() or before in '()"\u201c\u201d'):  # “ closes „…“
        return False
    after = text[i + 1:i + 2]
    if after in ('"', "("):
        return True
    if not after.isalpha():
        return False
    end = text[i + 2:i + 3]
    return bool(end) and not end.isspace() and end not in _FLAG_END


@dataclass(frozen=True)
class Term:
    """A single word, as typed (analysis happens at planning)."""

    text: str


@dataclass(frozen=True)
class Prefix:
    """``scrap*``: every indexed word that starts with ``text``."""

    text: str


@dataclass(frozen=True)
class Phrase:
    """``"a b"``; ``"a b"~3`` lets ``slop`` extra words stand between them."""

    words: tuple[str, ...]
    slop: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", tuple(self.words))


@dataclass(frozen=True)
class Not:
    """Excludes what ``expr`` matches."""

    expr: Node


@dataclass(frozen=True)
class And:
    """All of ``items`` must match."""

    items: tuple[Node, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class Or:
    """At least one of ``items`` must match."""

    items: tuple[Node, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class Field:
    """``name:expr``: ``expr`` must match within one field (a name from ``FIELDS``)."""

    name: str
    expr: Node


@dataclass(frozen=True)
class Boost:
    """``expr^factor``: multiplies the score ``expr`` contributes."""

    expr: Node
    factor: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "factor", float(self.factor))


Node = Term | Prefix | Phrase | Not | And | Or | Field | Boost
Leaf = Term | Prefix | Phrase


def _flatten(kind: type[And] | type[Or], items: Iterable[Node]) -> Node:
    flat: list[Node] = []
    for item in items:
        flat.extend(item.items if isinstance(item, kind) else (item,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def and_(items: Iterable[Node]) -> Node:
    """An ``And`` of ``items``, nested ``And``s flattened; a single item is returned as is."""
    return _flatten(And, items)


def or_(items: Iterable[Node]) -> Node:
    """An ``Or`` of ``items``, nested ``Or``s flattened; a single item is returned as is."""
    return _flatten(Or, items)


def format_number(value: float) -> str:
    """Shortest decimal text for ``value`` without exponent: 2.5 → "2.5", 3.0 → "3"."""
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _wrapped(node: Node, bare: tuple[type, ...]) -> str:
    text = to_query_string(node)
    return text if isinstance(node, bare) else f"({text})"


def to_query_string(node: Node | None) -> str:
    """Query text that parses back to ``node`` (``""`` for ``None``)."""
    match node:
        case None:
            return ""
        case Term(text):
            return text
        case Prefix(text):
            return f"{text}*"
        case Phrase(words, slop):
            return f'"{" ".join(words)}"' + (f"~{slop}" if slop else "")
        case Not(expr):  # "--a" would be the word "--a": a double negation is "-(-a)"
            inner = _wrapped(expr, (Term, Prefix, Phrase, Field, Boost))
            # '-' negates only where the lexer reads it so ("-0" and "-p" are words)
            return ("-" if negates("-" + inner, 0) else "NOT ") + inner
        case And(items):
            out = ""
            for item in items:
                text = _wrapped(item, (Term, Prefix, Phrase, Not, Field, Boost))
                # a word that starts with '-' right after a boost or slop ("a^2-xy", "NOT
                # 0^1-xy") is text only there: after a space it would negate
                glued = not isinstance(item, Not) and text[:1] == "-" and negates(text, 0) \
                    and _NUMBER_END.search(out) is not None
                out += text if glued or not out else " " + text
            return out
        case Or(items):
            return " OR ".join(_wrapped(item, (Term, Prefix, Phrase, Not, Field, Boost, And))
                               for item in items)
        case Field(name, expr):
            return f"{name}:" + _wrapped(expr, (Term, Prefix, Phrase))
        case Boost(expr, factor):
            return _wrapped(expr, (Term, Prefix, Phrase, Field)) + f"^{format_number(factor)}"
    raise TypeError(f"not a query node: {node!r}")


def to_dict(node: Node | None) -> dict | None:
    """The conformance JSON encoding of ``node`` (``None`` for the empty query)."""
    match node:
        case None:
            return None
        case Term(text):
            return {"term": text}
        case Prefix(text):
            return {"prefix": text}
        case Phrase(words, slop):
            return {"phrase": list(words)} | ({"slop": slop} if slop else {})
        case Not(expr):
            return {"not": to_dict(expr)}
        case And(items):
            return {"and": [to_dict(item) for item in items]}
        case Or(items):
            return {"or": [to_dict(item) for item in items]}
        case Field(name, expr):
            return {"field": {"name": name, "expr": to_dict(expr)}}
        case Boost(expr, factor):
            return {"boost": {"expr": to_dict(expr), "factor": factor}}
    raise TypeError(f"not a query node: {node!r}")


@dataclass(frozen=True)
class Occurrence:
    """A leaf of a query tree with its context.

    ``field`` is the innermost enclosing field (``None``: any field); ``boost`` is the
    product of the enclosing boosts; ``negated`` is true under an odd number of ``Not``s,
    so ``--a`` counts as positive, as it matches the same chunks as ``a``.
    """

    node: Leaf
    field: str | None = None
    boost: float = 1.0
    negated: bool = False


def walk(node: Node | None, field: str | None = None, boost: float = 1.0,
         negated: bool = False) -> Iterator[Occurrence]:
    """Every leaf of ``node`` in query order, with its field, boost and negation."""
    match node:
        case None:
            return
        case Term() | Prefix() | Phrase():
            yield Occurrence(node, field, boost, negated)
        case Not(expr):
            yield from walk(expr, field, boost, not negated)
        case And(items) | Or(items):
            for item in items:
                yield from walk(item, field, boost, negated)
        case Field(name, expr):
            yield from walk(expr, name, boost, negated)
        case Boost(expr, factor):
            yield from walk(expr, field, boost * factor, negated)


def positive_words(node: Node | None) -> list[Occurrence]:
    """The leaves that count towards a match: every leaf not negated."""
    return [occurrence for occurrence in walk(node) if not occurrence.negated]
