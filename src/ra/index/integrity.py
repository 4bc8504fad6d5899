"""Whether a generation's files are whole, checked when a reader opens it.

Views read their files only when a query needs them, so a truncated or missing file is
looked for at open (``check_files``), where freshness rebuilds a damaged index, rather
than in the middle of a search: the magic bytes at both ends of each Parquet and Arrow
file and a footer that fits in it, a few small reads per file.
"""

from __future__ import annotations

import os
from pathlib import Path

from ra.errors import IndexStateError
from ra.store import generations
from ra.store.layout import COMPACT, GLOBAL, PARTITIONED, artifact_path, part_name


def check_files(generation: generations.Generation, parts: list[int] | None = None
                 ) -> None:
    """Every artifact file of the generation (or of its partitions ``parts``) is there
    and is framed like Parquet.

    Views read their files only when a query needs them, so a truncated or missing file
    is looked for here, at open, where freshness rebuilds a damaged index, rather than
    in the middle of a search. It costs a few small reads per file."""
    gen = generation.path
    if parts is None:
        parts = generation.manifest.get("partitions")
    files = [gen / artifact_path(name) for name in GLOBAL]
    if "compact" in generation.manifest:
        files += [gen / artifact_path(name) for name in COMPACT]
    for name in PARTITIONED:
        files += (sorted((gen / name).glob("*.parquet")) if parts is None
                  else [gen / name / part_name(int(p)) for p in parts])
    for path in files:
        if not _framed(path):
            raise IndexStateError(f"index generation {gen.name} is damaged: "
                                  f"{path.relative_to(gen)} is missing or truncated")


#: How each kind of file is framed: its magic bytes at both ends, its smallest size, and
#: the bytes around its footer (whose length is the four bytes before the last magic).
_FRAMES = {".arrow": (b"ARROW1", 22, 18),
           ".parquet": (b"PAR1", 12, 12)}


def _framed(path: Path) -> bool:
    """The file's magic at both ends and a footer that fits in the file."""
    magic, least, around = _FRAMES[".arrow" if path.suffix == ".arrow" else ".parquet"]
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size < least:
            return False
        head = os.pread(fd, len(magic), 0)
        tail = os.pread(fd, 4 + len(magic), size - 4 - len(magic))
    finally:
        os.close(fd)
    footer = int.from_bytes(tail[:4], "little")
    return head == magic and tail[4:] == magic and footer + around <= size
