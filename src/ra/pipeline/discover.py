"""Stage 1, discover: which files belong to the index, with their fingerprints.

Walks every tree, skipping names that start with '.', following symlinks to files but
never descending into symlinked folders (so a symlink loop cannot trap the walk), and
keeping files that match the tree's include patterns and none of its excludes. A file
whose first bytes contain NUL is binary: it is skipped and reported, whatever its
extension. The fingerprint (size, mtime_ns) is what freshness checks compare later.

``discover`` touches the file system (it is the stage's input); ``read_document`` is
the one place that reads and decodes a file's text for the chunk stage.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

SNIFF_BYTES = 8192
TEXT_KINDS = {".md": "markdown", ".markdown": "markdown"}


@dataclass(frozen=True)
class FoundFile:
    """One file selected for indexing."""

    tree: str
    path: str
    abspath: str
    kind: str
    size: int
    mtime_ns: int
    is_global: bool


@dataclass
class Discovery:
    """Selected files plus what was skipped and why (one line per problem)."""

    files: list[FoundFile] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # tree, path, why
    binary: list[FoundFile] = field(default_factory=list)  # skipped, with fingerprints

    def problems(self) -> list[str]:
        return [f"{tree}:{path}: {why}" for tree, path, why in self.skipped]


def kind_of(path: str) -> str:
    """``markdown`` for .md/.markdown, else ``text``."""
    return TEXT_KINDS.get(os.path.splitext(path)[1].lower(), "text")


def discover(trees: Iterable, *, sniff: bool = True) -> Discovery:
    """Walk ``trees`` (``ra.config.Tree``) and select the files to index.

    ``sniff=False`` only stats (freshness checks): binary files then count as files, and
    the caller compares them with the manifest's record of skipped binaries.
    """
    found = Discovery()
    for tree in trees:
        for rel, abspath in walk_tree(tree.path):
            if tree.matches(rel):
                _consider(found, tree, rel, abspath, sniff)
    found.files.sort(key=lambda f: (f.tree, f.path))
    return found


def _consider(found: Discovery, tree, rel: str, abspath: str, sniff: bool = True) -> None:
    try:
        st = os.stat(abspath)  # follows a file symlink; ELOOP for a looping one
    except OSError as exc:
        found.skipped.append((tree.name, rel, f"unreadable ({exc.strerror})"))
        return
    if not stat.S_ISREG(st.st_mode):
        return
    entry = FoundFile(tree.name, rel, abspath, kind_of(rel), st.st_size, st.st_mtime_ns,
                      bool(tree.is_global))
    if sniff and is_binary(abspath):
        found.skipped.append((tree.name, rel, "binary file skipped"))
        found.binary.append(entry)
        return
    found.files.append(entry)


def walk_tree(root: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """``(relative posix path, absolute path)`` of candidate files under ``root``.

    Plain strings, not ``pathlib``: freshness checks walk every tree on every command,
    and path objects cost most of that walk's time on a large tree.
    """
    root = os.fspath(root)
    if not os.path.isdir(root):
        return
    stack = [("", root)]
    while stack:
        rel_dir, folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append((rel, entry.path))
            elif not _is_dir_link(entry):  # files, file symlinks, broken or looping links
                yield rel, entry.path


def _is_dir_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:  # a symlink loop: reported when the file is considered
        return False


def is_binary(abspath: str) -> bool:
    """True when the file's first bytes contain NUL (unreadable files are not binary:
    reading them later reports why)."""
    try:
        with open(abspath, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return False
    return b"\0" in head


def read_document(abspath: str) -> tuple[str, list[str]]:
    """The text of a file for chunking, plus decoding problems.

    A UTF-8 byte-order mark is dropped and CRLF/CR line ends become LF, so byte offsets
    of chunks refer to this normalised text. Invalid UTF-8 is replaced (U+FFFD) and
    reported, so the readable rest of the file is still indexed.
    """
    with open(abspath, "rb") as fh:
        raw = fh.read()
    problems = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        problems.append(f"invalid UTF-8 at byte {exc.start}; decoded with replacement")
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, problems
