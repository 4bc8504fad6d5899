"""Headings of a markdown text, found by mistletoe's CommonMark block parser.

So ``#`` lines inside code fences, HTML blocks or indented code are not headings, setext
headings are, and headings inside block quotes and list items count as pulldown-cmark
(the original's parser) counts them. Only the *block* pass runs: inline parsing is what
makes a full mistletoe parse slow (about 0.5 MB/s), and only heading text needs it. A few
token classes get a cheap pre-check so that ordinary prose lines skip a dozen regexes;
they decide exactly as mistletoe does (see ``_mistletoe``). A heading's trailing attribute
list (``## Title { #id .class }``) leaves its text and gives its declared id
(``ra.text.markup.heading_anchor``). ``ra.text.document`` builds the chunk tree from what
``scan_headings`` finds.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from types import SimpleNamespace
from typing import Any

from ra.text.markup import (
    MDC_OPENER,
    heading_anchor,
    list_lead,
    math_spans,
    mdc_inline,
    plain_text,
    template_title,
    wiki_shown,
)
from ra.text.mistletoe_import import load_core_tokens


@dataclass(frozen=True)
class Heading:
    """A heading as found in the text (before empty ones are dropped)."""

    level: int
    text: str  # plain text: text and inline code, no markup
    start: int  # byte offset of the first heading line
    end: int  # byte offset after the last heading line (incl. its newline)


# ------------------------------------------------------------------------------ headings


class Lines:
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
class Found:
    level: int
    text: str  # without a trailing attribute list (``{ #id .class }``)
    first: int  # index of the first heading line
    stop: int  # index after the last heading line
    anchor: str | None = None  # the id the attribute list declares


def _found(level: int, text: str, first: int, stop: int, wiki: bool = False) -> Found:
    """A heading whose attribute list, if any, is split off its text (``ra.text.markup``);
    ``wiki``: it holds no code, and its wiki links show as they do (Obsidian's ``## Basic
    [[Metric]]``, Dendron's), where code's are as written (``### `[[carries_dependency]]```,
    ``## `[[Prototype]]` Chain``)."""
    text, anchor = _clean(text), None
    if text.endswith(("}", "]]")) or ":id=" in text or "docsify-ignore" in text:
        text, anchor = heading_anchor(text)
    if wiki and "[[" in text:
        text = _clean(wiki_shown(text))
    return Found(level, text, first, stop, anchor)


def extract_headings(text: str) -> list[Heading]:
    """Every CommonMark heading of ``text`` in order, with UTF-8 byte offsets."""
    lines = Lines(text)
    found, _ = scan_headings(lines)
    bounds = [lines.starts[i] for h in found for i in (h.first, h.stop)]
    to_bytes = byte_offsets(text, 0, bounds)
    return [Heading(h.level, h.text, to_bytes[lines.starts[h.first]],
                    to_bytes[lines.starts[h.stop]]) for h in found]


_MAYBE_HEADING = re.compile(r"^[ \t>*+\-0-9.)]*#|^[ \t]*(?:=+|-+)[ \t]*\r?$", re.MULTILINE)


def scan_headings(lines: Lines) -> tuple[list[Found], list[str]]:
    """Headings found by mistletoe's block pass; a parser failure becomes a problem."""
    if not _MAYBE_HEADING.search(lines.text):
        return [], []  # no line could be a heading: skip the parser
    m = _mistletoe()
    try:
        with _mistletoe_session(m):
            buffer = m.tokenize_block(lines.lines, m.block_types)
            found: list[Found] = []
            _collect(buffer, m, lines, found)
    except Exception as error:  # noqa: BLE001 - e.g. RecursionError on absurd nesting
        return [], [f"markdown: headings not found ({type(error).__name__})"]
    found.sort(key=lambda h: h.first)
    found = [h for i, h in enumerate(found) if i == 0 or h.first >= found[i - 1].stop]
    if "callout" in lines.text:
        found = [h for h in found if not _callout_title(lines, h)]
    if "::" in lines.text:
        found = [h for h in found if not _mdc_props(lines, h)]
    return found, []


def as_sites_read(lines: Lines, found: list[Found]) -> list[Found]:
    """``found`` (CommonMark's headings, ``scan_headings``) and the headings the sites'
    renderers show beyond them: a ``#`` line right after one closing an HTML element
    (``_after_html``), a Terraform block's arguments (``_with_blocks``)."""
    if _HTML_THEN_HEADING.search(lines.text) and (
            more := _after_html(lines, {h.first for h in found})):
        found = sorted([*found, *more], key=lambda h: h.first)
    if "` block" in lines.text:
        found = _with_blocks(lines, found)
    return found


#: A line closing an HTML element, then a ``#`` line: one regex over the text before
#: ``_after_html`` reads it line by line (most pages with HTML have none)
_HTML_THEN_HEADING = re.compile(r"^ {0,3}</[A-Za-z][\w-]*>[ \t]*\r?\n {0,3}#", re.M)
#: A line that closes an HTML element, alone (``</div>``)
_CLOSING_TAG = re.compile(r" {0,3}</[A-Za-z][\w-]*>[ \t]*\r?\n?")
_ATX = re.compile(r" {0,3}(#{1,6})[ \t]+([^\n]*?)(?:[ \t]+#+)?[ \t]*\r?\n?")


def _after_html(lines: Lines, known: set[int]) -> list[Found]:
    """The ``#`` headings right after a line that closes an HTML element, outside code,
    which CommonMark reads as the HTML block's last lines (it ends at a blank line) and
    the site's renderer as headings: Terraform's Google provider puts each "## Example
    Usage - …" after its "Open in Cloud Shell" ``</div>`` (453 pages; compute_url_map's
    top chunk held all 20 examples, 216,166 characters)."""
    out, text = [], lines.lines
    for i, line in _outside_code(text):
        if (i and i not in known and (m := _ATX.fullmatch(line)) is not None
                and _CLOSING_TAG.fullmatch(text[i - 1]) and m.group(2).strip()):
            out.append(_found(len(m.group(1)), plain_text(m.group(2)).strip(), i, i + 1,
                              "`" not in m.group(2)))
    return out


#: A paragraph that opens the arguments of a nested block, as Terraform's providers
#: document them: ``<a name="nested_autoclass"></a>The `autoclass` block supports:``,
#: ``A `default_node_pool` block supports the following:``, ``An `identity` block exports
#: the following:``, ``The `website` block supports the following elements, and …:``,
#: ``The optional `settings.backup_configuration` subblock supports:``
_BLOCK = re.compile(r'(?:<a\s+(?:name|id)="[^"<>\n]*"\s*>\s*</a>\s*)?(?:The|An?|Each)\s+'
                    r"(?:optional\s+)?`([^`\n]+)`\s+(?:sub)?(?:blocks?|lists?)\b[^\n:]*?"
                    r"\s(?:supports?|contains?|exports?|holds?|includes?)\b[^\n]*:[ \t]*\r?\n?")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _outside_code(text: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, line)`` of the lines of ``text`` outside fenced code (fences included)."""
    fence = None
    for i, line in enumerate(text):
        opened = _FENCE_LINE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        else:
            yield i, line


def _with_blocks(lines: Lines, found: list[Found]) -> list[Found]:
    """``found`` and, a level below the heading they follow, the paragraphs that open a
    nested block's arguments (``_BLOCK``), each alone between blank lines and outside
    code: a resource's "Argument Reference" had been one chunk of every block's
    arguments (Google's ``container_cluster``: 29,951 tokens; 74 of its sections and 29
    of azurerm's over a 4,000-token budget), shown as a snippet, ranked by a length that
    buried each block ("azurerm_kubernetes_cluster default_node_pool" gave its section
    15th)."""
    text, out, heads = lines.lines, [], iter(found)
    head = next(heads, None)
    level = 0
    for i, line in _outside_code(text):
        while head is not None and head.first <= i:
            out.append(head)
            level = head.level
            head = next(heads, None)
        if (level and level < 6 and (m := _BLOCK.fullmatch(line)) is not None
                and (i == 0 or not text[i - 1].strip())
                and (i + 1 == len(text) or not text[i + 1].strip())):
            out.append(Found(level + 1, f"{m.group(1)} block", i, i + 1))
    out += [head] if head is not None else []
    out += list(heads)
    return out


_MDC_OPENER = re.compile(MDC_OPENER + r"\r?\n?")  # a line as mistletoe has it


def _mdc_props(lines: Lines, heading: Found) -> bool:
    """Whether ``heading`` is made of an MDC component's YAML props block, which opens
    with ``---`` right after the component's line (``::u-button``, ``---``, ``label: Get
    Started``, ``---``): CommonMark reads the props as a setext heading, or the
    component's line (and any paragraph before it) with the opening ``---`` as one. They
    are settings, not a section."""
    first, underline = heading.first, heading.stop - 1
    return (first >= 2 and lines.lines[first - 1].strip() == "---"
            and _MDC_OPENER.fullmatch(lines.lines[first - 2]) is not None
            or underline > first and lines.lines[underline].strip() == "---"
            and _MDC_OPENER.fullmatch(lines.lines[underline - 1]) is not None)


#: The opening line of a Quarto callout: a pandoc fenced div of class ``callout`` or
#: ``callout-<kind>`` (``::: {.callout-tip collapse="true"}``, ``::: callout-note``)
_CALLOUT_OPENER = re.compile(r" {0,3}:{3,}[ \t]*(?:\{[^{}\n]*(?<![^\s{])\.callout(?:-[\w-]+)?"
                             r"(?![\w-])[^{}\n]*\}|callout(?:-[\w-]+)?)[ \t]*\r?\n?")


def _callout_title(lines: Lines, heading: Found) -> bool:
    """Whether ``heading`` is the first thing in a Quarto callout, which shows it as the
    callout's title: it is not a section of the document (the text after the callout
    stays in the section the callout is in), and its line is read as text."""
    i = heading.first - 1
    while i >= 0 and not lines.lines[i].strip():
        i -= 1
    return i >= 0 and _CALLOUT_OPENER.fullmatch(lines.lines[i]) is not None


def _collect(buffer: Iterable, m: SimpleNamespace, lines: Lines, out: list[Found],
             shift: int = 0) -> None:
    """Walk a mistletoe parse buffer (and the buffers of quotes and lists) for headings.

    mistletoe numbers the lines of a list item from its marker line even when the item's
    content starts on the next line; ``shift`` corrects that for everything inside it.
    """
    for kind, result, line_number in buffer:
        first = line_number - 1 + shift
        if kind is m.Heading:
            level, content, _ = result
            text = (_with_math(content, m) if "$" in content and "`" not in content
                    else _inline_text(content, m))
            if ("{{" in content or "{%" in content) and "`" not in content:
                text = template_title(text)  # not in code: `{{ x }}` is what a doc explains
            elif "{{" in content or "{%" in content:
                text = _templates_outside_code(content, text, m)
            if (":" in content or "]{" in content) and "`" not in content:
                text = mdc_inline(text)  # Nuxt Content's ``:badge[Soon]``, ``[x]{.class}``
            out.append(_found(level, text, first, first + 1, "`" not in content))
        elif isinstance(result, m.SetextHeading):
            stop = _setext_stop(lines, first)
            out.append(_found(result.level, _plain(result.children, m), first, stop))
        elif kind is m.Quote:
            _collect(result, m, lines, out, shift)
        elif kind is m.List:
            for item in result:
                marker = item[4] - 1 + shift
                bare = marker < len(lines) and _BARE_MARKER.match(lines.lines[marker])
                _collect(item[0], m, lines, out, shift + (1 if bare else 0))


_BARE_MARKER = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]*$")


def _setext_stop(lines: Lines, first: int) -> int:
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


def _with_math(content: str, m: SimpleNamespace) -> str:
    """``_inline_text`` of a heading whose math (``markup.math_spans``) is read as written,
    without its dollars, as a body's is: "## Weights $w_{i}^*$ and $b_{j}^*$ learned" had
    lost its stars to emphasis, "$$\\boldsymbol{\\Sigma}_\\theta$$" its underscore."""
    spans = math_spans(content)
    if not spans:
        return _inline_text(content, m)
    held, done = [], 0
    for n, (start, end, _) in enumerate(spans):
        held += [content[done:start], f"\ue000{n}\ue001"]
        done = end
    text = _inline_text("".join([*held, content[done:]]), m)
    return _HELD_MATH.sub(lambda h: spans[int(h.group(1))][2], text)


_HELD_MATH = re.compile("\ue000(\\d+)\ue001")


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


def _templates_outside_code(content: str, text: str, m: SimpleNamespace) -> str:
    """A heading with code and template markup (Jekyll's ``### Themes with `_data`
    directory {%- include docs_version_badge.html version="4.3.0" -%}``): the markup
    outside the code leaves, the code stays as written; ``text`` when all of it is code."""
    parts = _code_spans(content)
    if not any("{{" in piece or "{%" in piece for piece, code in parts if not code):
        return text
    return _clean("".join(piece if code else plain_text(_inline_text(piece, m))
                          for piece, code in parts))


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


#: What a template names the first of a page's parts, at level 1 like the others: no
#: title (73 of Ember's 262 RFCs were "Summary", each section "Summary › …")
PART_NAMES = frozenset({"abstract", "background", "introduction", "motivation", "overview",
                        "summary"})


#: A release's heading: its version, then anything (``3.9.6``, ``v2.5.0 (2021-07-12)``,
#: ``[4.0.0](https://…) (2022-12-09)`` as its text reads)
_RELEASE = re.compile(r"\[?(?:version |release )?v?\d+(?:\.\d+)+\b.*", re.I)


def first_h1(headings: list[Found], lines: Lines | None = None) -> str | None:
    """The page's title from its headings: its first h1, unless that names a part of it
    and other h1s follow (an RFC template's ``# Summary``, ``# Motivation``, …), or a
    release and other h1s follow (a changelog's ``# 3.9.6``, ``# 3.9.5``, …), or other
    headings come before it (an older part of a changelog written at level 1, from line
    1,381 of create-vite's), or it is a list item (an outliner's block: Logseq's
    ``- # Usage`` titled Whiteboard.md "Usage", a page Logseq names for its file), or text
    comes before it and other h1s follow (``_prose_before``). Each
    had titled the page and begun every breadcrumb (Prettier's "3.9.6 › 3.9.5 › …", a
    search for "3.9.6" matching all 330 chunks). ``lines``: the text the headings are of."""
    h1 = [h for h in headings if h.level == 1 and h.text]
    if not h1 or h1[0] is not headings[0]:
        return None
    if lines is not None and list_lead(lines.lines[h1[0].first]):
        return None
    first = h1[0].text.strip()
    if len(h1) > 1 and (first.lower() in PART_NAMES or _RELEASE.fullmatch(first)):
        return None
    if len(h1) > 1 and lines is not None and _prose_before(lines, h1[0].first):
        return None
    return h1[0].text


def _prose_before(lines: Lines, end: int) -> bool:
    """Whether a line of text (one that starts with a letter or a digit: not a badge, an
    image, markup or a comment, which ``lines`` has blanked) comes before line ``end``: a
    page that opens with its summary and then has sections at level 1, as rustdoc's
    included pages do (axum's ``extract.md``: "Types and traits for extracting data from
    requests.", then ``# Intro``, ``# Common extractors``, …), is not titled by its first
    section: axum's docs were titled "Intro", "Example" and "Static paths"."""
    return any(line.lstrip()[:1].isalnum() for line in lines.lines[:end])


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
    load_core_tokens()  # before mistletoe imports it: half a second saved
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


def byte_offsets(text: str, base: int, chars: Iterable[int]) -> dict[int, int]:
    """UTF-8 byte offset (plus ``base``) of each character offset, in one pass."""
    if text.isascii():
        return {c: base + c for c in chars}
    result, char, byte = {}, 0, base
    for offset in sorted(set(chars)):
        byte += utf8_len(text[char:offset])
        result[offset], char = byte, offset
    return result


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
