"""Document and chunk identifiers: ``tree:path`` and ``tree:path#slug``.

An id names a tree from the configuration, a tree-relative path with forward slashes, and
optionally the slug of a heading. Ids are what agents copy from search results into
``ra get``, so parsing is strict: a string that is not clearly an id is rejected rather
than guessed at. In particular ``C:\\foo`` and ``C:/foo`` are Windows paths, not the tree
``C`` (a one-character tree is a tree: ``d:notes.md``), and paths that climb out of their
tree (``..``, absolute paths) are refused because ids are resolved against the file
system. A tree's name is one its ids can carry (``tree_name_problem``; the configuration
refuses others).

Paths may themselves contain ``#`` (``notes/c#.md``), so the fragment is split at the
*last* ``#`` and only when what follows can be a slug (no ``/`` or ``.``); slugs never
contain those characters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ra.config.toml import tree_name_problem
from ra.errors import RaError


class InvalidIdError(RaError, ValueError):
    """A string is not a well-formed ``tree:path[#slug]`` id."""

    exit_code = 2


def format_doc_id(tree: str, path: str) -> str:
    """``tree:path``, the id of a whole document."""
    return f"{tree}:{path}"


def format_chunk_id(tree: str, path: str, slug: str | None) -> str:
    """``tree:path#slug``, or the document id when ``slug`` is None."""
    return format_doc_id(tree, path) if slug is None else f"{tree}:{path}#{slug}"


@dataclass(frozen=True, order=True)
class DocId:
    """A document: a tree name and a tree-relative path."""

    tree: str
    path: str

    @classmethod
    def parse(cls, text: str) -> DocId:
        """Parse ``tree:path``; raises :class:`InvalidIdError`."""
        tree, sep, path = text.partition(":")
        if not sep:
            raise InvalidIdError(f"not an id (expected tree:path): {text!r}")
        if len(tree) == 1 and (path[:1] in ("/", "\\") or "\\" in path):
            raise InvalidIdError(f"looks like a Windows path, not an id: {text!r}")
        _check_tree(tree, text)
        _check_path(path, text)
        return cls(tree, path)

    def __str__(self) -> str:
        return format_doc_id(self.tree, self.path)


@dataclass(frozen=True, order=True)
class ChunkId:
    """A chunk: a document plus the slug of a heading (None for the document itself)."""

    doc_id: DocId
    slug: str | None = None

    @classmethod
    def parse(cls, text: str) -> ChunkId:
        """Parse ``tree:path`` or ``tree:path#slug``; raises :class:`InvalidIdError`."""
        head, sep, fragment = text.rpartition("#")
        if not sep or "/" in fragment or "." in fragment and "." not in head.rpartition("/")[2]:
            return cls(DocId.parse(text))  # no fragment, or the '#' belongs to the path
        # a dotted slug after a file's name is a slug (gomarkdoc's ``#AnyType.Equals``)
        if not fragment:
            raise InvalidIdError(f"empty heading slug after '#': {text!r}")
        return cls(DocId.parse(head), fragment)

    @property
    def tree(self) -> str:
        return self.doc_id.tree

    @property
    def path(self) -> str:
        return self.doc_id.path

    @property
    def is_document(self) -> bool:
        """True when the id names a whole document rather than a heading."""
        return self.slug is None

    def __str__(self) -> str:
        return format_chunk_id(self.tree, self.path, self.slug)


def _check_tree(tree: str, text: str) -> None:
    if not tree:
        raise InvalidIdError(f"missing tree name before ':': {text!r}")
    if tree_name_problem(tree):
        raise InvalidIdError(f"invalid tree name {tree!r} in {text!r}")


def _check_path(path: str, text: str) -> None:
    if not path:
        raise InvalidIdError(f"missing path after ':': {text!r}")
    if path.startswith("/") or "\\" in path:
        raise InvalidIdError(f"path must be tree-relative with '/' separators: {text!r}")
    if ".." in path.split("/"):
        raise InvalidIdError(f"path may not leave its tree: {text!r}")


_ASCII_DROP = re.compile(r"[^a-z0-9_ -]")
_HYPHENS = re.compile(r"-{2,}")


def slugify(text: str) -> str:
    """GitHub-style slug without deduplication; ``heading`` when nothing is left: a
    heading's id (``ra.text.document``), and what one repeated or declared in a heading
    is told by (``ra.query.render``, ``ra.text.markup.builder_id``)."""
    text = " ".join(text.lower().split())
    if text.isascii():
        kept = _ASCII_DROP.sub("", text)
    else:  # an emoji's variation selector or keycap is a mark of no script: "Legacy
        # Style ⚠️" was "legacy-style-\ufe0f", an id no one could type
        kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN"
                       and c not in _EMOJI_MARKS)
    return _HYPHENS.sub("-", kept.replace(" ", "-")).strip("-") or "heading"


#: Marks that only shape an emoji: variation selectors 15 and 16, the combining keycap
_EMOJI_MARKS = frozenset("\ufe0e\ufe0f\u20e3")
