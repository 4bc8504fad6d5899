"""Markdown as it is written in the wild, read for its text.

Knowledge bases are written for site generators and note apps, each with syntax of its
own on top of CommonMark: attribute lists on headings (``## Title { #id .class }``:
mkdocs, pandoc, kramdown, Hugo, Docusaurus), admonitions and content tabs (mkdocs
``!!! note "Title"``, ``=== "Tab"``, pymdownx ``/// tip``), MDX (``import`` and
``export`` lines, JSX components, ``:::note`` admonitions, ``{/* comments */}``), DocFX
(``:::image … alt-text="…":::``, ``[!INCLUDE[…](…)]``, ``::: moniker``), Hugo
shortcodes (``{{< … >}}``, ``{{% … %}}``), Liquid tags (GitBook's ``{% hint %}`` and
``{% tab title="…" %}``, Jekyll's ``{% include %}``), kramdown's attribute lists and
extensions (``{: .note}``, ``* TOC`` ``{:toc}``, ``{::comment}``), mdBook's helpers (``{{#include
file.rs}}``, in code blocks too), MyST/Sphinx directives and roles
(```` ```{note} ````, ``:::{tip}``, ``{ref}`label```, ``(target)=``), Obsidian
(``[[target|alias]]``, ``> [!note]`` callouts, inline ``#tags``, ``%%comments%%``), pandoc
fenced divs (Quarto's ``::: {.callout-tip}``, ``::: {.columns}``), and plain HTML
(comments, tags, entities), GFM tables and footnotes.

:func:`plain_text` turns such a text into what a reader of the rendered page sees, so
that ra indexes and quotes words, not markup: a heading's ``{ #use-corsmiddleware }``
does not repeat in every snippet, an admonition is its title and its text, a wiki link
is the text it shows, a comment is nothing. It works in two passes:

1. ``_prepare`` walks the text once, from one event to the next (a fence line, a run of
   backticks, a comment opener), so its cost follows the markup, not the length. Code —
   fenced blocks and inline spans — is set aside behind placeholders (private-use
   characters that no later pattern matches), so code examples stay exactly as written,
   whatever syntax they show; comments are removed, whatever they hold (an Obsidian
   ``%%`` comment may hold a code fence). Fences whose content is markdown (MyST
   directives, Docusaurus ``mdx-code-block``) are not code: their lines stay for pass 2.
2. ``_CLEAN`` rewrites what is left, pattern by pattern; each pattern runs only when a
   cheap substring test says its syntax is present, so a plain document costs a few
   ``in`` tests. Then the code comes back.

:func:`heading_anchor` splits a heading's attribute list off its text: the declared id
becomes the heading's slug. :func:`inline_tags` finds Obsidian-style ``#tags`` outside
code and comments. :func:`mask_comments` blanks ``%%``, MDX and kramdown comments (keeping every
offset), so a ``#`` line inside one is not taken for a heading. The functions are pure
and import nothing heavy: the chunk and analyze stages and the snippet code share them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from ra.text.ids import slugify

# --------------------------------------------------------------------------- headings

_ATTR = r"(?:#[^\s{}#]+|\.[\w-][\w:/()-]*|[\w-]+=(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s{}\"']+))"
#: (``[ \t]*(?::[ \t]*)?``, not ``[ \t]*:?[ \t]*``: two runs of blanks around an optional
#: colon split a run between them every way, and "{" before 50 KB of spaces took a second)
_ATTRS = rf"\{{[ \t]*(?::[ \t]*)?{_ATTR}(?:[ \t]+{_ATTR})*[ \t]*\}}"
_ANY_ATTRS = re.compile(_ATTRS)
#: at a heading's end, a list set off by blanks inside its braces may hold bare keys too, as
#: Python-Markdown's attr_list reads them (``{ data-search-exclude }``, Material for MkDocs);
#: "Set {key}" stays text
_LOOSE_ATTR = rf"(?:{_ATTR}|[A-Za-z][\w-]*)"
#: (no blanks before the list: tried from every blank of a run, they made a run of 50 KB
#: take a second and a half)
_TRAILING_ATTRS = re.compile(
    rf"(?:{_ATTRS}|\{{[ \t]+(?::[ \t]*)?{_LOOSE_ATTR}(?:[ \t]+{_LOOSE_ATTR})*[ \t]+\}})"
    r"[ \t]*$")
#: ``#id``, or ``id="…"`` (attr_list, Material for MkDocs' changelog: ``{ id="4.6.1" }``)
_ID = re.compile(r"(?:^|[\s{:])(?:#([^\s{}#]+)|id=(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s{}\"']+)))")
_ID_UNSAFE = re.compile(r"[\s/.#]+")  # an id may not hold what splits a chunk id


def safe_id(declared: str | None) -> str | None:
    """A declared id as a chunk id can hold it: what splits one (``/``, ``.``, ``#``,
    spaces) becomes ``-``; None when nothing is left."""
    return (_ID_UNSAFE.sub("-", declared).strip("-") or None) if declared else None


def _declared_id(attributes: str) -> str | None:
    """The ``#id`` of an attribute list (``{ #id .class }``, ``{: #id}``), made safe."""
    declared = _ID.search(attributes)
    return safe_id(next(filter(None, declared.groups()), None)) if declared else None


#: docsify's heading options: ``## Title :id=custom``, ``:docsify-ignore``, ``{docsify-ignore}``
_DOCSIFY_OPTION = re.compile(r":id=\S+|:docsify-ignore(?:-all)?|\{docsify-ignore(?:-all)?\}")


def docsify_options(line: str) -> tuple[str, str | None] | None:
    """``(line without the docsify options at its end, the id they declare)``, or None
    when none ends it. Word by word from the end: a pattern for a run of options at the
    end of a line tries the run from each option in it (quadratic in their number)."""
    rest, anchor, found = line.rstrip(), None, False
    while True:
        head, last = rest[: (cut := max(rest.rfind(" "), rest.rfind("\t")))], rest[cut + 1:]
        if cut < 0 or not _DOCSIFY_OPTION.fullmatch(last):
            break
        found, rest = True, head.rstrip()
        if last.startswith(":id="):
            anchor = last[4:]  # the first one, as the loop ends on it
    return (rest, anchor) if found else None


def heading_anchor(title: str) -> tuple[str, str | None]:
    """``(title, declared id or None)``: a trailing attribute list (``{#id}``,
    ``{ #id .class key=val }``, kramdown's ``{: #id}``, attr_list's ``{ id="x" bare-key }``)
    or docsify's options
    (``:id=custom``, ``:docsify-ignore``) leave the title, and the id is returned.
    Characters a chunk id cannot hold (``/``, ``.``, ``#``, spaces) become ``-``; an
    attribute list without an id yields None."""
    if (":id=" in title or "docsify-ignore" in title) and (
            docsify := docsify_options(title)) is not None:
        rest, declared = docsify
        return rest, safe_id(declared)
    if title.endswith("]]") and (built := _DOC_BUILDER_ID.search(title)) and builder_id(
            title[: built.start()], built.group(1)):
        return title[: built.start()].rstrip(), safe_id(built.group(1))
    found = _TRAILING_ATTRS.search(title)
    if not found:
        return title, None
    return title[: found.start()].rstrip(), _declared_id(found.group())


#: Hugging Face's doc-builder writes a heading's id at its end in double brackets: ``##
#: Markov Property [[markov-property]]`` (deep-rl-class, the transformers and diffusers
#: docs); ``builder_id`` tells it from an Obsidian link ending a heading
_DOC_BUILDER_ID = re.compile(r"[ \t]\[\[([A-Za-z0-9][\w.-]*)\]\][ \t]*$")


def builder_id(rest: str, target: str) -> bool:
    """Whether ``[[target]]`` ending a heading whose text before it is ``rest`` is
    doc-builder's id of the heading, not a wiki link: no other link in the heading, and a
    slug (a dash or a digit in it: ``[[deep-q-algorithm]]``, ``[[step1]]``) or the slug of
    the heading's words (``Quiz [[quiz]]``, ``Conclusion [[Conclusion]]``). Obsidian's
    ``## See also [[transformers]]``, ``## 1.1. [[Population]] and [[sample]]`` link notes
    (the link was lost, the title cut)."""
    if "[[" in rest:
        return False
    low = target.lower()
    return "-" in low or any(c.isdigit() for c in low) or low == slugify(rest)


#: doc-builder's markers alone in double brackets, no page: where a notebook's button goes
DOC_BUILDER_MARKERS = frozenset({"open-in-colab"})


def heading_id_link(m: re.Match) -> bool:
    """Whether a wiki link ``m`` is a heading's id in doc-builder's way (``_DOC_BUILDER_ID``)
    or one of its markers: no link, no text."""
    if m.group(3) is not None or m.group(1):
        return False
    target = m.group(2).strip()
    if target in DOC_BUILDER_MARKERS:
        return True
    text = m.string
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    head = text[start:m.start()].lstrip()
    return (head.startswith("#") and not text[m.end():(len(text) if end < 0 else end)].strip()
            and _DOC_BUILDER_ID.search(f" [[{target}]]") is not None
            and builder_id(head.lstrip("#"), target))


#: kramdown's block attribute list, on a line of its own: ``_ATTRS`` with its colon
_BLOCK_ATTRS = re.compile(rf"[ \t]*(?=\{{:)({_ATTRS})[ \t]*\r?\n?")


def kramdown_anchor(line: str) -> str | None:
    """The id a kramdown block attribute list on a line of its own declares (``{: #id}``,
    ``{:.class #id}``), as ``heading_anchor`` makes it safe; None when it declares none."""
    found = _BLOCK_ATTRS.fullmatch(line)
    return _declared_id(found.group(1)) if found else None


#: A heading's id written as an MDX comment at its end: Docusaurus' ``## Title {/* #id */}``
#: (its syntax for MDX from 3.10: the comment's first word, after its ``#``) and react.dev's
#: ``## Title {/*id*/}`` (the whole comment, a slug: lower case, no space).
_COMMENT_ID = re.compile(r"\{/\*[ \t]*(?:#([^\s{}#*]+)[^\n*]*|([\w-]+)[ \t]*)\*/\}"
                         r"[ \t]*(?:#+[ \t]*)?\r?\n?$")


def comment_anchor(line: str) -> str | None:
    """The id a heading's line declares in an MDX comment at its end (``_COMMENT_ID``),
    as ``heading_anchor`` makes it safe; None when it declares none. The comment itself
    is no text (``mask_comments`` blanked it before the heading was found)."""
    found = _COMMENT_ID.search(line) if "{/*" in line else None
    if not found:
        return None
    anchor = found.group(1) or found.group(2)
    if found.group(2) and anchor != anchor.lower():
        return None  # {/* TODO */}: a comment, not react.dev's slug
    return safe_id(anchor)


#: A heading that prints the page's title: Markdoc's ``# {% $markdoc.frontmatter.title %}``,
#: Jekyll's and mkdocs-macros' ``# {{ page.title }}``, VitePress' ``# {{ $frontmatter.title }}``,
#: Eleventy's ``# {{ title }}``
_TITLE_REF = r"[ \t]*(?:\$?markdoc\.)?\$?(?:page\.)?(?:frontmatter\.)?title[ \t]*"
PAGE_TITLE = re.compile(rf"\{{\{{-?{_TITLE_REF}-?\}}\}}|\{{%-?{_TITLE_REF}-?%\}}")

_LONE_SHORTCODE = re.compile(r"\{\{[<%]-?[ \t]*[\w/-]+[ \t]+\"([^\"\n]+)\"[ \t]*-?[%>]\}\}")


def template_title(title: str) -> str:
    """A heading written with template markup, as its text: a heading that is one Hugo
    shortcode with one quoted word is that word (Kubernetes' ``## {{% heading
    "prerequisites" %}}``, whose text comes from a translation file), any other loses
    its markup as body text does (``{{< glossary_tooltip text="Pods" >}}`` is Pods)."""
    lone = _LONE_SHORTCODE.fullmatch(title)
    if lone:
        return lone.group(1).replace("_", " ").capitalize()
    return " ".join(plain_text(title).split()) or title


# ---------------------------------------------------------------- pass 1: code, comments

_OPEN, _CLOSE = "\ue000", "\ue001"  # private use: no pattern below matches them
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
#: Each alternative begins with a literal character (a backtick then "`*", not "`+"): the regex
#: engine then skips to the next of those five characters at C speed; with a repeat first
#: it tried every alternative at every character (a paragraph without code 17 → 1.7 µs)
_EVENT = re.compile(r"``*|~~~~*|%%|<!--|\{/\*|\{::comment\}|\$\$?")
_BLANK = re.compile(r"[^\n]")
_ROLE = re.compile(r"\{[\w:.-]+\}")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([^\n]*)")
#: a fence whose content is markdown: a MyST directive that is not code, Docusaurus'
#: rendered MDX
_MARKDOWN_FENCE = re.compile(r"\{(?!(?:code|code-block|code-cell|sourcecode|literalinclude|math"
                             r"|eval-rst|raw|mermaid|graphviz|csv-table|toctree"
                             # Quarto's and knitr's executable cells: ```{r}, ```{python}
                             r"|r|python|julia|ojs|bash|sh|sql|rcpp|stan|dot|js|css|sass"
                             r"|scss|octave|perl|ruby|go|rust|c|cpp)\})[\w:.-]+\}"
                             r"|mdx-code-block\b", re.I)
#: a comment's closer; kramdown's ``{::comment}`` closes with ``{:/comment}`` or ``{:/}``
_COMMENT_END = {"%%": "%%", "<!--": "-->", "{/*": "*/}", "{::comment}": "{:/"}
#: a line of a code block that pulls a file in when the site is built: mdBook's
#: ``{{#include file.rs:2:10}}``, ``{{#rustdoc_include …}}`` and ``{{#playground …}}``,
#: pymdownx snippets' ``--8<-- "file.py"``, markdown-include's ``{!file.py!}`` (and
#: ``{!> file.py!}``: FastAPI's docs). The reader sees the file; the line itself, a
#: path, is not text (``\{{#include …}}``, escaped, is shown without its backslash)
_INCLUDE_LINE = re.compile(r"^[ \t]*(?:\{\{#(?:include|rustdoc_include|playground)\b[^}\n]*\}\}"
                           r"|-{2}8<-{2}(?:[ \t]+[^\n]*)?|\{!>?[^!{}\n]+!\})[ \t]*$", re.M)
_ROLE_TARGET = re.compile(r"\s*<[^<>]*>\s*$")  # {ref}`Text <label>` shows Text


@cache
def _run(char: str, length: int) -> re.Pattern:
    """A run of exactly ``length`` ``char``: what closes a code span."""
    c = re.escape(char)
    return re.compile(f"(?<!{c}){c}{{{length}}}(?!{c})")


@cache
def _closing_fence(char: str, length: int, indent: int) -> re.Pattern:
    """The line that closes a fence opened with ``length`` ``char`` after ``indent``
    spaces: at most three spaces further in (CommonMark; mkdocs' SuperFences nests
    fences in indented blocks, and an inner fence must not close the outer one)."""
    return re.compile(rf"^ {{0,{indent + 3}}}{re.escape(char)}{{{length},}}[ \t]*$", re.M)


#: Where an indented code block may be: a line indented four columns after a blank one
_MAY_INDENT = re.compile(r"\n[ \t]*\n(?: {4}| {0,3}\t)[ \t]*\S")
_INDENTS = ("    ", "\t", " \t", "  \t", "   \t")
_LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$)")
#: What opens a block whose content may be indented below it: Python-Markdown's (MkDocs)
#: admonitions, collapsible details, content tabs, footnotes, definitions; colon fences
#: and MDC's components (Nuxt Content nests them with indentation)
_OPENER = re.compile(r"(?:!!!|\?\?\?\+?|===\+?)[ \t]|\[\^[^\]\n]+\]:|:[ \t]|:{2,}[\w{]"
                     r"|:[\w][\w .-]*:(?:[ \t]|$)")  # and a field list's field (MyST)
#: A JSX component opening a line (``<Tabs>``, ``<Step>``): MDX, which has no indented
#: code (not ``List<T>`` in a sentence)
_COMPONENT = re.compile(r"^[ \t]*<[A-Z][\w.]*(?:[\s/>]|$)", re.M)
#: HTML whose block goes on through blank lines (CommonMark's kinds 1 and 2), to its end
_HTML_RAW = {"<script": "</script>", "<pre": "</pre>", "<style": "</style>",
             "<textarea": "</textarea>", "<!--": "-->"}


def _columns(line: str) -> int:
    """The indentation of ``line`` in columns (a tab to the next multiple of four)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def list_lead(heading: str) -> str:
    """The heading line of a section whose heading is a list item (an outliner's page:
    Logseq writes ``- ## Usage``, then the section's blocks indented under it), else "":
    what its body is read after (``indented_code``'s ``lead``)."""
    line = heading.lstrip(" \t").partition("\n")[0]
    return line if _LIST_ITEM.match(line) else ""


def indented_code(text: str, lead: str = "") -> list[tuple[int, int]]:
    """``(start, end)`` of each indented code block of ``text`` (CommonMark's: lines
    indented four columns past their container's content, after a blank line), from the
    start of its first line to the end of its last. Go's design documents indent their
    code with a tab, Google Cloud's tutorials inside list items: read as text, its
    ``F[a](b)`` was a link and ``#include`` a tag.

    Only what is code in every dialect: a block follows a blank line after prose or a
    heading (not a tag: MDX has no indented code, and JSX nests markup so), does not
    start with ``<`` or a template's ``{{``/``{%``, and inside a list item is indented
    four past both CommonMark's content column and Python-Markdown's (four), where a
    line indented as either goes on with the item; Python-Markdown's indented blocks
    (admonitions, content tabs, footnotes, definitions), MDC's components and MyST's
    fields are containers as items are, and so is a run of indented lines that is not
    code (a Hugo shortcode's content); fences, comments, HTML that spans blank lines and
    template captures are skipped; a text holding a JSX component (MDX) has none.

    ``lead``: a line the text follows (``list_lead``): a section under a heading that is a
    list item goes on with that item, and its tab-indented blocks are no code (Logseq's
    pages had every such section read as code: no links, its properties as text)."""
    if lead:
        n = len(lead) + 1
        return [(a - n, b - n) for a, b in indented_code(f"{lead}\n{text}") if a >= n]
    if (not text.startswith(_INDENTS) and not _MAY_INDENT.search(text)) or (
            "<" in text and _COMPONENT.search(text)):
        return []
    text = _blank_highlights(text)  # a template's capture is its own: offsets kept
    found: list[tuple[int, int]] = []
    # the open containers: (the least indentation that goes on in it, that is code in it)
    containers: list[tuple[int, int]] = []
    opened = False  # an opener's content column is that of its first indented line
    fence: tuple[str, int] | None = None  # its backticks or tildes, its column
    raw_end: str | None = None
    blank, prose = True, True  # after a blank line; the last text was prose or a heading
    code: tuple[int, int] | None = None  # the block being read: (start, end)
    at = 0
    for line in text.split("\n"):
        start, at = at, at + len(line) + 1
        body = line.lstrip(" \t")
        if raw_end is not None:
            raw_end = None if raw_end in line else raw_end
            continue
        col = _columns(line)
        if fence is not None:
            if (body.startswith(fence[0]) and not body.strip(fence[0][0]).strip()
                    and col <= fence[1] + 3):
                # a fence indented past its container's content: in a container this
                # reading did not see (JSX, a template's block), whose text may go on
                prose = fence[1] <= (containers[-1][1] - 4 if containers else 0)
                fence = None
            continue
        if not body:
            blank = True
            continue
        if code is not None:
            if col >= (containers[-1][1] if containers else 4):
                code = (code[0], start + len(line))
                blank = False
                continue
            found.append(code)
            code = None
        if opened and containers and col > containers[-1][0] - 4:
            containers[-1], opened = (col, col + 4), False  # its content starts here
        elif blank:
            while containers and col < containers[-1][0]:
                containers.pop()
            opened = False
        least = containers[-1][1] if containers else 4
        if blank and col >= least:
            if prose and not body.startswith(("<", "{{", "{%")):
                code, blank = (start, start + len(line)), False
                continue
            containers.append((col, col + 4))  # indented, not code: its content
        blank = False
        if body.startswith(("```", "~~~")):
            run = body[:len(body) - len(body.lstrip(body[0]))]
            if "`" not in body[len(run):] or run[0] == "~":
                fence = (run, col)
                continue
        if raw := next((t for t in _HTML_RAW if body.lower().startswith(t)), None):
            raw_end = None if _HTML_RAW[raw] in body[len(raw):] else _HTML_RAW[raw]
            prose = False
            continue
        if (item := _LIST_ITEM.match(body)) and not body.startswith(("---", "***", "___")):
            marker = len(item.group().rstrip(" \t"))
            width = _columns(" " * col + item.group()) - col - marker
            content = col + marker + (width if 0 < width <= 4 and item.end() < len(body) else 1)
            indent = col // 4 * 4 + 4  # Python-Markdown's: a tab past the list's level
            containers.append((min(content, indent), max(content, indent) + 4))
            prose = True
        elif _OPENER.match(body):
            containers.append((col + 4, col + 8))
            opened, prose = True, not body.startswith(("!!!", "???", "===", "::"))
        else:
            prose = not body.startswith(("<", "{", "|", ">"))
    if code is not None:
        found.append(code)
    return found


def _prepare(text: str, raw: bool = False, html: bool = True, lead: str = ""
             ) -> tuple[str, list[str]]:
    """``text`` with code behind placeholders and comments removed, and the code set
    aside, in placeholder order. ``raw``: code is held as written (fences and backticks
    included) and comments are blanked, so that restoring gives a text of the same
    length, line for line. ``html=False`` leaves HTML comments alone. Indented code
    blocks (``indented_code``) are code unless ``raw``."""
    out: list[str] = []
    codes: list[str] = []
    pos = i = 0
    blocks = [] if raw else indented_code(text, lead)
    markdown_fences: list[str] = []  # open fences whose content is markdown
    unclosed: set[str] = set()  # comment openers with no closer after them: none later
    closer = -1  # a dollar that closes a pair around no math: it opens none
    while (m := _EVENT.search(text, i)) is not None or blocks:
        if blocks and (m is None or m.start() >= blocks[0][0]):
            begin, end = blocks.pop(0)
            if begin >= pos:  # not within code or a comment already taken
                out += [text[pos:begin], _hold(codes, _dedented(text[begin:end]))]
                pos = i = end
            continue
        start, token = m.start(), m.group()
        if token[0] in "`~" and len(token) >= 3 and (begin := _line_start(text, start)) >= 0:
            line = text.find("\n", start)
            line = len(text) if line < 0 else line + 1
            fence, info = _FENCE.match(text, start, line).groups()
            if fence[0] == "~" or "`" not in info:
                i, stop = _fence(text, fence, info.strip(), line, markdown_fences,
                                 start - begin)
                if stop is not None:  # a code block: text[line:i] up to its closing line
                    out += [text[pos:begin], "" if raw else fence_label(info),
                            _hold(codes, text[begin:stop] if raw
                                  else _code(text[line:i], info))]
                    pos = i = stop
                continue
        if token[0] == "~":
            i = m.end()
        elif token[0] == "$":
            i, math, closer = _dollars(text, start, token, closer)
            if math:
                out += [text[pos:start], _hold(codes, text[start:i] if raw
                                              else text[m.end():i - len(token)].strip())]
                pos = i
        elif token[0] == "`":
            close = _span_end(text, m.end(), len(token))
            if close is None:
                i = m.end()
                continue
            code = text[start:close[1]] if raw else text[m.end():close[0]]
            if not raw and text.endswith("}", 0, start):
                start, code = _role(text, start, code)
            if not raw:
                code = _unescaped(code.strip(" ") or code)
                if code.endswith("}"):  # rehype-pretty-code's `true{:js}` shows `true`
                    code = _INLINE_LANGUAGE.sub("", code)
            out += [text[pos:start], _hold(codes, code)]
            pos = i = close[1]
        elif token == "<!--" and not html:
            i = m.end()
        else:
            end = -1 if token in unclosed else text.find(_COMMENT_END[token], m.end())
            if end < 0:  # an unclosed opener is text: a stray %% must not eat the rest
                unclosed.add(token)  # (and each of a run of them looked to the end)
                i = m.end()
                continue
            end += len(_COMMENT_END[token])
            if token == "{::comment}":  # `{:/comment}` or `{:/}`
                end = text.find("}", end) + 1 or len(text)
            out += [text[pos:start], _BLANK.sub(" ", text[start:end]) if raw else ""]
            pos = i = end
    out.append(text[pos:])
    return "".join(out), codes


#: What LaTeX math holds and prose or code between two dollars does not: a command, a
#: superscript, a braced subscript (``$semid = sem_get($key)``, ``go_$GOOS_$GOARCH``)
_LATEX = re.compile(r"\\[A-Za-z]|\^|_\{")
#: The longest display math (``$$ … $$``) looked for
MATH_CHARS = 20_000


def _math_end(text: str, after: int, token: str) -> tuple[int, bool]:
    r"""Where the dollars ``token`` before ``after`` close (after the closing ones), and
    whether they hold math; ``(after, False)`` when they open nothing. ``$$ … $$`` within
    ``MATH_CHARS``; ``$ … $`` on one line as pandoc reads it (a character that is no
    space after the opening dollar, one before the closing one, no digit after it),
    math when it holds LaTeX (``_LATEX``: "costs $5 or $10", "$HOME and $PATH" hold
    none; such a pair of dollars is text, both of them). Math is held as code is,
    written as it is: emphasis and attribute lists had been read inside it (d2l's
    ``\sum_{i=1}^n`` read as "\sum^n", ``w_{\textrm{area}}`` as "w{\textrm{area}}")."""
    if token == "$$":
        close = text.find("$$", after, after + MATH_CHARS)
        return (after, False) if close < 0 else (close + 2, True)
    if after >= len(text) or text[after].isspace() or text[after] == "{":  # ${VAR}
        return after, False
    line = text.find("\n", after)
    line = len(text) if line < 0 else line
    close = text.find("$", after, line)
    while close > after and (text[close - 1].isspace()
                             or close + 1 < len(text) and text[close + 1].isdigit()):
        close = text.find("$", close + 1, line)
    if close <= after:
        return after, False
    return close + 1, _LATEX.search(text, after, close) is not None


def _dollars(text: str, start: int, token: str, closer: int) -> tuple[int, bool, int]:
    """``(where reading goes on, whether the dollars ``token`` at ``start`` open math, the
    dollar that closes a pair around no math)``: after the math, else after the dollars
    (what lies between a pair around no math is read as usual, code as code), the closing
    one of such a pair opening nothing (``closer``, kept from the dollars before)."""
    after = start + len(token)
    if start == closer:
        return after, False, closer
    end, math = _math_end(text, after, token)
    return (end, True, closer) if math else (after, False, end - 1 if end > after else closer)


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, math)`` of each math span of ``text`` with no code in it, read as
    ``_prepare`` reads them (``_dollars``): a heading's (its inline text is read apart)."""
    out: list[tuple[int, int, str]] = []
    i, closer = 0, -1
    while (start := text.find("$", i)) >= 0:
        token = "$$" if text.startswith("$$", start) else "$"
        i, math, closer = _dollars(text, start, token, closer)
        if math:
            out.append((start, i, text[start + len(token):i - len(token)].strip()))
    return out


#: the language of an inline code span, as rehype-pretty-code (Nextra, Fumadocs) takes it:
#: ``navigation: true{:js}`` is shown as ``navigation: true``, highlighted as JavaScript
_INLINE_LANGUAGE = re.compile(r"(?<=\S)\{:[a-z][\w.+#-]*\}\Z")


#: The options a braced cell or directive opens with, which its page does not show:
#: MyST's ``:key: value`` lines or ``---`` block (```` ```{code-cell} ````, ```` ```{math}
#: ````), Quarto's and knitr's ``#| key: value`` lines (```` ```{r} ````, ``{python}``)...
_CELL_OPTIONS = re.compile(r"\A(?:[ \t]*(?::[\w-]+:|#\|)[^\n]*(?:\n|\Z))+"
                           r"|\A[ \t]*---\n[\s\S]*?\n[ \t]*---[ \t]*(?:\n|\Z)")
#: ... but for a caption or an alt text, which it does show (``#| fig-cap: "Plot"``)
_SHOWN_OPTION = re.compile(r"^[ \t]*(?::(?:caption|alt):|#\|[ \t]*(?:[\w-]+-cap|[\w-]*alt)"
                           r"[ \t]*:)[ \t]*(.*?)[ \t]*$", re.M)


def _dedented(block: str) -> str:
    """An indented code block's code: each line without the indentation of the least
    indented (four columns, or a list item's content and four); the rest of a line as
    written (Go's code aligns with tabs inside its lines too)."""
    lines = block.split("\n")
    cut = min((_columns(x) for x in lines if x.strip()), default=0)
    out = []
    for line in lines:
        lead = len(line) - len(line.lstrip(" \t"))
        out.append(line[:lead].expandtabs(4)[cut:] + line[lead:])
    return "\n".join(out)


def fence_label(info: str) -> str:
    """The label a site shows above a fenced block, as a line of text ("" for none): its
    ``title=""`` (Docusaurus, Starlight, rehype-pretty-code: the file's name), else the
    words after its language that are no option (Mintlify's tabs of a ``<CodeGroup>``:
    ````bash Windows``, ````javascript index.js icon="js"``). ````bash Mac`` and ````bash
    Windows`` were one chunk's two tabs, and "set OPENAI_API_KEY on windows" found it 10th."""
    info = info.strip()
    if not info or info[0] in "{.=" or " " not in info.replace("\t", " "):
        return ""
    if (title := _FENCE_TITLE.search(info)) is not None:
        return f"{title.group(2).strip()}\n"
    rest = _FENCE_OPTION.sub(" ", info.split(None, 1)[1])
    words = [w for w in rest.split() if w.lower() not in _FENCE_FLAGS]
    return f"{' '.join(words)}\n" if words else ""


#: A fence's title attribute, and its options (``key=value``, ``{1,3-5}`` line ranges,
#: Expressive Code's and rehype-pretty-code's marked text, ``"slug:"``, ``/regex/``)
_FENCE_TITLE = re.compile(r"""\b(?:title|filename)=(["'])([^"'\n]+)\1""")
_FENCE_OPTION = re.compile(r"""[\w-]+=(?:"[^"]*"|'[^']*'|\{[^}]*\}|\S*)|\{[^}]*\}|\[[^\]]*\]"""
                           r"""|"[^"]*"|'[^']*'|(?<!\S)/\S.*?/(?!\S)""")
#: Words a fence's info may hold that are options, not its label (Mintlify, Expressive
#: Code, rehype-pretty-code, Docusaurus, react.dev)
_FENCE_FLAGS = frozenset({"showlinenumbers", "linenums", "wrap", "lines", "expandable",
                          "twoslash", "copy", "nocopy", "focus", "highlight", "collapse",
                          "collapsible", "diff", "ins", "del", "mark", "live", "noeditor",
                          "showlinenumbers=true", "frame", "no-copy", "no-lines",
                          "active", "hidden"})  # react.dev's sandboxes: the open tab


def _code(block: str, info: str = "") -> str:
    """A fenced block's code as the rendered page shows it: include lines leave (their
    file is not at hand), the line breaks stay; a braced cell's options leave
    (``_CELL_OPTIONS``), its caption stays."""
    if info.startswith("{") and (options := _CELL_OPTIONS.match(block)):
        shown = [v.strip("'\"") for v in _SHOWN_OPTION.findall(options.group())]
        block = "".join(f"{v}\n" for v in shown if v) + block[options.end():]
    if "{{#" in block or "8<-" in block or "{!" in block:
        return _unescaped(_INCLUDE_LINE.sub("", block))
    return block


def _unescaped(code: str) -> str:
    """mdBook shows an escaped helper (``\\{{#include x}}``) without its backslash."""
    return code.replace("\\{{#", "{{#") if "\\{{#" in code else code


def _mdbook(m: re.Match) -> str:
    """An mdBook helper in prose: an include or a ``{{#title}}`` leaves; an escaped one
    (``\\{{#include x}}``) is shown as ``{{#include x}}``."""
    if m.group(1):
        return m.group()[1:]
    return "" if m.group(2) in ("include", "rustdoc_include", "playground", "title") else m.group()


#: MDN's KumaScript macros that show text: a reference link (``{{jsxref("Array")}}``,
#: ``{{domxref("Node/appendChild", "appendChild()")}}``, ``{{Glossary("CSS", "style
#: sheets")}}``) shows its second argument, else its first; a badge
#: (``{{optional_inline}}``, ``{{Deprecated_Header}}``) shows its label. Other macros
#: (``{{Compat}}``, ``{{EmbedLiveSample("x")}}``, sidebars) render tables, demos and
#: navigation, no text of the page's own, and leave with the template variables.
_KUMA_LINKS = ("jsxref", "domxref", "cssxref", "htmlelement", "svgelement", "svgattr",
               "mathmlelement", "httpheader", "httpmethod", "httpstatus", "glossary", "csp",
               "webextapiref", "rfc")
_KUMA_BADGES = {"optional_inline": "Optional", "readonlyinline": "Read only",
                "deprecated_inline": "Deprecated", "deprecated_header": "Deprecated",
                "experimental_inline": "Experimental", "experimentalbadge": "Experimental",
                "non-standard_inline": "Non-standard", "non-standard_header": "Non-standard",
                "nonstandardbadge": "Non-standard", "securecontext_inline": "Secure context",
                "securecontext_header": "Secure context"}
_KUMA_ARG = r"""(?:"([^"\n]*)"|'([^'\n]*)'|([\w.-]+))"""
_KUMA = re.compile(
    rf"\{{\{{[ \t]*(?:({'|'.join(_KUMA_LINKS)})[ \t]*\([ \t]*{_KUMA_ARG}"
    rf"(?:[ \t]*,[ \t]*{_KUMA_ARG})?(?:[ \t]*,[ \t]*{_KUMA_ARG})*[ \t]*\)"
    rf"|({'|'.join(map(re.escape, _KUMA_BADGES))})(?:[ \t]*\([^(){{}}\n]*\))?)[ \t]*\}}\}}", re.I)


def _kuma(m: re.Match) -> str:
    """What an MDN macro shows (``_KUMA``)."""
    if m.group(1) is None:
        return _KUMA_BADGES[m.group(11).lower()]
    target = m.group(2) or m.group(3) or m.group(4) or ""
    text = m.group(5) or m.group(6) or m.group(7)  # empty ("") means none
    if m.group(1).lower() == "rfc":  # {{RFC(9110, "HTTP Semantics")}}: the number, the text
        return f"RFC {target} {text}" if text else f"RFC {target}"
    return text or target


def _line_start(text: str, at: int) -> int:
    """Where the line of ``at`` starts, when only spaces and tabs come before ``at`` on
    it; else -1."""
    begin = text.rfind("\n", 0, at) + 1
    return begin if not text[begin:at].strip(" \t") else -1


def _fence(text: str, fence: str, info: str, line: int, markdown: list[str],
           indent: int) -> tuple[int, int | None]:
    """A fence line ending at ``line``: ``(where to go on, end of a code block or
    None)``. The lines of a fence whose content is markdown (a directive) stay as text,
    to be cleaned in pass 2, and so does the bare fence that closes it."""
    if markdown and not info and fence.startswith(markdown[-1]):
        markdown.pop()
        return line, None
    if _MARKDOWN_FENCE.match(info):
        markdown.append(fence)
        return line, None
    close = _closing_fence(fence[0], len(fence), indent).search(text, line)
    return (close.start(), close.end()) if close else (len(text), len(text))


def _span_end(text: str, after: int, length: int) -> tuple[int, int] | None:
    """``(start, end)`` of the backtick run closing a code span opened by ``length``
    backticks: on the same line, else within the paragraph."""
    run = _run("`", length)
    eol = text.find("\n", after)
    close = run.search(text, after, len(text) if eol < 0 else eol)
    if close is None and eol >= 0:
        paragraph = text.find("\n\n", after)
        close = run.search(text, eol, len(text) if paragraph < 0 else paragraph)
    return close.span() if close else None


def _role(text: str, start: int, code: str) -> tuple[int, str]:
    """A MyST role (``{ref}`Text <label>```) shows its text: ``(start, text)``."""
    role = text.rfind("{", 0, start)
    if role >= 0 and _ROLE.fullmatch(text, role, start):
        return role, _ROLE_TARGET.sub("", code) or code
    return start, code


def set_code_aside(text: str, lead: str = "") -> tuple[str, list[str]]:
    """``text`` with comments removed and code behind placeholders, and the code: for
    readers of markdown syntax (``ra.text.links``) that must not look inside code. Put the code
    back into any part of the text with :func:`restore`. ``lead``: the list item the text
    goes on with (``list_lead``)."""
    return _prepare(text, lead=lead)


def set_code_aside_before(head: str, text: str, aside: tuple[str, list[str]]
                          ) -> tuple[str, list[str]]:
    """``set_code_aside(head + text)``, given ``aside``, ``set_code_aside(text)``: a
    build sets a chunk's body aside once, for its plain text (``plain_text_aside``), and
    reads the links of its heading and body from it. A head of whole lines with no
    code or comment marker in them changes nothing that follows (``_prepare`` looks
    back no further than the line of a marker), so it is only put in front; any other
    head is prepared with the text."""
    if not head:
        return aside
    if head.endswith("\n") and _EVENT.search(head) is None:
        return head + aside[0], aside[1]
    return _prepare(head + text)


def own_codes(text: str, codes: list[str]) -> tuple[str, tuple[str, ...]]:
    """A part of a text set aside with only the code it holds, numbered from 0: the same
    part of any text is then the same pair (``ra.text.links`` caches link texts so)."""
    if not codes or _OPEN not in text:
        return text, ()
    held: list[str] = []
    renumbered = _PLACEHOLDER.sub(lambda m: _hold(held, codes[int(m.group(1))]), text)
    return renumbered, tuple(held)


def restore(text: str, codes: list[str]) -> str:
    """``text`` (a part of what :func:`set_code_aside` returned) with its code back."""
    return _restore(text, codes)


def _hold(codes: list[str], code: str) -> str:
    codes.append(code)
    return f"{_OPEN}{len(codes) - 1}{_CLOSE}"


def _restore(text: str, codes: list[str]) -> str:
    if not codes:
        return text
    return _PLACEHOLDER.sub(lambda m: codes[int(m.group(1))], text)


def mask_comments(text: str) -> str:
    """``text`` with the content of ``%%``, ``{/* */}`` and ``{::comment}`` comments and
    of Liquid ``{% highlight %}`` code blocks blanked (newlines kept, so every offset stays): a
    ``#`` line inside one is no heading. HTML comments are CommonMark's own business and
    stay."""
    text = _blank_highlights(text)
    if "%%" not in text and "{/*" not in text and "{::comment}" not in text:
        return text
    masked, codes = _prepare(text, raw=True, html=False)
    return _restore(masked, codes)


#: A Liquid code block (Jekyll, GitBook): ``{% highlight ruby %}`` … ``{% endhighlight %}``
_HIGHLIGHT = re.compile(r"(^[ \t]*\{%-?[ \t]*highlight\b[^\n]*?%\}[ \t]*\n)([\s\S]*?)"
                        r"(?=^[ \t]*\{%-?[ \t]*endhighlight[ \t]*-?%\})", re.M)
#: A Nunjucks or Liquid capture, ``{%- set codeBlock %}{% raw %}`` … ``{% endraw %}{%- endset
#: %}``: Eleventy's site captures its examples so, then prints them highlighted (``{{
#: codeBlock | highlight("jinja2") }}``); a ``---`` line in one was a setext heading
_CAPTURE = re.compile(r"(^[ \t]*\{%-?[ \t]*(?:set|capture)[ \t]+\w+[ \t]*-?%\}[^\n]*\n)"
                      r"([\s\S]*?)(?=^[^\n]*\{%-?[ \t]*end(?:set|capture)[ \t]*-?%\})", re.M)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank_highlights(text: str) -> str:
    """``text`` with the code of its Liquid ``highlight`` blocks and of its captures
    (``{% set x %}`` … ``{% endset %}``) blanked, offsets kept."""
    if "{%" not in text:
        return text
    if "highlight" in text:
        text = _HIGHLIGHT.sub(_blank_block, text)
    if "endset" in text or "endcapture" in text:
        text = _CAPTURE.sub(_blank_block, text)
    return text


def _blank_block(m: re.Match) -> str:
    """The opening line of a block, and its lines blanked."""
    return m.group(1) + _NOT_NEWLINE.sub(" ", m.group(2))


# ----------------------------------------------------------------- pass 2: the patterns

#: Directive and colon-fence names that render as an admonition titled by its kind
#: (MyST, Sphinx, Docusaurus, sphinx-design); other names (``card``, ``tab-set``, a CSS
#: class) show no title of their own.
ADMONITIONS = frozenset(
    "abstract admonition attention bug caution danger deprecated dropdown error example "
    "failure hint important info note question quote secondary seealso success summary "
    "tip tldr todo versionadded versionchanged warning".split())


def _docfx(m: re.Match) -> str:
    """A DocFX extension line shows what a tag would (an image's ``alt-text``: its
    ``text=``), nothing else."""
    return "\n" + _shown(m).strip()


def _title(kind: str | None, title: str | None, named: bool = True) -> str:
    """What an admonition shows as its title: the one given, else its kind (for a
    directive only when the kind is an admonition's, ``named``)."""
    if title is not None:
        return title.strip().strip("\"'")
    kind = (kind or "").removeprefix("callout-")  # Quarto's ``::: callout-tip``
    if not named and kind.lower() not in ADMONITIONS:
        return ""
    return kind.replace("-", " ").replace("_", " ").strip().capitalize()


_CALLOUT = re.compile(r"(?<![^\s])\.callout-([\w-]+)")
_TITLE_ATTR = re.compile(r"(?<![\w-])title=(?:\"([^\"]*)\"|'([^']*)')")


def _div_title(attributes: str) -> str:
    """What a pandoc fenced div's opening line shows: a Quarto callout's title (its
    ``title`` attribute, else its kind: ``{.callout-tip}`` is "Tip"); nothing for other
    divs (``{.columns}``, ``{#fig-plots layout-ncol=2}``)."""
    callout = _CALLOUT.search(attributes)
    if callout is None:
        return ""
    given = _TITLE_ATTR.search(attributes)
    return _title(callout.group(1), given and (given.group(1) or given.group(2) or ""))


_SHOWN = r"title|label|caption|alt|summary|text|description"
#: ... also as JSX names them: react.dev's ``<Recipes titleText="Basic useState examples">``
#: is a box's heading; ``altText``, ``labelText``
_SHOWN_NAMES = rf"(?:{_SHOWN})(?:Text)?"
_SHOWN_ATTRS = re.compile(rf"\b{_SHOWN_NAMES}=(?:\"([^\"]*)\"|'([^']*)')")
_ANCHOR_ATTRS = re.compile(rf"\b(?:{_SHOWN_NAMES}|id|name)=(?:\"([^\"]*)\"|'([^']*)')")
#: API reference fields (Mintlify's ``<ParamField path="user_id">``, ``query``, ``body``,
#: ``header``; ``<ResponseField name="id">``): the field's name is the heading a reader
#: sees, and it is written nowhere else.
_FIELD_ATTRS = re.compile(rf"\b(?:{_SHOWN_NAMES}|name|path|query|body|header)="
                          rf"(?:\"([^\"]*)\"|'([^']*)')")
_FIELD_TAG = re.compile(r"<[A-Za-z][\w.]*Field\b|\{\{[<%]-?[ \t]*[\w/-]*(?:option|param|field|"
                        r"setting|property)\b", re.I)  # and opentelemetry.io's `config_option`


#: An Obsidian block's id: `` ^b15695`` at the end of a line, or a line of its own (in text
#: framed by newlines, code set aside)
BLOCK_ID = re.compile(r"(\n[ \t]*|[ \t]+)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*(?=\n)")

#: An HTML anchor alone on its line, mdBook's and DocFX's ``<a id="old-name"></a>``, and
#: an anchor anywhere (its ``id`` or ``name``)
_LONE_ANCHOR = re.compile(r"[ \t]*<a\s+(?:id|name)\s*=\s*[\"']([^\"'<>\s]+)[\"']\s*/?>"
                          r"(?:[ \t]*</a>)?[ \t]*\r?")
_ANCHOR_ID = re.compile(r"<a\s(?:[^<>]*?\s)?(?:id|name)\s*=\s*[\"']([^\"'<>\s]+)[\"'][^<>]*>")
_COMMENT_LINE = re.compile(r"[ \t]*<!--.*-->[ \t]*\r?")


def heading_anchors(body: str) -> tuple[str, list[str]]:
    """``body`` without the anchors alone on its last lines, and the ids those anchors give
    the heading that follows it (mdBook's ``<a id="c-case"></a>`` above ``## … (C-CASE)``;
    the Rust book keeps a renamed section's old id so, after a comment, above its
    heading), in order. Blank and comment lines between them go with them."""
    if "<a" not in body:
        return body, []
    lines = body.split("\n")
    at, moved = len(lines), []
    while at > 0:
        line = lines[at - 1]
        if line.strip() and not _COMMENT_LINE.fullmatch(line):
            if (found := _LONE_ANCHOR.fullmatch(line)) is None:
                break
            moved.append(found[1])
        at -= 1
    if not moved:
        return body, []
    return ("\n".join(lines[:at]) + "\n" if at else ""), moved[::-1]


def anchor_ids(text: str) -> list[str]:
    """The ids (or names) of the HTML anchors in ``text``, in order: ``<a name="note_A">``;
    then its Obsidian block ids, outside code, as ``^b15695`` (``[[Note#^b15695]]``)."""
    ids = _ANCHOR_ID.findall(text) if "<a" in text else []
    if "^" in text:
        prepared, _ = set_code_aside(f"\n{text}\n")
        ids += (f"^{m[2]}" for m in BLOCK_ID.finditer(prepared))
    return ids


def _shown(m: re.Match) -> str:
    """A tag or shortcode is markup, but its ``title``/``label``/``caption``/``alt``/
    ``text`` attributes are text a reader sees (a Kubernetes glossary tooltip's
    ``text``, else its ``term_id``). An anchor's ``id`` or ``name`` stays too: such
    anchors keep the names of renamed sections (mdBook's ``<a id="old-heading">``, DocFX's
    ``<a name>``), and searches for the old name should still find the section. So does
    the name of an API field or an option (``_FIELD_ATTRS``: opentelemetry.io's ``{{%
    config_option name="otel.javaagent.extensions" %}}``, written nowhere else)."""
    tag = m.group()
    pattern = (_ANCHOR_ATTRS if tag.startswith("<a ") else
               _FIELD_ATTRS if _FIELD_TAG.match(tag) else _SHOWN_ATTRS)
    shown = [a or b for a, b in pattern.findall(tag)]
    if not shown and "term_id=" in tag:  # Kubernetes' glossary_tooltip shows its term
        shown = [t.replace("-", " ") for t in _TERM_ID.findall(tag)]
    return " " + " ".join(shown) + " " if shown else " "


_TERM_ID = re.compile(r"\bterm_id=[\"']([^\"'\n]*)[\"']")


def _braced(depth: int) -> str:
    """A pattern for an expression in braces holding braces nested up to ``depth`` deep
    (Python's ``re`` has no recursion): a JSX attribute's value, which may be an object
    (``style={{ width: 1 }}``) or an array of objects holding arrays of objects
    (Starlight's ``<SidebarPreview config={[{ items: [{ label: 'x' }] }]} />``)."""
    inner = r"[^{}]*"
    for _ in range(depth):
        inner = rf"[^{{}}]*(?:\{{{inner}\}}[^{{}}]*)*"
    return rf"\{{{inner}\}}"


_BRACED = _braced(5)

#: MDC (Nuxt Content): the props of a component whose values a reader sees, at any depth
#: of its YAML (``features: [{label: …, content: …}]``)
_MDC_SHOWN_PROPS = frozenset(_SHOWN.split("|")) | {"content", "headline"}
#: The line that opens an MDC block component (``::note``, ``:::code-group``,
#: ``::card{title="x"}``); ``ra.text.headings`` matches it too.
MDC_OPENER = r"[ \t]*:{2,}[a-z][\w-]*(?:\{[^\n]*\})?[ \t]*"
#: a document with MDC block components, whose ``#name`` lines are slots of them
#: (``#title``), not Obsidian tags
_MDC_BLOCK = re.compile(f"^{MDC_OPENER}$", re.M)
_MDC_SLOT = re.compile(r"^[ \t]*#[A-Za-z][\w-]*(?:\{[^\n]*\})?[ \t]*$", re.M)


def _mdc(m: re.Match) -> str:
    """An MDC block component's opening line (and its props block) shows what its
    ``title``/``label`` props say, else an admonition's kind (``::note`` is "Note"),
    else nothing (``::code-group``, ``::u-page-hero``)."""
    lead, kind, attrs, props = m.group(1), m.group(2), m.group(3) or "", m.group(4) or ""
    shown = [a or b for a, b in _SHOWN_ATTRS.findall(attrs)] + _prop_values(props)
    return lead + ("\n".join(shown) if shown else _title(kind, None, named=False))


def load_yaml(source: str) -> Any:
    """``source`` as YAML, by the safe loader (libyaml's when compiled in); raises
    ``yaml.YAMLError``. Front matter (``ra.text.document``) and MDC props are read so."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when compiled in
    return yaml.load(source, Loader=loader)  # noqa: S506 - a safe loader


def _indented_yaml(block: str) -> Any:
    """An indented block of YAML inside markdown (MDC props, mkdocstrings options),
    dedented and loaded; None when it is not YAML."""
    import textwrap

    import yaml

    try:
        return load_yaml(textwrap.dedent(block))
    except yaml.YAMLError:
        return None


def _members(block: str) -> list[str]:
    """The ``members`` a mkdocstrings options block lists (``options: members: [get]``),
    in order; none when it lists none or is not YAML."""
    if "members" not in block:
        return []
    data = _indented_yaml(block.strip("\n"))
    options = data.get("options") if isinstance(data, dict) else None
    members = options.get("members") if isinstance(options, dict) else None
    return [str(m) for m in members if isinstance(m, str)] if isinstance(members, list) else []


def _prop_values(block: str) -> list[str]:
    """The shown values (``_MDC_SHOWN_PROPS``) of a ``---`` props block, in order; none
    when it is not YAML."""
    if not block:
        return []
    data = _indented_yaml("\n".join(block.strip("\n").split("\n")[1:-1]))  # inside the ---
    out: list[str] = []
    stack, seen = [data], set()
    while stack:  # depth first, in document order; each container once (YAML aliases
        item = stack.pop()  # share them, and a file nesting aliases would be exponential)
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            for key, value in reversed(item.items()):
                if key in _MDC_SHOWN_PROPS and isinstance(value, str | int | float):
                    stack.append(str(value))
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            out.append(item)
    return out


#: an MDC inline component: ``:badge[Soon]``, ``:icon{name="mdi:home"}``,
#: ``:video{src="…"}`` (a bare ``:name`` is left: it may be anything)
_MDC_INLINE = re.compile(r":(?<![\w:]:)[a-z][\w-]*(?:\[([^\[\]\n]*)\](?:\{[^{}\n]*\})?"
                         r"|\{[^{}\n]*\})")


def _mdc_inline(m: re.Match) -> str:
    """An inline component shows its content, else its ``title``/``label`` props."""
    return m.group(1) if m.group(1) is not None else _shown(m)


_SPAN = re.compile(rf"\[([^\[\]\n]*)\]{_ATTRS}")  # `[Nuxt]{.text-primary}` (MDC, pandoc)


#: An emoji shortcode (``:heavy_check_mark:``) or an icon (mkdocs-material's
#: ``:material-transit-detour:``), after a space, a bracket or nothing
_SHORTCODE = re.compile(r":(?<![^\s(\[]:)[a-z][a-z0-9_+-]*:(?![\w/])")


def mdc_inline(text: str) -> str:
    """``text`` (a heading's) with its MDC inline components, bracketed spans and emoji
    and icon shortcodes read as ``plain_text`` reads them: ``Nuxt Studio Integration
    :badge[Soon]`` is "… Soon", ``A real [Nuxt]{.text-primary} app`` is "A real Nuxt
    app", ``:material-transit-detour: Flexible Services`` (mkdocs-material's icons, in
    the headings of gtfs.org and many more) is "Flexible Services"."""
    if ":" in text:
        text = _MDC_INLINE.sub(_mdc_inline, text).strip()
        shown, icons = _SHORTCODE.subn("", text)
        text = " ".join(shown.split()) if icons else text
    return _SPAN.sub(r"\1", text) if "]{" in text else text


def mdc_slots(text: str) -> str:
    """``text`` without the slot lines of its MDC components (``#title``, ``#right``):
    a line of only ``#name`` in a document that has MDC block components."""
    return _MDC_SLOT.sub("", text) if "::" in text and _MDC_BLOCK.search(text) else text


_MEDIA = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|pdf|mp[34]|webm|mov|ogg|wav)$", re.I)


def _docsify_line(m: re.Match) -> str:
    """A heading line without the docsify options at its end."""
    found = docsify_options(m.group())
    return m.group() if found is None else found[0]


def wiki_target(written: str) -> str:
    """A wiki link's target as ``WIKI_LINK`` found it, without the backslash of an alias
    separator escaped in a table (Obsidian's ``[[Highlighter\\|highlights]]``: the
    table's cell goes on past a bare ``|``)."""
    return written.strip().removesuffix("\\").rstrip()


#: Dendron's link to a note of a vault, ``dendron://vault/``
DENDRON = re.compile(r"dendron://[^/\s]*/")
#: A Dendron note's name (dotted hierarchy, no space), maybe with a heading:
#: ``dendron.topic.lookup#details``
_NOTE_NAME = re.compile(r"[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+(?:#[^\s|]*)?")
#: Where a Dendron embed's range starts after its heading: ``#summary,1:#*``, ``#a:#b``
_RANGE = re.compile(r"(?:,\d+)?:#.*")


def wiki_parts(target: str, alias: str | None) -> tuple[str, str | None]:
    """A wiki link's target and alias, in Obsidian's order (``[[target|alias]]``) as
    written, or swapped where Dendron writes its label first: before an address of a
    vault's note (``[[update time|dendron://vault/dendron.ref#h]]``) or a note's dotted
    name where the first part is none (``[[Details|dendron.topic.lookup#summary]]``); a
    vault's address is the note's name."""
    if alias is not None and (DENDRON.match(alias.strip()) or (
            _NOTE_NAME.fullmatch(alias.strip()) and not _NOTE_NAME.fullmatch(target))):
        target, alias = alias.strip(), target
    return DENDRON.sub("", target, count=1), alias


def wiki_shown(text: str) -> str:
    """``text`` with its wiki links as they show (``_wiki``): a heading's."""
    return WIKI_LINK.sub(_wiki, text)


def _wiki(m: re.Match) -> str:
    """``[[target|alias]]`` shows the alias; ``[[Note#Heading]]`` shows both names;
    an embedded image shows nothing, nor its size (``![[photo.jpg|200]]``). Dendron
    writes the label first: ``[[update time|dendron://vault/note#h]]``,
    ``[[Details|a.b#summary]]`` show "update time" and "Details" (the address had been
    the text), and an embed's range (``![[note#summary,1:#*]]``) is no text."""
    if heading_id_link(m):
        return ""
    embed = m.group(1)
    target, alias = wiki_parts(wiki_target(m.group(2)), m.group(3))
    if "#" in target:
        name, _, heading = target.partition("#")
        target = f"{name}#{_RANGE.sub('', heading)}"
    media = embed and _MEDIA.search(target.split("#")[0])
    if alias is not None and alias.strip() and not (media and _SIZE.fullmatch(alias.strip())):
        return alias.strip()
    if media:
        return ""
    return " ".join(part.strip() for part in target.replace("^", "#").split("#") if part.strip())


#: An embedded image's size in place of an alias: ``|200``, ``|200x100`` (Obsidian)
_SIZE = re.compile(r"\d+(?:x\d+)?")
_WS = r"[ \t]"
_FENCE_OPENER = r"(?:`{3,}|~{3,})"
_EOL = r"(?=\n)"  # the text is framed by newlines: a line pattern is "\n…" up to here
_OPTIONS = rf"(?:\n{_WS}*:[\w-]+:[^\n]*{_EOL})*"  # `:class: tip` lines of a directive
#: Text in brackets, on one line: it may hold bracketed text of its own (``[a [b] c]``,
#: one level), not a ``[`` that is not closed. A ``[`` that opens nothing ends it, as
#: CommonMark reads ``[x [y](u)`` (the link is ``y``): were it text, each ``[`` of a run of
#: them would scan the rest of its line, and a 40 KB line of ``[`` took a minute to read.
_RUN = r"[^\[\]\n]*"  # no bracket, no line break
_PAIR = rf"\[{_RUN}\]"  # bracketed text within
BRACKETED = rf"{_RUN}(?:{_PAIR}{_RUN})*"
#: Link text: ``BRACKETED`` that may wrap, not across a blank line. Unrolled (runs of
#: anything but brackets and newlines, then a bracketed part or a newline not before a
#: blank line) rather than an alternation per character, which the regex engine steps
#: through a character at a time; each part begins with a character no run holds, so
#: there is one way to match a text, and a failed match gives back in linear time.
LINK_TEXT = rf"{_RUN}(?:(?:{_PAIR}|\n(?![ \t]*\n)){_RUN})*"
#: A list item that is a link to a heading of its own page and nothing else:
#: ``- [Summary](#summary)``, ``1. [`x`](<#x> "title")``
#: A list item's marker: ``-``, ``+``, ``*``, ``1.``, ``1)``
_LIST_MARKER = r"(?:[-+*]|\d{1,9}[.)])"
#: A part of an IETF draft in kramdown-rfc: ``--- abstract`` (which ends its front matter,
#: ``ra.text.document``), ``--- middle``, ``--- back``, ``--- note_…``
RFC_PART = r"---[ \t]+(?:abstract|middle|back|note_\w*)[ \t]*"
_TOC_ITEM = (rf"\n{_WS}*{_LIST_MARKER}{_WS}+\[{BRACKETED}\]\(<?#[^\s()<>]*>?"
             rf"(?:{_WS}+\"[^\"\n]*\")?\){_WS}*{_EOL}")
#: A line that labels a table of contents: "**Table of Contents**", "Contents:", "In
#: this article"
_TOC_LABEL = (rf"\n{_WS}*(?:\*\*|__|\*|_)?(?:table of contents|contents|toc|in this "
              rf"(?:article|document|page|section)|on this page)\b[^\n]*{_EOL}")
_LINK_TEXT = LINK_TEXT
#: An inline link or image: ``[text](target "title")``, ``![alt](image.png)``.
_INLINE_LINK = re.compile(rf"(?:!\[|\[)({_LINK_TEXT})\]\((?:[^()\n]|\([^()\n]*\))*\)")


def _link_text(m: re.Match) -> str:
    """A link's text, an image's alt text; a badge (``[![alt](image.svg)](url)``, a link
    whose text is an image) shows the image's alt text. A resource's kind that roadmap.sh
    writes before a link's text (``[@official@Docker Compose](…)``, ``@video@``,
    ``@article@``) is shown as a badge, no text: "official video" matched every page of
    its developer roadmaps."""
    text = m.group(1)
    if text.startswith("@"):
        text = _KIND_BADGE.sub("", text)
    return _INLINE_LINK.sub(r"\1", text) if "](" in text else text


#: roadmap.sh's kind of a linked resource, before the link's text
_KIND_BADGE = re.compile(r"\A@[a-z]+@(?=\S)")


#: A wiki link or embed: ``[[target]]``, ``[[target|alias]]``, ``![[file]]``. Not when a
#: link's destination follows (``[[Support]](https://…)``, as Azure DevOps wikis write a
#: link whose text shows brackets): CommonMark reads a link whose text is "[Support]".
WIKI_LINK = re.compile(r"(!?)\[\[([^\[\]\n|]*)(?:\|([^\[\]\n]*))?\]\](?!\([^\s()]*\))")

#: (substrings one of which must be present, pattern, replacement), in order. Line
#: patterns start with the newline before the line, not ``^`` in multiline mode: a
#: literal first character lets the regex engine skip ahead (several times faster).
_CLEAN: list[tuple[tuple[str, ...], re.Pattern, str | Callable[[re.Match], str]]] = [
    # HTML that is not text: scripts and styles
    (("<",), re.compile(r"<(script|style)\b[\s\S]*?</\1\s*>", re.I), " "),
    # MDX: ESM imports and export blocks (to the next blank line)
    # (a default import, then named ones in braces, which may wrap, or `* as x`: each part
    # begins where the one before cannot go on, so a failed match gives up in linear time;
    # `\s+(?:[\w*${}\s,]+?\s+from\s+)?` tried a run of blanks every way: 35 s for 8 KB)
    (("\nimport",), re.compile(rf"\nimport{_WS}+(?:(?:type{_WS}+)?(?:[\w$]+{_WS}*(?:,{_WS}*)?)?"
                             rf"(?:\{{[^{{}}]*\}}|\*{_WS}*as{_WS}+[\w$]+)?{_WS}*from{_WS}+)?"
                             rf"['\"][^'\"\n]+['\"];?{_WS}*{_EOL}"), "\n"),
    (("\nexport",), re.compile(r"\nexport\s+(?:default\b|const\b|let\b|var\b|function\b|class\b"
                             r"|async\b|\{)[\s\S]*?(?=\n[ \t]*\n|\n\Z)"), "\n"),
    # MyST directive fences and their options (`:key: value` lines or a --- block)
    (("{",), re.compile(rf"(\n{_WS}*){_FENCE_OPENER}{_WS}*\{{([\w:.-]+)\}}{_WS}*([^\n]*?){_WS}*"
                        rf"{_EOL}(?:{_OPTIONS}|\n{_WS}*---\n[\s\S]*?\n{_WS}*---{_EOL})"),
     lambda m: m.group(1) + _title(m.group(2), m.group(3) or None, named=False)),
    (("mdx-code-block",), re.compile(rf"\n{_WS}*{_FENCE_OPENER}{_WS}*mdx-code-block[^\n]*{_EOL}"),
     "\n"),
    # mkdocstrings: `::: fastapi.APIRouter` renders the API docs of that object here, with
    # an indented YAML options block; the object and the members it lists are what the
    # page shows of it (the docs themselves are in the code, not at hand)
    ((":::",), re.compile(rf"(\n{_WS}*):::{_WS}+([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w*"
                          rf"(?=\n{_WS}+options:)){_WS}*{_EOL}((?:\n{_WS}+\S[^\n]*)*)"),
     lambda m: m.group(1) + " ".join([m.group(2), *_members(m.group(3))])),
    # DocFX (Microsoft Learn): `:::image type="content" source="…" alt-text="…":::`,
    # `:::code source="…":::`, `::: moniker range="…"`, `:::row:::`, `:::column-end:::`:
    # a line of attributes (or a bare name closed by colons); an image's alt text is text
    ((":::",), re.compile(rf"\n{_WS}*:{{3}}{_WS}*[a-z][\w-]*(?:(?:{_WS}+[\w-]+=\"[^\"\n]*\")+"
                          rf"{_WS}*(?::{{3}})?|:{{3}}){_WS}*{_EOL}"), _docfx),
    # MDC (Nuxt Content): block components `::note`, `::card{title="x"}`, nested with more
    # colons (`:::code-preview{label="Preview"}`), with an optional YAML props block;
    # their `::` ends; inline components with props (`:video{src="…"}`, `:icon{name=…}`)
    (("::", ":::"), re.compile(rf"(\n{_WS}*):{{2,}}([a-z][\w-]*)(\{{[^\n]*\}})?{_WS}*{_EOL}"
                               rf"((?:\n{_WS}*---\n[\s\S]*?\n{_WS}*---{_EOL})?)"), _mdc),
    (("::",), re.compile(rf"\n{_WS}*::{_WS}*{_EOL}"), "\n"),
    ((":",), _MDC_INLINE, _mdc_inline),
    # pandoc fenced divs, attributes in braces (Quarto callouts, columns, figures)
    ((":::",), re.compile(rf"(\n{_WS}*):{{3,}}{_WS}*\{{({_WS}*[.#][^{{}}\n]*)\}}{_WS}*{_EOL}"),
     lambda m: m.group(1) + _div_title(m.group(2))),
    # colon fences: Docusaurus admonitions, MyST directives and containers
    ((":::",), re.compile(rf"(\n{_WS}*):{{3,}}{_WS}*\{{?([\w-]+)\}}?(?:\[([^\]\n]*)\])?{_WS}*"
                          rf"([^\n]*?){_WS}*{_EOL}{_OPTIONS}"),
     lambda m: m.group(1) + _title(m.group(2), m.group(3) if m.group(3) is not None
                                   else m.group(4) or None, named=False)),
    ((":::",), re.compile(rf"\n{_WS}*:{{3,}}{_WS}*{_EOL}"), "\n"),
    # bare fence lines left over: the ends of markdown fences
    (("```", "~~~"), re.compile(rf"\n{_WS}*{_FENCE_OPENER}{_WS}*{_EOL}"), "\n"),
    # mkdocs: admonitions, collapsible details, content tabs, pymdownx blocks
    (("!!!", "???"), re.compile(rf"(\n{_WS}*)(?:!!!|\?\?\?)\+?{_WS}+([\w-]+)(?:{_WS}+[\w-]+)*?"
                                rf"(?:{_WS}+\"([^\"\n]*)\")?{_WS}*{_EOL}"),
     lambda m: m.group(1) + _title(m.group(2), m.group(3))),
    (("===",), re.compile(rf"(\n{_WS}*)===\+?{_WS}+\"([^\"\n]*)\"{_WS}*{_EOL}"), r"\1\2"),
    (("///",), re.compile(rf"(\n{_WS}*)/{{3,}}{_WS}+([\w-]+)(?:{_WS}*\|{_WS}*([^\n]*?))?{_WS}*"
                          rf"{_EOL}"), lambda m: m.group(1) + _title(m.group(2), m.group(3))),
    (("///",), re.compile(rf"\n{_WS}*/{{3,}}{_WS}*{_EOL}"), "\n"),
    # includes of mkdocs snippets and FastAPI's docs: markup that pulls a file in
    (("{*",), re.compile(rf"\n{_WS}*\{{\*[^\n]*\*\}}{_WS}*{_EOL}"), "\n"),
    (("{!",), re.compile(rf"\n{_WS}*\{{!>?[^!{{}}\n]+!\}}{_WS}*{_EOL}"), "\n"),  # markdown-include
    (("--8<--",), re.compile(rf"\n{_WS}*-{{2}}8<-{{2}}[^\n]*{_EOL}"), "\n"),
    # kramdown-rfc's parts of an IETF draft: `--- middle`, `--- back` (`--- abstract`
    # ends the front matter)
    (("--- ",), re.compile(rf"\n{RFC_PART}{_EOL}"), "\n"),
    (("<<<",), re.compile(rf"\n{_WS}*<<<{_WS}+@[^\n]*{_EOL}"), "\n"),  # VitePress `<<< @/x.js{2}`
    # a table of contents the generator fills in: `[[toc]]` (markdown-it), `[TOC]`
    # (Python-Markdown), `${toc}`, `[[_TOC_]]` (GitLab, Azure DevOps), and Azure DevOps'
    # table of a page's subpages, `[[_TOSP_]]`
    (("toc", "TOC", "Toc", "tosp", "TOSP", "Tosp"),
     re.compile(rf"\n{_WS}*(?:\[\[_?toc_?\]\]|\[TOC\]|\$\{{toc\}}|\[\[_tosp_\]\])"
                rf"{_WS}*{_EOL}", re.I), "\n"),
    # a table of contents written out: a list of three items or more, each a link to a
    # heading of the same page and nothing else, that opens a section's text (after a
    # label at most: doctoc's "**Table of Contents**"): a KEP's between markdown-toc's
    # comments, a Swift proposal's "## Table of Contents". Its words are the headings',
    # which their sections' titles hold: as text, they made a KEP's introduction match
    # every query about one of its sections, and filled its snippets. Such a list
    # further down is kept: it says something ("the following methods support only DIB
    # section bitmaps: GetBits, …")
    (("](#", "](<#"), re.compile(rf"\A(?:\n{_WS}*{_EOL})*(?:{_TOC_LABEL}(?:\n{_WS}*{_EOL})*)?"
                                 rf"(?:{_TOC_ITEM}(?:\n{_WS}*{_EOL})*){{3,}}", re.I), "\n"),
    # ... and one of ten items or more that closes it, after an introduction that does not
    # announce it with a colon (the System Design Primer's "Index of system design
    # topics": a quote and an image, then 82 links to its sections; the section came for
    # 7 of 21 queries, a third of the budget). "You must call FindNextFile before any of
    # the following attribute member functions:" and its list say something. Matched
    # from the line before it, which is no list item's: tried from each item, a list
    # followed by text was read again from each, in quadratic time
    (("](#", "](<#"), re.compile(rf"(\n(?!{_WS}*{_LIST_MARKER}{_WS})[^\n]*[^\s:])"
                                 rf"{_WS}*(?:\n{_WS}*{_EOL})*(?:{_TOC_ITEM}(?:\n{_WS}*{_EOL})*)"
                                 rf"{{10,}}\n?\Z"), r"\1\n"),
    # kramdown (Jekyll, GitHub Pages): a one-item list marked `{:toc}` is where the table
    # of contents goes (its item, `* TOC`, is a placeholder); `{::comment}` hides its
    # text; extension tags (`{::options … /}`, `{::nomarkdown}` … `{:/}`) and attribute
    # list definitions (`{:refdef: .note}`) and references (`{:refdef}`) are markup
    (("{:",), re.compile(rf"(?:\n{_WS}*{_LIST_MARKER}{_WS}+[^\n]*)?"
                         rf"\n{_WS}*\{{:{_WS}*toc{_WS}*\}}{_WS}*{_EOL}"), "\n"),
    (("{::", "{:/"), re.compile(r"\{::[a-z]+\b(?:[^{}\n]|\{[^{}\n]*\})*?/?\}|\{:/[a-z]*\}"), ""),
    (("{:",), re.compile(rf"\n{_WS}*\{{:[\w-]+:[^{{}}\n]*\}}{_WS}*{_EOL}"
                         rf"|\n{_WS}*\{{:{_WS}*[A-Za-z][\w-]*{_WS}*\}}{_WS}*{_EOL}"), "\n"),
    # mdBook: files pulled in, a chapter's <title> (an escaped `\{{#include}}` is shown)
    (("{{#",), re.compile(r"(\\?)\{\{#([\w-]+)\b[^{}\n]*\}\}"), _mdbook),
    # mdbook-spec (the Rust Reference): a rule's identifier on a line of its own
    # (`r[items.fn.intro]`) is an anchor the page shows in its margin, not text
    (("\nr[",), re.compile(rf"\n{_WS}*r\[[a-z0-9_.-]+\]{_WS}*{_EOL}"), "\n"),
    # MyST: targets `(label)=`, `% comment` lines, `+++` block breaks; substitutions
    ((")=",), re.compile(rf"\n{_WS}*\([^()\n]+\)={_WS}*{_EOL}"), "\n"),
    (("\n%",), re.compile(rf"\n%(?:{_WS}[^\n]*)?{_EOL}"), "\n"),
    (("\n+++",), re.compile(rf"\n\+\+\+{_WS}*(?:\{{[^\n]*\}})?{_WS}*{_EOL}"), "\n"),
    (("^^^",), re.compile(rf"\n{_WS}*\^{{3,}}{_WS}*{_EOL}"), "\n"),  # sphinx-design card header
    (("{{",), _KUMA, _kuma),  # MDN's macros that show text
    # template variables, with Liquid's filters: `{{ site.title }}`, `{{ '/x/' | relative_url }}`,
    # and calls: Zola's shortcodes `{{ youtube(id="x") }}`, mkdocs-macros' `{{ macro(1) }}`;
    # a filter's argument may be an object (Eleventy's `| eleventyNavigationToHtml({ … })`)
    (("{{",), re.compile(r"\{\{-?[ \t]*(?:'[^'\n]*'|\"[^\"\n]*\"|[\w.$\[\]-]+"
                         r"(?:\((?:[^(){}'\"\n]|'[^'\n]*'|\"[^\"\n]*\")*\))?)"
                         r"(?:[ \t]*\|(?:[^{}\n]|\{[^{}\n]*\})*?)?[ \t]*-?\}\}"), " "),
    # Obsidian callouts and GitHub alerts
    (("[!",), re.compile(rf"(\n{_WS}*(?:>{_WS}*)+)\[!([\w-]+)\][+-]?{_WS}*([^\n]*?){_WS}*{_EOL}"),
     lambda m: m.group(1) + _title(m.group(2), m.group(3) or None)),
    # DocFX: a file pulled in (`[!INCLUDE[label](path)]`, `[!code-cpp[label](path)]`),
    # a styled block (`[!div class="checklist"]`), a video (`[!VIDEO https://…]`)
    (("[!",), re.compile(r"\[![A-Za-z][\w-]*(?:[ \t]*\[[^\[\]\n]*\]\([^()\n]*\)"
                         r"|[ \t]+[^\[\]\n]*)\]"), ""),
    # Hugo shortcodes (their title/caption attributes are text)
    (("{{",), re.compile(r"\{\{[<%][^{%>]*(?:(?:\{(?!\{[<%])|[%>](?!\}\}))[^{%>]*)*[%>]\}\}"),
     _shown),
    # Liquid tags: GitBook (`{% hint style="info" %}`, `{% tab title="Docker" %}`),
    # Jekyll (`{% include … %}`), Eleventy; a tab's title or a code block's caption is text.
    # Markdoc (Stripe, Starlight's .mdoc) also closes tags (`{% /callout %}`), prints
    # variables (`{% $markdoc.frontmatter.title %}`) and annotates (`{% .primary #id %}`)
    # (the name and the rest possessive, the rest never past the next `{%`: a tag that
    # does not close gives up at once, not once for each split of the line; the brace
    # first, then the look back at the one before it, so that the regex engine skips to
    # each brace: 300 pages of the Google Cloud tutorials 42 → 3 ms)
    (("{%",), re.compile(r"\{(?<!\{\{)%-?[ \t]*[/$.#]?[a-z][\w-]*+(?:[^%\n{]|%(?!\})|\{(?!%))*+"
                         r"-?%\}"),
     _shown),
    # docsify: a heading's options (`## Title :id=custom`), the marks of its old callouts
    # (`!> Important text`, `?> A tip`)
    ((":id=", "docsify-ignore"), re.compile(rf"\n{_WS}{{0,3}}#{{1,6}}{_WS}[^\n]*(?::id=|"
                                            rf"docsify-ignore)[^\n]*{_EOL}"), _docsify_line),
    (("!>", "?>"), re.compile(rf"(\n{_WS}{{0,3}})[!?]>{_WS}+"), r"\1"),
    # Logseq: the properties its outliner hides (a block's `id:: <uuid>`, `collapsed::
    # true`, a flashcard's `card-repeats:: 1`, `created-at::`), and block references
    # `((<uuid>))`, which show a block of another page
    (("id::", "collapsed::", "heading::", "-at::", "card-", "hl-", "ls-type::", "query-",
      "logseq."), re.compile(rf"\n{_WS}*(?:-{_WS}+)?(?:id|collapsed|heading|created-at"
                             rf"|updated-at|background-color|card-[\w-]+|hl-[\w-]+|ls-type"
                             rf"|query-[\w-]+|logseq\.[\w.-]+)::[^\n]*{_EOL}"), "\n"),
    (("((",), re.compile(r"\(\([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)\)"),
     ""),
    # attribute lists, on headings and elsewhere (`{ .md-button }`)
    (("{",), _ANY_ATTRS, ""),
    # mnemonic letters in brackets inside a word (tldr-pages: `[c]reate`, `E[x]tract`,
    # `Lis[t]`): the word is what a reader reads, and what a search must find
    # (not a link's text: `请参阅[API](api.md)` is a link, CJK text having no spaces).
    # The bracket first, then a look back at the letter before it: the regex engine skips
    # straight to each "[" (a look-behind first was tried at every character: 25 µs of a
    # snippet's 70 in `plain_text`, a fifth of the whole on the corpora's pages)
    (("[",), re.compile(r"\[(?:(?<=[^\W\d_]\[)([^\W\d_]{1,3})\](?![(\[])"
                        r"|([^\W\d_]{1,3})\](?=[^\W\d_]))"),
     lambda m: m.group(1) or m.group(2)),
    # wiki links and embeds, then markdown links, images, footnote markers (`[[x]](url)`
    # is CommonMark's link whose text is "[x]", no wiki link: `WIKI_LINK`)
    (("[[",), WIKI_LINK, _wiki),
    (("[^",), re.compile(r"\n[ \t]{0,3}\[\^[^\[\]\n]+\]:[ \t]*"), "\n"),
    (("[^",), re.compile(r"\[\^[^\[\]\n]+\]"), ""),
    (("]:",), re.compile(rf"\n{_WS}{{0,3}}\[[^\]\n]+\]:{_WS}*\S+(?:{_WS}+(?:\"[^\"\n]*\"|'[^'\n]*'"
                         rf"|\([^)\n]*\)))?{_WS}*{_EOL}"), "\n"),
    # (``(?:!\[|\[)`` is ``!?\[``, and a lookbehind after the character it looks behind
    # is the same test: a pattern that starts with a literal character lets the regex
    # engine skip to it, where a leading ``!?`` or lookbehind tries every position)
    (("](",), _INLINE_LINK, _link_text),
    (("![",), re.compile(rf"!\[({BRACKETED})\](?!\()(?:\[[^\[\]\n]*\])?"), r"\1"),
    (("][",), re.compile(rf"\[({_LINK_TEXT})\]\[[^\[\]\n]*\]"), r"\1"),
    (("[",), re.compile(r"\[(?<![\w\]]\[)([^\[\]\n]{2,})\](?![(\[:])"), r"\1"),  # [shortcut]
    # emoji shortcodes (`:heavy_check_mark:`) and mkdocs-material icons
    ((":",), _SHORTCODE, ""),
    # HTML and JSX tags (their title/label/alt attributes are text), autolinks
    # (a JSX attribute's value is an expression in braces, which may hold an object:
    # `rss={{ title: "x" }}`; a value in double quotes may hold what a tag may not, over
    # lines but not past a blank one: Fumadocs' `<auto-type-table type="Omit<Props, 'x'>" />`;
    # an apostrophe is a character like any other: `<YOUR USER'S EMAIL>`); JSX fragments
    (("<",), re.compile(rf"</?[A-Za-z][\w.:-]*(?:\s+(?:[^<>{{}}\"]|\"(?:[^\"\n]|\n(?!{_WS}*\n))*\""
                        rf"|{_BRACED})*?)?/?>"), _shown),
    (("<>",), re.compile(r"<>([^<>\n]*)</>"), r"\1"),  # (its tags are gone already)
    (("<",), re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>"), r"\1"),
    # GFM tables: the delimiter row goes, pipes between cells become spaces
    (("|",), re.compile(rf"\n{_WS}*\|?{_WS}*:?-+:?{_WS}*(?:\|{_WS}*:?-+:?{_WS}*)+\|?{_WS}*{_EOL}"),
     "\n"),
    (("|",), re.compile(r"\|(?<!\\\|)"), "  "),
    # task list checkboxes, ==highlights== (Obsidian, mkdocs)
    (("[",), re.compile(rf"(\n{_WS}*{_LIST_MARKER}{_WS}+)\[[^\]\n]\]{_WS}"), r"\1"),
    (("==",), re.compile(r"==(?=\S)([^=\n]*?\S)=="), r"\1"),
    # Obsidian's block ids, which its pages do not show: "… knowledge. ^b15695" at the
    # end of a block's last line, or a line of its own after a list or a table
    (("^",), BLOCK_ID, lambda m: "\n" if m.group(1)[0] == "\n" else ""),
    # setext underlines and thematic breaks
    (("-", "=", "*", "_"), re.compile(
        rf"\n{_WS}{{0,3}}(?:(?:-{_WS}*){{3,}}|=+{_WS}*|(?:\*{_WS}*){{3,}}|(?:_{_WS}*){{3,}}){_EOL}"),
     "\n"),
]

_RARE_NEEDLES = frozenset(n for needles, _, _ in _CLEAN for n in needles if len(n) > 1
                          and n not in ("](", "][", "]:", "{{", "![", "=="))
#: One scan finds which rare needles of punctuation a text holds; they must not overlap
#: one another (a common needle like "![" would hide the "[[" of "![["). Those that begin
#: with a letter or a line end (``id::``, ``toc``, ``\nimport``) are looked for one by one
#: (``str.__contains__``): in the alternation the regex engine tried them at every letter
#: and line of the text, and the scan takes half the time without them (the corpora's
#: pages: 0.149 → 0.079 s for 1,500 of them).
_RARE_MARKS = sorted((n for n in _RARE_NEEDLES if not n[0].isalnum() and n[0] != "\n"),
                     key=lambda n: (-len(n), n))
_RARE = re.compile("|".join(map(re.escape, _RARE_MARKS)))
_RARE_WORDS = tuple(sorted(_RARE_NEEDLES.difference(_RARE_MARKS)))
#: ``_CLEAN`` with each step's needles split into rare ones (looked up in the set the
#: scan found) and common ones (looked for in the text).
#: A step's one common needle stands apart (27 of the 38 have exactly one): looked for
#: without a generator, which was a fifth of ``plain_text``'s time on a chunk.
_STEPS = [(frozenset(n for n in needles if n in _RARE_NEEDLES),
           common[0] if len(common) == 1 else None, common if len(common) > 1 else (),
           pattern, replacement)
          for needles, pattern, replacement in _CLEAN
          for common in [tuple(n for n in needles if n not in _RARE_NEEDLES)]]


def plain_text(text: str, lead: str = "") -> str:
    """The text a reader of the rendered page sees, line structure kept: code as
    written, comments and dialect markup gone (see the module docstring). Emphasis,
    heading hashes, list bullets and quote markers stay: the analyzer splits them off,
    and snippets strip them (``ra.query.snippets.strip_markdown``). ``lead``: the list
    item the text goes on with (``list_lead``)."""
    return plain_text_aside(*_prepare(text, lead=lead))


def plain_text_aside(prepared: str, codes: list[str]) -> str:
    """``plain_text`` of a text whose code is set aside already: ``prepared, codes =
    set_code_aside(text)``."""
    return _restore(plain_held(prepared), codes)


def plain_held(prepared: str) -> str:
    """``plain_text_aside`` but with the code still behind its placeholders: put it back
    with :func:`restore`, or hand both to :func:`reader_line`."""
    brackets = "\\[" in prepared or "\\]" in prepared  # escaped: no link (``strip_syntax``)
    if brackets:
        prepared = prepared.replace("\\[", _HELD_BRACKETS[0]).replace("\\]", _HELD_BRACKETS[1])
    prepared = mdc_slots(f"\n{prepared}\n")
    rare = set(_RARE.findall(prepared))  # one scan for the syntax most texts lack
    rare.update(n for n in _RARE_WORDS if n in prepared)
    for rare_needles, needle, needles, pattern, replacement in _STEPS:
        if (needle in prepared if needle is not None else (
                needles and any(n in prepared for n in needles))) or (
                rare_needles and not rare_needles.isdisjoint(rare)):
            prepared = pattern.sub(replacement, prepared)
    if "&" in prepared:
        prepared = html.unescape(prepared)
    if brackets:
        prepared = prepared.replace(_HELD_BRACKETS[0], "\\[").replace(_HELD_BRACKETS[1], "\\]")
    return prepared[1:-1]


#: CommonMark's backslash escape: the ASCII punctuation after it is that character, no
#: syntax (``ra.text.links`` reads a target's so). ``strip_syntax`` holds each in Unicode's
#: private use plane A meanwhile, ``plain_held`` the escaped brackets (GitBook's
#: "\[1\](note)" is no link to the dialects' patterns), written back as they were.
BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_HELD = 0xF0000
_RELEASED = {_HELD + c: chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum()}
_HELD_BRACKETS = (chr(_HELD + ord("[")), chr(_HELD + ord("]")))


# ------------------------------------------------------------------------ inline #tags

_EMOJI = "\u2600-\u27bf\U0001f300-\U0001faff"
_TAG = re.compile(rf"#(?<!\S#)([\w{_EMOJI}][\w/{_EMOJI}-]*)")  # literal first: see _CLEAN
#: digits only (an issue number), or a colour: hex digits, at least one of them a digit,
#: or letters that repeat as a colour's do (``#fff``, ``#ffffffff``, ``#fafafa``,
#: ``#ffeedd``; Electron's pages list them: every page was tagged "fff" and "ffff"), not
#: as a word's (``#facade``, ``#add``)
_NO_TAG = re.compile(r"[\d/]+|(?=[a-fA-F]*\d)(?:[\da-fA-F]{3,4}|[\da-fA-F]{6}|[\da-fA-F]{8})"
                     r"|(?=(?:.{3,4}|.{6}|.{8})\Z)(?i:([a-f]+)\1+|(?:([a-f])\2)+)")
_NOT_TAGS = (_ANY_ATTRS, re.compile(r"\]\([^)\n]*\)"),
             re.compile(r"^[ \t]*\[[^\]\n]+\]:[^\n]*", re.M))


def inline_tags(text: str) -> list[str]:
    """Obsidian-style ``#tags`` in ``text``, in order, without repeats: a ``#`` after
    whitespace followed by letters, digits, ``_``, ``-``,
    ``/`` or emoji, at least one of them not a digit (``#929`` is an issue, not a tag;
    ``#FF0000`` and ``#fff`` colours). Code, comments, link destinations and attribute lists hold
    none; a heading's ``# `` has a space after it."""
    if "#" not in text or not _TAG.search(text):
        return []
    prepared, _ = _prepare(_blank_highlights(text))
    prepared = mdc_slots(prepared)
    for pattern in _NOT_TAGS:  # { #id }, [x](#anchor), [ref]: #anchor
        prepared = pattern.sub(" ", prepared)
    if "#" not in prepared:
        return []
    tags = (t.rstrip("/-") for t in _TAG.findall(prepared))
    return list(dict.fromkeys(t for t in tags if t and not _NO_TAG.fullmatch(t)))


# ------------------------------------------------------------------- one line of text

#: (needles, pattern, replacement), applied in order to the text after a newline, each
#: only to a text that holds one of its needles (every match does; ``in`` finds them at
#: memchr speed, where the pattern tried each line: the chunks of cpp-docs 0.52 -> 0.38 s;
#: no needles: always). Line patterns match from the newline before the line, not ``^``
#: in multiline mode: a literal first character lets the regex engine skip to the next
#: newline (3x faster, same result).
_SYNTAX = [
    (("```", "~~~"), re.compile(r"\n[ \t]*(?:```|~~~)[^\n]*"), "\n"),  # code fence lines
    (("#",), re.compile(r"\n[ \t]{0,3}#{1,6}[ \t]+"), "\n"),  # heading hashes
    ((">",), re.compile(r"\n[ \t]*(?:>[ \t]?)+"), "\n"),  # blockquote markers, nested too
    ((), re.compile(r"\n[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+"), "\n"),  # list bullets
    # link targets; emphasis and inline code. Every alternative begins with a literal
    # (``\*\**``, not ``\*+``), so the regex engine skips to the next of those characters
    # at C speed (``!?\[`` and a lookahead first made it try each one: 2.2x and 2.8x
    # slower on the text of cpp-docs' snippets)
    (("[",), re.compile(r"(?:!\[|\[)([^\[\]\n]*)\](?:\([^)\n]*\)|\[[^\[\]\n]*\])"),
     r"\1"),
    (("*", "~~", "`", "_"), re.compile(r"\*\**|~~|``*|_(?<![^\W_]_)_*|__*(?![^\W_])"), ""),
]


def strip_syntax(text: str) -> str:
    """``text`` with CommonMark's own syntax stripped (``_SYNTAX``), as one line. A
    backslash escape is the character it escapes (GitBook writes "NT hash \\(or AES
    key\\)", "my\\_var", "\\*args": the page shows "(", "_", "*"); keep code behind
    placeholders meanwhile (``reader_line``): there a backslash is a backslash."""
    return " ".join(_stripped(text).split())  # whitespace collapsed (str.split: re's \s,
    # 4x faster than a pattern)


def _stripped(text: str) -> str:
    """``strip_syntax`` but for collapsing the whitespace."""
    escaped = "\\" in text
    if escaped:
        text = BACKSLASH_ESCAPE.sub(lambda m: chr(_HELD + ord(m.group(1))), text)
    text = "\n" + text
    for needles, pattern, replacement in _SYNTAX:
        if not needles or any(n in text for n in needles):
            text = pattern.sub(replacement, text)
    return text.translate(_RELEASED) if escaped else text


def reader_line(title: str | None, body: str, markdown: bool = True,
                codes: list[str] | None = None) -> str:
    """What a reader sees of a chunk's own text, as one line: its heading's ``title``
    (None for a document's own node, which has no heading line) and its ``body``'s
    ``plain_text`` (a plain text file's body as it is), CommonMark's syntax stripped
    (``strip_syntax``). ``codes``: the body is ``plain_held``'s, its code behind
    placeholders, and the code is put back as written once the syntax is stripped (its
    ``*``, ``_`` and backslashes are no syntax). The chunk stage stores it
    (``chunks.plain``), so a snippet is cut from it without reading the markup again
    (``ra.query.snippets.snippet_of``)."""
    text = body if title is None else f"{title}\n{body}"
    if not markdown:
        return " ".join(text.split())
    if not codes:
        return strip_syntax(text)
    line = _restore(_stripped(text), codes)
    if "```" in line or "~~~" in line:  # a fence inside code (SuperFences' tabs) leaves
        _, fences, to = _SYNTAX[0]
        line = fences.sub(to, "\n" + line)
    return " ".join(line.split())
