"""The outgoing links of a document's chunks, and where each may point. Pure.

Links are what the author wrote, read as the site generator or note app reads them:

- markdown links ``[text](target "title")``, reference links ``[text][ref]`` and
  ``[ref]`` whose definition ``[ref]: target`` is anywhere in the document, and autolinks
  ``<https://…>``; images are not links;
- wiki links ``[[target#heading|alias]]`` and embeds ``![[note]]`` (Obsidian, Foam,
  Quartz), images among embeds left out;
- Hugo's ``{{< ref "path" >}}`` / ``relref`` as a link's target;
- HTML anchors and JSX links (``<a href="x.md">``, ``<Link to="/docs/x">``), and Nuxt
  MDC's components that link a page (``::read-more{to="/docs/x"}``).

Links inside code (spans and fenced blocks) and comments are examples, not links
(``ra.text.markup.set_code_aside``).

Each link's target is normalised here, from the source document alone, into what a
resolver needs (:class:`Target`): whether it is external, the tree-relative paths it may
name in order of preference (``../install`` may be ``install.md``, ``install/index.md``,
…; ``page.html`` is the ``page.md`` it was built from), the file name a wiki link names
anywhere in the vault, and the anchor slugs. Which of them is indexed is decided when
the index is read (the ``links`` view, ``ra.index.links``), so that an incremental
update, which re-reads only changed files, leaves every link right.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from ra.text import MARKDOWN_SUFFIXES
from ra.text.document import Document, slugify
from ra.text.markup import (
    BACKSLASH_ESCAPE,
    LINK_TEXT,
    WIKI_LINK,
    heading_anchors,
    heading_id_link,
    own_codes,
    plain_held,
    reader_line,
    safe_id,
    set_code_aside,
    set_code_aside_before,
    wiki_parts,
    wiki_target,
)

#: The markdown files a link without a suffix (or to an ``.html`` page) may name, as their
#: names are spelled (R Markdown's is ``.Rmd``), preferred first
MARKDOWN = (".md", ".mdx", ".markdown", ".mdoc", ".qmd", ".Rmd")
_PAGE = (".html", ".htm")
#: a folder's page
_INDEX = ("index.md", "README.md", "_index.md", "index.mdx", "index.mdoc", "index.qmd")
_MEDIA = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|pdf|mp[34]|webm|mov|ogg|wav|zip)$", re.I)


@dataclass(frozen=True)
class Link:
    """One link as written in a chunk."""

    kind: str  # link | wiki | embed
    text: str  # what the reader sees
    target: str  # as written


@dataclass(frozen=True)
class Target:
    """Where a link may point, seen from the document that holds it."""

    external: bool  # a URL with a scheme (https:, mailto:, …) or //host
    paths: tuple[str, ...] = ()  # tree-relative candidates, preferred first
    name: str | None = None  # a wiki link's file name, matched anywhere in the tree
    anchors: tuple[str, ...] = ()  # candidate slugs of the heading, preferred first


# --------------------------------------------------------------------------- extraction

#: link text may wrap, not across a blank line (``ra.text.markup.LINK_TEXT``)
_LABEL = LINK_TEXT
#: Jekyll's Liquid in a target: ``{% link docs/x.md %}``, ``{{ site.baseurl }}/docs/x/``
_LIQUID = r"(?:\{%[^%\n]*%\}|\{\{[^{}<%\n][^{}\n]*\}\})+(?:[^\s()]|\([^\s()]*\))*"
_DEST = (rf"(?:<[^<>\n]*>|{_LIQUID}|(?:[^\s()]|\((?:[^\s()])*\))+"
         r"|\{\{[<%][^\n]*?[%>]\}\})")
#: An image's ``![`` or a link's ``[``, spelled as two literal alternatives rather than
#: ``!?\[`` so that the regex engine skips to the next ``!`` or ``[`` (an optional first
#: character leaves it trying every position: twice as slow); a match starting with
#: ``!`` is an image.
_INLINE = re.compile(rf"(?:!\[|\[)({_LABEL})\]\(\s*({_DEST})(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|"
                     rf"\([^()\n]*\)))?\s*\)")
_REFERENCE = re.compile(rf"(?:!\[|\[)({_LABEL})\](?:\[([^\[\]\n]*)\])?(?![(:])")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>")
#: a reference definition ``[label]: target``; ``[^1]: …`` is a footnote's text, no link
_DEFINITION = re.compile(rf"^[ \t]{{0,3}}\[(?!\^)([^\]\n]+)\]:[ \t]*(?:<?({_LIQUID}|[^\s>]+)>?)",
                         re.M)
_HUGO_REF = re.compile(r"\{\{[<%]\s*(?:rel)?ref\s+\"?([^\"\s%>]+)\"?\s*[%>]\}\}")
#: An HTML anchor or a JSX link (Docusaurus' and Next.js' ``<Link>``), its target quoted:
#: ``<a href="../install.md">the guide</a>``, ``<Link to="/docs/intro">Intro</Link>``; its
#: text within the paragraph, tags inside it dropped
_TAG_LINK = re.compile(r"<(a|Link)\s[^<>]*?\b(?:href|to)\s*=\s*([\"'])([^\"'<>\s]+)\2[^<>]*>"
                       r"((?:(?!</?\1[\s>])[^\n]|\n(?![ \t]*\n))*?)</\1\s*>")
_TAG = re.compile(r"<[^<>\n]*>")
#: A component of Nuxt's MDC that links a page by its ``to``: ``::read-more{to="/docs/x"}``,
#: ``:link-example{to="..."}``, ``::card{title="..." to="..."}``, inline with its text as
#: ``:name[text]{to="..."}``
_COMPONENT_LINK = re.compile(r"(?<![\w:]):{1,4}([A-Za-z][\w-]*)(?:\[([^\[\]\n]*)\])?"
                             r"\{([^{}\n]*?\bto=([\"'])([^\"'\s]+)\4[^{}\n]*)\}")
_TITLE = re.compile(r"\btitle=([\"'])([^\"'\n]*)\1")


def document_links(doc: Document, asides: Sequence[tuple[str, list[str]]] | None = None
                   ) -> list[list[Link]]:
    """The links of each node of ``doc`` (heading line and own text), in node order.
    ``asides``: ``set_code_aside`` of each node's body, when the caller has them."""
    if doc.kind != "markdown":
        return [[] for _ in doc.nodes]
    definitions = _definitions("".join(n.heading + n.body for n in doc.nodes))
    if asides is None:
        return [_links(node.heading + node.body, definitions) for node in doc.nodes]
    return [_links(node.heading + node.body, definitions, (node.heading, node.body, aside))
            for node, aside in zip(doc.nodes, asides, strict=True)]


def _definitions(text: str) -> dict[str, str]:
    """Reference definitions of a document: normalised label → target."""
    if "]:" not in text:  # most documents have none: no pass over the whole text
        return {}
    prepared, _ = set_code_aside(text)
    out: dict[str, str] = {}
    for label, target in _DEFINITION.findall(prepared):
        out.setdefault(_label(label), target)
    return out


def _label(label: str) -> str:
    return " ".join(label.lower().split())


def _links(text: str, definitions: dict[str, str], parts: tuple | None = None
           ) -> list[Link]:
    """The links of ``text``; ``parts``: ``(head, body, set_code_aside(body))`` when
    ``text`` is ``head + body``."""
    if "[" not in text and "<" not in text and "to=" not in text:
        return []
    prepared, codes = (set_code_aside(text) if parts is None
                       else set_code_aside_before(*parts))
    found: list[tuple[int, Link]] = []
    taken: list[tuple[int, int]] = []  # spans already read as a link

    def add(m: re.Match, link: Link | None) -> None:
        taken.append(m.span())
        if link is not None:
            found.append((m.start(), link))

    for m in WIKI_LINK.finditer(prepared) if "[[" in prepared else ():
        add(m, _wiki(m, codes))
    # an inline link can start inside a wiki link, never inside another inline link (the
    # matches of one finditer do not overlap): checked against every link before it, a
    # chunk of 60,000 links took a minute and a half
    wikis = taken[:]
    for m in _INLINE.finditer(prepared) if "](" in prepared else ():
        if wikis and _inside(m.start(), wikis):
            continue
        add(m, None if _image(m) else Link("link", _shown(m.group(1), codes),
                                            m.group(2).strip("<>")))
    # a reference link needs a definition: most documents have none
    for m in _REFERENCE.finditer(prepared) if definitions else ():
        target = definitions.get(_label(m.group(2) or m.group(1)))
        if target and not _image(m) and not _inside(m.start(), taken):
            add(m, Link("link", _shown(m.group(1), codes), target))
    for m in _AUTOLINK.finditer(prepared) if "<" in prepared else ():
        add(m, Link("link", m.group(1), m.group(1)))
    tags = ("href" in prepared or "to=" in prepared) and (
        "<a " in prepared or "<Link" in prepared)  # not cpp-docs' <a name="..."> anchors
    for m in _TAG_LINK.finditer(prepared) if tags else ():
        # one without text (a permalink's icon, an image) is no link a reader follows
        if not _inside(m.start(), taken):
            shown = _shown(_TAG.sub(" ", m.group(4)), codes)
            add(m, Link("link", shown, m.group(3)) if shown else None)
    for m in _COMPONENT_LINK.finditer(prepared) if "to=" in prepared else ():
        title = _TITLE.search(m.group(3))
        shown = m.group(2) or (title.group(2) if title else m.group(1).replace("-", " "))
        add(m, Link("link", _shown(shown, codes) or m.group(5), m.group(5)))
    return [link for _, link in sorted(found, key=lambda pair: pair[0])]


def _image(m: re.Match) -> bool:
    return m.string.startswith("!", m.start())


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= at < end for start, end in spans)


#: GitLab's and Azure DevOps' markers of a table of contents, and of a page's subpages
_TABLES = ("_toc_", "_tosp_", "toc")  # and markdown-it's [[toc]]


def _wiki(m: re.Match, codes: list[str]) -> Link | None:
    if heading_id_link(m):
        return None  # doc-builder's id of a heading, or its notebook button
    embed = m.group(1)
    target, alias = wiki_parts(wiki_target(m.group(2)), m.group(3))
    if target.lower() in _TABLES:
        return None  # where the wiki shows a table of contents, no page
    if embed and _MEDIA.search(target.split("#")[0]):
        return None  # an embedded image is no link
    shown = alias.strip() if alias and alias.strip() else " ".join(
        p.strip() for p in target.split("#") if p.strip())
    return Link("embed" if embed else "wiki", _shown(shown, codes), target)


def _shown(text: str, codes: list[str]) -> str:
    """A link's text as a reader sees it: markup and emphasis gone, backslash escapes
    read, code as written (``reader_line``: "my\\_var" was "my\\var", `__init__` "init"),
    spaces collapsed."""
    return _visible(*own_codes(text, codes))


@lru_cache(maxsize=8192)
def _visible(text: str, codes: tuple[str, ...]) -> str:
    """``_shown`` of a text with its own code (``own_codes``). Cached: link texts repeat
    across a corpus (names of functions, pages, "Microsoft Learn"), and reading one's
    markup per link was a third of the links' share of a build."""
    return reader_line(None, plain_held(text), codes=list(codes))


# ------------------------------------------------------------ anchors and declared addresses

def section_anchors(doc: Document) -> list[tuple[str, list[str]]]:
    """``anchored_bodies`` of the nodes of ``doc``."""
    return anchored_bodies([n.body for n in doc.nodes], doc.kind == "markdown")


def anchored_bodies(bodies: Sequence[str], markdown: bool = True
                    ) -> list[tuple[str, list[str]]]:
    """For each body of one document's nodes, in order: the body as its chunk reads it,
    and the ids that anchors alone above its heading give it
    (``ra.text.markup.heading_anchors``; those of the anchors a body keeps are its
    ``ra.text.markup.anchor_ids``). The anchors above a heading leave the body of the node before,
    whose text they are not: mdBook's ``<a id="c-case"></a>`` put "c-case" in the text of
    the section above "Casing conforms to RFC 430 (C-CASE)", which a search for C-CASE
    then gave, whole; a document's last node keeps its own."""
    out: list[tuple[str, list[str]]] = []
    moved: list[str] = []
    last = len(bodies) - 1
    for i, body in enumerate(bodies):
        ahead: list[str] = []
        if markdown and i < last and "<a" in body:
            body, ahead = heading_anchors(body)
        out.append((body, moved))
        moved = ahead
    return out


def with_anchors(text: str, ids: list[str]) -> str:
    """A chunk's plain text with the ids that anchors above its heading give it, first."""
    return f"{' '.join(ids)}\n{text}" if ids else text


#: An address as front matter writes it: no spaces, no placeholders (Jekyll's
#: ``/:categories/:title``), no query or fragment
_ADDRESS = re.compile(r"[^\s:{}?#%<>\"']+")


def declared_pages(doc: Document) -> list[tuple[str, bool]]:
    """The tree-relative pages a site serves ``doc`` at, as its front matter says, besides
    the one its path gives: Docusaurus' and Hugo's ``slug`` (from the site's root with a
    leading ``/``, else in the file's folder), Docusaurus' ``id`` (the page's name in its
    folder: Jest's ``docs/ExpectAPI.md``, ``id: expect``, is ``/docs/expect``),
    Jekyll's and Obsidian Publish's ``permalink`` and Hugo's ``url`` (from the site's
    root); and the addresses it was moved from, which the site redirects: Hugo's
    ``aliases``, Jekyll's ``redirect_from``, Deno's ``oldUrl`` (paths from the root).
    Each with whether it is one of the latter (a page served there comes first)."""
    front = doc.frontmatter
    if not front or not any(key in front for key in _ADDRESSED):
        return []
    folder, out = posixpath.dirname(doc.path), []
    for key in _ADDRESSED:
        values = front.get(key)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or not _ADDRESS.fullmatch(value := value.strip()):
                continue
            rooted = value.startswith("/")
            if not rooted and key in _PATHS or key == "id" and "/" in value:
                continue  # these are paths from the root; an id is one name
            page = value.strip("/") if rooted or key == "permalink" else posixpath.normpath(
                posixpath.join(folder, value.strip("/")))
            if page and page != "." and not page.startswith(".."):
                out.append((page, key in _MOVED))
    return list(dict.fromkeys(out))


#: The front matter that gives a page's addresses (``declared_pages``), of those the keys
#: whose values are paths from the site's root, and of those the addresses it moved from
_MOVED = ("aliases", "redirect_from", "oldUrl")
_PATHS = ("url", *_MOVED)
_ADDRESSED = ("slug", "id", "permalink", *_PATHS)


# ------------------------------------------------------------------------ normalisation

_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//)")


def target_of(source_path: str, link: Link) -> Target:
    """Where ``link``, written in the document at ``source_path``, may point."""
    if link.kind in ("wiki", "embed"):
        return _wiki_target(source_path, link.target, link.text)
    target = link.target
    if target.startswith(_CURSOR):
        return _project_target(target[len(_CURSOR):])
    hugo = _HUGO_REF.fullmatch(target.strip())
    if hugo:
        target = hugo.group(1)
    elif "{" in target:
        target = _jekyll(target)
    if _SCHEME.match(target):
        return Target(external=True)
    if "\\" in target:  # backslash escapes, as CommonMark reads them: `\(SI\)` is `(SI)`
        target = BACKSLASH_ESCAPE.sub(r"\1", target)
    path, _, fragment = target.partition("#")
    written, _, query = path.partition("?")
    if not fragment and query.startswith("id="):  # Docsify's section: `guide.md?id=x`
        fragment = query[3:].split("&", 1)[0]
    path = unquote(written)
    anchors = _anchors(unquote(fragment)) if fragment else ()
    if not path:
        return Target(False, (source_path,), None, anchors)
    paths = _candidates(_resolve(source_path, path))
    if path != written:  # a file whose name holds the escape (Azure DevOps: `A%2DB.md`)
        paths += tuple(p for p in _candidates(_resolve(source_path, written))
                       if p not in paths)
    if _COLLECTION.match(path) and _suffix(path) not in MARKDOWN_SUFFIXES:
        # a Jekyll collection's page: the URL /docs/x/ is built from _docs/x.md
        paths += _candidates(_resolve(source_path, "/_" + path.lstrip("/")))
    if path.startswith("../") and _suffix(path) not in MARKDOWN_SUFFIXES and (
            page := _as_folder(source_path)):
        # a site that serves a page as a folder (Hugo; Jekyll's pretty URLs) reads a
        # relative URL from the page's address: `../sdk/` from `java/api.md`, served at
        # `java/api/`, is `java/sdk/`
        paths += tuple(p for p in _candidates(_resolve(page, path)) if p not in paths)
    return Target(False, paths, None, anchors)


def _as_folder(source_path: str) -> str | None:
    """A path inside the folder a site serves the page at ``source_path`` as, None for a
    folder's own page (``index.md``, ``_index.md``, ``README.md``), served at its folder."""
    name = source_path.rsplit("/", 1)[-1]
    stem = _stem(name)
    if stem == name or stem.lower() in ("index", "_index", "readme"):
        return None
    return f"{source_path[:len(source_path) - len(name)]}{stem}/page"


#: Jekyll's link tags: ``{% link path %}`` names a file from the site's root,
#: ``{% post_url 2024-01-02-name %}`` a post in ``_posts``
_JEKYLL_TAG = re.compile(r"\{%-?[ \t]*(link|post_url)[ \t]+([^\s%]+)[ \t]*-?%\}")
#: the site's address before a root-relative path: ``{{ site.baseurl }}``, ``{{ site.url }}``
_SITE_URL = re.compile(r"\{\{-?[ \t]*site\.(?:baseurl|url)[ \t]*-?\}\}")
#: a path through a URL filter: ``{{ '/docs/x/' | relative_url }}``
_URL_FILTER = re.compile(r"\{\{-?[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\")[ \t]*\|[ \t]*"
                         r"(?:relative_url|absolute_url|prepend:[ \t]*site\.baseurl)[ \t]*-?\}\}")


#: a site-absolute path into a folder that is not itself a ``_folder``
_COLLECTION = re.compile(r"/+[^_/.][^/]*/")


def _jekyll(target: str) -> str:
    """A target written with Jekyll's Liquid, as the path it names from the site's root
    (the tree's root); any other Liquid is left, and resolves to nothing."""
    target = _JEKYLL_TAG.sub(lambda m: ("/_posts/" if m.group(1) == "post_url" else "/")
                             + m.group(2).lstrip("/"), target)
    target = _URL_FILTER.sub(lambda m: m.group(1) or m.group(2) or "", target)
    if _SITE_URL.match(target):
        target = "/" + _SITE_URL.sub("", target).lstrip("/")
    return target


#: Cursor's rule files name a file of the project as ``[name](mdc:path/from/the/root)``.
_CURSOR = "mdc:"


def _project_target(target: str) -> Target:
    """Where a link to a file named from the project's root (Cursor's ``mdc:``) may
    point: that path, as a path of the tree (the tree may be the project), and a markdown
    file's name anywhere in the tree (``mdc:.cursor/rules/api.mdc`` from another rule of
    the tree ``.cursor/rules``), as a wiki link's is. Not external: it names a file here,
    often source code outside every tree."""
    path, _, fragment = target.partition("#")
    path = posixpath.normpath(unquote(path).lstrip("/")) if path.strip("/") else ""
    anchors = _anchors(unquote(fragment)) if fragment else ()
    name = path.rsplit("/", 1)[-1]
    stem = _stem(name).lower() if _suffix(name) in MARKDOWN_SUFFIXES else None
    return Target(False, (path,) if path else (), stem, anchors)


def _wiki_target(source_path: str, target: str, shown: str = "") -> Target:
    """A wiki link's target. Where it names no page and its alias does (Dendron writes
    ``[[Details|dendron.topic.lookup#details]]``, label first, as GitHub's wikis do), the
    resolver takes the page the alias names (``ra.index.links``), and its heading is an
    anchor here after the target's own."""
    name, _, heading = target.replace("#^", "#").partition("#")
    name = name.strip()
    anchors = (() if not heading.strip() else (f"^{heading.strip()}",) if "#^" in target
               else (slugify(heading.strip()),))  # a block's id (``anchor_ids``), a heading
    if "#" in shown and shown != target and (tail := shown.partition("#")[2].strip()):
        anchors = tuple(dict.fromkeys((*anchors, slugify(tail))))
    if not name:
        return Target(False, (source_path,), None, anchors)
    if "/" in name:  # a path from the vault's root, else from the linking file
        rooted = posixpath.normpath(name.lstrip("/"))
        paths = () if rooted == ".." or rooted.startswith("../") else _candidates(rooted)
        if not name.startswith("/") and (near := _resolve(source_path, name)) != rooted:
            paths += _candidates(near)
        return Target(False, tuple(dict.fromkeys(paths)), None, anchors)
    return Target(False, (), _stem(name).lower(), anchors)


def _stem(name: str) -> str:
    """A file name without its markdown suffix (``api.mdc`` is ``api``; ``a.txt`` stays)."""
    suffix = _suffix(name)
    return name[: -len(suffix)] if suffix in MARKDOWN_SUFFIXES else name


def _anchors(fragment: str) -> tuple[str, ...]:
    """A fragment as written, then as a slug (``#Heading Text`` in some wikis), then as a
    declared id is held (``#4.6.1``, Material for MkDocs' ``{ id="4.6.1" }``: ``4-6-1``)."""
    held = safe_id(fragment) if "." in fragment or "/" in fragment else None
    return tuple(dict.fromkeys(a for a in (fragment, slugify(fragment), held) if a))


def _resolve(source_path: str, path: str) -> str | None:
    """The tree-relative path ``path`` names from ``source_path``; None when it climbs
    out of the tree. A leading ``/`` is the tree's root (site-absolute links)."""
    joined = path.lstrip("/") if path.startswith("/") else posixpath.join(
        posixpath.dirname(source_path), path)
    normal = posixpath.normpath(joined)
    if normal == ".." or normal.startswith("../"):
        return None
    return normal + ("/" if path.endswith("/") and normal != "." else "")


def _candidates(path: str | None) -> tuple[str, ...]:
    """The files ``path`` may name, preferred first: itself when it has a suffix, the
    markdown source of an ``.html`` page (``page.md``, or ``page.html.md`` as Middleman's
    sites name it: GOV.UK's developer docs reached 1 of their 244 links to pages under
    ``/manual/``), for a bare name its markdown file or the index
    page of its folder, and for a folder (``intro/``) its index page or ``intro.md``."""
    if path is None:
        return ()
    suffix = _suffix(path)
    base = path.rstrip("/")
    base = "" if base == "." else base
    if suffix in _PAGE:  # built from page.md, or from page.html.md (Middleman, Terraform)
        return tuple(base[: -len(suffix)] + s for s in MARKDOWN) + tuple(
            base + s for s in MARKDOWN)
    written = base[len(base) - len(suffix) + 1:]  # the suffix as written, without its dot
    if suffix in MARKDOWN_SUFFIXES or suffix and _EXTENSION.fullmatch(written):
        return (path,)
    files = [base + s for s in MARKDOWN] if base else []
    if suffix:  # no file kind's suffix: a page's name with a dot (`aplicações-.Net`, `v1.2`)
        files.insert(0, path)
    folder = [(f"{base}/" if base else "") + name for name in _INDEX]
    # a folder's URL is its index page, or the page a site generator built there from
    # a file of that name (Jekyll's and Hugo's pretty URLs: `/docs/intro/` is intro.md)
    return tuple(folder + files if path.endswith("/") else files + folder)


#: what a file kind's suffix looks like (``png``, ``mp4``, ``json``), unlike the dot in a
#: page's name: Azure DevOps' ``Servidores-para-aplicações-.Net``, a version's ``v1.2``
_EXTENSION = re.compile(r"[a-z][a-z0-9]{0,5}")


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind("."):].lower() if "." in name.strip(".") else ""
