"""``ra get``: one chunk or one whole document by id.

Ids are parsed strictly (``ra.ids``): paths that climb out of their tree are refused,
and only ids present in the index are served, so ``get`` never reads outside the
configured trees. ``tree:path`` and ``tree:path#preamble`` name the document node; an
unknown id fails with the nearest known ids as suggestions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ra.errors import NotFoundError
from ra.ids import ChunkId

PREAMBLE = "preamble"
SUGGESTIONS = 5


@dataclass
class Chunk:
    """A chunk's content as ``ra get`` returns it."""

    id: str
    tree: str
    path: str
    title: str
    breadcrumb: str
    content: str
    tokens: int

    def to_dict(self) -> dict:
        return asdict(self)


def get_chunk(reader, config, text: str, *, full_document: bool = False) -> Chunk:
    """The chunk (with its subsections) or document named by ``text``."""
    cid = ChunkId.parse(text.strip())
    doc_id = str(cid.doc_id)
    own_only = cid.slug == PREAMBLE and reader.meta(f"{doc_id}#{PREAMBLE}") is None
    wanted = doc_id if full_document or cid.slug is None or own_only else str(cid)
    meta = reader.meta(wanted)
    if meta is None:
        raise NotFoundError(f"no chunk with id {text!r}", suggestions=nearest(reader, text))
    span = 0 if own_only else meta.descendants
    content = reader.contents([(meta.ord, span)]).get(meta.ord, "")
    tokens = meta.tokens if span == meta.descendants else _estimate(content)
    return Chunk(meta.id, meta.tree, meta.path, meta.title, meta.breadcrumb, content, tokens)


def nearest(reader, text: str, limit: int = SUGGESTIONS) -> list[str]:
    """Known ids closest to ``text`` (for "did you mean")."""
    from rapidfuzz import fuzz, process

    ids = [r[0] for r in reader.query("SELECT id FROM meta")]
    hits = process.extract(text, ids, scorer=fuzz.WRatio, limit=limit, score_cutoff=50)
    return [h[0] for h in hits]


def _estimate(text: str) -> int:
    from ra.query.budget import estimate_tokens

    return estimate_tokens(text)
