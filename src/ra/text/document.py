"""Parse one file into a document and its hierarchical chunk tree. Pure: text in, nodes out.

The phases run in this order, and the order matters:

1. **Frontmatter** (``---`` YAML ``---``) is split off *before* headings are looked for, so
   it can never turn into a fake setext heading (DESIGN deviation 4). Broken YAML is
   reported as a problem and the block is still removed.
2. **Headings** are found by mistletoe's CommonMark block parser (``ra.text.headings``), so
   ``#`` lines inside code fences, HTML blocks or indented code are not headings, setext
   headings are, and headings inside block quotes and list items count as the original's
   parser counts them.
3. **Spans** follow the specification: a heading's span runs from the byte after its line
   (and one blank line) to the next heading of equal or higher level; headings whose span
   is empty are dropped. The parent of a heading is the nearest preceding surviving
   heading of a lower level, else the document node, so spans nest.
4. **Slugs** are GitHub-style and keep Unicode letters (deviation 6); every heading gets
   one in document order, like GitHub anchors, and no slug repeats within a document. A
   heading that declares its id (``## Title { #id }``: mkdocs, pandoc, kramdown, Hugo,
   Docusaurus) gets that id, so ``tree:path#id`` is the anchor the page itself declares;
   declared ids are reserved first, and a repeated one is numbered like any slug.

Markdown as written for site generators and note apps is read for its text
(``ra.text.markup``): a ``#`` line inside an Obsidian ``%%`` comment or an MDX ``{/* */}``
comment is no heading, inline ``#tags`` join the frontmatter tags, and Hugo's TOML
frontmatter (``+++``) and MultiMarkdown's unfenced ``key: value`` block (Python-Markdown's
``meta`` extension) are read like YAML frontmatter.

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
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from ra.text import is_markdown, unescaped
from ra.text.headings import (
    Found,
    Lines,
    as_sites_read,
    byte_offsets,
    first_h1,
    scan_headings,
    utf8_len,
)
from ra.text.ids import format_chunk_id, format_doc_id, slugify
from ra.text.markup import (
    PAGE_TITLE,
    RFC_PART,
    comment_anchor,
    inline_tags,
    kramdown_anchor,
    load_yaml,
    mask_comments,
)

BREADCRUMB_SEPARATOR = " › "


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
    #: the files this note is about, as globs from its front matter (``APPLIES_TO``)
    applies_to: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return format_doc_id(self.tree, self.path)

    def content(self, node: Node) -> str:
        """The node's markdown with its subsections: heading and body of the whole subtree."""
        subtree = self.nodes[node.position : node.position + node.descendants + 1]
        return "".join(n.heading + n.body for n in subtree)


def parse_document(text: str, tree: str, path: str, *,
                   chunk_at_headings: bool = True) -> Document:
    """Parse a file's text; never raises. ``.md``/``.markdown`` are markdown, all else text."""
    if not is_markdown(path):
        title = _stem(path)
        nodes = build_chunk_tree(text, tree, path, title, headings=[])
        return Document(tree, path, "text", title, (), None,
                        "archived" if in_archive(path) else None, {}, nodes)
    data, body_at, problems = _split_frontmatter(text)
    body = text[body_at:]
    lines = Lines(mask_comments(body))  # the same lines, comments blanked
    headings, scan_problems = scan_headings(lines)
    headings = as_sites_read(lines, headings)
    if "{/*" in body:
        headings = _comment_ids(headings, Lines(body))
    if "{:" in body:
        headings = _ial_ids(headings, lines)
    meta = _metadata(data or {})
    headings = _page_titles(headings, meta["title"] or _stem(path), data or {})
    title = (meta["title"] or first_h1(headings, lines) or _shown_heading(headings, data or {})
             or meta["other_title"] or _stem(path))
    nodes = build_chunk_tree(body, tree, path, title, base=utf8_len(text[:body_at]),
                             headings=headings if chunk_at_headings else [], lines=lines)
    tags = tuple(dict.fromkeys([*meta["tags"], *inline_tags(body)]))
    status = meta["status"] or ("archived" if in_archive(path) else None)
    return Document(tree, path, "markdown", title, tags, meta["description"],
                    status, data or {}, nodes, tuple(problems + scan_problems),
                    applies_to(data or {}) or skill_folders(path, meta["description"]))


#: Folders that keep what is no longer current: their pages are archived, as a page whose
#: front matter says ``status: archived`` (searched with ``--include-archived``)
ARCHIVE_FOLDERS = frozenset({"archive", "archived"})


def in_archive(path: str) -> bool:
    """Whether ``path`` is in an archive's folder (``ARCHIVE_FOLDERS``): the HTTP working
    group's ``archive/`` of 34 superseded drafts outranked the current ones ("SameSite
    Strict vs Lax": the archived ``cookie-same-site.md`` above ``rfc6265bis.md``); Google
    Cloud's community tutorials keep those no longer maintained in ``archived/``."""
    return any(part.lower() in ARCHIVE_FOLDERS for part in path.split("/")[:-1])


def _comment_ids(headings: list[Found], lines: Lines) -> list[Found]:
    """Headings whose line ends with an MDX comment that declares their id (Docusaurus'
    ``## Title {/* #id */}``, react.dev's ``## Title {/*id*/}``; ``markup.comment_anchor``)
    with that id: the comment was blanked before they were found (``mask_comments``)."""
    out = []
    for h in headings:
        anchor = None if h.anchor else next(
            (a for i in range(h.stop - 1, h.first - 1, -1)
             if (a := comment_anchor(lines.lines[i])) is not None), None)
        out.append(replace(h, anchor=anchor) if anchor else h)
    return out


def _ial_ids(headings: list[Found], lines: Lines) -> list[Found]:
    """Headings followed by a kramdown attribute list that declares their id (Jekyll's
    ``## 4.0.0 / 2019-08-19`` then ``{: #v4-0-0}``) with that id."""
    out = []
    for h in headings:
        line = lines.lines[h.stop] if not h.anchor and h.stop < len(lines) else ""
        anchor = kramdown_anchor(line) if line.lstrip().startswith("{:") else None
        out.append(replace(h, anchor=anchor) if anchor else h)
    return out


def _page_titles(headings: list[Found], title: str, data: dict) -> list[Found]:
    """A heading that prints the page's title (``# {{ page.title }}``, Markdoc's
    ``# {% $markdoc.frontmatter.title %}``) is that title, from the front matter (else the
    file's name, as the generators default it): its markup is no text. One that prints
    another value of the front matter is that value (Eleventy's ``# {{
    eleventyNavigation.key }}``)."""
    if not any("{" in h.text for h in headings):
        return headings
    out = []
    for h in headings:
        if PAGE_TITLE.fullmatch(h.text):
            h = replace(h, text=title)
        elif (found := _PRINTED.fullmatch(h.text)) and (value := _value_at(data, found[1])):
            h = replace(h, text=value)
        out.append(h)
    return out


#: A heading that prints one variable, ``{{ eleventyNavigation.key }}``
_PRINTED = re.compile(r"\{\{-?[ \t]*(?:page\.|\$frontmatter\.)?([A-Za-z_][\w.]*)[ \t]*-?\}\}")


def _value_at(data: dict, dotted: str) -> str | None:
    """The front matter's scalar at ``a.b.c``, else None."""
    value: Any = data
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return None if isinstance(value, dict | list) else _scalar(value)


# --------------------------------------------------------------------------- frontmatter

#: YAML, or TOML (Hugo, Zola); ``---js``, ``---json`` (Eleventy: front matter in another
#: language, ``language``)
_FENCE_OPEN = re.compile(r"(---|\+\+\+)(?P<language>js|javascript|json|ya?ml)?[ \t]*\r?\n")
#: kramdown-rfc (the IETF's drafts in markdown) ends its YAML at ``--- abstract`` (or the
#: first other part: ``RFC_PART``); read to a ``...`` in an example further down, a
#: draft lost its first 156 lines
_FENCE_CLOSE = {"---": re.compile(rf"^(?:---|\.\.\.|{RFC_PART})[ \t]*(?:\r?\n|\Z)",
                                  re.MULTILINE),
                "+++": re.compile(r"^\+\+\+[ \t]*(?:\r?\n|\Z)", re.MULTILINE)}
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")


def parse_frontmatter(text: str) -> tuple[dict | None, str, list[str]]:
    """Split YAML (or ``+++`` TOML) frontmatter off ``text``: (mapping or None, remaining
    text, problems).

    Without a frontmatter block the text comes back unchanged. A block whose YAML is
    broken yields None and a problem, and is still removed from the remaining text.
    """
    data, body_at, problems = _split_frontmatter(text)
    return data, text[body_at:], problems


def _split_frontmatter(text: str) -> tuple[dict | None, int, list[str]]:
    """(mapping or None, index where the body starts, problems)."""
    start = 1 if text.startswith("\ufeff") else 0
    opening = _FENCE_OPEN.match(text, start)
    if opening is None and (after := _BLANK_LINES.match(text, start).end()) > start:
        toml = _FENCE_OPEN.match(text, after)  # Zola reads TOML after blank lines too
        opening = toml if toml is not None and toml.group(1) == "+++" else None
    if not opening:
        return _meta_block(text, start)
    closing = _FENCE_CLOSE[opening.group(1)].search(text, opening.end())
    if not closing:
        return None, 0, []
    source = text[opening.end() : closing.start()]
    body_at = _BLANK_LINES.match(text, closing.end()).end()
    if opening.group(1) == "+++":
        return _toml_frontmatter(source, body_at)
    if opening["language"] in ("js", "javascript"):
        return {}, body_at, []  # code that makes the data: nothing ra reads
    try:
        data = load_yaml(source)
    except Exception as error:  # noqa: BLE001 - any YAML failure is a problem, not a crash
        data = _glob_values(source)
        if data is None:
            flat = _flat_values(source)
            problem = f"frontmatter: invalid YAML{_yaml_line(error)}"
            if flat is None:
                return None, body_at, [problem]
            return flat, body_at, [f"{problem}; read as key: value lines"]
    if data is None:
        return _after_comments(text, source, body_at)
    if not isinstance(data, dict):
        return None, 0, []  # `---` rules around prose, not frontmatter
    return data, body_at, []


#: A line of a YAML comment, or a blank one
_COMMENT_LINE = re.compile(r"[ \t]*(?:#[^\n]*)?\r?\n?")


def _after_comments(text: str, source: str, body_at: int) -> tuple[dict, int, list[str]]:
    """The front matter of a page whose first ``---`` block holds YAML comments alone and
    is followed by a block of keys and their own ``---``: a generator's notice put
    before the page's front matter (Magic Modules' "AUTO GENERATED CODE", three pages of
    Terraform's Google provider, whose keys had been read as a heading). Else none."""
    if not source.strip() or not all(_COMMENT_LINE.fullmatch(line)
                                     for line in source.splitlines(keepends=True)):
        return {}, body_at, []
    closing = _FENCE_CLOSE["---"].search(text, body_at)
    if closing is None:
        return {}, body_at, []
    try:
        data = load_yaml(text[body_at:closing.start()])
    except Exception:  # noqa: BLE001 - prose, not keys
        return {}, body_at, []
    if not isinstance(data, dict) or not data:
        return {}, body_at, []
    return data, _BLANK_LINES.match(text, closing.end()).end(), []


#: a value that starts with a character YAML reserves or reads as an alias: a glob
#: (Cursor's ``globs: **/*.tsx``), PowerShell's alias ``%`` of ForEach-Object
_GLOB_VALUE = re.compile(r"^([ \t]*(?:-[ \t]+)?[\w.-]+:[ \t]+|[ \t]*-[ \t]+)([*%@`][^\n]*?)"
                         r"[ \t]*$", re.M)


def _glob_values(source: str) -> dict | None:
    """Front matter that is YAML but for values YAML refuses as they start (Cursor's
    rules: ``globs: **/*.tsx, src/*``, which Cursor reads as text and YAML as an alias;
    ``aliases: [-, %]``), read with those values as strings; None when it is still no
    YAML mapping."""
    if not any(c in source for c in "*%@`"):
        return None
    quoted = _GLOB_VALUE.sub(lambda m: m.group(1) + "'" + m.group(2).replace("'", "''") + "'",
                             source)
    try:
        data = load_yaml(quoted) if quoted != source else None
    except Exception:  # noqa: BLE001 - still broken: the caller reports the first error
        return None
    return data if isinstance(data, dict) else None


#: a line of front matter a line-by-line reader takes as ``key: value``
_FLAT_LINE = re.compile(r"([A-Za-z_][\w-]*):[ \t]+(\S.*?)[ \t]*")


def _flat_values(source: str) -> dict | None:
    """Front matter of ``key: value`` lines that YAML refuses for a value it reads as
    syntax (Svelte's ``title: bind:``, ``title: Reactive $: statements``; its site reads
    the block line by line; ``title: {#if ...}``), each value as text. None unless every
    line but blanks and comments is one, and no value opens a list, a mapping or a quote
    it does not close (``tags: [unclosed`` is broken YAML, not text)."""
    data = {}
    for line in source.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _FLAT_LINE.fullmatch(line.rstrip("\r"))
        if found is None:
            return None
        value = found.group(2)
        if value[0] in "|>&!" or value[0] in _CLOSERS and (
                len(value) < 2 or value[-1] != _CLOSERS[value[0]]):
            return None
        data[found.group(1)] = value
    return data or None


_CLOSERS = {"[": "]", "{": "}", '"': '"', "'": "'"}


_META_LINE = re.compile(r"([A-Za-z][\w -]*?)[ \t]*::?[ \t]*(.*)")  # Logseq's `title:: x`
_META_KEYS = {"title", "tags", "summary", "description"}


def _meta_block(text: str, start: int) -> tuple[dict | None, int, list[str]]:
    """MultiMarkdown metadata (Python-Markdown's ``meta`` extension, used by its own
    docs), or a Logseq page's properties (``title:: x``, ``tags:: [[a]], b``): ``key:
    value`` lines from the first line to a blank line, no fences. Taken
    only when every line of the block is one (or an indented continuation) and one key
    is title, tags, summary or description, so prose that opens with "Note: …" stays."""
    end = text.find("\n\n", start)
    if end < 0 or not _META_LINE.match(text, start):
        return None, 0, []
    data: dict[str, str] = {}
    key = None
    for line in text[start:end].split("\n"):
        found = _META_LINE.fullmatch(line.rstrip("\r"))
        if found:
            key = found.group(1).strip().lower()
            data[key] = found.group(2).strip()
        elif key and line.startswith(("    ", "\t")):
            data[key] = f"{data[key]} {line.strip()}".strip()
        else:
            return None, 0, []
    if not _META_KEYS & data.keys():
        return None, 0, []
    return data, _BLANK_LINES.match(text, end + 1).end(), []


def _toml_frontmatter(source: str, body_at: int) -> tuple[dict | None, int, list[str]]:
    import tomllib

    try:
        return tomllib.loads(source), body_at, []
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"at line (\d+)", str(error))
        where = f" (line {int(found.group(1)) + 1})" if found else ""  # +1 for '+++'
        return None, body_at, [f"frontmatter: invalid TOML{where}"]


def _yaml_line(error: Exception) -> str:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return f" (line {mark.line + 2})" if mark is not None else ""  # +1 for '---', 1-based


def _metadata(data: dict) -> dict[str, Any]:
    """title, tags, description and status, coerced from whatever the YAML holds; and
    ``other_title``, a title under another key, which a page without ``title`` and an
    h1 is given (``_other_title``)."""
    description = (_scalar(data.get("description")) or _scalar(data.get("summary"))
                   or _scalar(data.get("desc")))  # Dendron's notes: 216 of its site's
    status = _scalar(data.get("status"))
    # a page's search keywords are tags: Mintlify, Docusaurus and Hugo write ``keywords:``
    # for their sites' search ("white label" only in custom-portal.mdx's keywords)
    tags = tuple(dict.fromkeys((*_tags(data.get("tags")), *_tags(data.get("keywords")))))
    return {"title": _scalar(data.get("title")), "tags": tags,
            "description": description, "status": status.lower() if status else None,
            "other_title": _other_title(data)}


def _shown_heading(headings: list[Found], data: dict) -> str | None:
    """The first heading of a page whose front matter hides its title (Docusaurus'
    ``hide_title: true``): the page shows that heading as its title (api-documenter's
    ``## JsonFile.load() method``)."""
    if data.get("hide_title") is True and headings and headings[0].text:
        return headings[0].text
    return None


def _other_title(data: dict) -> str | None:
    """The first value under a key that ends with "title" but a subtitle (Eleventy's
    site: ``pageTitle``, ``tiptitle``, ``newstitle``, ``headerTitle``; Hugo's
    ``linkTitle``), else a navigation entry's title or key (``eleventyNavigation: {key:
    Collections API}``, Nuxt Content's ``navigation: {title: ...}``): the title its site
    shows. 124 of the 231 pages of Eleventy's site had one and were titled by their
    files' names. A flag is no title: api-documenter's 3,211 pages, ``hide_title: true``
    with a ``##`` heading, were each titled "True"."""
    for key, value in data.items():
        name = key.lower().replace("_", "").replace("-", "") if isinstance(key, str) else ""
        if (name.endswith("title") and name != "subtitle" and not isinstance(value, bool)
                and (title := _scalar(value))):  # Docusaurus' ``hide_title: true`` is none
            return title
    for key in ("eleventyNavigation", "navigation"):
        if isinstance(nav := data.get(key), dict) and (
                title := _scalar(nav.get("title")) or _scalar(nav.get("key"))):
            return title
    return _scalar(data.get("name"))  # an agent skill's (SKILL.md), Ember's RFC stages


#: Front matter keys that name the files a note is about, as globs: Cursor's and
#: Windsurf's rules (``globs: **/*.tsx, src/*``), Claude Code's (``paths:`` a list),
#: GitHub Copilot's instructions (``applyTo: "**/*.ts,**/*.tsx"``), Kiro's steering
#: (``fileMatchPattern``)
APPLIES_TO = ("globs", "paths", "applyTo", "fileMatchPattern")
_GLOB_COMMA = re.compile(r",(?![^{]*\})")  # a comma between globs, not in {ts,tsx}


def applies_to(data: dict) -> tuple[str, ...]:
    """The globs of ``APPLIES_TO`` in ``data``: strings (comma-separated) or lists of them."""
    out: list[str] = []
    for key in APPLIES_TO:
        value = data.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                out += (g.strip().strip("\"'").strip() for g in _GLOB_COMMA.split(item))
    return tuple(dict.fromkeys(g for g in out if g))


#: A folder of the project named in a skill's description: a relative path ending with
#: "/" (``src/content/learn/``, ``app/api/``), not part of a URL, an absolute path (a
#: skill's ``/name`` is a command), a home or a variable's one, or one a placeholder goes on
#: (``content/<lang>/``: a skill on making a folder, not on its files); ``./`` aside.
_NAMED_FOLDER = re.compile(r"(?<![\w./~$:%-])(?:\./)?((?:[\w.-]+/)+)(?![\w/<{\[*$])")


def skill_folders(path: str, description: str | None) -> tuple[str, ...]:
    """The folders an agent skill's ``description`` names, as globs of what is below them
    (``src/content/learn/**``): the Agent Skills of Claude Code, Codex and Copilot
    (``<name>/SKILL.md``) say when to use them in their description, and when that is
    "editing files in src/content/learn/", they are about those files as a rule whose
    ``paths`` say so. Other documents' descriptions describe them, not what they apply
    to: none."""
    if not description or PurePosixPath(path).name.lower() != "skill.md":
        return ()
    folders = (m.group(1) for m in _NAMED_FOLDER.finditer(description))
    return tuple(dict.fromkeys(f"{f}**" for f in folders if ".." not in f.split("/")))


def _scalar(value: Any) -> str | None:
    """A frontmatter value as a string: numbers and dates as written, a flat list joined,
    text in braces as written (Svelte's ``title: {let/const ...}``, which YAML reads as a
    mapping of one key and no value).

    Nested lists are not followed: YAML aliases can nest them exponentially deep.
    """
    if isinstance(value, list):
        value = ", ".join(filter(None, (_scalar(v) for v in value if not isinstance(v, list))))
    if isinstance(value, dict) and len(value) == 1 and None in value.values():
        value = f"{{{next(iter(value))}}}"
    if value is None or isinstance(value, dict):
        return None
    return str(value).strip() or None


def _tags(value: Any) -> tuple[str, ...]:
    """A YAML list, a comma-separated string (Obsidian), or `#tag` words, as clean tags;
    a Logseq page link (``[[multi word]]``, ``#[[x]]``) is its name."""
    if value is None or isinstance(value, dict):
        return ()
    if isinstance(value, list):
        items = value
    elif "," not in str(value) and str(value).lstrip().startswith("#"):
        items = str(value).split()  # "#rust #cli"
    else:
        items = str(value).split(",")
    tags = (_scalar(item) for item in items if not isinstance(item, (list, dict)))
    cleaned = (tag.lstrip("#").removeprefix("[[").removesuffix("]]").strip()
               for tag in tags if tag)
    return tuple(dict.fromkeys(tag for tag in cleaned if tag))


_FOLDER_PAGES = frozenset({"index", "_index", "readme"})


def _stem(path: str) -> str:
    """A file's title when nothing else names it: its name without the suffix, dashes
    read as spaces in a name written in capitals and without spaces (a wiki's page
    "Getting Started" is ``Getting-Started.md`` in GitHub's and Azure DevOps' wikis; a
    lowercase slug, ``ch04-01-what-is-ownership``, stays as it is), URL escapes decoded
    after (Azure DevOps stores "ODO-1 (SI)" as ``ODO%2D1-(SI).md``). A folder's page
    (``index``, ``_index``, ``README``) is named for its folder, as a site shows it
    (Zola's ``documentation/_index.md`` was titled "_index"). A language's suffix is not
    the page's name (Nextra's ``llama.en.mdx`` was "llama.en", ``index.fr.md`` "index.fr"),
    nor the ``.html`` of a page a site builds as one (Middleman's and Terraform's docs,
    ``storage_bucket.html.markdown``). Logseq names a namespaced page's file with ``___``
    for its slashes (``Whiteboard___Tool___Portal.md`` is "Whiteboard/Tool/Portal"; its
    older ``%2F`` is decoded as an escape)."""
    from ra.text.languages import names_language  # not at start-up: its word lists

    at = PurePosixPath(path)
    if len(at.stem) > 5 and at.stem.lower().endswith(".html"):
        at = at.with_name(at.stem[:-5] + at.suffix)
    name, dot, language = at.stem.rpartition(".")
    name = name if dot and name and names_language(language) else at.stem
    stem = (at.parent.name if name.lower() in _FOLDER_PAGES and at.parent.name
            else name) or path
    if "-" in stem and " " not in stem.strip() and any(c.isupper() for c in stem):
        stem = " ".join(stem.replace("-", " ").split()) or stem
    if "___" in stem.strip("_"):
        stem = "/".join(part for part in stem.split("___") if part) or stem
    return unescaped(stem)


# ---------------------------------------------------------------------------------- slugs

class Slugifier:
    """Slugs for the headings of one document, never the same slug twice."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next: dict[str, int] = {}

    def reserve(self, slug: str) -> None:
        """Mark a slug as taken, so that no heading gets it."""
        self._used.add(slug)

    def slug(self, heading_text: str) -> str:
        return self.unique(slugify(heading_text))

    def unique(self, base: str) -> str:
        """``base``, or ``base-N`` with the first free N."""
        slug = base
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
                     headings: list[Found] | None = None,
                     lines: Lines | None = None) -> tuple[Node, ...]:
    """The nodes of ``text`` in preorder; byte offsets start at ``base``.

    ``headings`` defaults to the headings of ``text``; pass ``[]`` for a single node.
    """
    if headings is None:
        lines = lines or Lines(text)
        headings = as_sites_read(lines, scan_headings(lines)[0])
    doc, size = format_doc_id(tree, path), len(text)
    spans = _spans(headings, lines or Lines(text)) if headings else []
    root = _Draft(doc, None, None, 0, doc_title, [doc_title], 0, 0, size)
    drafts, stack, slugger = [root], [root], Slugifier()
    declared = _declared(headings, slugger)
    for i, (found, (heading_start, start, end)) in enumerate(zip(headings, spans, strict=True)):
        # dropped headings keep their slug, like anchors
        slug = (found.anchor if declared.get(found.anchor) == i
                else slugger.unique(found.anchor) if found.anchor else slugger.slug(found.text))
        if start >= end:
            continue  # empty span: the heading is dropped
        while stack[-1].depth >= found.level:
            stack.pop()
        parent = stack[-1]
        parent.children += 1
        # under the page itself, a heading that repeats its title is no crumb, at any
        # level (a page that hides its title shows its first ``##``: api-documenter's)
        crumbs = parent.crumbs + breadcrumb(
            doc_title, [(1 if parent.parent is None else found.level, found.text)])[1:]
        draft = _Draft(format_chunk_id(tree, path, slug), parent, slug, found.level,
                       found.text, crumbs, heading_start, start, end)
        drafts.append(draft)
        stack.append(draft)
    return _freeze(drafts, text, base)


def _declared(headings: list[Found], slugger: Slugifier) -> dict[str, int]:
    """Reserve each declared id for the first heading that declares it: ``id → index``."""
    first: dict[str, int] = {}
    for i, found in enumerate(headings):
        if found.anchor and found.anchor not in first:
            first[found.anchor] = i
            slugger.reserve(found.anchor)
    return first


def _spans(headings: list[Found], lines: Lines) -> list[tuple[int, int, int]]:
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
    to_bytes = byte_offsets(text, base, [o for d in drafts
                                          for o in (d.heading_start, d.start, d.end)])
    doc = drafts[0].id
    return tuple(
        Node(d.id, doc, d.parent.id if d.parent else None, d.slug, d.depth, position,
             d.parent.children if d.parent else 1, d.last - position, d.title,
             BREADCRUMB_SEPARATOR.join(d.crumbs), text[d.heading_start : d.start],
             text[d.start : body_end], to_bytes[d.start], to_bytes[d.end],
             to_bytes[d.heading_start])
        for position, (d, body_end) in enumerate(zip(drafts, body_ends, strict=True)))

