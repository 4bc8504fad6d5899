"""Query lexer: query text → tokens, each with the character offset it starts at.

Agents type natural language (claims, task descriptions, error messages, file names), so
a character is an operator only where it is clearly meant as one; everywhere else it is
text, and the analyzer later drops what is not a letter or digit. Tokens (their
conformance encoding in brackets):

- ``"..."`` a phrase [``["Phrase", text]``]; ``~N`` right after its closing quote sets
  the proximity [``["Slop", N]``]. Typographic quotes as word processors and web pages
  write them (``“...”``, ``„...“``) are a phrase too when they close; unclosed, they are
  text;
- ``(`` and ``)`` [``["LParen"]``, ``["RParen"]``], except an empty pair ``()``, which
  groups nothing and is text: ``reactive()``, ``useState() hook`` are a function's name
  as agents write it, not a syntax error;
- ``-`` is a negation [``["Not"]``] only at the start of a word that follows whitespace,
  ``(``, the end of a phrase or group (``"a b"-c``, ``(a OR b)-c``) or the start of the
  query, and only before a letter, a quote or ``(`` (``rust -deprecated``,
  ``-"exact phrase"``, ``-(a OR b)``; ``ra.query.ast.negates``). Elsewhere it is text:
  inside a word (``http-client``), after other characters (``(+)-``), alone
  (``G - quadruplex``), doubled (``--prefix``, a command-line flag), before a digit
  (``-1``) or before one letter that ends the word (``-p``, ``-v,``: a short flag, as in
  "what does -p do"; excluding a letter is never what was meant);
- ``^N`` or ``^N.N`` a boost [``["Boost", N]``]; the number is required and must be > 0;
- a word runs until whitespace, ``(``, ``)`` (but for an empty pair ``()``), ``"`` or
  ``^``. It is the keyword ``OR``,
  ``AND`` or ``NOT`` in capitals only [``["Or"]``, ``["And"]``, ``["Not"]``]: lower-case
  "or", "and", "not" are words of natural-language questions ("(or tag)" is not a syntax
  error, and a stray "not" silently excluding the next word would be worse than an extra
  term). Upstream read ``or`` in any case as OR (DESIGN, deviations). A word ending in one
  ``*`` after a letter or digit is a prefix wildcard ``scrap*`` [``["Prefix", "scrap"]``];
  a ``*`` touching a letter or digit anywhere else (``*scraper*``, ``scr*per``,
  ``scrap**``) is an error, since the index cannot answer it and an error with a hint
  beats silently searching for something else; a ``*`` that touches no letter or digit
  (``*.test.ts``, ``**/*.md``, a lone ``*``) is text, as in a file glob. Any other word is
  a term [``["Term", text]``];
- ``name:`` is a field prefix [``["FieldPrefix", name]``] when ``name`` is a known field
  (in any case, and even when a space follows: ``title: guide``, as upstream), or when
  ``name`` is alphabetic and a value follows the colon directly (``foo:bar``, which the
  parser then rejects as an unknown field), except before a digit (``localhost:8080``),
  ``/`` (``https://host``) or
  ``\\`` (a Windows path: ``C:\\Users\\Public``).
  Otherwise the colon is part of the word: pasting ``Error: connection refused`` searches
  for it rather than failing on a field ``Error``, and ``std::vec`` and ``10:30`` stay
  words.

Errors carry the offset of the offending character and a hint from ``HINTS``. A search
answers a query that does not lex or parse with its words (``ra.query.parser.
parse_lenient``) unless it is asked to be strict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ra.errors import QueryError
from ra.query.ast import FIELDS, negates

#: Hints by message fragment, first match wins (so specific fragments come before the
#: operator names). Upstream had the hints for unknown field, unclosed quote, closing
#: parenthesis and OR.
HINTS = {
    "unknown field": "Valid fields are: title, tags, body, path, tree",
    "unclosed quote": 'Add a closing quote (") to complete the phrase',
    "closing parenthesis": "Add a closing parenthesis ) to match the opening one",
    "matching '('": "Remove the ')' or add a '(' before it",
    "after field": "Put the value right after the colon, e.g., 'title:guide'",
    "empty phrase": "Put words between the quotes, or remove them",
    "wildcard": "Only prefix wildcards are supported, e.g., 'scrap*'",
    "proximity": "Proximity follows a phrase and counts words, e.g., '\"error handling\"~3'",
    "nests too deeply": "Remove some parentheses or negations",
    "OR": "OR requires expressions on both sides, e.g., 'rust OR golang'",
    "AND": "AND requires expressions on both sides, e.g., 'rust AND async'",
    "NOT": "NOT excludes the expression after it, e.g., 'rust NOT deprecated'",
    "'-'": "'-' excludes the expression after it, e.g., 'rust -deprecated'",
    "boost": "A boost is a positive number after a term, phrase or group, e.g., 'rust^2.5'",
}

_WORD_END = frozenset('()"^')
_VALUE_END = frozenset(')^:/\\')



def query_error(message: str, query: str = "", position: int | None = None,
                syntax: bool = True) -> QueryError:
    """A ``QueryError`` with the hint ``HINTS`` has for ``message``."""
    hint = next((text for key, text in HINTS.items() if key in message), None)
    return QueryError(message, query=query, position=position, hint=hint, syntax=syntax)


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` as in the conformance encoding, its value, where it starts."""

    kind: str
    value: str | float | int | None = None
    pos: int = 0
    text: str = ""

    def encode(self) -> list:
        """The conformance encoding: ``[kind]`` or ``[kind, value]``."""
        return [self.kind] if self.value is None else [self.kind, self.value]


def tokenize(query: str) -> list[Token]:
    """The tokens of ``query``; raises ``QueryError`` at the offending offset."""
    tokens: list[Token] = []
    i = 0
    while i < len(query):
        if query[i].isspace():
            i += 1
            continue
        token, i = _next_token(query, i)
        tokens.append(token)
        if token.kind == "Phrase" and (slop := _slop(query, i)):
            tokens.append(slop)
            i += len(slop.text)
    return tokens


def _next_token(query: str, i: int) -> tuple[Token, int]:
    char = query[i]
    if char == '"':
        return _phrase(query, i)
    if char in _SMART_CLOSE and (phrase := _smart_phrase(query, i)):
        return phrase
    if char in "()" and not _empty_pair(query, i):
        return Token("LParen" if char == "(" else "RParen", None, i, char), i + 1
    if char == "-" and negates(query, i):
        return Token("Not", None, i, char), i + 1
    if char == "^":
        return _boost(query, i)
    return _word(query, i)


def _empty_pair(query: str, i: int) -> bool:
    """Whether ``()`` starts at ``i``: text, not a group (see the module docstring)."""
    return query.startswith("()", i)


#: typographic opening quotes and the quotes that close them (“English”, „German“)
_SMART_CLOSE = {"\u201c": "\u201d\"", "\u201e": "\u201c\u201d"}


def _smart_phrase(query: str, start: int) -> tuple[Token, int] | None:
    """A phrase in typographic quotes, when they close around text that holds no ASCII
    quote (else None: the quote is text). ``„0"x"“`` mixes the two kinds: as a phrase its
    words would hold ``"``, which no query text gives back (Hypothesis found it)."""
    closers = _SMART_CLOSE[query[start]]
    end = next((j for j in range(start + 1, len(query)) if query[j] in closers), -1)
    if end < 0 or not query[start + 1:end].strip() or '"' in query[start + 1:end]:
        return None
    return Token("Phrase", query[start + 1:end], start, query[start:end + 1]), end + 1


def _phrase(query: str, start: int) -> tuple[Token, int]:
    end = query.find('"', start + 1)
    if end < 0:
        raise query_error("unclosed quote", query, start)
    return Token("Phrase", query[start + 1:end], start, query[start:end + 1]), end + 1


def _number(query: str, start: int, decimals: bool) -> str:
    """The digits (and, if ``decimals``, one point) from ``start``."""
    i = start
    while i < len(query) and (query[i].isdecimal() and query[i].isascii()
                              or decimals and query[i] == "." and "." not in query[start:i]):
        i += 1
    return query[start:i]


def _boost(query: str, start: int) -> tuple[Token, int]:
    number = _number(query, start + 1, decimals=True)
    if not number:
        raise query_error("expected number after '^' (boost)", query, start)
    factor = float(number) if number != "." else math.nan
    if not math.isfinite(factor) or factor <= 0:
        raise query_error(f"invalid boost value: {number} (must be above 0)", query, start)
    end = start + 1 + len(number)
    return Token("Boost", factor, start, query[start:end]), end


def _slop(query: str, start: int) -> Token | None:
    """The ``~N`` proximity token at ``start``, if there is one (it only follows a phrase)."""
    if start >= len(query) or query[start] != "~":
        return None
    number = _number(query, start + 1, decimals=True)
    if not number or "." in number or len(number) > 9:
        raise query_error("proximity '~' needs a whole number of words", query, start)
    return Token("Slop", int(number), start, query[start:start + 1 + len(number)])


def _field_colon(query: str, word_start: int, colon: int) -> bool:
    """Whether the ``:`` at ``colon`` ends a field prefix (see the module docstring)."""
    name = query[word_start:colon]
    if name.lower() in FIELDS:
        return True
    after = query[colon + 1:colon + 2]
    return (name.isalpha() and bool(after) and not after.isspace() and not after.isdigit()
            and after not in _VALUE_END)


def _word(query: str, start: int) -> tuple[Token, int]:
    i = start
    while i < len(query) and not query[i].isspace():
        if query[i] in _WORD_END:
            if not _empty_pair(query, i):
                break
            i += 1  # and the ')' below
        elif query[i] == ":" and _field_colon(query, start, i):
            return Token("FieldPrefix", query[start:i], start, query[start:i + 1]), i + 1
        i += 1
    return _classify(query, start, query[start:i]), i


def _classify(query: str, start: int, word: str) -> Token:
    if word in ("OR", "AND", "NOT"):
        return Token(word.capitalize(), None, start, word)
    stars = [i for i, c in enumerate(word) if c == "*"]
    if stars == [len(word) - 1] and len(word) > 1 and word[-2].isalnum():
        return Token("Prefix", word[:-1], start, word)
    for star in stars:
        if _touches_word(word, star):
            where = "to be at the end of the word" if star else "a prefix before it"
            raise query_error(f"wildcard '*' needs {where}", query, start + star)
    return Token("Term", word, start, word)


def _touches_word(word: str, i: int) -> bool:
    """Whether the character at ``i`` has a letter or digit right before or after it."""
    return (i > 0 and word[i - 1].isalnum()) or (i + 1 < len(word) and word[i + 1].isalnum())
