"""Parse one file into a document and its hierarchical chunk tree. Pure: text in, nodes out.

The phases run in this order, and the order matters:

1. **Frontmatter** (``---`` YAML ``---``) is split off *before* headings are looked for, so
   it can never turn into a fake setext heading (DESIGN deviation 4). Broken YAML is
   reported as a problem and the block is still removed.
2. **Headings** are found by mistletoe's CommonMark block parser, so ``#`` lines inside
   code fences, HTML blocks or indented code are not headings, setext headings are, and
   headings inside block quotes and list items count as pulldown-cmark (the original's
   parser) counts them. Only the *block* pass runs: inline parsing is what makes a full
   mistletoe parse slow (about 0.5 MB/s), and only heading text needs it. A few token
   classes get a cheap pre-check so that ordinary prose lines skip a dozen regexes; they
   decide exactly as mistletoe does (see ``_mistletoe``).
3. **Spans** follow the specification: a heading's span runs from the byte after its line
   (and one blank line) to the next heading of equal or higher level; headings whose span
   is empty are dropped. The parent of a heading is the nearest preceding surviving
   heading of a lower level, else the document node, so spans nest.
4. **Slugs** are GitHub-style and keep Unicode letters (deviation 6); every heading gets
   one in document order, like GitHub anchors, and no slug repeats within a document.

A node's ``heading`` is its heading line(s) and the blank line the span skips; its
``body`` runs from the span start to the next surviving heading of any level (so a
dropped heading's line stays in the body before it). Heading and body of consecutive
nodes therefore tile the text after the frontmatter: nothing is lost, and a node's
content with its subsections is an exact slice of the file. The document node's body is
the preamble. Byte offsets are UTF-8 offsets into the text as passed to
:func:`parse_document`.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Any

from ra.ids import format_chunk_id, format_doc_id

BREADCRUMB_SEPARATOR = " › "
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class Node:
    """One chunk: the document itself (depth 0) or a heading with its section."""

    id: str  # tree:path for the document node, tree:path#slug for a heading
    doc_id: str  # tree:path
    parent_id: str | None  # None for the document node
    slug: str | None  # None for the document node
    depth: int  # 0 for the document node, else the heading level 1..6
    position: int  # preorder index in the document; the document node is 0
    sibling_count: int  # children of the parent (document node: 1)
    descendants: int  # nodes below it: the subtree is positions [position, position+descendants]
    title: str  # heading text (document node: document title)
    breadcrumb: str  # "Doc Title › Parent › Child"
    heading: str  # heading line(s) as written plus the blank line skipped before the span
    body: str  # own text, up to the next surviving heading of any level
    byte_start: int  # first byte of the span (after the heading line)
    byte_end: int  # end of the span: next heading of equal or higher level, or EOF
    heading_start: int  # first byte of the heading line (document node: byte_start)


@dataclass(frozen=True)
class Document:
    """A parsed file: metadata from frontmatter and the chunk tree in preorder."""

    tree: str
    path: str
    kind: str  # "markdown" or "text"
    title: str
    tags: tuple[str, ...]
    description: str | None
    status: str | None  # frontmatter `status`, lowercased
    frontmatter: dict = field(repr=False)
    nodes: tuple[Node, ...] = field(repr=False)  # preorder, document node first
    problems: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return format_doc_id(self.tree, self.path)

    def content(self, node: Node) -> str:
        """The node's markdown with its subsections: heading and body of the whole subtree."""
        subtree = self.nodes[node.position : node.position + node.descendants + 1]
        return "".join(n.heading + n.body for n in subtree)


@dataclass(frozen=True)
class Heading:
    """A heading as found in the text (before empty ones are dropped)."""

    level: int
    text: str  # plain text: text and inline code, no markup
    start: int  # byte offset of the first heading line
    end: int  # byte offset after the last heading line (incl. its newline)


def parse_document(text: str, tree: str, path: str, *,
                   chunk_at_headings: bool = True) -> Document:
    """Parse a file's text; never raises. ``.md``/``.markdown`` are markdown, all else text."""
    if not path.lower().endswith(MARKDOWN_SUFFIXES):
        title = _stem(path)
        nodes = build_chunk_tree(text, tree, path, title, headings=[])
        return Document(tree, path, "text", title, (), None, None, {}, nodes)
    data, body_at, problems = _split_frontmatter(text)
    body = text[body_at:]
    lines = _Lines(body)
    headings, scan_problems = _scan_headings(lines)
    meta = _metadata(data or {})
    title = meta["title"] or _first_h1(headings) or _stem(path)
    nodes = build_chunk_tree(body, tree, path, title, base=_utf8_len(text[:body_at]),
                             headings=headings if chunk_at_headings else [], lines=lines)
    return Document(tree, path, "markdown", title, meta["tags"], meta["description"],
                    meta["status"], data or {}, nodes, tuple(problems + scan_problems))


# --------------------------------------------------------------------------- frontmatter

_FENCE_OPEN = re.compile(r"---[ \t]*\r?\n")
_FENCE_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")


def parse_frontmatter(text: str) -> tuple[dict | None, str, list[str]]:
    """Split YAML frontmatter off ``text``: (mapping or None, remaining text, problems).

    Without a frontmatter block the text comes back unchanged. A block whose YAML is
    broken yields None and a problem, and is still removed from the remaining text.
    """
    data, body_at, problems = _split_frontmatter(text)
    return data, text[body_at:], problems


def _split_frontmatter(text: str) -> tuple[dict | None, int, list[str]]:
    """(mapping or None, index where the body starts, problems)."""
    start = 1 if text.startswith("\ufeff") else 0
    opening = _FENCE_OPEN.match(text, start)
    if not opening:
        return None, 0, []
    closing = _FENCE_CLOSE.search(text, opening.end())
    if not closing:
        return None, 0, []
    source = text[opening.end() : closing.start()]
    body_at = _BLANK_LINES.match(text, closing.end()).end()
    try:
        data = _load_yaml(source)
    except Exception as error:  # noqa: BLE001 - any YAML failure is a problem, not a crash
        return None, body_at, [f"frontmatter: invalid YAML{_yaml_line(error)}"]
    if data is None:
        return {}, body_at, []
    if not isinstance(data, dict):
        return None, 0, []  # `---` rules around prose, not frontmatter
    return data, body_at, []


def _load_yaml(source: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when compiled in
    return yaml.load(source, Loader=loader)  # noqa: S506 - a safe loader


def _yaml_line(error: Exception) -> str:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return f" (line {mark.line + 2})" if mark is not None else ""  # +1 for '---', 1-based


def _metadata(data: dict) -> dict[str, Any]:
    """title, tags, description and status, coerced from whatever the YAML holds."""
    description = _scalar(data.get("description")) or _scalar(data.get("summary"))
    status = _scalar(data.get("status"))
    return {"title": _scalar(data.get("title")), "tags": _tags(data.get("tags")),
            "description": description, "status": status.lower() if status else None}


def _scalar(value: Any) -> str | None:
    """A frontmatter value as a string: numbers and dates as written, a flat list joined.

    Nested lists are not followed: YAML aliases can nest them exponentially deep.
    """
    if isinstance(value, list):
        value = ", ".join(filter(None, (_scalar(v) for v in value if not isinstance(v, list))))
    if value is None or isinstance(value, dict):
        return None
    return str(value).strip() or None


def _tags(value: Any) -> tuple[str, ...]:
    """A YAML list, a comma-separated string (Obsidian), or `#tag` words, as clean tags."""
    if value is None or isinstance(value, dict):
        return ()
    if isinstance(value, list):
        items = value
    elif "," not in str(value) and str(value).lstrip().startswith("#"):
        items = str(value).split()  # "#rust #cli"
    else:
        items = str(value).split(",")
    tags = (_scalar(item) for item in items if not isinstance(item, (list, dict)))
    cleaned = (tag.lstrip("#").strip() for tag in tags if tag)
    return tuple(dict.fromkeys(tag for tag in cleaned if tag))


# ------------------------------------------------------------------------------ headings


class _Lines:
    """The text split into lines, with the character offset where each line starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.split("\n")
        if parts[-1] == "":
            parts.pop()
        self.lines = [part + "\n" for part in parts]  # mistletoe wants a newline on each
        self.starts = [0, *accumulate(len(line) for line in self.lines)]
        self.starts[-1] = len(text)  # the last line may lack its newline

    def __len__(self) -> int:
        return len(self.lines)


@dataclass(frozen=True)
class _Found:
    level: int
    text: str
    first: int  # index of the first heading line
    stop: int  # index after the last heading line


def extract_headings(text: str) -> list[Heading]:
    """Every CommonMark heading of ``text`` in order, with UTF-8 byte offsets."""
    lines = _Lines(text)
    found, _ = _scan_headings(lines)
    bounds = [lines.starts[i] for h in found for i in (h.first, h.stop)]
    to_bytes = _byte_offsets(text, 0, bounds)
    return [Heading(h.level, h.text, to_bytes[lines.starts[h.first]],
                    to_bytes[lines.starts[h.stop]]) for h in found]


_MAYBE_HEADING = re.compile(r"^[ \t>*+\-0-9.)]*#|^[ \t]*(?:=+|-+)[ \t]*\r?$", re.MULTILINE)


def _scan_headings(lines: _Lines) -> tuple[list[_Found], list[str]]:
    """Headings found by mistletoe's block pass; a parser failure becomes a problem."""
    if not _MAYBE_HEADING.search(lines.text):
        return [], []  # no line could be a heading: skip the parser
    m = _mistletoe()
    try:
        with _mistletoe_session(m):
            buffer = m.tokenize_block(lines.lines, m.block_types)
            found: list[_Found] = []
            _collect(buffer, m, lines, found)
    except Exception as error:  # noqa: BLE001 - e.g. RecursionError on absurd nesting
        return [], [f"markdown: headings not found ({type(error).__name__})"]
    found.sort(key=lambda h: h.first)
    return [h for i, h in enumerate(found) if i == 0 or h.first >= found[i - 1].stop], []


def _collect(buffer: Iterable, m: SimpleNamespace, lines: _Lines, out: list[_Found],
             shift: int = 0) -> None:
    """Walk a mistletoe parse buffer (and the buffers of quotes and lists) for headings.

    mistletoe numbers the lines of a list item from its marker line even when the item's
    content starts on the next line; ``shift`` corrects that for everything inside it.
    """
    for kind, result, line_number in buffer:
        first = line_number - 1 + shift
        if kind is m.Heading:
            level, content, _ = result
            out.append(_Found(level, _clean(_inline_text(content, m)), first, first + 1))
        elif isinstance(result, m.SetextHeading):
            stop = _setext_stop(lines, first)
            out.append(_Found(result.level, _clean(_plain(result.children, m)), first, stop))
        elif kind is m.Quote:
            _collect(result, m, lines, out, shift)
        elif kind is m.List:
            for item in result:
                marker = item[4] - 1 + shift
                bare = marker < len(lines) and _BARE_MARKER.match(lines.lines[marker])
                _collect(item[0], m, lines, out, shift + (1 if bare else 0))


_BARE_MARKER = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]*$")


def _setext_stop(lines: _Lines, first: int) -> int:
    """The line after a setext heading's underline: the first line of only = or only -."""
    for i in range(first + 1, len(lines)):
        underline = lines.lines[i].strip()
        if underline and (not underline.strip("=") or not underline.strip("-")):
            return i + 1
    return len(lines)


def _clean(text: str) -> str:
    return " ".join(text.split())


_INLINE_SPECIAL = re.compile(r"[\\`*_\[<&~\n]")
# markup outside code spans; an underscore between two letters or digits is inert
_MARKUP = re.compile(r"[\\*\[<&~\n`]|(?<![^\W_])_|_(?![^\W_])")
_BACKTICKS = re.compile(r"`+")
_TAG = re.compile(r"<[^>]*>")
_LEADING_ANCHORS = re.compile(r'(?:\s*<a\s+(?:name|id)="[^"<>`&\\\n]*"\s*>\s*</a>)+')


def _inline_text(content: str, m: SimpleNamespace) -> str:
    """Plain text of inline markdown. mistletoe's inline parser is the slowest part of a
    parse, and most headings need none of it: they are plain, or hold only code spans,
    intraword underscores and a leading ``<a name="…"></a>`` anchor (DocFX style)."""
    if not _INLINE_SPECIAL.search(content):
        return content
    anchors = _LEADING_ANCHORS.match(content)
    rest = content[anchors.end() :] if anchors else content
    parts = _code_spans(rest) if "`" in rest and "\\" not in rest else [(rest, False)]
    if not any(_MARKUP.search(text) for text, code in parts if not code):
        spaces = _TAG.sub("", anchors.group()) if anchors else ""
        return spaces + "".join(text for text, _ in parts)
    return _plain(m.span_token.tokenize_inner(content), m)


def _code_spans(text: str) -> list[tuple[str, bool]]:
    """(text, is code) pieces by CommonMark's code span rule: a backtick run is closed by
    the next run of the same length; an unclosed run is literal."""
    parts: list[tuple[str, bool]] = []
    runs = list(_BACKTICKS.finditer(text))
    done = 0  # text before this offset is in parts
    i = 0
    while i < len(runs):
        opener = runs[i]
        closer = next((j for j in range(i + 1, len(runs))
                       if len(runs[j].group()) == len(opener.group())), None)
        if closer is None:
            i += 1
            continue
        parts.append((text[done : opener.start()], False))
        code = text[opener.end() : runs[closer].start()]
        if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
            code = code[1:-1]
        parts.append((code, True))
        done, i = runs[closer].end(), closer + 1
    parts.append((text[done:], False))
    return parts


def _plain(tokens: Iterable, m: SimpleNamespace) -> str:
    """Text and code of inline tokens (link text and image alt included, HTML tags not)."""
    parts = []
    for token in tokens or ():
        if isinstance(token, m.span_token.RawText):
            parts.append(token.content)
        elif isinstance(token, m.span_token.LineBreak):
            parts.append(" ")
        elif not isinstance(token, m.span_token.HtmlSpan):
            parts.append(_plain(token.children, m))
    return "".join(parts)


def _first_h1(headings: list[_Found]) -> str | None:
    return next((h.text for h in headings if h.level == 1 and h.text), None)


def _stem(path: str) -> str:
    return PurePosixPath(path).stem or path


# ------------------------------------------------------------------------------ mistletoe

_LOCK = threading.Lock()  # mistletoe keeps parser state in module globals
# lines that can only start or continue a paragraph: no block starts with their first
# character (one or two backticks or tildes are not a fence)
_PLAIN_CONTINUATION = re.compile(r" {0,3}(?:[^\s#>`~<\-+*_=.)0-9]|`{1,2}[^`]|~{1,2}[^~])| {4,}\S")
_PLAIN_START = re.compile(r" {0,3}(?:[^\s#>`~<\-+*_=.)0-9\[]|`{1,2}[^`]|~{1,2}[^~])")


@cache
def _mistletoe() -> SimpleNamespace:
    """mistletoe's block tokens with cheap pre-checks, imported on first use.

    Each pre-check only rejects what the original rejects too: an ATX heading needs ``#``
    in its first four characters, a fence a backtick or tilde there, an HTML block a
    ``<``, a link reference definition a ``]:``. Lines that can only start or continue a
    paragraph (the bulk of any document) skip the other block types, and code fences are
    skipped without collecting their text. Quote, List and ThematicBreak stay the original
    classes: mistletoe compares them by identity. A test checks on every corpus file that
    the headings found equal those of mistletoe's own classes.

    GFM tables are not a block type here, as in the original (CommonMark without
    extensions); mistletoe's table reader would also swallow a heading line containing
    ``|`` that directly follows a table.
    """
    from mistletoe import block_token as bt
    from mistletoe import block_tokenizer, span_token, token

    class FastHeading(bt.Heading):
        @classmethod
        def start(cls, line: str) -> bool:
            return "#" in line[:4] and super().start(line)

    class FastCodeFence(bt.CodeFence):
        @classmethod
        def start(cls, line: str) -> bool:
            head = line[:4]
            return ("`" in head or "~" in head) and super().start(line)

        @classmethod
        def read(cls, lines: Any) -> Any:
            return _read_fence(cls, lines)

    class FastHtmlBlock(bt.HtmlBlock):
        @classmethod
        def start(cls, line: str) -> Any:
            return "<" in line and super().start(line)

    class FastFootnote(bt.Footnote):
        @classmethod
        def read(cls, lines: Any) -> Any:
            # a link reference definition needs "]:" before the next blank line
            source = lines.lines
            for i in range(lines.get_pos() + 1, len(source)):
                if "]:" in source[i]:
                    return super().read(lines)
                if not source[i].strip():
                    break
            return None

    class FastParagraph(bt.Paragraph):
        @classmethod
        def read(cls, lines: Any) -> Any:
            return _read_paragraph(cls, lines, bt, breaking)

    block_types = [FastHtmlBlock, bt.BlockCode, FastHeading, bt.Quote, FastCodeFence,
                   bt.ThematicBreak, bt.List, FastFootnote, FastParagraph]
    span_types = [span_token.EscapeSequence, span_token.HtmlSpan, span_token.Strikethrough,
                  span_token.AutoLink, span_token.CoreTokens, span_token.InlineCode,
                  span_token.LineBreak, span_token.RawText]
    breaking = [t for t in block_types
                if hasattr(t, "check_interrupts_paragraph") and t is not bt.ThematicBreak]

    def tokenize_block(iterable: Any, token_types: Any, start_line: int = 1) -> Any:
        """``block_tokenizer.tokenize_block`` that skips blank lines and sends lines that
        can only start a paragraph straight to the paragraph reader."""
        lines = block_tokenizer.FileWrapper(iterable, start_line=start_line)
        buffer = block_tokenizer.ParseBuffer()
        line = lines.peek()
        while line is not None:
            if line == "\n":
                next(lines)
                buffer.loose = True
            else:
                plain = FastParagraph in token_types and _PLAIN_START.match(line)
                for token_type in (FastParagraph,) if plain else token_types:
                    if token_type.start(line):
                        line_number = lines.line_number() + 1
                        result = token_type.read(lines)
                        if result is not None:
                            buffer.append((token_type, result, line_number))
                            break
                else:
                    next(lines)
                    buffer.loose = True
            line = lines.peek()
        return buffer

    return SimpleNamespace(
        bt=bt, token=token, span_token=span_token, block_tokenizer=block_tokenizer,
        block_types=block_types, span_types=span_types, breaking=breaking,
        tokenize_block=tokenize_block, Heading=FastHeading, Quote=bt.Quote, List=bt.List,
        SetextHeading=bt.SetextHeading)


def _read_paragraph(cls: Any, lines: Any, bt: Any, breaking: list) -> Any:
    """mistletoe's ``Paragraph.read``, stepping over lines that start no block directly."""
    source, first = lines.lines, lines.get_pos() + 1
    end = first + 1
    while end < len(source):
        line = source[end]
        if _PLAIN_CONTINUATION.match(line):
            end += 1
            continue
        if line.strip() == "":
            break
        lines.set_pos(end - 1)  # the checks below peek at `line`
        if any(t.check_interrupts_paragraph(lines) for t in breaking):
            break
        if cls.parse_setext and cls.is_setext_heading(line):
            lines.set_pos(end)
            return bt.SetextHeading(source[first : end + 1])
        if bt.ThematicBreak.check_interrupts_paragraph(lines):
            break
        end += 1
    lines.set_pos(end - 1)
    return source[first:end]


def _read_fence(cls: Any, lines: Any) -> Any:
    """mistletoe's ``CodeFence.read`` without collecting the code: the heading scan only
    needs to know where the fence ends."""
    source, indent_fence = lines.lines, cls._open_info
    fence = indent_fence[1]
    for end in range(lines.get_pos() + 2, len(source)):
        line = source[end]
        if fence in line:
            stripped = line.lstrip(" ")
            if (stripped.startswith(fence) and len(stripped.split(maxsplit=1)) == 1
                    and len(line) - len(stripped) < 4):
                lines.set_pos(end)
                return [], indent_fence
    lines.set_pos(len(source) - 1)
    return [], indent_fence


@contextmanager
def _mistletoe_session(m: SimpleNamespace):
    """Install ra's token lists and a root for link definitions; restore on exit."""
    with _LOCK:
        saved = (m.bt._token_types[:], m.span_token._token_types[:], m.token._root_node,
                 m.block_tokenizer.tokenize_block)
        m.bt._token_types[:] = m.block_types
        m.span_token._token_types[:] = m.span_types
        m.token._root_node = SimpleNamespace(footnotes={})
        m.block_tokenizer.tokenize_block = m.tokenize_block  # containers recurse through it
        try:
            yield
        finally:
            (m.bt._token_types[:], m.span_token._token_types[:], m.token._root_node,
             m.block_tokenizer.tokenize_block) = saved


# ---------------------------------------------------------------------------------- slugs

_ASCII_DROP = re.compile(r"[^a-z0-9_ -]")
_HYPHENS = re.compile(r"-{2,}")


def slugify(text: str) -> str:
    """GitHub-style slug without deduplication; ``heading`` when nothing is left."""
    text = " ".join(text.lower().split())
    if text.isascii():
        kept = _ASCII_DROP.sub("", text)
    else:
        kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return _HYPHENS.sub("-", kept.replace(" ", "-")).strip("-") or "heading"


class Slugifier:
    """Slugs for the headings of one document, never the same slug twice."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next: dict[str, int] = {}

    def reserve(self, slug: str) -> None:
        """Mark a slug as taken, so that no heading gets it."""
        self._used.add(slug)

    def slug(self, heading_text: str) -> str:
        base = slug = slugify(heading_text)
        n = self._next.get(base, 0)
        while slug in self._used:
            n += 1
            slug = f"{base}-{n}"
        self._next[base] = n
        self._used.add(slug)
        return slug


# ----------------------------------------------------------------------------- the tree


def breadcrumb(doc_title: str, path: Iterable[tuple[int, str]]) -> list[str]:
    """[doc title, ancestor titles…, own title] for a node reached by (depth, title) steps.

    A depth-1 heading that repeats the document title is skipped, and so are empty titles.
    """
    return [doc_title, *(title for depth, title in path
                         if title and not (depth == 1 and title == doc_title))]


@dataclass(eq=False)
class _Draft:
    """A node under construction; offsets are character offsets into the text."""

    id: str
    parent: _Draft | None
    slug: str | None
    depth: int
    title: str
    crumbs: list[str]
    heading_start: int
    start: int  # span start (after the heading line and one blank line)
    end: int  # span end
    children: int = 0
    last: int = 0  # position of the last node of the subtree


def build_chunk_tree(text: str, tree: str, path: str, doc_title: str, *, base: int = 0,
                     headings: list[_Found] | None = None,
                     lines: _Lines | None = None) -> tuple[Node, ...]:
    """The nodes of ``text`` in preorder; byte offsets start at ``base``.

    ``headings`` defaults to the headings of ``text``; pass ``[]`` for a single node.
    """
    if headings is None:
        lines = lines or _Lines(text)
        headings = _scan_headings(lines)[0]
    doc, size = format_doc_id(tree, path), len(text)
    spans = _spans(headings, lines or _Lines(text)) if headings else []
    root = _Draft(doc, None, None, 0, doc_title, [doc_title], 0, 0, size)
    drafts, stack, slugger = [root], [root], Slugifier()
    for found, (heading_start, start, end) in zip(headings, spans, strict=True):
        slug = slugger.slug(found.text)  # dropped headings keep their slug, like anchors
        if start >= end:
            continue  # empty span: the heading is dropped
        while stack[-1].depth >= found.level:
            stack.pop()
        parent = stack[-1]
        parent.children += 1
        crumbs = parent.crumbs + breadcrumb(doc_title, [(found.level, found.text)])[1:]
        draft = _Draft(format_chunk_id(tree, path, slug), parent, slug, found.level,
                       found.text, crumbs, heading_start, start, end)
        drafts.append(draft)
        stack.append(draft)
    return _freeze(drafts, text, base)


def _spans(headings: list[_Found], lines: _Lines) -> list[tuple[int, int, int]]:
    """(heading start, span start, span end) of every heading.

    A span runs from after the heading line (skipping one blank line) to the next heading
    of equal or higher level, surviving or not, as the specification computes it.
    """
    text, starts, size = lines.text, lines.starts, len(lines.text)
    heads = [starts[h.first] for h in headings]
    ends = [size] * len(headings)
    open_: list[int] = []
    for i, h in enumerate(headings):
        while open_ and headings[open_[-1]].level >= h.level:
            ends[open_.pop()] = heads[i]
        open_.append(i)
    spans = []
    for i, h in enumerate(headings):
        heading_end = starts[h.stop]
        start = heading_end + 1 if text.startswith("\n", heading_end) else heading_end
        spans.append((heads[i], start, ends[i]))
    return spans


def _freeze(drafts: list[_Draft], text: str, base: int) -> tuple[Node, ...]:
    """Bodies, subtree sizes and byte offsets, then immutable nodes.

    A body runs to the next surviving heading, so the lines of dropped headings stay in
    the body before them and every character of the text is in exactly one node.
    """
    body_ends = [d.heading_start for d in drafts[1:]] + [len(text)]
    for position, draft in enumerate(drafts):
        draft.last = position
        ancestor = draft.parent
        while ancestor is not None:
            ancestor.last = position
            ancestor = ancestor.parent
    to_bytes = _byte_offsets(text, base, [o for d in drafts
                                          for o in (d.heading_start, d.start, d.end)])
    doc = drafts[0].id
    return tuple(
        Node(d.id, doc, d.parent.id if d.parent else None, d.slug, d.depth, position,
             d.parent.children if d.parent else 1, d.last - position, d.title,
             BREADCRUMB_SEPARATOR.join(d.crumbs), text[d.heading_start : d.start],
             text[d.start : body_end], to_bytes[d.start], to_bytes[d.end],
             to_bytes[d.heading_start])
        for position, (d, body_end) in enumerate(zip(drafts, body_ends, strict=True)))


def _byte_offsets(text: str, base: int, chars: Iterable[int]) -> dict[int, int]:
    """UTF-8 byte offset (plus ``base``) of each character offset, in one pass."""
    if text.isascii():
        return {c: base + c for c in chars}
    result, char, byte = {}, 0, base
    for offset in sorted(set(chars)):
        byte += _utf8_len(text[char:offset])
        result[offset], char = byte, offset
    return result


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
