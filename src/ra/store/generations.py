"""Index generations: atomic publication, writer lock, reader pins, cleanup.

An index directory holds complete generations side by side and one pointer to the
current one:

    <index_dir>/CURRENT          name of the current generation (one line)
    <index_dir>/gen-<id>/        a complete set of artifacts plus manifest.json and
                                 fingerprints.json
    <index_dir>/.build-<id>/     a generation being written (never read)
    <index_dir>/.writer.lock     held (fcntl, exclusive) by the one writer
    <index_dir>/.gitignore       ``*``, when ra created the folder: git leaves it out

A writer builds into ``.build-<id>``, renames it to ``gen-<id>`` and then replaces
``CURRENT`` with one atomic ``os.replace``. A crash at any point leaves the previous
pointer and its generation intact; leftovers are removed by the next writer. Readers
resolve ``CURRENT`` once and pin that generation with a shared lock on its ``.pin`` file;
the writer removes an old generation only when it can take that lock exclusively, so a
reader never sees its files vanish and never waits for a writer.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ra.errors import DISK_FULL, WRITE_REFUSED, IndexStateError
from ra.store.layout import FINGERPRINTS, MANIFEST, artifact_glob, artifact_path

#: What a folder ra creates for an index holds, so that ``git add -A`` leaves the index
#: out (it is rebuilt from the notes; on cpp-docs it takes 190 MB).
GITIGNORE = "# written by ra: the index is built from the notes, not committed\n*\n"

CURRENT = "CURRENT"
LOCK = ".writer.lock"
PIN = ".pin"


@dataclass
class Generation:
    """A published generation, pinned for reading while ``pin_fd`` is open."""

    path: Path
    manifest: dict
    pin_fd: int | None = None

    def file(self, name: str) -> Path:
        """Artifact ``name``: a Parquet file, or a folder of partitions (pyarrow reads
        either with ``pq.read_table``)."""
        return self.path / artifact_path(name)

    def scan(self, name: str) -> str:
        """A path pattern that DuckDB's ``read_parquet`` reads artifact ``name`` with."""
        return str(self.path / artifact_glob(name))

    def close(self) -> None:
        if self.pin_fd is not None:
            os.close(self.pin_fd)
            self.pin_fd = None


def current_name(index_dir: Path) -> str | None:
    """Name of the current generation, or None when nothing was published."""
    try:
        name = (index_dir / CURRENT).read_text().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return name or None


def open_current(index_dir: Path) -> Generation | None:
    """Pin and return the current generation; None if there is none.

    Raises IndexStateError when the pointer names a damaged generation.
    """
    for _ in range(5):  # the pointer may move between reading it and pinning
        name = current_name(index_dir)
        if name is None:
            return None
        path = index_dir / name
        try:
            fd = os.open(path / PIN, os.O_RDONLY)
        except FileNotFoundError:
            if current_name(index_dir) != name:
                continue
            raise IndexStateError(f"index generation {name} is missing or damaged") from None
        fcntl.flock(fd, fcntl.LOCK_SH)
        if not _same_file(fd, path / PIN):  # collected between open and lock: retry
            os.close(fd)
            continue
        try:
            return Generation(path, read_manifest(path), fd)
        except IndexStateError:
            os.close(fd)
            raise
    raise IndexStateError("index pointer keeps changing; try again")


def read_manifest(path: Path) -> dict:
    """The manifest of a generation directory; IndexStateError if unreadable."""
    return _read_json(path, MANIFEST)


@dataclass
class FileRecord:
    """A generation's record of its files (``fingerprints.json``), each ``tree:path``."""

    files: dict[str, tuple[int, int, int]]  # indexed files: (size, mtime_ns, ctime_ns)
    binary: dict[str, tuple[int, int, int]]  # binary files, skipped: the same
    partition: dict[str, int]  # the partition holding each indexed file

    def to_json(self) -> dict:
        """Column lists sorted by key, the form stored: it parses three times faster
        than one small list per file."""
        def columns(table: dict[str, tuple[int, int, int]], extra: dict | None = None
                    ) -> dict:
            keys = sorted(table)
            out = {"key": keys, "size": [table[k][0] for k in keys],
                   "mtime_ns": [table[k][1] for k in keys],
                   "ctime_ns": [table[k][2] for k in keys]}
            if extra is not None:
                out["partition"] = [extra[k] for k in keys]
            return out

        return {"files": columns(self.files, self.partition),
                "binary": columns(self.binary)}

    def to_text(self) -> str:
        """``to_json`` as compact JSON text, written column by column: a column equal to
        the one encoded last (the keys and partitions after most updates, the sizes after
        many) is not encoded again, and a list alone encodes faster than the dict that
        holds them (cpp-docs, 9,746 files: 9.3 ms for ``json.dumps`` of it)."""
        def table(kind: str, columns: dict) -> str:
            return "{" + ",".join(f'"{name}":{_encoded(f"{kind}.{name}", values)}'
                                  for name, values in columns.items()) + "}"

        return "{" + ",".join(f'"{kind}":{table(kind, columns)}'
                              for kind, columns in self.to_json().items()) + "}"

    @classmethod
    def from_json(cls, data: dict) -> FileRecord:
        files, binary = data["files"], data["binary"]

        def table(c: dict) -> dict[str, tuple[int, int, int]]:
            return dict(zip(c["key"], zip(c["size"], c["mtime_ns"], c["ctime_ns"],
                                          strict=True), strict=True))

        return cls(table(files), table(binary),
                   dict(zip(files["key"], files["partition"], strict=True)))


#: The column ``FileRecord.to_text`` encoded last for each ``kind.name``, with its text.
_ENCODED: dict[str, tuple[list, str]] = {}


def _encoded(name: str, values: list) -> str:
    last = _ENCODED.get(name)
    if last is not None and last[0] == values:
        return last[1]
    text = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    _ENCODED[name] = (values, text)
    return text


#: The file records this process wrote or read last, by generation id: a long-lived
#: process that updates the index would otherwise read back, at its next update, the
#: record it has just written (~45 ms on 10,000 files). Generations never change, and
#: callers only read records.
_RECORDS: dict[str, FileRecord] = {}
_RECORDS_KEPT = 2


def generation_id(path: Path) -> str:
    """The id shared by a build folder and the generation it is published as."""
    return path.name.removeprefix("gen-").removeprefix(".build-")


def remember_fingerprints(path: Path, record: FileRecord) -> None:
    """Keep ``record``, just written into build or generation folder ``path``."""
    _RECORDS[generation_id(path)] = record
    while len(_RECORDS) > _RECORDS_KEPT:
        del _RECORDS[next(iter(_RECORDS))]


def read_fingerprints(path: Path) -> FileRecord:
    """The record of a generation directory's files; IndexStateError if unreadable."""
    known = _RECORDS.get(generation_id(path))
    if known is not None:
        return known
    try:
        record = FileRecord.from_json(_read_json(path, FINGERPRINTS))
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexStateError(f"index generation {path.name} is damaged: "
                              f"{FINGERPRINTS}: {exc!r}") from None
    remember_fingerprints(path, record)
    return record


def _read_json(path: Path, name: str) -> dict:
    try:
        return json.loads((path / name).read_bytes())
    except (OSError, ValueError) as exc:
        raise IndexStateError(f"index generation {path.name} is damaged: {exc}") from None


#: Descriptors of the writer locks this process holds. A forked worker inherits them
#: (``flock`` belongs to the open file the fork shares) and closes its copies first
#: (``release_inherited``): a worker that outlived a killed writer held its lock.
_held: set[int] = set()


@contextlib.contextmanager
def writer_lock(index_dir: Path, *, wait: bool = True) -> Iterator[bool]:
    """Hold the exclusive writer lock; yields False if ``wait`` is off and it is taken.

    The holder writes its pid into the lock file (``lock_holder``), to tell who holds it.
    The kernel releases the lock when the holder's descriptors close, however it ends.
    """
    fd = _open_lock(index_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        _held.add(fd)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield True
    finally:
        _held.discard(fd)
        os.close(fd)


def _open_lock(index_dir: Path) -> int:
    """The writer lock file of ``index_dir``, created with its folder if need be; an
    IndexStateError names the folder when it cannot be (a file there, no permission)."""
    try:
        if not index_dir.is_dir():
            index_dir.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # as .pytest_cache and .ruff_cache do
                (index_dir / ".gitignore").write_text(GITIGNORE)
        return _lock_file(index_dir)
    except OSError as exc:
        raise IndexStateError(index_dir_problem(index_dir) or
                              f"the index folder {index_dir} cannot be written "
                              f"({exc.strerror})") from None


def _lock_file(index_dir: Path) -> int:
    """The writer lock file of an existing ``index_dir``, opened (created if need be)."""
    return os.open(index_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)


def index_dir_problem(index_dir: Path) -> str | None:
    """Why ``index_dir`` cannot hold an index (a file in the way), or None."""
    for path in (index_dir, *index_dir.parents):
        if path.exists():
            if path.is_dir():
                return None
            return (f"the index folder {index_dir} is not a folder ({path} is a file): "
                    "remove it, or set [settings] index_dir to a folder")
    return None


def write_problem(index_dir: Path, exc: BaseException) -> str | None:
    """What a user is told when writing a generation into ``index_dir`` failed with
    ``exc`` for want of space or permission, or None for any other failure. ``exc`` or
    what caused it is an OSError with its errno (Python, pyarrow, a worker's, pickled) or
    DuckDB's IOException, which gives the errno only in its text. Permission counts only
    where the failure names a path in ``index_dir``: a source file ra cannot read is
    skipped and reported long before."""
    code, where = _cause(exc)
    if code not in DISK_FULL and not (code in WRITE_REFUSED and str(index_dir) in where):
        return None
    name = current_name(index_dir)
    after = "The index is as it was" if name else "No index was written"
    if code in WRITE_REFUSED:
        return f"the index folder {index_dir} cannot be written ({os.strerror(code)}). {after}"
    held = (f"; the index takes {_mb(folder_size(index_dir / name))} and an update writes "
            "the new one beside it before it removes the old" if name else "")
    return (f"no space left on the disk of the index folder {index_dir} "
            f"({_mb(shutil.disk_usage(index_dir).free)} free{held}): free some space, "
            f"or set [settings] index_dir to a folder on another disk. {after}")


def _cause(exc: BaseException | None) -> tuple[int | None, str]:
    """The errno of a full disk or a refused write that ``exc`` or what caused it
    reports, with its text and file name; (None, "") if none does."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = f"{exc} {getattr(exc, 'filename', None) or ''}"
        for code in (*DISK_FULL, *WRITE_REFUSED):
            if (isinstance(exc, OSError) and exc.errno == code) or os.strerror(code) in text:
                return code, text
        exc = exc.__cause__ or exc.__context__
    return None, ""


def folder_size(path: Path) -> int:
    """The bytes of the files in ``path`` and below (a generation's size)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def unwritable(index_dir: Path) -> str | None:
    """Why a writer could not write in ``index_dir`` (a read-only disk, no permission),
    or None; it creates nothing but the lock file, which every writer creates."""
    if not index_dir.is_dir():
        return None
    try:
        os.close(_lock_file(index_dir))
    except OSError as exc:
        return f"the index folder {index_dir} cannot be written ({exc.strerror})"
    return None


def lock_holder(index_dir: Path) -> int | None:
    """The pid that last took the writer lock of ``index_dir`` (it may have ended)."""
    try:
        return int((index_dir / LOCK).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def release_inherited() -> None:
    """Close this process's copies of writer locks held by its parent (a forked worker
    calls this first); the parent's locks stay held."""
    while _held:
        with contextlib.suppress(OSError):
            os.close(_held.pop())


def new_build_dir(index_dir: Path) -> Path:
    """A fresh private directory for a generation under construction."""
    path = index_dir / f".build-{time.time_ns():x}-{os.getpid()}"
    path.mkdir(parents=True)
    (path / PIN).touch()
    return path


def publish(index_dir: Path, build_dir: Path) -> Path:
    """Make ``build_dir`` the current generation with one atomic pointer swap."""
    final = index_dir / ("gen-" + build_dir.name.removeprefix(".build-"))
    _fsync_tree(build_dir)
    os.rename(build_dir, final)
    tmp = index_dir / f".{CURRENT}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(final.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, index_dir / CURRENT)
    _fsync(index_dir)
    return final


def collect_garbage(index_dir: Path) -> list[str]:
    """Remove unpinned old generations and leftovers of killed builds (writer only)."""
    keep = current_name(index_dir)
    removed = []
    for entry in sorted(index_dir.iterdir()) if index_dir.is_dir() else []:
        if entry.name == keep or not _is_ours(entry):
            continue
        if not entry.is_dir():
            entry.unlink(missing_ok=True)
        elif not _remove_unpinned(entry):
            continue
        removed.append(entry.name)
    return removed


def _is_ours(entry: Path) -> bool:
    name = entry.name
    return name.startswith(("gen-", ".build-")) or (name.startswith(f".{CURRENT}.")
                                                     and name.endswith(".tmp"))


def _remove_unpinned(path: Path) -> bool:
    """Remove a generation unless a reader pins it; the exclusive lock is held while
    removing, so a reader that opened the pin meanwhile sees it vanish and retries."""
    try:
        fd = os.open(path / PIN, os.O_RDONLY)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)  # no pin file: a broken leftover
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(fd)
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _fsync_tree(path: Path) -> None:
    """Make a generation durable before it is published: every file written for it and
    every folder. A hard-linked file (a partition reused from the previous generation)
    was made durable with that generation. The calls run on threads: the file system
    then commits its journal once for many of them (five times faster than in turn)."""
    from concurrent.futures import ThreadPoolExecutor

    todo = list(_written(os.fspath(path)))
    with ThreadPoolExecutor(min(16, len(todo))) as pool:
        list(pool.map(_fsync, todo))


def _written(folder: str) -> Iterator[str]:
    """``folder``, its subfolders and the files in them that have a single link."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                yield from _written(entry.path)
            elif entry.stat(follow_symlinks=False).st_nlink == 1:
                yield entry.path
    yield folder


def _fsync(path: Path | str) -> None:
    """fsync a folder or a file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
