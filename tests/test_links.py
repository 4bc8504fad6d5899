"""Links between chunks: extraction, normalised targets, the ``links`` view, ``get --links``.

The view resolves targets when the index is read, so the last tests hold an index
updated file by file to the links of a full build of the same files, and check that a
link from an unchanged file follows the file it points to when that one changes.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from ra.cli.app import main
from ra.config.settings import load_config
from ra.index.freshness import open_index
from ra.pipeline import run
from ra.query.sql import run_sql
from ra.text.document import parse_document
from ra.text.links import Link, document_links, target_of
from ra.text.markup import plain_text


def links_of(text: str, path: str = "a/b.md") -> list[tuple[str, str, str]]:
    doc = parse_document(text, "t", path)
    return [(link.kind, link.text, link.target) for links in document_links(doc)
            for link in links]


def test_links_are_read_as_written():
    text = ("# T\n\nSee [CORS](cors.md#use-cors) and [*ref*][R], [R] and <https://x.org/a>.\n"
            "![diagram](d.png) `[code](x.md)` [[Note#Part|alias]] ![[Other]] ![[pic.png]]\n"
            "[hugo]({{< ref \"posts/first.md\" >}}) [undefined][nope]\n\n"
            "```md\n[fenced](y.md)\n```\n\n%% [[commented]] %%\n\n[R]: other.md\n")
    assert links_of(text) == [
        ("link", "CORS", "cors.md#use-cors"), ("link", "ref", "other.md"),
        ("link", "R", "other.md"), ("link", "https://x.org/a", "https://x.org/a"),
        ("wiki", "alias", "Note#Part"), ("embed", "Other", "Other"),
        ("link", "hugo", '{{< ref "posts/first.md" >}}')]


def test_a_links_text_reads_escapes_and_keeps_code_as_written():
    """"my\\_var" was shown "my\\var", `__init__` "init", `a*b` "ab"."""
    text = ("See [my\\_var and `__init__`](a.md), [**bold** \\[x\\]](b.md), "
            "[`a*b`](c.md) and [[Page|an *alias*]].\n")
    assert [t for _, t, _ in links_of(text)] == [
        "my_var and __init__", "bold [x]", "a*b", "an alias"]


def test_each_link_belongs_to_the_chunk_it_is_written_in():
    doc = parse_document("Intro [a](a.md)\n\n# One\n\n[b](b.md)\n\n## Two\n\n[[c]]\n", "t", "x.md")
    assert [[link.target for link in links] for links in document_links(doc)] == [
        ["a.md"], ["b.md"], ["c"]]


@pytest.mark.parametrize("target, paths, anchors", [
    ("cors.md#use-cors", ("docs/a/cors.md",), ("use-cors",)),
    # a folder: its index page, else the page a site generator built there (Jekyll's and
    # Hugo's pretty URLs: /docs/intro/ is docs/intro.md)
    # then as read from the folder a site serves b.md at (Hugo: docs/a/b/)
    ("../intro/", tuple(f"{folder}/{name}" for folder in ("docs", "docs/a") for name in (
        "intro/index.md", "intro/README.md", "intro/_index.md", "intro/index.mdx",
        "intro/index.mdoc", "intro/index.qmd", "intro.md", "intro.mdx", "intro.markdown",
        "intro.mdoc", "intro.qmd", "intro.Rmd")), ()),
    ("setup", ("docs/a/setup.md", "docs/a/setup.mdx", "docs/a/setup.markdown",
               "docs/a/setup.mdoc", "docs/a/setup.qmd", "docs/a/setup.Rmd",
               "docs/a/setup/index.md", "docs/a/setup/README.md", "docs/a/setup/_index.md",
               "docs/a/setup/index.mdx", "docs/a/setup/index.mdoc", "docs/a/setup/index.qmd"),
     ()),
    # an .html page: built from its markdown file, or one named page.html.md (Middleman's
    # sites, GOV.UK's developer docs; Terraform's page.html.markdown)
    ("guide.html#Some%20Part", tuple(f"docs/a/guide{html}{s}" for html in ("", ".html")
                                     for s in (".md", ".mdx", ".markdown", ".mdoc", ".qmd",
                                               ".Rmd")),
     ("Some Part", "some-part")),
    ("callouts.qmd#callout-types", ("docs/a/callouts.qmd",), ("callout-types",)),  # Quarto
    # Docsify names a page's section by a query (its links: `plugins.md?id=x`)
    ("plugins.md?id=external-script", ("docs/a/plugins.md",), ("external-script",)),
    ("plugins.md?id=a&lang=en", ("docs/a/plugins.md",), ("a",)),
    ("plugins.md?v=2", ("docs/a/plugins.md",), ()),
    ("/top/page.md", ("top/page.md",), ()),
    ("#local", ("docs/a/b.md",), ("local",)),
    ("../../../outside.md", (), ()),  # climbs out of the tree: nothing to resolve
    ("img/logo.png", ("docs/a/img/logo.png",), ()),
])
def test_markdown_targets_are_normalised_from_the_source(target, paths, anchors):
    found = target_of("docs/a/b.md", Link("link", "x", target))
    assert (found.external, found.paths, found.anchors) == (False, paths, anchors)


@pytest.mark.parametrize("target, first, anchors", [
    # Jekyll's link tags name a file from the site's root; a post is in _posts
    ("{% link docs/configuration.md %}#callouts", "docs/configuration.md", ("callouts",)),
    ("{%- link _docs/x.md -%}", "_docs/x.md", ()),
    ("{% post_url 2020-01-02-hello %}", "_posts/2020-01-02-hello.md", ()),
    # the site's address before a root-relative path, a path through a URL filter
    ("{{ site.baseurl }}/guide/setup/#install", "guide/setup/index.md", ("install",)),
    ("{{ site.url }}{{ site.baseurl }}{% link top.md %}", "top.md", ()),
    ("{{ '/guide/setup/' | relative_url }}", "guide/setup/index.md", ()),
])
def test_jekyll_liquid_targets_name_a_path_from_the_site_root(target, first, anchors):
    found = target_of("docs/a/b.md", Link("link", "x", target))
    assert (found.external, found.paths[0], found.anchors) == (False, first, anchors)


def test_a_site_path_may_be_a_jekyll_collection_page():
    """Jekyll serves a collection's ``_docs/x.md`` at ``/docs/x/``: after the paths the
    URL names as written, those in the ``_docs`` folder."""
    paths = target_of("a.md", Link("link", "x", "/docs/history/")).paths
    assert paths.index("docs/history/index.md") < paths.index("docs/history.md") < paths.index(
        "_docs/history/index.md") < paths.index("_docs/history.md")
    assert not any(p.startswith("_") for p in target_of(
        "a.md", Link("link", "x", "/top")).paths)  # no folder: no collection
    assert target_of("a.md", Link("link", "x", "/docs/x.md")).paths == (
        "docs/x.md",)  # a source file, not a URL
    assert target_of("a.md", Link("link", "x", "/_posts/x.md")).paths == ("_posts/x.md",)


def test_liquid_targets_are_read_from_links_and_definitions():
    text = ("[configured]({% link docs/configuration.md %}#callouts), [b]({{ site.baseurl }}"
            "/docs/x/), [c]({{ '/docs/y/' | relative_url }}) and [d][ref].\n\n"
            "[ref]: {% link docs/d.md %}\n")
    assert [target for _, _, target in links_of(text)] == [
        "{% link docs/configuration.md %}#callouts", "{{ site.baseurl }}/docs/x/",
        "{{ '/docs/y/' | relative_url }}", "{% link docs/d.md %}"]


def test_a_footnote_is_no_link_definition():
    """``[^1]: The [source] …`` is a footnote's text: ``[^1]`` links nowhere (it linked to
    "The"), and a link inside the footnote is still a link."""
    assert links_of("Text.[^1]\n\n[^1]: The [source](src.md) of it.\n") == [
        ("link", "source", "src.md")]


def test_jekyll_links_resolve_in_the_links_view(tmp_path):
    """A Jekyll site: Liquid targets, a collection's page at its URL, and the id a
    kramdown attribute list gives the heading above it."""
    rows = resolved(kb(tmp_path, {
        "_docs/history.md": "# History\n\n## 4.0.0 / 2019-08-19\n{: #v4-0-0}\n\nx\n",
        "docs/configuration.md": "# Configuration\n\n## Callouts\n\ny\n",
        "index.md": "# Home\n\nSee [callouts]({% link docs/configuration.md %}#callouts), "
                    "[4.0]({{ site.baseurl }}/docs/history/#v4-0-0) and "
                    "[history]({{ '/docs/history/' | relative_url }}).\n"}))
    assert [(r[2], r[5]) for r in rows] == [
        ("callouts", "docs:docs/configuration.md#callouts"),
        ("4.0", "docs:_docs/history.md#v4-0-0"), ("history", "docs:_docs/history.md")]


@pytest.mark.parametrize("target", ["https://a.org/x#y", "mailto:me@x.org", "//cdn.org/x"])
def test_external_targets(target):
    assert target_of("a.md", Link("link", "x", target)).external


@pytest.mark.parametrize(("target", "paths", "name", "anchors"), [
    ("mdc:.cursor/rules/api.mdc", (".cursor/rules/api.mdc",), "api", ()),
    ("mdc:src/App.tsx", ("src/App.tsx",), None, ()),
    ("mdc:/docs/Setup%20Guide.md#Install", ("docs/Setup Guide.md",), "setup guide",
     ("Install", "install")),
    ("mdc:", (), None, ())])
def test_cursor_file_references_name_a_project_file(target, paths, name, anchors):
    """Cursor's rules name a file of the project as ``mdc:path``: no external URL, but
    that path and, for a markdown file, its name anywhere in the tree."""
    found = target_of("react.mdc", Link("link", "x", target))
    assert (found.external, found.paths, found.name, found.anchors) == (
        False, paths, name, anchors)


def test_cursor_rules_linking_each_other_resolve(tmp_path):
    """A rule in ``.cursor/rules`` (a tree of its own) names another from the project's
    root (``mdc:.cursor/rules/api.mdc``): the link reaches that rule; one to source code
    outside every tree reaches nothing, and is no external link."""
    rules = tmp_path / ".cursor" / "rules"
    write(rules / "react.mdc", "---\nglobs: src/**/*.tsx\n---\n\n# React\n\nSee "
          "[the API rules](mdc:.cursor/rules/api.mdc#errors) and [the app](mdc:src/App.tsx)."
          "\n")
    write(rules / "api.mdc", "---\nglobs: src/api/**\n---\n\n# API\n\n## Errors\n\nThrow.\n")
    (tmp_path / ".ra.toml").write_text('[tree.cursor]\npath = "./.cursor/rules"\n')
    rows = {r[2]: (r[4], r[5]) for r in resolved(load_config(tmp_path))}
    assert rows == {"the API rules": (False, "cursor:api.mdc#errors"),
                    "the app": (False, None)}


def test_wiki_targets_name_a_file_anywhere_or_a_path_from_the_root():
    by_name = target_of("n/a.md", Link("wiki", "x", "Some Note#A Heading"))
    assert (by_name.paths, by_name.name, by_name.anchors) == ((), "some note", ("a-heading",))
    by_path = target_of("n/a.md", Link("wiki", "x", "docs/index"))
    assert by_path.paths[0] == "docs/index.md" and by_path.name is None
    block = target_of("n/a.md", Link("wiki", "x", "Note#^block-id"))
    assert block.anchors == ("^block-id",)  # a block's id, not a heading's
    # Obsidian's "relative path to file": from the linking file's folder too
    near = target_of("en/n/a.md", Link("wiki", "x", "../Plugins/Templates"))
    assert near.paths[0] == "en/Plugins/Templates.md"
    both = target_of("en/n/a.md", Link("wiki", "x", "Sub/Note"))
    assert both.paths[0] == "Sub/Note.md" and "en/n/Sub/Note.md" in both.paths


def test_an_alias_separator_escaped_in_a_table_is_one():
    """Obsidian escapes a wiki link's ``|`` in a table (``[[Highlighter\\|highlights]]``),
    where a bare one would end the cell: the target held the backslash ("Highlighter\\")
    and reached no page; an embedded image's size (``|200``) is no text."""
    text = ("# T\n\n| Variable | Meaning |\n|---|---|\n"
            "| `{{content}}` | Content, [[Highlighter\\|highlights]] or [[Sync#Keys\\|keys]] |\n"
            "| photo | ![[Engelbart.jpg\\|200]] ![[chart.png|120x80]] ![[map.png|the map]] |\n")
    assert links_of(text) == [("wiki", "highlights", "Highlighter"),
                              ("wiki", "keys", "Sync#Keys")]
    assert target_of("a.md", Link("wiki", "keys", "Sync#Keys")).anchors == ("keys",)
    plain = parse_document(text, "t", "a.md").nodes[-1].body
    from ra.text.markup import plain_text

    shown = " ".join(plain_text(plain).split())
    assert "highlights" in shown and "\\" not in shown and "the map" in shown
    assert "200" not in shown and "120x80" not in shown


# --- the links view over a real index ---------------------------------------------------

FILES = {
    "index.md": "# Home\n\nStart with [setup](guide/setup) or [the API](api.html#endpoints).\n"
                "Also [[Deep Note]], [[Deep Note#Second Part|part two]] and "
                "[gone](missing.md), [out](https://example.org).\n",
    "guide/setup.md": "# Setup { #install }\n\nInstall it. Back [home](../index.md#home).\n",
    "api.md": "# API\n\nIntro.\n\n## Endpoints\n\nList. See [setup](guide/setup.md#install).\n",
    "notes/deep/Deep Note.md": "# Deep Note\n\nFirst.\n\n## Second Part\n\nMore.\n",
}


def write(path: Path, text: str, bump: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if bump:  # the fingerprint changes even within one mtime tick
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 1_000_000_000))


def kb(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        write(root / "docs" / rel, text)
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    return load_config(root)


def resolved(config) -> list[tuple]:
    reader, _ = open_index(config)
    with reader:
        rows = run_sql(reader, "select source_id, seq, text, target, external, target_id "
                               "from links order by source_id, seq").rows
    return rows


def reached(config, source: str) -> dict[str, str | None]:
    """The chunk each link out of the chunks whose ids start with ``source`` reaches, by
    the link's text (None: nothing indexed)."""
    return {r[2]: r[5] for r in resolved(config) if r[0].startswith(source)}


def test_the_links_view_resolves_targets_to_chunks(tmp_path):
    rows = {(r[0], r[2]): r[5] for r in resolved(kb(tmp_path, FILES))}
    assert rows[("docs:index.md#home", "setup")] == "docs:guide/setup.md"
    assert rows[("docs:index.md#home", "the API")] == "docs:api.md#endpoints"
    assert rows[("docs:index.md#home", "Deep Note")] == "docs:notes/deep/Deep Note.md"
    assert rows[("docs:index.md#home", "part two")] == "docs:notes/deep/Deep Note.md#second-part"
    assert rows[("docs:index.md#home", "gone")] is None
    assert rows[("docs:index.md#home", "out")] is None
    assert rows[("docs:guide/setup.md#install", "home")] == "docs:index.md#home"
    # the anchor a heading declares, { #install }
    assert rows[("docs:api.md#endpoints", "setup")] == "docs:guide/setup.md#install"


def test_a_github_wiki_s_page_links_resolve(tmp_path):
    """A GitHub wiki (Gollum) names the page ``Getting-Started.md`` ``[[Getting Started]]``
    (spaces are dashes) and writes the link text first: ``[[the install guide|Installation
    -Guide]]``; an Obsidian vault's ``[[Page|alias]]`` and its file named with spaces
    still resolve as they did, the file named as written first."""
    config = kb(tmp_path, {
        "Home.md": "# Home\n\nSee [[Getting Started]], [[the install guide|Installation-Guide]]"
                   ", [[FAQ|the questions]] and [[Nowhere|Nothing Here]].\n",
        "Getting-Started.md": "# Getting Started\n\nFirst steps.\n",
        "Installation-Guide.md": "# Installation Guide\n\nInstall it.\n",
        "vault/FAQ.md": "# FAQ\n\nQuestions.\n",
        "vault/Getting Started.md": "# Started\n\nThe vault's page.\n"})
    rows = {r[3]: r[5] for r in resolved(config) if r[0] == "docs:Home.md#home"}
    assert rows == {"Getting Started": "docs:vault/Getting Started.md",
                    "the install guide": "docs:Installation-Guide.md",
                    "FAQ": "docs:vault/FAQ.md", "Nowhere": None}
    config = kb(tmp_path, {"Rules.md": "# Rules\n\n[[api]], [[Report]] and [[Slides.qmd]].\n",
                           "rules/api.mdc": "# API\n\nRule.\n", "report.Rmd": "# R\n\nx\n",
                           "talk/slides.qmd": "# S\n\ny\n"})
    rows = {r[3]: r[5] for r in resolved(config) if r[0] == "docs:Rules.md#rules"}
    assert rows == {"api": "docs:rules/api.mdc", "Report": "docs:report.Rmd",
                    "Slides.qmd": "docs:talk/slides.qmd"}  # every markdown suffix
    os.remove(tmp_path / "docs/vault/Getting Started.md")
    rows = {r[3]: r[5] for r in resolved(config) if r[0] == "docs:Home.md#home"}
    assert rows["Getting Started"] == "docs:Getting-Started.md"


def test_a_link_reaches_a_heading_whose_id_holds_dots(tmp_path):
    """Material for MkDocs declares its changelog's ids with dots (``{ id="9.7.0" }``),
    which a chunk id holds as dashes, and links to them as written (``#9.7.0``): the link
    reached the page only."""
    config = kb(tmp_path, {
        "changelog.md": "# Changelog\n\n## 9.7.0 { id=\"9.7.0\" }\n\nNew.\n\n"
                        "## 9.6.0 { #9.6.0 }\n\nOld.\n",
        "setup.md": "# Setup\n\nSince [9.7.0](changelog.md#9.7.0) and "
                    "[9.6](changelog.md#9.6.0).\n"})
    rows = reached(config, "docs:setup.md")
    assert rows == {"9.7.0": "docs:changelog.md#9-7-0", "9.6": "docs:changelog.md#9-6-0"}


def test_a_dendron_vault_s_links_resolve(tmp_path):
    """Dendron names notes by their hierarchy (``dendron.topic.lookup.md``), writes the
    label first (``[[Details|dendron.topic.lookup#details]]``) and refers to a note of a
    vault by the vault's name (``[[Lookup|dendron://site/dendron.topic.lookup]]``,
    ``![[dendron://site/tips]]``); the reader sees the label, in the links and in the
    text (the address had been the text of 1,567 links of Dendron's site, and a range of
    an embedded section, ``#summary,1:#*``, its words), and a note's ``desc`` is its
    description."""
    shown = parse_document("---\ndesc: Find notes fast.\n---\n# Home\n\nSee [[update "
                           "time|dendron://site/dendron.ref#h]] and [[Details|dendron.topic."
                           "lookup#details]].\n\n![[dendron.topic.lookup#details,1:#*]]\n",
                           "docs", "root.md")
    assert shown.description == "Find notes fast."
    assert " ".join(plain_text(shown.nodes[-1].body).split()) == (
        "See update time and Details. dendron.topic.lookup details")
    text = ("# Home\n\nSee [[Details|dendron.topic.lookup#details]], "
            "[[Lookup|dendron://site/dendron.topic.lookup]], "
            "[[Find|dendron://site/dendron.topic.lookup#finding-notes]] and "
            "[[dendron.topic.lookup]].\n\n![[dendron://site/tips]]\n")
    assert links_of(text) == [
        # without the vault, label first where it is no note's dotted name and the
        # target is (Obsidian writes an alias second, and rarely a dotted name)
        ("wiki", "Details", "dendron.topic.lookup#details"),
        ("wiki", "Lookup", "dendron.topic.lookup"),
        ("wiki", "Find", "dendron.topic.lookup#finding-notes"),
        ("wiki", "dendron.topic.lookup", "dendron.topic.lookup"), ("embed", "tips", "tips")]
    config = kb(tmp_path, {
        "root.md": text,
        "dendron.topic.lookup.md": "# Lookup\n\n## Details\n\nFuzzy.\n\n"
                                   "## Finding notes\n\nType.\n",
        "tips.md": "# Tips\n\nSome.\n"})
    rows = {r[2]: r[5] for r in resolved(config) if r[0] == "docs:root.md#home"}
    assert rows == {"Details": "docs:dendron.topic.lookup.md#details",
                    "Lookup": "docs:dendron.topic.lookup.md",
                    "Find": "docs:dendron.topic.lookup.md#finding-notes",
                    "dendron.topic.lookup": "docs:dendron.topic.lookup.md",
                    "tips": "docs:tips.md"}


def test_an_azure_devops_wiki_s_page_links_resolve(tmp_path):
    """An Azure DevOps wiki names a page from its root without a suffix, dashes for
    spaces, and writes a page's parentheses with backslashes and its own dashes as
    ``%2D``, which the file's name keeps (``ODO%2D1-(SI).md``): as in
    BE-terna's public wiki, whose links to such pages resolved to nothing. Its markers of
    a table of contents are no links."""
    config = kb(tmp_path, {
        "Help.md": "[[_TOC_]]\n[[_TOSP_]]\n\nSee [REK-1](/Help/Tax-reports/REK-1-\\(SI\\)), "
                   "[ODO-1](/Help/Tax-reports/ODO%2D1-\\(SI\\)), [servers](/Help/Servers-.Net) "
                   "and [reports](Help/Tax-reports).\n",
        "Help/Servers-.Net.md": "Shared servers.\n",
        "Help/Tax-reports.md": "The reports.\n",
        "Help/Tax-reports/REK-1-(SI).md": "# Prepare REK-1 report\n\nSteps.\n",
        "Help/Tax-reports/ODO%2D1-(SI).md": "Steps of ODO-1.\n"})
    rows = {r[2]: r[5] for r in resolved(config) if r[0] == "docs:Help.md"}
    assert rows == {"REK-1": "docs:Help/Tax-reports/REK-1-(SI).md",
                    "ODO-1": "docs:Help/Tax-reports/ODO%2D1-(SI).md",
                    "servers": "docs:Help/Servers-.Net.md",
                    "reports": "docs:Help/Tax-reports.md"}


def test_a_link_by_a_page_s_name_reaches_it_in_another_folder(tmp_path):
    """Svelte serves every page of its docs at ``/docs/svelte/NAME`` and links pages by
    name (``[each](each#Keyed-each-blocks)`` from ``02-runes/``): 38 of its 188 links to
    its pages reached one, 132 now. A file named with its suffix, and a folder's page,
    are not taken for a name: a theme's ``[docs](DOCUMENTATION.md)`` and
    ``[templates](templates)`` name its own files, not the site's sections."""
    config = kb(tmp_path, {
        "02-runes/02-$state.md": "# $state\n\nSee [each](each#Keyed-each-blocks), "
                                 "[docs](DOCUMENTATION.md) and [templates](templates).\n",
        "03-template-syntax/03-each.md": "# each\n\n## Keyed each blocks\n\nKeys.\n",
        "documentation/_index.md": "# Documentation\n\nAll.\n",
        "templates/_index.md": "# Templates\n\nAll.\n"})
    rows = reached(config, "docs:02-runes")
    assert rows == {"each": "docs:03-template-syntax/03-each.md#keyed-each-blocks",
                    "docs": None, "templates": None}


def test_a_wiki_link_s_path_from_a_vault_below_the_tree_reaches_its_page(tmp_path):
    """Obsidian's help vault keeps each language's vault in a folder (``en/``) and links
    by the shortest unique path, ``[[Plugins/Templates]]`` where another ``Templates``
    exists: with the tree at the repository's root, 25 such links of its English pages
    reached nothing. The path ends the page's, the shortest such first; a relative path
    (``../``) is read from the linking file."""
    config = kb(tmp_path, {
        "en/Guide/Home.md": "# Home\n\n[[Plugins/Templates]], [[Web Clipper/Templates#"
                            "Matching|matching]], [[../Plugins/Templates|up]] and "
                            "[[Nope/Templates]].\n",
        "en/Plugins/Templates.md": "# Templates\n\nCore plugin.\n",
        "en/Web Clipper/Templates.md": "# Templates\n\n## Matching\n\nRules.\n",
        "de/en/Plugins/Templates.md": "# Vorlagen\n\nKern.\n"})
    rows = {r[2]: r[5] for r in resolved(config) if r[0] == "docs:en/Guide/Home.md#home"}
    assert rows == {"Plugins/Templates": "docs:en/Plugins/Templates.md",
                    "matching": "docs:en/Web Clipper/Templates.md#matching",
                    "up": "docs:en/Plugins/Templates.md", "Nope/Templates": None}


def test_a_link_to_a_dated_post_reaches_the_file_named_for_its_date(tmp_path):
    """Docusaurus serves ``blog/2016-07-27-jest-14.md`` at ``/blog/2016/07/27/jest-14``
    and Jekyll ``_posts/2019-03-18-released.markdown`` at ``/news/2019/03/18/released/``
    (its category first): Jest's docs had 18 such links that reached nothing."""
    config = kb(tmp_path, {
        "docs/Guide.md": "# Guide\n\nSee [the post](/blog/2016/07/27/jest-14#why-snapshots),"
                         " [the release](/news/2019/03/18/released/) and "
                         "[another day](/blog/2016/07/28/jest-14).\n",
        "website/blog/2016-07-27-jest-14.md": "# Jest 14\n\n## Why snapshots\n\nFast.\n",
        "_posts/2019-03-18-released.markdown": "# Released\n\nNew.\n"})
    rows = {r[2]: r[5] for r in resolved(config) if r[0] == "docs:docs/Guide.md#guide"}
    assert rows == {"the post": "docs:website/blog/2016-07-27-jest-14.md#why-snapshots",
                    "the release": "docs:_posts/2019-03-18-released.markdown",
                    "another day": None}


def test_a_link_reaches_the_page_at_the_address_its_front_matter_gives(tmp_path):
    """Docusaurus serves ``docs/ExpectAPI.md`` (``id: expect``) at ``/docs/expect`` and a
    ``slug`` where it says; Jekyll a ``permalink``, Hugo a ``url``; and each redirects
    the addresses a page moved from (Hugo's ``aliases``, Jekyll's ``redirect_from``,
    Deno's ``oldUrl``). Jest's docs link by id: 305 of their 362 links to their own pages
    reached one, 355 now. The addresses are no links: the links view leaves them out."""
    def page(front: str, title: str) -> str:
        return f"---\n{front}\n---\n\n# {title}\n\n## Usage\n\nText.\n"

    config = kb(tmp_path, {
        "docs/Guide.md": "# Guide\n\nSee [expect](/docs/expect#usage), [by id](expect), "
                         "[slug](/docs/custom/place), [relative](/docs/renamed), "
                         "[permalink](/about/team/), [url](/legal/terms/), "
                         "[old](/deploy/env-vars/#vars), [alias](/old/terms/), "
                         "[redirect](/team.html) and [placeholder](/2024/post/).\n",
        "docs/ExpectAPI.md": page("id: expect\ntitle: Expect", "Expect"),
        "docs/Moved.md": page("slug: /docs/custom/place", "Moved"),
        "docs/Old.md": page("slug: renamed", "Old"),
        "pages/team.md": page("permalink: /about/team/\nredirect_from:\n  - /team.html",
                              "Team"),
        "content/terms.md": page("url: /legal/terms/\naliases: [/old/terms/, old-name]",
                                 "Terms"),
        "deploy/env_vars.md": page("oldUrl: /deploy/env-vars/", "Vars"),
        "_posts/post.md": page("permalink: /:year/post/", "Post")})
    rows = {r[2]: r[5] for r in resolved(config) if r[0] == "docs:docs/Guide.md#guide"}
    assert rows == {"expect": "docs:docs/ExpectAPI.md#usage",
                    "by id": "docs:docs/ExpectAPI.md", "slug": "docs:docs/Moved.md",
                    "relative": "docs:docs/Old.md", "permalink": "docs:pages/team.md",
                    "url": "docs:content/terms.md", "old": "docs:deploy/env_vars.md#vars",
                    "alias": "docs:content/terms.md", "redirect": "docs:pages/team.md",
                    "placeholder": None}
    assert all(r[0] == "docs:docs/Guide.md#guide" for r in resolved(config))


def test_a_site_absolute_url_reaches_the_page_below_the_site_s_folder(tmp_path):
    """Vite's repository keeps its site in ``docs/`` and links ``/guide/migration`` and
    ``/team``: with the tree at the repository's root, 167 of its 437 links to its own
    pages reached one, 427 now. A URL of one name is taken below a folder of the tree's
    root only: Microsoft Learn's ``/sql/`` from ``docs/data/odbc/`` is another site."""
    config = kb(tmp_path, {
        "docs/blog/vite6.md": "# Vite 6\n\nRead [migration](/guide/migration#steps), "
                              "[team](/team), [guide](/guide/) and [nope](/guide/nope).\n",
        "docs/guide/migration.md": "# Migration\n\n## Steps\n\nDo it.\n",
        "docs/guide/index.md": "# Guide\n\nStart.\n",
        "docs/team.md": "# Team\n\nPeople.\n",
        "other/guide/migration.md": "# Elsewhere\n\nNot the site.\n",
        "docs/data/odbc/sql.md": "# SQL\n\nSee [SQL Server](/sql/).\n"})
    rows = reached(config, "docs:docs/")
    assert rows == {"migration": "docs:docs/guide/migration.md#steps",
                    "team": "docs:docs/team.md", "guide": "docs:docs/guide/index.md",
                    "nope": None, "SQL Server": None}


def test_a_relative_url_is_read_from_the_folder_a_site_serves_the_page_at(tmp_path):
    """Hugo serves ``languages/java/api.md`` at ``/languages/java/api/``: its ``../sdk/``
    is ``languages/java/sdk.md`` (opentelemetry.io: 364 of its 404 such links reached
    nothing). A file's own relative path is tried first; a folder's page is served at its
    folder. ``[[toc]]`` is where markdown-it puts a table of contents, no link."""
    config = kb(tmp_path, {
        "languages/java/api.md": "# API\n\n[SDK](../sdk/), [exporters](../exporters/#otlp)"
                                 ", [home](../../) and [file](../java/sdk.md).\n\n[[toc]]\n",
        "languages/java/sdk.md": "# SDK\n\nBuild it.\n",
        "languages/java/exporters.md": "# Exporters\n\n## OTLP\n\nSend.\n",
        "languages/java/_index.md": "# Java\n\n[up](../python/).\n",
        "languages/python/_index.md": "# Python\n\nSnake.\n",
        "_index.md": "# Home\n\nAll.\n"})
    rows = {r[2]: r[5] for r in resolved(config)
            if r[0].startswith(("docs:languages/java/api.md", "docs:languages/java/_index"))}
    assert rows == {"SDK": "docs:languages/java/sdk.md",
                    "exporters": "docs:languages/java/exporters.md#otlp",
                    "home": "docs:_index.md", "file": "docs:languages/java/sdk.md",
                    "up": "docs:languages/python/_index.md"}


def test_an_html_anchor_names_the_section_it_stands_above_or_in(tmp_path):
    """mdBook's guidelines put ``<a id="c-case"></a>`` above "## Casing conforms to RFC
    430 (C-CASE)" and link ``naming.html#c-case``: the link reached the page only, and
    "c-case" was text of the section before, which a search for C-CASE gave, whole (17
    of the guidelines' 54 ids). The Rust book keeps a renamed section's old id so, after a
    comment; the C++ docs name a note inside a section (``<a name="note_A"></a> **A**``)."""
    config = kb(tmp_path, {
        "naming.md": "# Naming\n\nIntro.\n\n<a id=\"c-case\"></a>\n## Casing (C-CASE)\n\n"
                     "Use case.\n\n<!-- Old headings. Do not remove. -->\n\n"
                     "<a id=\"old-name\"></a>\n\n## New name\n\nText. <a name=\"note_A\"></a>"
                     " **A** a note.\n\n<a id=\"at-the-end\"></a>\n",
        "checklist.md": "# Checklist\n\n[casing](naming.html#c-case), [old](naming.md#old-name)"
                        ", [note](naming.md#note_A), [end](naming.md#at-the-end), "
                        "[heading](naming.md#casing-c-case), [in](migrate.md#flat-config) "
                        "and [none](naming.md#nowhere).\n",
        # ESLint's migration guides put the anchor in the heading: 77 of their 110 links
        # within a page reached the page only
        "migrate.md": "# Migrate\n\n## <a name=\"flat-config\"></a> New default config "
                      "format\n\nUse eslint.config.js.\n"})
    rows = reached(config, "docs:checklist.md")
    assert rows == {"in": "docs:migrate.md#new-default-config-format",
                    "casing": "docs:naming.md#casing-c-case",
                    "old": "docs:naming.md#new-name", "note": "docs:naming.md#new-name",
                    "end": "docs:naming.md#new-name",
                    "heading": "docs:naming.md#casing-c-case", "none": "docs:naming.md"}
    reader, _ = open_index(config)
    with reader:
        plain = dict(run_sql(reader, "select id, plain from chunks").rows)
    assert "c-case" not in plain["docs:naming.md#naming"]
    assert "c-case" in plain["docs:naming.md#casing-c-case"]
    assert "old-name" in plain["docs:naming.md#new-name"]
    assert "old-name" not in plain["docs:naming.md#casing-c-case"]


def test_a_heading_id_spelt_by_another_slugger_reaches_its_section(tmp_path):
    """VuePress' slugger makes "markdown.anchor" #markdown-anchor and "Migration from 0.x"
    #migration-from-0-x, where ra's ids are #markdownanchor and #migration-from-0x: on
    VuePress' docs 15 links within them reached a page only (3 now); Hexo's "Install
    Node.js" is #Install-Node-js. An id the page has, or an anchor gives, comes first."""
    config = kb(tmp_path, {
        "config.md": "# Config\n\n### markdown.anchor\n\nAnchors.\n\n### markdownanchors\n\n"
                     "Other.\n\n## Migration from 0.x\n\nSteps.\n\n## Install Node.js\n\n"
                     "Get it.\n\n## Front-matter\n\nYAML.\n\n## Frontmatter\n\nTOML.\n",
        "guide.md": "# Guide\n\n[anchor](config.md#markdown-anchor), "
                    "[migrate](config.md#migration-from-0-x), [node](config.md#Install-Node-js), "
                    "[front](config.md#frontmatter), [fm](config.md#front-matter) and "
                    "[none](config.md#nowhere-at-all).\n"})
    rows = reached(config, "docs:guide.md")
    assert rows == {"anchor": "docs:config.md#markdownanchor",
                    "migrate": "docs:config.md#migration-from-0x",
                    "node": "docs:config.md#install-nodejs",
                    "front": "docs:config.md#frontmatter", "fm": "docs:config.md#front-matter",
                    "none": "docs:config.md"}


def test_ra_get_of_an_id_an_anchor_gives_reads_its_section(tmp_path, monkeypatch, capsys):
    """airbnb's style guide names each rule with ``<a name="functions--declarations">`` in
    a list item, and links it so; ``ra get`` of that id said "no chunk"."""
    kb(tmp_path, {"guide.md": "# Guide\n\n## Functions\n\n- <a name=\"functions--decl\">"
                              "</a> Use named function expressions.\n\n## Types\n\nNone.\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["get", "docs:guide.md#functions--decl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "docs:guide.md#functions"
    assert main(["get", "docs:guide.md#functions--nothing"]) == 1
    assert "no chunk with id" in capsys.readouterr().err


def test_ra_get_of_a_dotted_id_reads_its_section(tmp_path, monkeypatch, capsys):
    """gomarkdoc declares ``<a name="AnyType.Equals"></a>`` above each method and links
    ``#AnyType.Equals``; a heading may declare ``{#Qux.Quux}`` (stored as ``Qux-Quux``):
    ``ra get`` of either id as written found no chunk, though links reached them."""
    kb(tmp_path, {"a.md": "# T\n\n<a name=\"AnyType.Equals\"></a>\n## func Equals\n\nTwo."
                          "\n\n## func Qux {#Qux.Quux}\n\nFour.\n"})
    monkeypatch.chdir(tmp_path)
    for written, found in (("AnyType.Equals", "func-equals"), ("Qux.Quux", "Qux-Quux")):
        assert main(["get", f"docs:a.md#{written}", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["id"] == f"docs:a.md#{found}"


def test_a_link_to_an_obsidian_block_reaches_the_chunk_holding_it(tmp_path):
    """``[[Internal links#^b15695]]`` names the paragraph that ends with ``^b15695``
    (Obsidian's help vault: 20 such links in its English pages reached the page); an id
    inside code is an example."""
    config = kb(tmp_path, {
        "Internal links.md": "# Internal links\n\nIntro.\n\n## Blocks\n\nA network of "
                             "knowledge. ^b15695\n\n- item ^li-1\n\n## Code\n\n```md\n"
                             "x ^in-code\n```\n",
        "Embeds.md": "# Embeds\n\n![[Internal links#^b15695]], [[Internal links#^li-1|item]]"
                     " and [[Internal links#^in-code|code]].\n"})
    rows = reached(config, "docs:Embeds.md")
    assert rows == {"Internal links": "docs:Internal links.md#blocks",
                    "item": "docs:Internal links.md#blocks",
                    "code": "docs:Internal links.md"}


def test_html_anchors_jsx_links_and_mdc_components_are_links():
    """NestJS' docs link with ``<a href>``, shadcn/ui's with ``<Link href>``, Nuxt's with
    ``::read-more{to="..."}`` (408 of them, none a link before); in code they are
    examples, and a name anchor (``<a name="x"></a>``, the C++ docs') or an anchor with
    no text (a permalink's icon: 991 in Cargo's man pages) is no link a reader follows."""
    text = ('See <a href="../install.md">the **install** guide</a>, <Link to="/docs/intro">'
            'Intro <b>page</b></Link>, <a name="top"></a> and <a class="option-anchor" '
            'href="#option-limit"></a><code>--limit</code>.\n\n'
            '::read-more{to="/docs/4.x/guide/concepts/typescript#type-checking"}\n::\n\n'
            'Also :read-more{to="/docs/4.x/api" title="API docs"}, :link-example[an example]'
            '{to="/docs/4.x/examples/hello"} and <a href="https://x.org">ext</a>.\n'
            '`<a href="code.md">no</a>`, {to="nothing"} and a::b{to="x"}.\n\n'
            '```html\n<a href="example.md">example</a>\n```\n')
    assert links_of(text) == [
        ("link", "the install guide", "../install.md"), ("link", "Intro page", "/docs/intro"),
        ("link", "read more", "/docs/4.x/guide/concepts/typescript#type-checking"),
        ("link", "API docs", "/docs/4.x/api"),
        ("link", "an example", "/docs/4.x/examples/hello"),
        ("link", "ext", "https://x.org")]


def test_a_link_to_a_site_page_reaches_the_file_it_is_built_from(tmp_path):
    """Nuxt Content orders its files by a number the URL leaves out and serves the tree
    under ``/docs/4.x/`` (912 of the 922 links of Nuxt's docs reached nothing); the C++
    docs write ``C6302.md`` for ``c6302.md``, which a case-blind file system serves. A
    URL ending with a page of one name only is not taken for it: ``/blog/intro`` is the
    site's blog, not the tree's ``intro.md``."""
    config = kb(tmp_path, {
        "1.getting-started/2.installation.md": "# Installation\n\n## Prerequisites\n\nNode.\n",
        "4.api/2.composables/use-fetch.md": "# useFetch\n\nFetches.\n",
        "4.api/2.composables/index.md": "# Composables\n\nAll.\n",
        "c6302.md": "# C6302\n\nA warning.\n",
        "intro.md": "# Intro\n\nHello.\n",
        "guide.md": "# Guide\n\nSee [install](/docs/4.x/getting-started/installation#"
                    "prerequisites), [fetch](/docs/4.x/api/composables/use-fetch), "
                    "[all](/docs/4.x/api/composables/), [warning](./C6302.md), "
                    "[blog](/blog/intro), [intro](intro) and [gone](/docs/4.x/api/gone).\n"})
    rows = reached(config, "docs:guide.md")
    assert rows == {"install": "docs:1.getting-started/2.installation.md#prerequisites",
                    "fetch": "docs:4.api/2.composables/use-fetch.md",
                    "all": "docs:4.api/2.composables/index.md",
                    "warning": "docs:c6302.md", "blog": None, "intro": "docs:intro.md",
                    "gone": None}


@pytest.mark.parametrize(("target", "paths"), [
    ("a\\_b.md", ("docs/a/a_b.md",)),  # CommonMark's backslash escapes
    ("x\\(1\\).md#s", ("docs/a/x(1).md",)),
    ("old\\notes.md", ("docs/a/old\\notes.md",)),  # a backslash before a letter stays
    ("Setup%20Guide.md", ("docs/a/Setup Guide.md", "docs/a/Setup%20Guide.md")),
    ("img/logo.png", ("docs/a/img/logo.png",)),  # a file kind's suffix: that file
    ("v1.2", ("docs/a/v1.2", "docs/a/v1.2.md", "docs/a/v1.2.mdx", "docs/a/v1.2.markdown",
              "docs/a/v1.2.mdoc", "docs/a/v1.2.qmd", "docs/a/v1.2.Rmd", "docs/a/v1.2/index.md",
              "docs/a/v1.2/README.md", "docs/a/v1.2/_index.md", "docs/a/v1.2/index.mdx",
              "docs/a/v1.2/index.mdoc", "docs/a/v1.2/index.qmd")),  # a dot in a page's name
])
def test_escapes_in_a_target(target, paths):
    assert target_of("docs/a/b.md", Link("link", "x", target)).paths == paths


def test_ra_get_links_returns_the_linked_chunks_within_the_budget(tmp_path, monkeypatch,
                                                                   capsys):
    kb(tmp_path, FILES)
    monkeypatch.chdir(tmp_path)
    assert main(["get", "docs:index.md", "--links", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in data["linked"]] == [
        "docs:guide/setup.md", "docs:api.md#endpoints", "docs:notes/deep/Deep Note.md"]
    assert all(c["tier"] == "full" and c["content"] for c in data["linked"])
    assert [link["id"] for link in data["links"]][-2:] == [None, None]  # gone, external
    assert main(["get", "docs:index.md", "--links", "--max-tokens", "80"]) == 0
    out = capsys.readouterr().out
    assert "reaching 3 indexed chunks" in out
    # no room for its text: its id and title (80 tokens: the chunk itself takes 63 with
    # the lines it is shown under)
    assert "docs:guide/setup.md  Setup" in out
    assert main(["get", "docs:index.md", "--links", "--max-tokens", "40", "--json"]) == 0
    tight = json.loads(capsys.readouterr().out)
    assert tight["linked_omitted"] + len(tight["linked"]) == 3
    assert tight["tokens_used"] <= max(40, tight["tokens"])


def test_get_links_leaves_out_the_chunk_itself_and_its_ancestors(tmp_path, monkeypatch,
                                                                 capsys):
    kb(tmp_path, FILES)
    monkeypatch.chdir(tmp_path)
    assert main(["get", "docs:guide/setup.md", "--links", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in data["linked"]] == ["docs:index.md#home"]


def test_a_link_follows_the_file_it_points_to_when_only_that_file_changes(tmp_path):
    config = kb(tmp_path, FILES)
    assert ("docs:api.md#endpoints", "docs:guide/setup.md#install") in {
        (r[0], r[5]) for r in resolved(config)}
    write(tmp_path / "docs" / "guide" / "setup.md", "# Setup\n\nNo declared id now.\n", bump=5)
    after = {(r[0], r[5]) for r in resolved(config)}  # api.md itself did not change
    assert ("docs:api.md#endpoints", "docs:guide/setup.md") in after
    (tmp_path / "docs" / "index.md").unlink()
    assert not [r for r in resolved(config) if r[0].startswith("docs:index.md")]


def test_incremental_updates_keep_the_links_of_a_full_build(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    rng = random.Random(11)
    names = [f"p{i}.md" for i in range(8)]

    def page(name: str) -> str:
        links = " ".join(f"[{n}]({n}#{rng.choice(['top', 'part', 'nope'])})"
                         for n in rng.sample(names, 3))
        return f"# Top\n\nIntro {links}\n\n## Part\n\n[[{rng.choice(names)[:-3]}]]\n"

    config = kb(tmp_path / "inc", {n: page(n) for n in names[:5]})
    resolved(config)  # first build
    for step in range(8):
        path = tmp_path / "inc" / "docs" / rng.choice(names)
        if path.exists() and step % 3 == 2:
            path.unlink()
        else:
            write(path, page(path.name), bump=step + 1)
        resolved(config)
    full_root = tmp_path / "full"
    for path in sorted((tmp_path / "inc" / "docs").glob("*.md")):
        write(full_root / "docs" / path.name, path.read_text())
    assert resolved(config) == resolved(kb(full_root, {}))


# --- brackets inside brackets ------------------------------------------------------------

@pytest.mark.parametrize(("text", "links"), [
    # a badge: a link whose text is an image links the image's alt text to its target
    ("[![Crates.io](https://img.shields.io/crates/v/x.svg)](https://crates.io/crates/x)",
     [("link", "Crates.io", "https://crates.io/crates/x")]),
    ("[![Dataproc](icon.png \"Dataproc\")][dp]\n\n[dp]: /dataproc",
     [("link", "Dataproc", "/dataproc")]),
    # bracketed text inside a link's text (KEP templates: "[Drawbacks [optional]](#…)")
    ("[Drawbacks [optional]](#drawbacks-optional)",
     [("link", "Drawbacks optional", "#drawbacks-optional")]),
    # a "[" that opens nothing is text, as CommonMark reads it
    ("[x [y](u.md)", [("link", "y", "u.md")]),
    ("[[7](#7)] and [[flags](#flags)]", [("link", "7", "#7"), ("link", "flags", "#flags")]),
    # a link whose text shows brackets (an Azure DevOps wiki's "[[Suporte_DevOps]](https:…)")
    # is no wiki link; a wiki link followed by text in parentheses still is one
    ("[[Support]](https://ads.example/tfs/Support) (infra)",
     [("link", "Support", "https://ads.example/tfs/Support")]),
    ("[[Page]](a note) and ![[img.png]]", [("wiki", "Page", "Page")]),
    # DocFX includes: the label is the include's name
    ("[!INCLUDE[product-lifecycle-status](includes/lifecycle-note.md)]",
     [("link", "product-lifecycle-status", "includes/lifecycle-note.md")]),
])
def test_brackets_inside_a_link_as_commonmark_reads_them(text, links):
    assert links_of(f"# T\n\n{text}\n") == links
