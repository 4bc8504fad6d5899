"""Glob patterns with the meaning Rust's globset crate gives them (``Glob::new`` defaults).

ra's configuration format comes from a tool built on globset, so a pattern in an existing
``.ra.toml`` must select the same files here. With globset's defaults:

- ``*`` matches any run of characters, ``/`` included (``*.rs`` matches ``src/main.rs``);
- ``?`` matches one character;
- ``**`` is recursive only as a whole path component: ``**/x`` (zero or more leading
  directories), ``x/**`` (everything below ``x``, not ``x`` itself) and ``x/**/y``
  (zero or more directories between); anywhere else it is simply two ``*``;
- ``[abc]``, ``[a-z]``, ``[!a]`` / ``[^a]`` are classes; a ``]`` first and a ``-`` first
  or last are literal; ``\\`` is literal inside a class;
- ``{a,b}`` is alternation (nesting allowed; empty alternatives drop out);
- ``\\`` escapes the next character.

The parser mirrors globset's token rules (``parse_star`` in particular, whose corner
cases decide what ``**`` means), then each pattern becomes one Python regular expression,
compiled once and matched in full against a tree-relative POSIX path. One difference is
deliberate: globset matches bytes, so its ``?`` matches one byte of a multi-byte character;
here ``?`` matches one character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["GlobError", "GlobSet", "compile_glob", "dot_names", "glob_set", "translate"]

# Token kinds; a token is a tuple whose first item is its kind.
_LIT, _ANY, _STAR, _CLASS, _ALT = "lit", "any", "star", "class", "alt"
_RPREFIX, _RSUFFIX, _RZOM = "**/", "/**", "/**/"

_TOKEN_REGEX = {
    _ANY: ".",
    _STAR: ".*",
    _RPREFIX: "(?:/?|.*/)",
    _RSUFFIX: "/.*",
    _RZOM: "(?:/|/.*/)",
}


class GlobError(ValueError):
    """A glob pattern cannot be parsed; the message names the pattern and the problem."""

    def __init__(self, pattern: str, problem: str) -> None:
        self.pattern, self.problem = pattern, problem
        super().__init__(f"invalid glob {pattern!r}: {problem}")


class _Parser:
    """globset's glob parser: characters in, a list of tokens out."""

    def __init__(self, glob: str) -> None:
        self.glob, self.pos = glob, 0
        self.prev: str | None = None
        self.cur: str | None = None
        self.branches: list[list[tuple]] = [[]]  # the last one receives tokens
        self.alt_starts: list[int] = []  # index into branches where each {...} began

    def parse(self) -> list[tuple]:
        while (c := self._bump()) is not None:
            if c == "?":
                self._push((_ANY,))
            elif c == "*":
                self._star()
            elif c == "[":
                self._class()
            elif c in "{},":
                self._brace(c)
            elif c == "\\":
                escaped = self._bump()
                if escaped is None:
                    raise GlobError(self.glob, "dangling '\\' at the end")
                self._push((_LIT, escaped))
            else:
                self._push((_LIT, c))
        if len(self.branches) > 1:
            raise GlobError(self.glob, "unclosed alternate group; missing '}'")
        return self.branches[0]

    def _bump(self) -> str | None:
        self.prev = self.cur
        self.cur = self.glob[self.pos] if self.pos < len(self.glob) else None
        self.pos += self.cur is not None
        return self.cur

    def _peek(self) -> str | None:
        return self.glob[self.pos] if self.pos < len(self.glob) else None

    def _push(self, token: tuple) -> None:
        self.branches[-1].append(token)

    def _brace(self, c: str) -> None:
        if c == "{":
            self.alt_starts.append(len(self.branches))
            self.branches.append([])
        elif c == "," and not self.alt_starts:
            self._push((_LIT, ","))
        elif c == ",":
            self.branches.append([])
        elif not self.alt_starts:
            raise GlobError(self.glob, "unopened alternate group; missing '{'")
        else:
            start = self.alt_starts.pop()
            alternatives = tuple(tuple(b) for b in self.branches[start:])
            del self.branches[start:]
            self._push((_ALT, alternatives))

    def _star(self) -> None:
        """``*`` or ``**``; a ``**`` is recursive only where globset's parse_star says so."""
        prev = self.prev
        if self._peek() != "*":
            return self._push((_STAR,))
        self._bump()
        if not self.branches[-1]:  # at the start of the pattern or of an alternative
            if self._peek() not in (None, "/"):
                return self._push_two_stars()
            self._bump()
            return self._push((_RPREFIX,))
        in_alt = len(self.branches) > 1
        if prev != "/" and not (in_alt and prev in (",", "{")):
            return self._push_two_stars()
        nxt = self._peek()
        if nxt is None or (in_alt and nxt in ",}"):
            is_suffix = True
        elif nxt == "/":
            self._bump()
            is_suffix = False
        else:
            return self._push_two_stars()
        last = self.branches[-1].pop()  # the '/' before '**' becomes part of the token
        if last[0] in (_RPREFIX, _RSUFFIX):
            return self._push(last)
        self._push((_RSUFFIX,) if is_suffix else (_RZOM,))

    def _push_two_stars(self) -> None:
        self._push((_STAR,))
        self._push((_STAR,))

    def _class(self) -> None:
        negated = self._peek() in ("!", "^")
        if negated:
            self._bump()
        ranges: list[tuple[str, str]] = []
        first, in_range = True, False
        while (c := self._bump()) != "]" or first:
            if c is None:
                raise GlobError(self.glob, "unclosed character class; missing ']'")
            if c == "-" and not first and not in_range:
                in_range = True
            elif in_range:
                self._extend_range(ranges, c)
                in_range = False
            else:
                ranges.append((c, c))
            first = False
        if in_range:
            ranges.append(("-", "-"))
        self._push((_CLASS, negated, tuple(ranges)))

    def _extend_range(self, ranges: list[tuple[str, str]], end: str) -> None:
        start = ranges[-1][0]
        if end < start:
            raise GlobError(self.glob, f"invalid character range {start!r}-{end!r}")
        ranges[-1] = (start, end)


def _regex(tokens: Iterable[tuple]) -> str:
    return "".join(_token_regex(t) for t in tokens)


def _token_regex(token: tuple) -> str:
    kind = token[0]
    if kind == _LIT:
        return re.escape(token[1])
    if kind == _CLASS:
        _, negated, ranges = token
        body = "".join(re.escape(a) if a == b else f"{re.escape(a)}-{re.escape(b)}"
                       for a, b in ranges)
        return f"[{'^' if negated else ''}{body}]"
    if kind == _ALT:
        parts = [p for p in (_regex(branch) for branch in token[1]) if p]
        return f"(?:{'|'.join(parts)})" if parts else ""
    return _TOKEN_REGEX[kind]


def translate(pattern: str) -> str:
    """The regular expression (for ``re.fullmatch``) equivalent to a glob pattern."""
    tokens = _Parser(pattern).parse()
    if tokens == [(_RPREFIX,)]:  # a lone `**` matches everything, the empty path too
        return ".*"
    return _regex(tokens)


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A compiled regex for ``pattern``; GlobError (a ValueError) if it is invalid.

    Anchored at both ends, so ``match``, ``fullmatch`` and ``search`` all test the whole path.
    """
    return re.compile(rf"\A(?:{translate(pattern)})\Z", re.DOTALL)


#: A pattern that selects an extension anywhere: ``**/*.md`` (the default includes)
_ANY_EXTENSION = re.compile(r"\*\*/\*(\.[A-Za-z0-9]+)")


class GlobSet:
    """Several globs matched at once against tree-relative POSIX paths."""

    __slots__ = ("patterns", "_regexes", "_any", "_suffixes", "_ignore_case")

    def __init__(self, patterns: Iterable[str], ignore_case: bool = False) -> None:
        self.patterns: tuple[str, ...] = tuple(patterns)
        self._regexes = tuple(compile_glob(p) for p in self.patterns)
        union = "|".join(f"(?:{r.pattern})" for r in self._regexes)
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        self._any = re.compile(union, flags) if self._regexes else None
        # ``**/*.md``, ``**/*.txt``: a path matches when it ends with the extension, which
        # ``endswith`` tells at once; the regex backtracks over every "/" of a path that
        # does not (3.8 µs a path, most of the freshness scan of a tree of source files)
        suffixes = [_ANY_EXTENSION.fullmatch(p) for p in self.patterns]
        self._suffixes = tuple(
            (m.group(1).lower() if ignore_case else m.group(1)) for m in suffixes
        ) if suffixes and all(suffixes) else None
        self._ignore_case = ignore_case

    def matches(self, path: str) -> bool:
        """True when at least one pattern matches the whole of ``path``."""
        if self._suffixes is not None:
            return (path.lower() if self._ignore_case else path).endswith(self._suffixes)
        return self._any is not None and self._any.fullmatch(path) is not None

    def matching(self, path: str) -> list[int]:
        """Indexes of the patterns that match ``path``, in pattern order."""
        return [i for i, regex in enumerate(self._regexes) if regex.fullmatch(path)]

    def __len__(self) -> int:
        return len(self.patterns)

    def __repr__(self) -> str:
        return f"GlobSet({list(self.patterns)!r})"


@lru_cache(maxsize=1024)
def glob_set(patterns: tuple[str, ...], ignore_case: bool = False) -> GlobSet:
    """A shared GlobSet for a tuple of patterns (trees and rules reuse theirs);
    ``ignore_case``: its ``matches`` ignores case."""
    return GlobSet(patterns, ignore_case)


@lru_cache(maxsize=1024)
def dot_names(patterns: tuple[str, ...]) -> frozenset[str]:
    """The names starting with "." that ``patterns`` spell out as a whole path component
    (``.cursor`` and ``.github`` of ``.cursor/rules/*.mdc``, ``**/.github/instructions/**``).
    The walks skip every other name starting with ".", as a shell's ``*`` does: ``**/*.md``
    does not reach into ``.git`` or ``.venv``, and ``.github/**`` names ``.github``."""
    return frozenset(part for pattern in patterns for part in pattern.split("/")
                     if part[:1] == "." and part not in (".", "..")
                     and not any(c in part for c in "*?[{\\"))
