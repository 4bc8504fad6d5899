"""Stage 1, discover: which files belong to the index, with their fingerprints.

Walks every tree, skipping names that start with '.', following symlinks to files but
never descending into symlinked folders (so a symlink loop cannot trap the walk), and
keeping files that match the tree's include patterns and none of its excludes. A file
whose first bytes contain NUL is binary, unless it opens with a UTF-16 or UTF-32
byte-order mark: it is skipped and reported, whatever its extension. The fingerprint
(size, mtime_ns, ctime_ns) is what freshness checks compare later: the inode change time
is set by every write and by no tool that restores an mtime (``cp -p``, ``rsync -t``,
``touch -d``, archive tools), and it comes with the same ``stat``.

``discover`` touches the file system (it is the stage's input); ``read_document`` is
the one place that reads and decodes a file's text for the chunk stage. ``scan`` is the
stat-only half of discovery that every reading command runs to check freshness, with a
digest of all fingerprints (``fingerprint_digest``) that the manifest stores.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from stat import S_ISREG

from ra.config.globs import glob_set
from ra.text import is_markdown

Fingerprint = tuple[int, int, int]  # (size, mtime_ns, ctime_ns)
SNIFF_BYTES = 8192


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
    ctime_ns: int = 0

    @property
    def fingerprint(self) -> Fingerprint:
        return (self.size, self.mtime_ns, self.ctime_ns)


@dataclass
class Discovery:
    """Selected files plus what was skipped and why (one line per problem)."""

    files: list[FoundFile] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # tree, path, why
    binary: list[FoundFile] = field(default_factory=list)  # skipped, with fingerprints

    def problems(self) -> list[str]:
        return [f"{tree}:{path}: {why}" for tree, path, why in self.skipped]


def kind_of(path: str) -> str:
    """``markdown`` for the ``MARKDOWN_SUFFIXES`` and ``llms.txt`` files
    (``ra.text.is_markdown``), else ``text``."""
    return "markdown" if is_markdown(path) else "text"


def discover(trees: Iterable, *, sniff: bool = True) -> Discovery:
    """Walk ``trees`` (``ra.config.settings.Tree``) and select the files to index.

    ``sniff=False`` only stats (freshness checks): binary files then count as files, and
    the caller compares them with the manifest's record of skipped binaries.
    """
    found = Discovery()
    for tree, rows, unreadable in scan_trees(trees):
        found.skipped += [(tree.name, rel, why) for rel, why in unreadable]
        for rel, fingerprint in rows:
            found_file(found, tree, rel, fingerprint, sniff)
    found.files.sort(key=lambda f: (f.tree, f.path))
    found.binary.sort(key=lambda f: (f.tree, f.path))
    found.skipped.sort()
    return found


def found_file(found: Discovery, tree, rel: str, fingerprint: Fingerprint,
               sniff: bool = True) -> None:
    """Add one selected file to ``found``: a file to index, or a binary one skipped."""
    size, mtime_ns, ctime_ns = fingerprint
    entry = FoundFile(tree.name, rel, os.path.join(tree.path, rel), kind_of(rel), size,
                      mtime_ns, bool(tree.is_global), ctime_ns)
    if sniff and is_binary(entry.abspath):
        found.skipped.append((tree.name, rel, "binary file skipped"))
        found.binary.append(entry)
        return
    found.files.append(entry)


# --- the stat-only walk -------------------------------------------------------------------



@dataclass
class Scan:
    """Every file the trees select now, with its fingerprint: what freshness compares.

    ``files`` maps ``tree:path`` to ``(size, mtime_ns, ctime_ns)``; binary files are in it too (no
    file is opened). ``unreadable`` holds ``(tree, path, problem)`` for entries whose
    ``stat`` failed (dangling or looping symlinks, no permission): they are not files.
    """

    files: dict[str, Fingerprint] = field(default_factory=dict)
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)
    _digest: str | None = field(default=None, repr=False)

    def digest(self) -> str:
        """``fingerprint_digest`` of ``files`` (computed once)."""
        if self._digest is None:
            self._digest = fingerprint_digest(self.files)
        return self._digest


def scan(trees: Iterable) -> Scan:
    """Stat every file the trees select, opening none (see ``scan_tree``)."""
    out = Scan()
    for tree, rows, unreadable in scan_trees(trees):
        prefix = f"{tree.name}:"
        out.files.update({prefix + rel: fp for rel, fp in rows})
        out.unreadable += [(tree.name, rel, why) for rel, why in unreadable]
    return out


#: The identity of a file, wherever it is linked from: ``(st_dev, st_ino)``.
Identity = tuple[int, int]


def scan_trees(trees: Iterable) -> Iterator[tuple]:
    """``(tree, rows, unreadable)`` of ``scan_tree`` for each tree, with each file once:
    a symlink to a file that a tree selects under its own path, or that an earlier link
    selects, is left out. Repositories link files to be found twice (``CLAUDE.md`` to
    ``AGENTS.md``, a dated KEP to its folder's README): indexed twice, each answer came
    twice and took two places and twice the tokens."""
    trees = list(trees)
    scanned = [scan_tree(tree) for tree in trees]
    seen = {ident for _, _, links, real in scanned for ident in real}
    for tree, (rows, unreadable, links, _) in zip(trees, scanned, strict=True):
        kept = []
        for rel, fingerprint, ident in links:
            if ident not in seen:
                seen.add(ident)
                kept.append((rel, fingerprint))
        yield tree, sorted(rows + kept) if kept else rows, unreadable


def fingerprint_digest(files: dict[str, Fingerprint]) -> str:
    """A digest of ``tree:path → (size, mtime_ns, ctime_ns)``, independent of order.

    Equal digests mean equal fingerprints of the same files (up to a 128-bit hash
    collision): the manifest stores it so that a freshness check of an unchanged tree
    compares one string instead of reading every file's fingerprint. Keys cannot hold
    NUL, so the encoding below is unambiguous. (``struct.pack``: ``array`` is ten times
    slower at taking 30,000 integers from a list.)
    """
    keys = sorted(files)
    h = hashlib.blake2b(digest_size=16)
    h.update("\0".join(keys).encode("utf-8", "surrogateescape"))
    numbers = chain.from_iterable(map(files.__getitem__, keys))  # no list: 10% faster
    h.update(struct.pack(f"<{len(keys) * len(next(iter(files.values()), ()))}q", *numbers))
    return h.hexdigest()


def scan_tree(tree) -> tuple[list, list, list, set]:
    """``(path, (size, mtime_ns, ctime_ns))`` of the regular files ``tree`` selects that are
    no symlinks; ``(path, problem)`` of selected entries whose ``stat`` failed; ``(path,
    fingerprint, identity)`` of the selected symlinks to regular files; the identities of
    the first (``scan_trees`` decides which links to keep).

    The rules of ``walk_tree``, with the pattern match before the ``stat`` so that only
    selected files cost a system call. This walk runs on every reading command, so it
    is written for speed: each folder is opened once and its entries are stat'ed
    relative to it (``fstatat``, no path to resolve), paths are plain strings, and the
    directory entry's own type tells a folder without a system call. About 2 µs per
    file, most of it the ``stat``; neither threads nor ``os.listdir`` were faster.
    """
    rows: list[tuple[str, Fingerprint]] = []
    unreadable: list[tuple[str, str]] = []
    links: list[tuple[str, Fingerprint, Identity]] = []
    real: set[Identity] = set()
    include, exclude = tree.included(), glob_set(tuple(tree.exclude))
    exclude = exclude.matches if len(exclude) else None  # ``Tree.matches``, looked up once
    pruned = excluded_folders(tree.exclude)
    dots = tree.dot_names  # names starting with "." an include spells out
    stack = [("", os.fspath(tree.path), os.O_RDONLY | os.O_DIRECTORY)]  # the root may be a link
    while stack:
        rel_dir, folder, flags = stack.pop()
        try:
            fd = os.open(folder, flags)  # one folder open at a time, however wide the tree
        except FileNotFoundError:
            continue  # gone since its parent was read
        except OSError as exc:  # no permission: skipped, and said
            if rel_dir:  # (a missing or unreadable tree root is ``ra check``'s to say)
                unreadable.append((rel_dir, f"unreadable ({exc.strerror or exc}): "
                                   "folder skipped"))
            continue
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == "." and name not in dots:
                        continue
                    rel = f"{rel_dir}/{name}" if rel_dir else name
                    if not name.isascii() and not utf8_name(name):
                        if entry.is_dir(follow_symlinks=False) or include(shown(rel)):
                            unreadable.append((shown(rel), "unreadable (name is not valid "
                                               "UTF-8): skipped; rename it to index it"))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if pruned is None or not pruned(rel):
                            stack.append((rel, f"{folder}/{name}", _DIR_FLAGS))
                    elif include(rel) and not (exclude and exclude(rel)):
                        try:
                            st = entry.stat()  # follows a symlink; a folder is no file
                        except FileNotFoundError as exc:  # deleted since, or dangling
                            if entry.is_symlink():
                                unreadable.append((rel, f"unreadable ({exc.strerror})"))
                            continue
                        except OSError as exc:  # looping, no permission
                            unreadable.append((rel, f"unreadable ({exc.strerror or exc})"))
                            continue
                        if S_ISREG(st.st_mode):
                            fp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                            if entry.is_symlink():
                                links.append((rel, fp, (st.st_dev, st.st_ino)))
                            else:
                                rows.append((rel, fp))
                                real.add((st.st_dev, st.st_ino))
        except OSError:
            pass  # unreadable folder: skipped, as walk_tree does
        finally:
            os.close(fd)
    links.sort()
    return rows, unreadable, links, real


def excluded_folders(patterns) -> Callable[[str], bool] | None:
    """Whether every path under a folder is excluded, so the walk need not enter it: the
    folder matches what an exclude pattern ``Q/**`` puts before its ``/**``
    (``**/node_modules/**``: any folder of that name). None when no pattern says so. A
    JavaScript project's tree at its top (``ra init`` excludes its node_modules so) walked
    every file of node_modules on every reading command: 86 ms for 46,000 files."""
    heads = tuple(p[:-3] for p in patterns if p.endswith("/**") and len(p) > 3)
    return glob_set(heads).matches if heads else None


def utf8_name(name: str) -> bool:
    """False for a name that is not valid UTF-8 (Python holds its bytes as surrogates):
    it cannot be stored, queried or printed as text, so its file is skipped."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(name: str) -> str:
    """``name`` printable: bytes that are not UTF-8 as ``\\xNN``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


#: ``on_folder(rel, path, entries)`` of ``walk_tree``.
FolderHook = Callable[[str, str, list], None]
#: Subfolders are opened without following links: the walk never enters a linked folder
#: (not even one that replaced a real folder during the walk).
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def walk_tree(root: str | os.PathLike, on_folder: FolderHook | None = None,
              pruned: Callable[[str], bool] | None = None,
              dots: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """``(relative posix path, absolute path)`` of candidate files under ``root``.

    Skips names that start with '.' but those in ``dots`` (``Tree.dot_names``: an include
    pattern spells them out), never descends into symlinked folders, and yields
    files, file symlinks and broken or looping links (``ra status`` lists them; the index
    uses ``scan_tree``, which follows the same rules). ``on_folder(rel, path, entries)``
    is called for each folder read, with all its entries (``ra.index.warm`` watches them).
    ``pruned(rel)``: folders not to enter (``excluded_folders``, as ``scan_tree`` does).
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
        if on_folder is not None:
            on_folder(rel_dir, folder, entries)
        for entry in entries:
            if entry.name.startswith(".") and entry.name not in dots:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                if pruned is None or not pruned(rel):  # ``excluded_folders``
                    stack.append((rel, entry.path))
            elif not _is_dir_link(entry):  # files, file symlinks, broken or looping links
                yield rel, entry.path


def _is_dir_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:  # a symlink loop: reported when the file is considered
        return False


#: Byte-order marks of UTF-32 and UTF-16 (UTF-32's first: its little-endian mark begins
#: with UTF-16's). A file that opens with one is text in that encoding, NUL bytes and all:
#: Windows PowerShell 5.1 writes UTF-16 unless told otherwise (``Out-File``, ``>``).
WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
             (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def wide_encoding(head: bytes) -> str | None:
    """``utf-16`` or ``utf-32`` when ``head`` opens with that encoding's byte-order mark."""
    return next((encoding for bom, encoding in WIDE_BOMS if head.startswith(bom)), None)


def is_binary(abspath: str) -> bool:
    """True when the file's first bytes contain NUL and it does not open with a UTF-16
    or UTF-32 byte-order mark (unreadable files are not binary: reading them later
    reports why)."""
    try:
        with open(abspath, "rb") as fh:
            return looks_binary(fh.read(SNIFF_BYTES))
    except OSError:
        return False


def looks_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` is binary (``is_binary``)."""
    return b"\0" in head[:SNIFF_BYTES] and wide_encoding(head) is None


def read_document(abspath: str) -> tuple[str, list[str]]:
    """The text of a file for chunking, plus decoding problems (``decode_text``)."""
    with open(abspath, "rb") as fh:
        return decode_text(fh.read())


#: Docusaurus keeps each released version of its docs in ``versioned_docs/version-X/``
#: (``<id>_versioned_docs/`` for another docs instance), beside the current ``docs/``
_VERSIONED = re.compile(r"(?:\w+_)?versioned_docs")


#: A path's part that names a version: ``2.1``, ``v7.4``, ``version-2.1`` (Docusaurus),
#: ``2024-11-05`` (the MCP specification), ``3.1.0.md`` (OpenAPI's versions/)
_VERSION_PART = re.compile(r"(?:version[-_]?|v)?(\d+(?:[._-]\d+)*)(?:\.[a-z]+)?", re.I)
#: Names of a version not released yet, older than any released one for this purpose,
#: and of the newest
_UNRELEASED = frozenset("alpha beta canary dev draft main master next nightly preview "
                        "unreleased vnext".split())
_LATEST = frozenset({"current", "latest", "stable"})


def version_key(name: str) -> tuple | None:
    """How new the version a folder's or file's ``name`` names is, to compare with
    others: released ones by their numbers, ``latest`` above them, ``draft`` and
    ``next`` below; None when it names no version."""
    low = name.lower()
    if low in _LATEST:
        return (2, ())
    if low in _UNRELEASED:
        return (0, ())
    found = _VERSION_PART.fullmatch(name)
    return (1, tuple(int(n) for n in re.split(r"[._-]", found[1]))) if found else None


#: How many pages a version's folder shares with the newest one's at least (and half of
#: its own), to be an older version of the same docs (Quarto's changelog keeps two pages
#: per release, ``download/changelog/1.4/``, which are no versions of one another)
VERSION_PAGES = 5
#: A folder named for the day its version was released (a specification's snapshot:
#: the MCP specification's ``2025-06-18/``); numbered ones (the PowerShell docs' ``5.1/``,
#: ``7.4/``) are often products supported side by side, and stay
_DATED = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")


def older_versions(paths: Iterable[str]) -> list[tuple[str, int]]:
    """``(exclude pattern, files)`` of the folders among the tree-relative ``paths`` that
    keep released versions of the docs (Docusaurus' ``versioned_docs``), when some paths
    are outside them: searched with the current pages, the same page answers once per
    version (Jest's docs keep three). And sibling folders named for the days versions
    were released (``_DATED``) whose pages mirror the newest one's (at least
    ``VERSION_PAGES`` pages and half of theirs with its path there): the older ones (the
    MCP specification keeps ``2024-11-05/`` … ``2026-07-28/`` and ``draft/``: an old
    version's shorter section outranked the current one's; the newest and ``draft``
    stay). Sorted by pattern."""
    paths = list(paths)
    kept: Counter[str] = Counter()
    for rel in paths:
        parts = rel.split("/")[:-1]
        at = next((i for i, p in enumerate(parts) if _VERSIONED.fullmatch(p)), None)
        kept["" if at is None else "/".join(parts[:at + 1]) + "/**"] += 1
    current = kept.pop("", 0)
    found = sorted(kept.items()) if current else []
    away = tuple(p.removesuffix("**") for p, _ in found)
    return sorted(found + _older_folders([p for p in paths if not p.startswith(away)]))


def _older_folders(paths: list[str]) -> list[tuple[str, int]]:
    """The dated folders of ``older_versions`` (see there)."""
    from ra.text.languages import mirrors

    groups: dict[str, dict[str, set[str]]] = {}  # parent → dated folder → its pages
    for rel in paths:
        parts = rel.split("/")
        at = next((i for i, p in enumerate(parts[:-1]) if _DATED.fullmatch(p)), None)
        if at is not None:
            groups.setdefault("/".join(parts[:at]), {}).setdefault(parts[at], set()).add(
                "/".join(parts[at + 1:]))
    out = []
    for parent, versions in groups.items():
        newest = max(versions, key=version_key)
        prefix = f"{parent}/" if parent else ""
        out += [(f"{prefix}{name}/**", len(pages)) for name, pages in sorted(versions.items())
                if name != newest and mirrors(pages, versions[newest], VERSION_PAGES)]
    return out


def git_ignored(folder) -> list[str] | None:
    """What git's ignore patterns match under ``folder`` (``git status
    --ignored=matching``): paths relative to it, a folder's with a trailing ``/``,
    sorted; what git tracks is not listed, nor a folder that merely holds ignored files.
    None outside a git repository, or without git (``ra init`` excludes these, ``ra
    check`` names those a tree indexes)."""
    import subprocess

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=folder, capture_output=True, check=True,
                              timeout=30).stdout

    try:
        prefix = os.fsdecode(git("rev-parse", "--show-prefix").strip())
        # relative to the repository's top, whatever the folder
        fields = git("status", "--porcelain=v1", "-z", "--ignored=matching",
                     "--untracked-files=normal", "--", ".").split(b"\0")
    except (OSError, subprocess.SubprocessError):
        return None
    out, i = [], 0
    while i < len(fields):
        field = os.fsdecode(fields[i])
        i += 2 if field[:1] in ("R", "C") else 1  # a rename's source follows it
        if field.startswith("!! ") and field[3:].startswith(prefix) and field[3 + len(prefix):]:
            out.append(field[3 + len(prefix):])
    return sorted(out)


def language_of(paths: Iterable[str]) -> str | None:
    """The language the markdown files ``paths`` are written in: ``ra.text.languages.
    detect`` of the first ``SAMPLE_FILES`` of them that can be read, the first
    ``SAMPLE_CHARS`` of each; None when they do not say (``ra init`` and ``ra check``)."""
    from ra.text.languages import SAMPLE_CHARS, SAMPLE_FILES, detect

    def samples() -> Iterator[str]:
        for path in paths:
            try:
                with open(path, "rb") as fh:  # UTF-32 takes four bytes a character
                    yield decode_text(fh.read(4 * SAMPLE_CHARS))[0][:SAMPLE_CHARS]
            except OSError:
                continue

    return detect(islice(samples(), SAMPLE_FILES))


def decode_text(raw: bytes) -> tuple[str, list[str]]:
    """``raw`` as text, plus decoding problems; indexing and ``ra context`` read files so.

    A UTF-8 byte-order mark is dropped and CRLF/CR line ends become LF, so byte offsets
    of chunks refer to this normalised text. Bytes that open with a UTF-16 or UTF-32
    byte-order mark are decoded as such (``wide_encoding``). Invalid bytes are replaced
    (U+FFFD) and reported, so the readable rest of the file is still indexed.
    """
    problems = []
    encoding = wide_encoding(raw) or "utf-8"  # the wide codecs drop their mark
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        text = raw.decode(encoding, errors="replace")
        problems.append(f"invalid {encoding.upper()} at byte {exc.start}; decoded with "
                        "replacement")
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, problems
