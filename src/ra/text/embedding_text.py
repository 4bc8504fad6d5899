"""What a chunk's vector stands for, and the content hash that keys it.

A chunk is embedded as its breadcrumb (document title and headings down to its own)
followed by its own text, without its subsections (they are chunks of their own, and
aggregation lifts a parent whose sections match). Chunks without words of their own
(a document node whose file starts with its h1, a heading followed at once by
subheadings) get no vector, as they get no postings. Text past ``MAX_CHARS`` is left
out: MiniLM reads 256 word pieces, about a thousand characters of English, so more
costs tokenizer time and changes nothing.

The hash is of the text as embedded: a vector is reused by any later generation whose
chunk has the same text, whatever its ``ord`` (a re-indexed file numbers its chunks
anew), and ``ra.config.semantic.TEXT_VERSION`` is part of the model id: bump it when
the recipe here changes, so that it re-embeds rather than mixing recipes.
"""

from __future__ import annotations

import hashlib
import re

MAX_CHARS = 4000
_WORD = re.compile(r"\w")


def chunk_text(breadcrumb: str, body: str) -> str:
    """The text embedded for a chunk."""
    text = f"{breadcrumb}\n\n{body.strip()}" if body.strip() else breadcrumb
    return text[:MAX_CHARS]


def embeddable(body: str, descendants: int) -> bool:
    """Whether a chunk gets a vector: it has words of its own, or nothing below it."""
    return descendants == 0 or _WORD.search(body) is not None


def text_hash(text: str) -> bytes:
    """16 bytes identifying ``text``."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def chunk_rows(chunks) -> tuple[list[int], list[str], list[bytes]]:
    """``(ords, texts, hashes)`` of the embeddable chunks of a ``chunks`` table (any
    object with ``ord``, ``breadcrumb``, ``body`` and ``descendants`` columns)."""
    ords, texts, hashes = [], [], []
    columns = [chunks[c].to_pylist() for c in ("ord", "breadcrumb", "body", "descendants")]
    for o, crumb, body, below in zip(*columns, strict=True):
        if embeddable(body or "", below):
            text = chunk_text(crumb or "", body or "")
            ords.append(o)
            texts.append(text)
            hashes.append(text_hash(text))
    return ords, texts, hashes
