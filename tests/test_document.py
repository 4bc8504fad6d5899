"""The document parser: conformance cases of the original, ra's rules, and invariants.

Each conformance category is ported case by case from ``upstream-cases.json``. Where ra
deliberately differs, the case is listed in ``DEVIATIONS`` with the reason and the value
ra gives instead, so a difference is always a decision and never an accident.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import CORPORA, REPO, conformance
from ra.text import document as D
from ra.text import headings as H
from ra.text.document import (
    Slugifier,
    breadcrumb,
    build_chunk_tree,
    parse_document,
    parse_frontmatter,
    slugify,
)
from ra.text.headings import extract_headings

LOSSLESS = ("ra keeps the lines of dropped headings in the body before them, so no text of "
            "a file is lost from the index (tests/test_pipeline.py checks every line lands "
            "in a chunk); a file of bare headings therefore has a document body")

#: conformance source -> (overridden expectations, why)
DEVIATIONS = {
    "crates/ra-document/src/slug.rs::tests::test_unicode_removed": (
        {"expected": ["héllo-wörld"]}, "DESIGN deviation 6: slugs keep Unicode letters"),
    "crates/ra-document/src/build.rs::tests::test_build_chunk_tree_only_headings": (
        {"root_has_body": True, "chunk_count": 1}, LOSSLESS),
    "crates/ra-document/src/parse.rs::tests::test_only_headings_no_content": (
        {"chunk_count": 1}, LOSSLESS),
}


def cases(category: str) -> list:
    return [pytest.param(c, id=c["source"].rsplit("::", 1)[-1])
            for c in conformance(category)["cases"]]


def deviate(case: dict, expected: dict) -> dict:
    """``expected`` with ra's documented deviations applied."""
    override, _why = DEVIATIONS.get(case["source"], ({}, ""))
    return {**expected, **override}


def nodes_of(text: str, tree: str = "docs", path: str = "test.md", title: str = "Doc"):
    return build_chunk_tree(text, tree, path, title)


def span_text(text: str, node) -> str:
    return text.encode()[node.byte_start : node.byte_end].decode()


# --------------------------------------------------------------------------- conformance


@pytest.mark.parametrize("case", cases("slug"))
def test_conformance_slug(case):
    slugger = Slugifier()
    for slug in case.get("reserve", []):
        slugger.reserve(slug)
    expected = deviate(case, case)["expected"]
    assert [slugger.slug(text) for text in case["inputs"]] == expected


@pytest.mark.parametrize("case", cases("frontmatter"))
def test_conformance_frontmatter(case):
    text, expected = case["input"], case["expected"]
    data, remaining, problems = parse_frontmatter(text)
    assert problems == []
    if "frontmatter" in expected:
        assert data is expected["frontmatter"]
    if expected.get("remaining_equals_input"):
        assert remaining == text
    if "remaining_startswith" in expected:
        assert remaining.startswith(expected["remaining_startswith"])
    if "remaining_contains" in expected:
        assert expected["remaining_contains"] in remaining
    doc = parse_document(text.replace("\r\n", "\n"), "docs", "fm.md")
    if "title" in expected:
        if expected["title"] is None:
            assert "title" not in (data or {}) and doc.title == "fm"
        else:
            assert doc.title == expected["title"]
    if "tags" in expected:
        assert list(doc.tags) == expected["tags"]


@pytest.mark.parametrize("case", cases("heading_extraction"))
def test_conformance_heading_extraction(case):
    text = case["input"]
    headings = extract_headings(text)
    assert len(headings) == len(case["expected"])
    for heading, expected in zip(headings, case["expected"], strict=True):
        if "level" in expected:
            assert heading.level == expected["level"]
        if "text" in expected:
            assert heading.text == expected["text"]
        if "heading_start" in expected:
            assert heading.start == expected["heading_start"]
        if "heading_line_text" in expected:
            assert text.encode()[heading.start : heading.end].decode() == \
                expected["heading_line_text"]


@pytest.mark.parametrize("case", cases("heading_spans"))
def test_conformance_heading_spans(case):
    text = case["input"]
    nodes = nodes_of(text)[1:]
    assert [span_text(text, n) for n in nodes] == case["expected_span_texts"]


def _check_structure(node, nodes, expected):
    """Compare the subtree at ``node`` with the (partial) expected structure."""
    assert node.title == expected["title"]
    if "depth" in expected:
        assert node.depth == expected["depth"]
    if "has_body" in expected:
        assert bool(node.body.strip()) == expected["has_body"]
    if "body_trimmed" in expected:
        assert node.body.strip() == expected["body_trimmed"]
    if "children" in expected:
        children = [n for n in nodes if n.parent_id == node.id]
        assert [c.title for c in children] == [c["title"] for c in expected["children"]]
        for child, want in zip(children, expected["children"], strict=True):
            _check_structure(child, nodes, want)


def _chunk_count(nodes) -> int:
    """The original's ChunkTree::chunk_count: nodes whose body has non-whitespace."""
    return sum(1 for n in nodes if n.body.strip())


def _nodes_for(case):
    api = case.get("api")
    if api in ("parse_markdown", "parse_text"):
        doc = parse_document(case["content"], case["tree"], case["path"])
        return doc, doc.nodes
    return None, nodes_of(case["content"], case["tree"], case["path"], case["doc_title"])


def _check_title_priority(case):
    for sub in case["cases"]:
        text = sub["content"]
        if sub["frontmatter_title"] is not None:
            text = f"---\ntitle: {sub['frontmatter_title']}\n---\n{text}"
        assert parse_document(text, "docs", sub["path"]).title == sub["expected"]


@pytest.mark.parametrize("case", cases("chunk_tree_build"))
def test_conformance_chunk_tree_build(case):
    if "content_file" in case:
        pytest.skip(f"needs the upstream file {case['content_file']}")
    if case.get("api") == "determine_title":
        return _check_title_priority(case)
    doc, nodes = _nodes_for(case)
    root = nodes[0]
    want = deviate(case, case["expected"])
    checks = {
        "node_count": lambda v: len(nodes) == v,
        "structure": lambda v: _check_structure(root, nodes, v) is None,
        "preorder_title_position": lambda v: [[n.title, n.position] for n in nodes] == v,
        "root_sibling_count": lambda v: root.sibling_count == v,
        "children_sibling_count": lambda v: [n.sibling_count for n in nodes[1:]] == v,
        "root_id": lambda v: root.id == v,
        "root_doc_id": lambda v: root.doc_id == v,
        "children": lambda v: [{k: getattr(n, k) for k in c} for n, c in
                               zip(nodes[1:], v, strict=True)] == v,
        "root_has_body": lambda v: bool(root.body.strip()) == v,
        "chunk_count": lambda v: _chunk_count(nodes) == v,
        "chunk_count_gt": lambda v: _chunk_count(nodes) > v,
        "children_slugs": lambda v: [n.slug for n in nodes[1:]] == v,
        "title": lambda v: doc.title == v,
        "tags": lambda v: list(doc.tags) == v,
        "tree": lambda v: doc.tree == v,
        "extracted_chunks_min": lambda v: len(nodes) >= v,
        "extracted_chunks_len": lambda v: len(nodes) == v,
        "some_id_contains": lambda v: all(any(s in n.id for n in nodes) for s in v),
        "all_hierarchies_nonempty": lambda v: all(n.breadcrumb for n in nodes) == v,
        "root_body": lambda v: root.body == v,
        "chunk0": lambda v: _check_chunk(nodes[0], v),
        "extracted_chunks": lambda v: all(_check_chunk(n, c) for n, c in
                                          zip(nodes, v, strict=True)) and len(nodes) == len(v),
    }
    for key, value in want.items():
        if key.startswith("_"):
            continue
        assert checks[key](value), (key, value)


def _check_chunk(node, expected: dict) -> bool:
    actual = {"id": node.id, "depth": node.depth, "title": node.title, "body": node.body,
              "position": node.position, "hierarchy": node.breadcrumb.split(" › ")}
    if "body_contains" in expected:
        assert expected["body_contains"] in node.body
    return all(actual[k] == v for k, v in expected.items() if k != "body_contains")


def test_extract_chunks_offsets_match_the_manual_construction():
    # test_extract_chunks builds its Section node by hand: heading line at 17, span from 27.
    case = next(c for c in conformance("chunk_tree_build")["cases"]
                if c["source"].endswith("test_extract_chunks"))
    section = nodes_of(case["content"], "test", "test.md")[1]
    assert (section.heading_start, section.byte_start) == (17, 27)
    assert section.byte_end == len(case["content"])


@pytest.mark.parametrize("case", cases("hierarchy_breadcrumb"))
def test_conformance_hierarchy_breadcrumb(case):
    path = [tuple(step) for step in case["node_path"]]
    assert breadcrumb(case["doc_title"], path) == case["expected"]


TRAVERSAL_DOC = "---\ntitle: Doc\n---\n# H1\nx\n## H2a\nx\n## H2b\nx\n# H1b\nx\n"


@pytest.mark.parametrize("case", cases("tree_traversal"))
def test_conformance_tree_traversal(case):
    # make_test_tree in tree.rs: Doc -> [H1 -> [H2a, H2b], H1b], written as markdown.
    nodes = parse_document(TRAVERSAL_DOC, "docs", "t.md").nodes
    if "expected_preorder_titles" in case:
        assert [n.title for n in nodes] == case["expected_preorder_titles"]
    if "expected_positions" in case:
        assert [n.position for n in nodes] == case["expected_positions"]
    for title, count in case.get("expected_sibling_counts", {}).items():
        assert next(n for n in nodes if n.title == title).sibling_count == count


# ---------------------------------------------------------------------------- documents


def test_bodies_stop_at_the_next_heading_of_any_level():
    nodes = nodes_of("# H1\n## H2\n\nActual content here.")
    assert [(n.title, n.body) for n in nodes] == [
        ("Doc", ""), ("H1", ""), ("H2", "Actual content here.")]
    assert nodes[1].byte_end == nodes[2].byte_end == len("# H1\n## H2\n\nActual content here.")


def test_node_fields_on_a_small_document():
    text = "---\ntitle: Guide\n---\n\nIntro.\n\n# Setup\n\nInstall.\n\n## Linux\n\napt.\n"
    doc = parse_document(text, "docs", "guide.md")
    root, setup, linux = doc.nodes
    assert (root.id, root.parent_id, root.slug, root.depth, root.heading) == (
        "docs:guide.md", None, None, 0, "")
    assert (root.body, root.byte_start, root.byte_end) == ("Intro.\n\n", 22, len(text))
    assert root.heading_start == root.byte_start and root.descendants == 2
    assert (setup.id, setup.parent_id, setup.depth, setup.heading) == (
        "docs:guide.md#setup", "docs:guide.md", 1, "# Setup\n\n")
    assert (setup.body, setup.descendants, setup.sibling_count) == ("Install.\n\n", 1, 1)
    assert (linux.parent_id, linux.breadcrumb) == ("docs:guide.md#setup", "Guide › Setup › Linux")
    assert text[setup.heading_start:].startswith("# Setup")
    # heading and body tile the text: content is an exact slice of the file
    assert doc.content(setup) == text[text.index("# Setup"):]
    assert doc.content(root) == text[root.byte_start:]


def test_breadcrumb_skips_an_h1_that_repeats_the_title():
    doc = parse_document("# Tour\n\nhi\n\n## Stop\n\nx\n", "docs", "tour.md")
    assert [n.breadcrumb for n in doc.nodes] == ["Tour", "Tour", "Tour › Stop"]


def test_dropped_heading_lines_stay_in_the_body_before_them():
    text = "# A\nalpha\n#### Lost\n# B\nbeta\n"
    doc = parse_document(text, "docs", "x.md")
    assert [n.title for n in doc.nodes] == ["A", "A", "B"]
    assert doc.nodes[1].body == "alpha\n#### Lost\n"
    assert parse_document("###### alpha\n", "docs", "x.md").nodes[0].body == "###### alpha\n"


def test_frontmatter_is_removed_before_headings_are_found():
    # Deviation 4: 'title: Notes' over '---' would otherwise be a setext heading.
    doc = parse_document("---\ntitle: Notes\n---\nBody.\n", "docs", "n.md")
    assert [n.title for n in doc.nodes] == ["Notes"] and doc.nodes[0].body == "Body.\n"


def test_broken_yaml_is_reported_and_still_stripped():
    text = "---\ntitle: ok\ntags: [unclosed\n---\n# Real\n\ntext\n"
    doc = parse_document(text, "docs", "b.md")
    assert doc.problems == ("frontmatter: invalid YAML (line 4)",)
    assert doc.title == "Real" and doc.frontmatter == {}
    assert [n.title for n in doc.nodes] == ["Real", "Real"]
    assert doc.nodes[0].byte_start == text.index("# Real")


@pytest.mark.parametrize("frontmatter, data", [
    # Cursor's rules write globs as text: YAML reads `*` as an alias and refuses them
    ("description: React rules\nglobs: **/*.tsx, src/components/*\nalwaysApply: false",
     {"description": "React rules", "globs": "**/*.tsx, src/components/*",
      "alwaysApply": False}),
    ("globs:\n  - *.ts\n  - 'src/**'\n  - *it's*", {"globs": ["*.ts", "src/**", "*it's*"]}),
    # the PowerShell docs: ForEach-Object's alias `%` (a YAML directive's character)
    ("aliases:\n  - %\n  - foreach\ntitle: ForEach-Object",
     {"aliases": ["%", "foreach"], "title": "ForEach-Object"}),
])
def test_values_yaml_refuses_as_they_start_are_text(frontmatter, data):
    doc = parse_document(f"---\n{frontmatter}\n---\n\n# Rules\n\nx\n", "rules", "react.mdc")
    assert (doc.kind, doc.frontmatter, doc.problems) == ("markdown", data, ())
    assert doc.description == data.get("description")


@pytest.mark.parametrize("frontmatter, data", [
    # Svelte's docs: its site reads the block line by line; YAML refuses a value that
    # ends with a colon or holds ": " (7 pages were titled by their file, "12-bind")
    ("title: bind:", {"title": "bind:"}),
    ("title: Reactive $: statements\ntags: legacy-reactive", {
        "title": "Reactive $: statements", "tags": "legacy-reactive"}),
    ("title: {#if ...}\ntags: template-if", {"title": "{#if ...}", "tags": "template-if"}),
])
def test_key_value_lines_yaml_refuses_are_read_as_a_line_reader_reads_them(frontmatter,
                                                                          data):
    doc = parse_document(f"---\n{frontmatter}\n---\n\nText.\n", "docs", "12-bind.md")
    assert doc.frontmatter == data and doc.title == data["title"]
    (problem,) = doc.problems
    assert problem.startswith("frontmatter: invalid YAML (line ")
    assert problem.endswith("); read as key: value lines")


def test_text_in_braces_yaml_reads_as_a_mapping_is_text():
    """Svelte's ``title: {let/const ...}`` is valid YAML, a mapping of one key and no
    value: the page was titled by its file, "11-declaration-tags"."""
    doc = parse_document("---\ntitle: {let/const ...}\n---\n\nText.\n", "docs", "11-d.md")
    assert doc.title == "{let/const ...}" and doc.problems == ()


def test_dashes_around_prose_are_not_frontmatter():
    text = "---\nJust a paragraph between rules.\n---\n\nMore.\n"
    data, remaining, problems = parse_frontmatter(text)
    assert (data, remaining, problems) == (None, text, [])


@pytest.mark.parametrize(("yaml", "title", "tags", "description", "status"), [
    ("tags: Cloud Run, Node.js", None, ("Cloud Run", "Node.js"), None, None),
    ("tags: [rust, '#cli', rust]", None, ("rust", "cli"), None, None),
    ("tags: '#rust #cli'", None, ("rust", "cli"), None, None),
    ("tags:\n  - a\n  - [nested]\n  - 3", None, ("a", "3"), None, None),
    ("tags: null\ntitle: 2024", "2024", (), None, None),
    ("title: null\ntags: {a: 1}", None, (), None, None),
    ("title: [a, b]\ndate: 2024-01-01", "a, b", (), None, None),
    ("summary: short\nstatus: Archived", None, (), "short", "archived"),
    ("description: long\nsummary: short", None, (), "long", None),
    ("date: 2024-13-45", None, (), None, None),
    # a page's search keywords are tags (Mintlify: "white label" only in custom-portal's)
    ('keywords: ["on-prem", "white label"]', None, ("on-prem", "white label"), None, None),
    ("tags: [api]\nkeywords: api, webhooks", None, ("api", "webhooks"), None, None),
])
def test_frontmatter_values_are_coerced(yaml, title, tags, description, status):
    doc = parse_document(f"---\n{yaml}\n---\ntext\n", "docs", "f.md")
    assert doc.title == (title or "f")
    assert (doc.tags, doc.description, doc.status) == (tags, description, status)


def test_text_files_are_one_node():
    text = "# not a heading\n\nplain words\n"
    doc = parse_document(text, "notes", "log.txt")
    assert (doc.kind, doc.title, len(doc.nodes)) == ("text", "log", 1)
    assert doc.nodes[0].body == text and doc.nodes[0].id == "notes:log.txt"


def test_a_title_from_a_file_name_reads_a_wiki_s_dashes_and_url_escapes():
    """An Azure DevOps wiki stores the page "ODO-1 (SI)" as ``ODO%2D1-(SI).md``, with no
    heading: its title is the name, dashes read as spaces (as GitHub's wiki reads them
    too) and then decoded; the words of its path field are decoded too. A lowercase
    slug keeps its dashes."""
    from ra.pipeline.analyze import field_texts

    doc = parse_document("Steps of the report.\n", "wiki", "Tax/ODO%2D1-(SI).md")
    assert doc.title == "ODO-1 (SI)"
    titles = {name: parse_document("Text.\n", "wiki", name).title for name in (
        "100%.md", "Getting-Started.md", "Company,-Customer-and-Vendor.md", "a b-c.md",
        "Security-%2D-user-roles.md", "notes.txt", "ch04-01-what-is-ownership.md",
        "0001-record-decisions.md", "2024-01-15.md")}
    assert titles == {"100%.md": "100%", "Getting-Started.md": "Getting Started",
                      "Company,-Customer-and-Vendor.md": "Company, Customer and Vendor",
                      "a b-c.md": "a b-c",  # a name with spaces keeps its dashes
                      "Security-%2D-user-roles.md": "Security - user roles",
                      "notes.txt": "notes",
                      "ch04-01-what-is-ownership.md": "ch04-01-what-is-ownership",
                      "0001-record-decisions.md": "0001-record-decisions",
                      "2024-01-15.md": "2024-01-15"}  # a journal's day
    assert parse_document("# Set-up\n\nText.\n", "wiki", "x-y.md").title == "Set-up"
    # a language's suffix is not the page's name (Nextra's pages have no h1)
    assert {name: parse_document("## Capabilities\n", "d", name).title for name in (
        "models/llama.en.mdx", "docs/index.fr.md", "pages/trunk.io.md", "notes.v2.md")} == {
        "models/llama.en.mdx": "llama", "docs/index.fr.md": "docs",
        "pages/trunk.io.md": "trunk.io", "notes.v2.md": "notes.v2"}
    row = {"breadcrumb": doc.title, "tags": [], "path": doc.path, "body": "Steps.",
           "description": None, "descendants": 0}
    assert field_texts(row, "Steps.")["path"] == "Tax/ODO-1-(SI)"


def test_chunk_at_headings_false_keeps_one_node_with_the_title():
    text = "---\ntags: [x]\n---\n# Title\n\nbody\n\n## Sub\n\nmore\n"
    doc = parse_document(text, "docs", "t.md", chunk_at_headings=False)
    assert [n.title for n in doc.nodes] == ["Title"]
    assert doc.nodes[0].body == "# Title\n\nbody\n\n## Sub\n\nmore\n"


def test_markdown_suffixes():
    assert parse_document("# A\n\nx", "d", "A.MARKDOWN").kind == "markdown"
    assert parse_document("# A\n\nx", "d", "a.mdx").kind == "markdown"  # MDX (Docusaurus)
    assert parse_document("# A\n\nx", "d", "a.qmd").kind == "markdown"  # Quarto
    assert parse_document("# A\n\nx", "d", "a.Rmd").kind == "markdown"  # R Markdown
    assert parse_document("# A\n\nx", "d", "a.mdown").kind == "text"


def test_byte_offsets_are_utf8_offsets():
    text = "---\ntitle: Ü\n---\nvorwort é\n# Größe 日本\n\nnaïve\n## 🚀 Start\n\nlos\n"
    doc = parse_document(text, "docs", "u.md")
    raw = text.encode()
    for node in doc.nodes:
        assert raw[node.heading_start:].decode().startswith(node.heading)
        assert raw[node.byte_start:].decode().startswith(node.body)
    assert [n.slug for n in doc.nodes] == [None, "größe-日本", "start"]


# ----------------------------------------------------------------------------- headings


@pytest.mark.parametrize(("text", "expected"), [
    ("Title\n=====\n\nx\n", [(1, "Title")]),
    ("Sub\ntitle\n---\n\nx\n", [(2, "Sub title")]),
    ("```\n# not a heading\n```\n# Yes\n", [(1, "Yes")]),
    ("~~~md\n# no\n~~~\n", []),
    ("    # indented code\n", []),
    ("<div>\n# inside html\n</div>\n", []),
    ("#hashtag\n#5 bolt\n", []),
    ("# closed ##\n", [(1, "closed")]),
    ("\\# escaped\n", []),
    ("> # In a quote\n>\n> text\n", [(1, "In a quote")]),
    ("-\n  # In a list item\n  text\n", [(1, "In a list item")]),
    ("- a\n\n  ## Nested\n", [(2, "Nested")]),
    ("# *Emph* and [link](u) and ![alt](i)\n", [(1, "Emph and link and alt")]),
    ("## <a name=\"x\"></a> CFoo::Bar\n", [(2, "CFoo::Bar")]),
    ("# a &amp; b &copy;\n", [(1, "a & b ©")]),
    ("# ``code ` span``\n", [(1, "code ` span")]),
    ("# unclosed `tick\n", [(1, "unclosed `tick")]),
    ("[ref]: /url\n===\n", []),
])
def test_headings_follow_commonmark(text, expected):
    assert [(h.level, h.text) for h in extract_headings(text)] == expected


def test_nested_heading_spans_start_at_their_line():
    text = "intro\n\n-\n  # Item heading\n  body\n"
    (heading,) = extract_headings(text)
    assert text[heading.start:heading.end] == "  # Item heading\n"


def test_mistletoe_state_is_restored():
    from mistletoe import block_token, block_tokenizer, span_token

    before = (list(block_token._token_types), list(span_token._token_types),
              block_tokenizer.tokenize_block)
    parse_document("# A\n\n> b\n- c\n", "d", "a.md")
    after = (list(block_token._token_types), list(span_token._token_types),
             block_tokenizer.tokenize_block)
    assert before == after


def test_importing_the_parser_does_not_import_mistletoe_or_yaml():
    code = ("import sys, ra.text.document; "
            "print(sorted(m for m in ('mistletoe', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout
    assert out.strip() == "[]"


# -------------------------------------------------------------------------------- slugs


@pytest.mark.parametrize(("text", "slug"), [
    ("日本語", "日本語"),
    ("snake_case name", "snake_case-name"),
    ("a - b", "a-b"),
    ("C++ / C#", "c-c"),
    ("Ünïcödé Straße", "ünïcödé-straße"),
    ("हिन्दी", "हिन्दी"),
    ("", "heading"),
    # an emoji's variation selector and keycap are no letters (Docsify's "### Legacy Style
    # ⚠️" had the id "legacy-style-\ufe0f", which no one could type)
    ("Legacy Style ⚠️", "legacy-style"),
    ("1️⃣ First ☕️ step", "1-first-step"),
])
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_slugs_never_collide():
    slugger = Slugifier()
    assert [slugger.slug(t) for t in ["A", "A", "A-1", "A", "a 1"]] == [
        "a", "a-1", "a-1-1", "a-2", "a-1-2"]


def test_every_heading_takes_a_slug_even_when_dropped():
    # GitHub anchors count every heading, so ids match links into the rendered page.
    nodes = nodes_of("# Intro\n# Intro\n\ntext\n")
    assert [n.id for n in nodes] == ["docs:test.md", "docs:test.md#intro-1"]


# --------------------------------------------------------------------------- invariants

LINES = ["# A", "## B", "### C", "#### D", "# A", "text", "more text", "", "", "```",
         "~~~", "    code", "> quote", "> # Q", ">", "- item", "1. item", "-", "  # nested",
         "===", "---", "***", "<div>", "</div>", "[ref]: /u", "#", "# é 日本 🚀", "\t# tab",
         "`x`", "\\", "## ``", "---\ntitle: t\n---"]
markdownish = st.lists(st.sampled_from(LINES) | st.text(max_size=12), max_size=25).map(
    "\n".join) | st.text()


@settings(max_examples=400, deadline=None)
@given(markdownish, st.sampled_from(["a.md", "b.txt"]), st.booleans())
@example("# H1\n# H2\n# H3", "a.md", True)
@example("-\n  # A\n-\n\n  B\n  ---\n", "a.md", True)
@example("---\na: [\n---\n# x", "a.md", True)
@example(">" * 400 + " # deep", "a.md", True)
def test_parse_never_raises_and_the_tree_is_consistent(text, path, chunk):
    doc = parse_document(text, "t", path, chunk_at_headings=chunk)
    nodes, raw = doc.nodes, text.encode("utf-8", "surrogatepass")
    assert nodes[0].depth == 0 and nodes[0].parent_id is None and nodes[0].sibling_count == 1
    assert [n.position for n in nodes] == list(range(len(nodes)))
    assert len({n.id for n in nodes}) == len(nodes)
    by_id = {n.id: n for n in nodes}
    for node in nodes[1:]:
        parent = by_id[node.parent_id]
        assert parent.position < node.position and parent.depth < node.depth
        assert parent.byte_start <= node.heading_start <= node.byte_start <= node.byte_end
        assert node.byte_end <= parent.byte_end
        assert node.sibling_count == sum(1 for n in nodes if n.parent_id == node.parent_id)
    for node in nodes:
        inside = nodes[node.position + 1 : node.position + node.descendants + 1]
        assert all(_is_ancestor(by_id, node, n) for n in inside)
        after = nodes[node.position + node.descendants + 1 :]
        assert not after or not _is_ancestor(by_id, node, after[0])
        heading, body = node.heading.encode("utf-8", "surrogatepass"), \
            node.body.encode("utf-8", "surrogatepass")
        assert raw[node.heading_start : node.heading_start + len(heading)] == heading
        assert raw[node.byte_start : node.byte_start + len(body)] == body
    # nothing is lost: heading and body of the nodes tile the text after the frontmatter
    assert doc.content(nodes[0]).encode("utf-8", "surrogatepass") == raw[nodes[0].byte_start:]
    for node in nodes:
        content = doc.content(node).encode("utf-8", "surrogatepass")
        assert raw[node.heading_start : node.heading_start + len(content)] == content


def _is_ancestor(by_id, ancestor, node) -> bool:
    while node.parent_id is not None:
        node = by_id[node.parent_id]
        if node is ancestor:
            return True
    return False


# ------------------------------------------------------- the fast paths equal mistletoe


def _reference():
    """mistletoe's own classes and block tokenizer, with ra's heading collection."""
    from mistletoe import block_token as bt
    from mistletoe import block_tokenizer

    fast = H._mistletoe()
    return SimpleNamespace(**{
        **vars(fast), "Heading": bt.Heading, "tokenize_block": block_tokenizer.tokenize_block,
        "block_types": [bt.HtmlBlock, bt.BlockCode, bt.Heading, bt.Quote, bt.CodeFence,
                        bt.ThematicBreak, bt.List, bt.Footnote, bt.Paragraph]})


def _headings_with(namespace, text: str):
    lines = H.Lines(text)
    found = []
    with H._mistletoe_session(namespace):
        H._collect(namespace.tokenize_block(lines.lines, namespace.block_types), namespace,
                   lines, found)
    return sorted((h.first, h.stop, h.level, h.text) for h in found)


def _fast_headings(text: str):
    return [(h.first, h.stop, h.level, h.text) for h in H.scan_headings(H.Lines(text))[0]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES + ["<!-- c", "-->", "   text", "1) x", ". x", "| a |",
                                         "  - sub", "    more", "[x]: /y 'z'", "_ _ _"]),
                max_size=30).map("\n".join))
def test_fast_block_pass_finds_what_mistletoe_finds(text):
    assert _fast_headings(text) == _headings_with(_reference(), text)


INLINE_PIECES = ["`", "``", "a", "b1", "é", " ", "_", "__", "*", "[", "]", "(", ")", "<", ">",
                 "&", "amp;", "!", "\\", "~", ":", '"', '<a name="x"></a>', '<a id="y"> </a>',
                 "<b>", "</b>"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(INLINE_PIECES), max_size=12).map("".join)
       | st.text(alphabet="`a _*[]()<>&;!\\~x", max_size=20))
@example('<a name="read"></a> CAtlFile::m_read `x_y`')
def test_fast_heading_text_equals_mistletoe_inline_parse(content):
    m = H._mistletoe()
    with H._mistletoe_session(m):
        assert H._inline_text(content, m) == H._plain(m.span_token.tokenize_inner(content), m)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["rust-book", "gcp-community", "tldr", "cpp-docs",
                                    "powershell-docs"])
def test_fast_block_pass_on_whole_corpora(corpus):
    folder = CORPORA / corpus
    if not folder.is_dir():
        pytest.skip(f"corpus {corpus} not available")
    reference = _reference()
    for file in sorted(folder.rglob("*.md")):
        text = file.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        body = text[D._split_frontmatter(text)[1]:]
        assert _fast_headings(body) == _headings_with(reference, body), file


def test_yaml_alias_bombs_do_not_explode():
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"] + [
        f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
    text = "---\n" + "\n".join(levels) + "\ntitle: *i\ntags: *i\n---\n# T\n\nx\n"
    doc = parse_document(text, "docs", "bomb.md")
    assert doc.title == "T" and doc.tags == ()


def test_kramdown_rfc_s_front_matter_ends_at_its_abstract():
    """An IETF draft in markdown (kramdown-rfc) ends its YAML at ``--- abstract``: read
    to a ``...`` in an example further down, ``draft-ietf-httpbis-connect-tcp.md`` lost
    its first 156 lines, and the others were titled "Introduction"."""
    text = ("---\ntitle: \"Template-Driven CONNECT for TCP\"\ndocname: draft-x-latest\n"
            "author:\n -\n    name: B. S.\n\n--- abstract\n\nTCP proxying has gaps.\n\n"
            "--- middle\n\n# Introduction\n\nThe only mechanism.\n\n~~~\nexample\n...\n~~~\n\n"
            "# Security\n\nCare.\n\n--- back\n\n# Acknowledgments\n\nThanks.\n")
    doc = parse_document(text, "d", "draft-x.md")
    assert doc.title == "Template-Driven CONNECT for TCP" and doc.frontmatter["docname"] == (
        "draft-x-latest")
    assert [n.title for n in doc.nodes] == ["Template-Driven CONNECT for TCP", "Introduction",
                                            "Security", "Acknowledgments"]
    assert "The only mechanism." in doc.nodes[1].body


def test_a_first_h1_that_names_a_part_is_no_title():
    """Ember's and React's RFC templates open with ``# Summary`` and go on with
    ``# Motivation``, ``# Detailed design``: 73 of Ember's 262 RFCs were titled
    "Summary" and each section's breadcrumb began with it. The file's name titles
    them; a page whose only h1 is "Overview", or whose first h1 is its name, keeps it."""
    rfc = parse_document("# Summary\n\nNamed blocks.\n\n# Motivation\n\nWhy.\n\n"
                         "# Detailed design\n\nHow.\n", "d", "0226-named-blocks.md")
    assert rfc.title == "0226-named-blocks"
    assert [(n.depth, n.title) for n in rfc.nodes] == [
        (0, "0226-named-blocks"), (1, "Summary"), (1, "Motivation"), (1, "Detailed design")]
    assert parse_document("# Overview\n\nText.\n", "d", "x.md").title == "Overview"
    assert parse_document("# Named blocks\n\nA.\n\n# Summary\n\nB.\n", "d",
                          "x.md").title == "Named blocks"


def test_a_page_that_opens_with_its_summary_is_not_titled_by_its_first_section():
    """rustdoc's included pages (axum's ``src/docs/``) open with a summary line and go on
    with sections at level 1: 10 of them were titled "Intro", "Example" or "Static
    paths", and "route_layer" gave four results titled "Example". The file's name titles
    them (a README's, its folder's); a badge or an image above a page's one h1, or text
    above its only h1, leaves the h1 its title."""
    extract = parse_document("Types and traits for extracting data from requests.\n\n"
                             "# Intro\n\nA handler takes extractors.\n\n# Common extractors\n"
                             "\nSome.\n", "d", "axum/src/docs/extract.md")
    assert extract.title == "extract"
    assert [n.title for n in extract.nodes if n.depth == 1] == ["Intro", "Common extractors"]
    readme = parse_document("This directory holds the evaluation.\n\n# Running\n\nRun.\n\n"
                            "# Results\n\nSee.\n", "d", "crates/ty_completion_eval/README.md")
    assert readme.title == "ty_completion_eval"
    badges = "[![CI](https://x/badge.svg)](https://x)\n<img src='logo.png'>\n\n"
    assert parse_document(f"{badges}# Ruff\n\nA linter.\n\n# Usage\n\nRun it.\n", "d",
                          "README.md").title == "Ruff"
    assert parse_document("Draft.\n\n# Ruff\n\nA linter.\n", "d", "x.md").title == "Ruff"


def test_a_changelog_s_releases_at_level_one_are_no_title():
    """Prettier's changelog heads each release with ``# 3.9.6``, ``# 3.9.5``, …; create-vite's
    writes its older releases at level 1 from line 1,381, after its newer ones at level 2.
    The first h1 titled the page and began every breadcrumb ("3.9.6 › 3.9.5 › Markdown:
    …", "2.5.0 (2021-07-12) › 4.0.0 (2022-12-09) › ⚠ BREAKING CHANGES"), and a search for
    "3.9.6" matched all 330 chunks. The file's name titles them; a page titled by its
    first h1 with a release's number in it, or a release's notes with one h1, keep it."""
    log = parse_document("# 3.9.6\n\nFix A.\n\n# 3.9.5\n\n## Markdown\n\nFix B.\n",
                         "d", "CHANGELOG.md")
    assert log.title == "CHANGELOG"
    assert log.nodes[-1].breadcrumb == "CHANGELOG › 3.9.5 › Markdown"
    later = parse_document("## 4.0.0 (2022-12-09)\n\nNew.\n\n# [1.0.0](https://x/v1) "
                           "(2021-01-07)\n\nOld.\n\n# 0.9.0\n\nOlder.\n", "d", "CHANGELOG.md")
    assert later.title == "CHANGELOG"
    assert parse_document("# 1.0.0 (2021-01-07)\n\nFirst.\n", "d", "v1.md").title == (
        "1.0.0 (2021-01-07)")
    assert parse_document("# Vite 5.0 is out\n\nA.\n\n# Looking ahead\n\nB.\n", "d",
                          "announcing-vite5.md").title == "Vite 5.0 is out"


def test_keys_after_a_block_of_comments_are_the_front_matter():
    """Magic Modules puts its "AUTO GENERATED CODE" notice, YAML comments, in a ``---``
    block of its own before some of Terraform's Google provider pages' keys: the keys and
    their closing ``---`` were read as a heading ("subcategory: … description: …"), which
    came before the page's h1. A page built as ``.html`` is named without it."""
    text = ("---\n# ---------\n#  AUTO GENERATED CODE\n# ---------\n---\r\n"
            "subcategory: \"Secret Manager\"\r\ndescription: |-\r\n  List the secrets.\r\n"
            "---\r\n\r\n# google_secrets\r\n\r\nUse this data source.\r\n")
    doc = parse_document(text, "d", "d/secrets.html.markdown")
    assert doc.title == "google_secrets" and doc.description == "List the secrets."
    assert {n.title for n in doc.nodes} == {"google_secrets"}
    notice = parse_document("---\n# a comment\n---\nThis is prose, not keys.\n\n---\n\n"
                            "More.\n", "d", "manual/page.html.md")
    assert notice.title == "page" and "This is prose" in notice.nodes[0].body


def test_a_terraform_block_s_arguments_are_its_own_section():
    """Terraform's providers open each nested block's arguments with a paragraph, not a
    heading (``<a name="nested_autoclass"></a>The `autoclass` block supports:``, azurerm's
    ``A `default_node_pool` block supports the following:``): a resource's "Argument
    Reference" was one chunk of every block (Google's container_cluster: 29,951 tokens),
    and "azurerm_kubernetes_cluster default_node_pool" gave its section 15th. Each such
    paragraph opens a section a level below the heading before it; in code, or within a
    paragraph, it stays text."""
    text = ("# google_storage_bucket\n\n## Argument Reference\n\n* `name` - (Required) The "
            "name.\n\n<a name=\"nested_autoclass\"></a>The `autoclass` block supports:\n\n"
            "* `enabled` - (Required) Whether.\n\n```hcl\nThe `x` block supports:\n```\n\n"
            "An `identity` block supports the following:\n\n* `type` - (Required) Kind.\n"
            "\nThe optional `identity.ids` subblock supports:\n\n* `id` - An id.\n"
            "\nSee below. The `y` block supports:\n\n## Attributes Reference\n\n"
            "A `timeouts` block exports the following:\n\n* `id` - The id.\n")
    doc = parse_document(text, "d", "r/storage_bucket.html.markdown")
    assert [(n.depth, n.title) for n in doc.nodes] == [
        (0, "google_storage_bucket"), (1, "google_storage_bucket"), (2, "Argument Reference"),
        (3, "autoclass block"), (3, "identity block"), (3, "identity.ids block"),
        (2, "Attributes Reference"), (3, "timeouts block")]
    assert "The `x` block supports:" in doc.nodes[3].body  # in code: text
    assert "See below. The `y` block supports:" in doc.nodes[5].body
    assert doc.nodes[3].id == "d:r/storage_bucket.html.markdown#autoclass-block"


def test_a_page_that_hides_its_title_is_titled_by_its_first_heading():
    """api-documenter's 3,211 pages say ``hide_title: true`` and open with ``## JsonFile.load()
    method``: each was titled "True" (the flag read as a title), every breadcrumb
    "True › …". A flag is no title; the heading the page shows is, once in its
    breadcrumbs (as an h1 that repeats the title is)."""
    doc = parse_document("---\nhide_title: true\ncustom_edit_url: null\n---\n<!-- gen -->\n\n"
                         "[Home](./index.md) &gt; [load](./x.md)\n\n## JsonFile.load() method"
                         "\n\nLoads.\n\n## Parameters\n\nA path.\n", "d",
                         "node-core-library.jsonfile.load.md")
    assert doc.title == "JsonFile.load() method"
    assert [n.breadcrumb for n in doc.nodes] == [
        "JsonFile.load() method", "JsonFile.load() method",
        "JsonFile.load() method › Parameters"]
    flag = parse_document("---\nshow_title: false\n---\nText.\n", "d", "notes/plain.md")
    assert flag.title == "plain"


def test_a_heading_right_after_a_closing_tag_is_a_heading():
    """Terraform's Google provider puts each "## Example Usage - …" right after its "Open
    in Cloud Shell" ``</div>``: CommonMark reads it as the HTML block's last line (the
    block ends at a blank line), the site's renderer as a heading; compute_url_map's top
    chunk held its 20 examples, 216,166 characters (453 pages). In code it stays code."""
    text = ("# google_compute_url_map\n\nIntro.\n\n<div class=\"oics-button\">\n  <a href=\"x\">"
            "</a>\n</div>\n## Example Usage - Bucket\n\n```hcl\nresource {}\n</div>\n"
            "## not a heading\n```\n\n<div>\n</div>\n## Example Usage - Route\n\nText.\n")
    doc = parse_document(text, "d", "r/compute_url_map.html.markdown")
    assert [n.title for n in doc.nodes] == [
        "google_compute_url_map", "google_compute_url_map", "Example Usage - Bucket",
        "Example Usage - Route"]
    assert "## not a heading" in doc.nodes[2].body


def test_hugging_face_doc_builder_ids_name_their_headings():
    """deep-rl-class (62 of 114 pages) and the transformers and diffusers docs write a
    heading's id at its end, ``## Markov Property [[markov-property]]``: titles carried it
    ("Quiz [[quiz]]"), ids doubled it (``#markov-property-markov-property``), and it was
    read as a wiki link to another page (``unit0``'s ``[[introduction]]`` to unit8's);
    ``[[open-in-colab]]`` was text and a link. Obsidian's ``[[Metric]]`` in a heading shows
    as its text, as in a body."""
    from ra.text.links import document_links
    from ra.text.markup import plain_text

    doc = parse_document("# Load adapters [[load-adapters]]\n\n[[open-in-colab]]\n\nIntro.\n\n"
                         "## Merge adapters [[merge-adapters]]\n\nSee [it](#merge-adapters) "
                         "and [[quiz]].\n\n## Basic [[Metric]] for [[a.b|Label]]\n\nx\n",
                         "docs", "lora.md")
    assert doc.title == "Load adapters"
    assert [(n.id, n.title) for n in doc.nodes][1:] == [
        ("docs:lora.md#load-adapters", "Load adapters"),
        ("docs:lora.md#merge-adapters", "Merge adapters"),
        ("docs:lora.md#basic-metric-for-label", "Basic Metric for Label")]
    assert "open-in-colab" not in plain_text(doc.nodes[1].body)
    links = [(link.kind, link.target) for found in document_links(doc) for link in found]
    assert links == [("link", "#merge-adapters"), ("wiki", "quiz"), ("wiki", "Metric"),
                     ("wiki", "a.b")]
    # an Obsidian link ending a heading stays a link: not a slug, not the heading's words
    # (the first version cut "See also" and lost the link to the transformers note)
    notes = parse_document("# Stats\n\n## 1.1. [[Population]] and [[sample]]\n\nOne.\n\n"
                           "## See also [[transformers]]\n\nTwo.\n\n## Step 1: Init [[step1]]\n"
                           "\nThree.\n\n## Conclusion [[Conclusion]]\n\nFour.\n", "docs", "n.md")
    assert [(n.id, n.title) for n in notes.nodes][2:] == [
        ("docs:n.md#11-population-and-sample", "1.1. Population and sample"),
        ("docs:n.md#see-also-transformers", "See also transformers"),
        ("docs:n.md#step1", "Step 1: Init"), ("docs:n.md#Conclusion", "Conclusion")]
    assert [link.target for found in document_links(notes) for link in found] == [
        "Population", "sample", "transformers"]


def test_math_in_a_heading_is_read_as_written():
    r"""A heading's text is read apart from the body's: "## Weights $w_{i}^*$ and $b_{j}^*$
    learned" lost its stars to emphasis, lil-log's "$$\boldsymbol{\Sigma}_\theta$$" its
    underscore, where the same math in a body was whole."""
    doc = parse_document("# Notes\n\n## Weights $w_{i}^*$ and $b_{j}^*$ learned\n\nx\n\n"
                         "### Variance $$\\boldsymbol{\\Sigma}_\\theta$$\n\ny\n\n"
                         "## Costs $5 and $10\n\nz\n", "d", "n.md")
    assert [n.title for n in doc.nodes][2:] == [
        "Weights w_{i}^* and b_{j}^* learned", "Variance \\boldsymbol{\\Sigma}_\\theta",
        "Costs $5 and $10"]


def test_a_page_with_no_other_title_is_titled_by_its_name():
    """An agent skill's ``SKILL.md`` names itself in its front matter, and without a
    heading it was "SKILL"; Ember's RFC stages (front matter alone) were their files'
    names. A title or an h1 still comes first."""
    skill = parse_document("---\nname: pdf-processing\ndescription: Fill PDF forms.\n---\n"
                           "Use pdfplumber.\n", "s", "pdf/SKILL.md")
    assert skill.title == "pdf-processing"
    assert parse_document("---\nname: Ready For Release\n---\n", "d",
                          "stages/ready-for-release.md").title == "Ready For Release"
    assert parse_document("---\nname: x\n---\n# PDF forms\n\nText.\n", "s",
                          "SKILL.md").title == "PDF forms"
    assert parse_document("---\nname: x\ntitle: Y\n---\nText.\n", "s", "a.md").title == "Y"


LLMS_FULL = """\
# FastAPI

> FastAPI framework, high performance, easy to learn.

# CORS (Cross-Origin Resource Sharing)
Source: https://fastapi.tiangolo.com/tutorial/cors/

## Use CORSMiddleware

Add it to your application.

# Request Files
Source: https://fastapi.tiangolo.com/tutorial/request-files/

Upload files with `File`.
"""


@pytest.mark.parametrize("name", ["llms-full.txt", "static/llms.txt", "llms-medium.txt",
                                  "docs/LLMS_FULL.TXT"])
def test_a_sites_llms_txt_is_markdown(name):
    """A site's ``llms.txt`` files are markdown, a ``# Title`` per page in the full ones:
    read as plain text, FastAPI's 1.5 MB ``llms-full.txt`` was one chunk of 392,135
    tokens, and every search gave that one chunk."""
    from ra.pipeline.discover import kind_of
    from ra.text import is_markdown

    doc = D.parse_document(LLMS_FULL, "docs", name)
    assert kind_of(name) == "markdown" and is_markdown(name)
    assert "docs:" + name + "#use-corsmiddleware" in [n.id for n in doc.nodes]
    assert [n.title for n in doc.nodes if n.depth == 1] == [
        "FastAPI", "CORS (Cross-Origin Resource Sharing)", "Request Files"]


@pytest.mark.parametrize("name", ["notes.txt", "llmsnotes.txt", "requirements-llms.txt"])
def test_other_text_files_stay_plain_text(name):
    from ra.pipeline.discover import kind_of

    assert kind_of(name) == "text"
    assert len(D.parse_document(LLMS_FULL, "docs", name).nodes) == 1


def test_an_outliners_page_is_titled_by_its_file():
    """Logseq names a page for its file (``Whiteboard.md``; a namespace's slashes are
    ``___`` in the name: ``Whiteboard___Tool___Portal.md``); its headings are blocks
    (``- # Usage``). The first such ``#`` titled Whiteboard.md "Usage" (and four more
    pages), and 50 namespaced pages kept their ``___``."""
    text = ("alias:: Whiteboards\n\n- An intro block\n- # Usage\n\t- Draw.\n- # Functionality\n"
            "\t- Shapes.\n")
    doc = D.parse_document(text, "docs", "pages/Whiteboard.md")
    assert doc.title == "Whiteboard"
    assert [n.breadcrumb for n in doc.nodes[1:]] == ["Whiteboard › Usage",
                                                    "Whiteboard › Functionality"]
    portal = D.parse_document("- # Usage\n\t- Portal.\n", "docs",
                              "pages/Whiteboard___Tool___Portal.md")
    assert portal.title == "Whiteboard/Tool/Portal"
    assert D.parse_document("# Real title\n\nText.\n", "docs", "pages/a___b.md").title == (
        "Real title")
    assert D.parse_document("Text.\n", "docs", "src/__init__.md").title == "__init__"
