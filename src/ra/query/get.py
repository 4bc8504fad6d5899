"""``ra get``: one chunk or one whole document by id, and the chunks it links to.

Ids are parsed strictly (``ra.text.ids``): paths that climb out of their tree are refused,
and only ids present in the index are served, so ``get`` never reads outside the
configured trees. ``tree:path`` and ``tree:path#preamble`` name the document node; an
id an HTML anchor or an Obsidian block gives (``#functions--declarations``) names the
chunk holding it; an unknown id fails with the nearest known ids as suggestions. An id
percent-encoded as a browser shows an anchor (``#%E7%BF%BB%E8%AF%91``) is read decoded
when it names nothing as written; the id of a symlink to a file the index holds under
its own path names that file (``CLAUDE.md`` → ``AGENTS.md``).

With ``links``, the chunks its links reach (``ra.index.links``) come along, each once, in
the order the links appear, without the chunk's own sections and ancestors (their text
holds it already) and without sections of another chunk reached (its text holds them).
They are packed into what the token budget leaves after the chunk itself, two tiers as
in search (``ra.query.budget``): in full while they fit, else as id and title; how many
did not fit at all is said.

A chunk larger than a budget given (``max_tokens``) comes as its own text (its heading
and the text before its first section, cut at a line to fit if it must) and its sections
as ids and titles while they fit (``Cut``): a KEP's or a Swift proposal's page is 15,000
tokens, and ``ra get ID --max-tokens 500`` gave all of them. Its own text cut, the answer
says which lines of its file it gave, and ``from_line`` reads on from a line (``Lines``):
a page of 1,500 bullets under one heading (an outliner's, a changelog's) is one chunk of
30,000 tokens, of which a budget of 4,000 had given the first 216 lines and no way to the
rest but a budget of 30,000. A chunk's text is its file's lines from ``line`` on, as
written, its sections' after its own (``ra.index.reader.IndexReader.contents``), so a
line of the file names a place in it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ra.errors import NotFoundError
from ra.text.ids import ChunkId, InvalidIdError, format_chunk_id
from ra.text.tokens import frame

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
    links: list | None = None  # with links: every link out of the chunk (OutLink)
    linked: list[Linked] = field(default_factory=list)  # the chunks they reach, packed
    linked_omitted: int = 0  # reached chunks left out: not even their id fit the budget
    max_tokens: int | None = None
    cut: Cut | None = None  # too large for the budget: its own text and its sections' ids
    lines: Lines | None = None  # read from a line, or its own text cut: the lines given

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("id", "tree", "path", "title", "breadcrumb",
                                              "content", "tokens")}
        if self.lines is not None:
            out["lines"] = asdict(self.lines)
        if self.cut is not None:
            out["cut"] = asdict(self.cut)
            out["max_tokens"] = self.max_tokens
        if self.links is not None:
            out["links"] = [link.to_dict() for link in self.links]
            out["linked"] = [asdict(c) for c in self.linked]
            out["linked_omitted"] = self.linked_omitted
            out["max_tokens"] = self.max_tokens
            out["tokens_used"] = self.tokens + sum(c.tokens for c in self.linked)
        return out


@dataclass
class Section:
    """A section of a chunk given by id: ``depth`` its heading's level (0 a document)."""

    id: str
    title: str
    depth: int
    tokens: int  # what ``ra get id`` gives


@dataclass
class Cut:
    """What a chunk too large for the budget was cut to: ``tokens`` its whole size,
    ``content`` (the chunk's) its own text, whole or cut at a line (``own_cut``), then
    ``sections`` below it by id, in order, while they fit; ``more`` did not."""

    tokens: int
    own_cut: bool
    sections: list[Section]
    more: int
    more_line: int | None = None  # the line of its file the first section not shown is at


@dataclass
class Lines:
    """The lines of its file a chunk's content holds: ``first`` to ``last`` of the
    ``start`` to ``end`` its text (with its sections) spans; ``next``, the line to read on
    from (``ra get ID --from-line``), None when ``last`` is its end."""

    first: int
    last: int
    start: int
    end: int
    next: int | None


@dataclass
class Linked:
    """A chunk another one links to: in full (``content``) or as its id and title."""

    id: str
    title: str
    breadcrumb: str
    tokens: int  # what it costs in its tier
    tier: str  # "full" | "list"
    content: str | None = None


def get_chunk(reader, config, text: str, *, full_document: bool = False,
              links: bool = False, max_tokens: int | None = None,
              from_line: int | None = None) -> Chunk:
    """The chunk (with its subsections) or document named by ``text``; with ``links``,
    the chunks it links to, within ``max_tokens`` (None: no limit); with ``from_line``,
    its text from that line of its file on (``Lines``)."""
    more = {"full_document": full_document, "links": links, "max_tokens": max_tokens,
            "from_line": from_line}
    try:
        cid = ChunkId.parse(text.strip())
    except InvalidIdError as exc:  # a path given for an id: say the ids it may mean
        exc.suggestions = ids_of_path(reader, config, text.strip())
        raise
    doc_id = str(cid.doc_id)
    own_only = cid.slug == PREAMBLE and reader.meta(f"{doc_id}#{PREAMBLE}") is None
    wanted = doc_id if full_document or cid.slug is None or own_only else str(cid)
    meta = reader.meta(wanted)
    if meta is None and "%" in text and (decoded := unquote(text.strip())) != text.strip():
        # an anchor copied from a browser's address bar: #%E7%BF%BB%E8%AF%91 is #翻译
        return get_chunk(reader, config, decoded, **more)
    if meta is None and (target := linked_file(config, cid.tree, cid.path)):
        try:  # a link to a file indexed under its own path: that file's chunk
            return get_chunk(reader, config, format_chunk_id(*target, cid.slug), **more)
        except NotFoundError as exc:
            raise NotFoundError(f"no chunk with id {text!r}",
                                suggestions=exc.suggestions) from None
    if meta is None and cid.slug and (declared := _safe_id(cid.slug)) != cid.slug and (
            reader.meta(format_chunk_id(cid.tree, cid.path, declared)) is not None):
        # an id declared with characters an id cannot hold ({#Qux.Quux} is #Qux-Quux)
        return get_chunk(reader, config, format_chunk_id(cid.tree, cid.path, declared),
                         **more)
    if meta is None and cid.slug and (anchored := _anchored(reader, cid)) is not None:
        # an id an HTML anchor gives a chunk (airbnb's <a name="functions--declarations">)
        return get_chunk(reader, config, anchored, **more)
    if meta is None:
        raise NotFoundError(f"no chunk with id {text!r}{_gone(reader, config, cid)}",
                            suggestions=nearest(reader, text))
    span = 0 if own_only else meta.descendants
    content = reader.contents([(meta.ord, span)]).get(meta.ord, "")
    tokens = (meta.tokens if span == meta.descendants  # the stored count holds the frame
              else _counted(frame(meta.id, meta.breadcrumb) + content))
    chunk = Chunk(meta.id, meta.tree, meta.path, meta.title, meta.breadcrumb, content, tokens)
    if from_line is not None:
        _read_on(chunk, meta, from_line, max_tokens)
    elif max_tokens is not None and tokens > max_tokens:
        _cut(reader, chunk, meta, span, max_tokens)
    if links:
        _add_links(reader, chunk, meta, span, max_tokens)
    return chunk


def _safe_id(slug: str) -> str:
    from ra.text.markup import safe_id  # not at start-up: the markup's patterns

    return safe_id(slug)


def _gone(reader, config, cid: ChunkId) -> str:
    """Why an id names no chunk when its document is not indexed: its file is gone (an
    agent holds ids from earlier answers; the file was deleted or renamed since, and the
    ids "did you mean" gave were other pages')."""
    if reader.meta(format_chunk_id(cid.tree, cid.path, None)) is not None:
        return ""  # the document is there: a section of it, renamed or gone
    tree = next((t for t in config.trees if t.name == cid.tree), None)
    if tree is None or (tree.path / cid.path).exists():
        return ""
    return f": {cid.tree}:{cid.path} is no file of the tree (removed, renamed or never there)"


def _anchored(reader, cid: ChunkId) -> str | None:
    """The id of the chunk that an id given by an HTML anchor or an Obsidian block
    (``cid``'s slug) names in its document: the links artifact's ``anchor`` rows, as
    links reach them (``ra.index.links``)."""
    from ra.index.links import RAW
    from ra.store.layout import ANCHOR_SEQ

    rows = reader.query(f"SELECT min(ord) FROM {RAW} WHERE seq <= -{ANCHOR_SEQ} AND tree = ? "
                        "AND path = ? AND target = ?", [cid.tree, cid.path, cid.slug])
    if not rows or rows[0][0] is None:
        return None
    found = reader.lineage([rows[0][0]], ancestors=[]).get(rows[0][0])
    return None if found is None or found.id == str(cid) else found.id


def ids_of_path(reader, config, text: str) -> list[str]:
    """The ids that a path (``docs/guide.md#setup``: from a tree's folder or from here)
    names in the index: what an agent that gave a file's path for an id meant."""
    path, _, slug = text.partition("#")
    if not path or "\0" in path:
        return []
    found: list[str] = []
    for start in (*(Path(t.path) for t in config.trees), Path.cwd()):
        for tree, rel in _in_trees(config, start / path):
            for cid in (format_chunk_id(tree, rel, slug or None),  # the chunk the anchor
                        format_chunk_id(tree, rel, None)):  # names, else the document
                if reader.meta(cid) is not None:
                    found.append(cid)
                    break
    return list(dict.fromkeys(found))[:SUGGESTIONS]


def linked_file(config, tree: str, path: str) -> tuple[str, str] | None:
    """``(tree, path)`` of the file that the symlink ``tree:path`` names, when a tree holds
    it under its own path (the index holds it there, once: ``ra.pipeline.discover.
    scan_trees``); None for anything else."""
    link = next((Path(t.path) / path for t in config.trees if t.name == tree), None)
    if link is None or not link.is_symlink():
        return None
    return next(iter(_in_trees(config, link)), None)


def _in_trees(config, path: Path) -> list[tuple[str, str]]:
    """``(tree, path within it)`` of each tree whose folder holds ``path``, links resolved
    (as the walk selects a file: under its real path)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop
        return []
    out = []
    for tree in config.trees:
        try:
            out.append((tree.name, real.relative_to(Path(tree.path).resolve()).as_posix()))
        except ValueError:
            continue
    return out


def _add_links(reader, chunk: Chunk, meta, span: int, budget: int | None) -> None:
    from ra.index.links import out_links
    from ra.query.budget import Cost, pack, ref_entry_tokens

    chunk.links, chunk.max_tokens = out_links(reader, meta.ord, span), budget
    reached = [m for t in dict.fromkeys(link.id for link in chunk.links if link.id)
               if (m := reader.meta(t)) is not None and not _related(meta, m)]
    # a section whose document (or parent) is reached too is in that one's text
    metas = [m for m in reached if not any(o is not m and _related(o, m) and o.ord < m.ord
                                           for o in reached)]
    costs = [Cost(m.id, m.tokens or 1, ref_entry_tokens(m.id, m.title)) for m in metas]
    left = None if budget is None else max(0, budget - chunk.tokens)
    packing = pack(costs, left)
    by_id = {m.id: m for m in metas}
    full = [by_id[p.item.id] for p in packing.items if p.tier == "full"]
    texts = reader.contents([(m.ord, m.descendants) for m in full])
    chunk.linked = [Linked(p.item.id, by_id[p.item.id].title, by_id[p.item.id].breadcrumb,
                           p.tokens, p.tier,
                           texts.get(by_id[p.item.id].ord) if p.tier == "full" else None)
                    for p in packing.items]
    chunk.linked_omitted = len(packing.skipped)


def _cut(reader, chunk: Chunk, meta, span: int, budget: int) -> None:
    """Cut ``chunk`` (``span`` sections below it) to ``budget`` tokens (``Cut``): as
    printed, with the lines above it and the note below it."""
    from ra.query.budget import estimate_entry

    own = reader.contents([(meta.ord, 0)]).get(meta.ord, "") if span else chunk.content
    end = meta.line + chunk.content.count("\n")
    room = budget - _counted(frame(meta.id, meta.breadcrumb))
    if _counted(own) <= room - _note_tokens(meta, chunk.tokens, budget, end, lines=False):
        room -= _note_tokens(meta, chunk.tokens, budget, end, lines=False)
        text = own  # whole: the note need not say which lines
    else:
        room -= _note_tokens(meta, chunk.tokens, budget, end)
        text = _head(own, room)
    left = room - _counted(text)
    below = list(range(meta.ord + 1, meta.ord + span + 1))
    found = reader.lineage(below, ancestors=[]) if below else {}  # a held reader: no SQL
    rows = [(m.id, m.title, m.depth, m.tokens, m.line) for o in below if (m := found.get(o))]
    sections: list[Section] = []
    for sid, title, depth, tokens, _ in rows:
        cost = estimate_entry(f"{'  ' * (depth - meta.depth)}{sid}  {title}")
        if cost > left:
            break
        sections.append(Section(sid, title, depth, tokens))
        left -= cost
    more = rows[len(sections):]
    chunk.cut = Cut(chunk.tokens, text != own, sections, len(more),
                    more[0][4] if more else None)
    if text != own:  # the lines given, and where the rest of them starts
        chunk.lines = _lines(meta.line, chunk.content, 0, text)
    chunk.content, chunk.tokens, chunk.max_tokens = text, budget - left, budget


def _read_on(chunk: Chunk, meta, from_line: int, budget: int | None) -> None:
    """``chunk``'s text from line ``from_line`` of its file on (from its start when that
    is before it), cut at a line to fit ``budget`` as printed, with the lines it holds."""
    lines = chunk.content.splitlines(keepends=True)
    end = meta.line + max(len(lines), 1) - 1
    if from_line > end:
        raise NotFoundError(f"{chunk.id} is lines {meta.line}–{end} of {meta.path}: "
                            f"line {from_line} is past its end")
    skip = max(0, from_line - meta.line)
    text = "".join(lines[skip:])
    framed = _counted(frame(meta.id, meta.breadcrumb))
    if budget is not None:
        text = _head(text, budget - framed - _note_tokens(meta, chunk.tokens, budget, end))
    chunk.lines = _lines(meta.line, chunk.content, skip, text)
    chunk.content = text
    chunk.tokens = framed + _counted(text)
    chunk.max_tokens = budget


def _lines(start: int, whole: str, skip: int, given: str) -> Lines:
    """The ``Lines`` of ``given``: the text of ``whole`` (which begins at line ``start``
    of its file) from its line ``skip`` on, whole or cut at a line."""
    total = max(whole.count("\n") + (not whole.endswith("\n")), 1)
    shown = max(given.count("\n") + (bool(given) and not given.endswith("\n")), 1)
    first, end = start + skip, start + total - 1
    last = min(first + shown - 1, end)
    return Lines(first, last, start, end, last + 1 if last < end else None)


def _head(text: str, room: int) -> str:
    """The most lines from the start of ``text`` that ``room`` tokens hold, counted with
    cl100k_base as the budget is (a guess of four characters a token printed 4,100
    tokens of a code-dense chunk for 4,000, 111 for 50); the characters of the first
    line that fit when not even it does. ``text`` itself when it fits."""
    if _counted(text) <= room:
        return text
    ends = [i + 1 for i, c in enumerate(text) if c == "\n"]
    lines = _most(len(ends), lambda k: _counted(text[:ends[k - 1]]) <= room)
    if lines:
        return text[:ends[lines - 1]]
    first = text[:ends[0]] if ends else text  # not a line: its characters that fit
    return first[:_most(len(first), lambda k: _counted(first[:k]) <= room)]


def _most(n: int, fits) -> int:
    """The largest ``k`` of ``0 .. n`` for which ``fits(k)`` holds (``fits(0)`` is taken
    to; what fits is a prefix: a binary search)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _note_tokens(meta, tokens: int, budget: int, end: int, lines: bool = True) -> int:
    """What the note below a cut chunk costs at its longest: ``render.cut_note`` as the
    CLI words it, its lines' numbers as long as ``end``'s (the chunk's last line), with
    the lines it gave and where to read on when ``lines``, and the line saying that
    sections are not shown (the outline's own lines are counted as they are added)."""
    from ra.query.render import cut_note

    n = end
    shown = Chunk(meta.id, meta.tree, meta.path, meta.title, meta.breadcrumb, "x", tokens,
                  max_tokens=budget, lines=Lines(n, n, n, n, n) if lines else None)
    shown.cut = Cut(tokens, lines, [Section("", "", meta.depth, 0)], n, n)
    return _counted(cut_note(shown, "--max-tokens"))


def _counted(text: str) -> int:
    """``text``'s cl100k_base tokens (tiktoken is loaded only for a chunk that is cut)."""
    from ra.text.tokens import count_tokens

    return count_tokens(text)


def _related(a, b) -> bool:
    """Whether one of the chunks ``a``, ``b`` holds the other (or they are the same)."""
    return (a.ord <= b.ord <= a.ord + a.descendants) or (b.ord <= a.ord <= b.ord + b.descendants)


def nearest(reader, text: str, limit: int = SUGGESTIONS) -> list[str]:
    """Known ids closest to ``text`` (for "did you mean"): when its document is indexed,
    the sections of it whose slugs are closest first (an id held from before, its slug
    since changed: ``#markov-property-markov-property`` offered the page, not
    ``#markov-property``), then the closest of all."""
    from rapidfuzz import fuzz, process

    ids = [r[0] for r in reader.query("SELECT id FROM meta")]
    first: list[str] = []
    try:
        cid = ChunkId.parse(text.strip())
    except InvalidIdError:
        cid = None
    if cid is not None and cid.slug:
        doc = format_chunk_id(cid.tree, cid.path, None) + "#"
        slugs = {i[len(doc):]: i for i in ids if i.startswith(doc)}
        first = [slugs[h[0]] for h in process.extract(
            cid.slug, list(slugs), scorer=fuzz.WRatio, limit=limit, score_cutoff=60)]
    hits = process.extract(text, ids, scorer=fuzz.WRatio, limit=limit, score_cutoff=50)
    return list(dict.fromkeys([*first, *(h[0] for h in hits)]))[:limit]

