"""Markdown as real documentation sites and vaults write it: golden chunk trees.

The fixtures under ``tests/fixtures/dialects/`` are unmodified extracts of public
documentation, one folder per dialect (mkdocs with Material and FastAPI, Docusaurus and
MDX, DocFX as Microsoft Learn writes it, Mintlify's and Astro Starlight's MDX components,
Hugo, Markdoc, mdBook, MyST, Nuxt Content's MDC, an Obsidian vault, Python-Markdown with
MultiMarkdown metadata, Quarto, react.dev);
their sources and licenses are in ``tests/fixtures/dialects/LICENSES.md``. For each dialect a
golden file under ``tests/golden/dialects/`` records every document's title, tags and
problems, and one row per chunk: ``[id, parent_id, depth, title, breadcrumb]``, then the
chunk's own text as ra indexes and quotes it (``strip_markdown`` of its body).

Besides the goldens, hard checks that hold whatever a regeneration writes: no id, title
or breadcrumb carries dialect markup, declared heading ids are the chunk ids, and ``ra
get`` finds a chunk by the anchor its page declares.

Regenerate after an intended change with ``RA_UPDATE_GOLDEN=1 pytest
tests/test_dialects.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO
from ra.cli.app import main
from ra.pipeline.discover import read_document
from ra.query.snippets import strip_markdown
from ra.text.document import parse_document

FIXTURES = REPO / "tests" / "fixtures" / "dialects"
GOLDEN = REPO / "tests" / "golden" / "dialects"
DIALECTS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "licenses")
#: markup that must never reach an id, a title or a breadcrumb
MARKUP = re.compile(r"\{[ :]*[#.]|\{\{|\{%|\{\*|!!!|\?\?\?|:::|\[\[|\]\]|%%|<!--|\[!|\]\("
                    r"|</?[A-Za-z]")


def documents(dialect: str) -> dict[str, object]:
    """Every markdown file of a dialect folder, parsed, by path relative to the folder."""
    root = FIXTURES / dialect
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".md", ".mdx", ".mdoc", ".qmd"):
            rel = path.relative_to(root).as_posix()
            text, problems = read_document(str(path))
            out[rel] = (parse_document(text, dialect, rel), problems)
    return out


def summary(dialect: str) -> dict:
    files = {}
    for rel, (doc, problems) in documents(dialect).items():
        files[rel] = {
            "document": {"title": doc.title, "tags": list(doc.tags),
                         "description": doc.description,
                         "problems": problems + list(doc.problems)},
            "nodes": [[n.id, n.parent_id, n.depth, n.title, n.breadcrumb] for n in doc.nodes],
            "text": [strip_markdown(n.body) for n in doc.nodes],
        }
    return files


def test_every_dialect_has_fixtures_and_a_license_note():
    assert set(DIALECTS) >= {"docusaurus", "hugo", "mkdocs", "myst", "obsidian",
                             "python-markdown", "quarto"}
    notes = (FIXTURES / "LICENSES.md").read_text()
    for dialect in DIALECTS:
        assert f"`{dialect}/" in notes, f"{dialect}: no attribution in LICENSES.md"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_chunk_trees_match_golden(dialect):
    actual = summary(dialect)
    golden = GOLDEN / f"{dialect}.json"
    if os.environ.get("RA_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        golden.write_text(_dump(actual), encoding="utf-8")
    assert golden.is_file(), f"no golden file; run with RA_UPDATE_GOLDEN=1 to create {golden}"
    assert actual == json.loads(golden.read_text(encoding="utf-8"))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_ids_titles_and_breadcrumbs_are_free_of_markup(dialect):
    for rel, (doc, _) in documents(dialect).items():
        # what a page writes as code is what it shows (Starlight's "## `<LinkCard>` Props")
        code = re.findall(r"`([^`\n]+)`", (FIXTURES / dialect / rel).read_text())
        assert not MARKUP.search(doc.title), (rel, doc.title)
        for node in doc.nodes:
            for value in (node.id.partition("#")[2], node.title, node.breadcrumb):
                shown = re.sub("|".join(map(re.escape, code)), "", value) if code else value
                assert not MARKUP.search(shown), (rel, value)


@pytest.mark.parametrize("dialect, rel, anchor, title", [
    ("mkdocs", "fastapi/tutorial/cors.md", "use-corsmiddleware", "Use CORSMiddleware"),
    ("mkdocs", "fastapi/tutorial/middleware.md", "multiple-middleware-execution-order",
     "Multiple middleware execution order"),
    ("hugo", "functions/collections/Sort.md", "slice-ascending-order", "Ascending order"),
    ("hugo", "functions/collections/Sort.md", "map-ascending-order", "Ascending order"),
    ("docusaurus", "docusaurus/markdown-features-tabs.mdx", "syncing-tab-choices",
     "Syncing tab choices"),
    ("python-markdown", "install.md", "git", "Using the Git Repository"),
    # react.dev's MDX comment ({/*preinit*/}): the page's anchor, not the title's slug
    ("react-dev", "reference/react-dom/preinit.md", "preinit", "preinit(href, options)"),
    ("react-dev", "learn/render-and-commit.md", "step-1-trigger-a-render",
     "Step 1: Trigger a render"),
])
def test_declared_heading_ids_are_the_chunk_ids(dialect, rel, anchor, title):
    doc, _ = documents(dialect)[rel]
    node = next(n for n in doc.nodes if n.slug == anchor)
    assert node.id == f"{dialect}:{rel}#{anchor}" and node.title == title


def test_obsidian_tags_comments_and_wiki_links():
    docs = documents("obsidian")
    issue, _ = docs["Manual Testing/654 - Unable to find section, when title has tag inside.md"]
    assert {"example-tag", "task"} <= set(issue.tags)  # inline #tags join the tags
    comments, _ = docs["Test Data/comments_markdown_style.md"]
    text = strip_markdown(comments.nodes[1].body)
    assert "i-am-parsed-by-obsidian" not in comments.tags  # inside %% … %%
    assert "i-am-parsed-by-obsidian" not in text and "comments_html_style" not in text
    tags, _ = docs["Getting Started/Tags.md"]
    assert not {"context/work", "meeting"} & set(tags.tags)  # in code spans: examples
    wiki, _ = docs["quartz/features/wikilinks.md"]
    assert "This is enabled as a part of Obsidian compatibility and" in strip_markdown(
        wiki.nodes[0].body)


def test_kanban_comment_holding_a_code_fence_is_removed():
    kanban, _ = documents("obsidian")["Test Data/example_kanban.md"]
    assert [n.title for n in kanban.nodes] == ["example_kanban", "Backlog"]
    assert "kanban-plugin" not in strip_markdown(kanban.nodes[1].body)


def test_multimarkdown_metadata_and_setext_headings():
    doc, _ = documents("python-markdown")["change_log/release-2.1.md"]
    assert doc.title == "Release Notes for v2.1"
    assert [n.title for n in doc.nodes[1:]] == [
        "Python-Markdown 2.1 Release Notes", "Backwards-incompatible Changes",
        "What's New in Python-Markdown 2.1"]
    assert not strip_markdown(doc.nodes[0].body)  # the metadata is not the preamble


@pytest.fixture
def dialects_kb(tmp_path, monkeypatch) -> Path:
    (tmp_path / ".ra.toml").write_text(f'[tree.dialects]\npath = "{FIXTURES.as_posix()}"\n'
                                       'exclude = ["LICENSES.md"]\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_ra_get_by_the_anchor_a_page_declares(dialects_kb, capsys):
    code = main(["get", "dialects:mkdocs/fastapi/tutorial/cors.md#use-corsmiddleware"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("─── dialects:mkdocs/fastapi/tutorial/cors.md#use-corsmiddleware")
    assert "CORS (Cross-Origin Resource Sharing) › Use CORSMiddleware" in out
    assert main(["get", "dialects:hugo/functions/collections/Sort.md#map-ascending-order"]) == 0
    # .mdx is indexed by default (Docusaurus)
    assert main(["get", "dialects:docusaurus/docusaurus/markdown-features-tabs.mdx"
                        "#syncing-tab-choices"]) == 0
    # react.dev links to /reference/react-dom/preinit#preinit: that anchor is the chunk's
    assert main(["get", "dialects:react-dev/reference/react-dom/preinit.md#preinit"]) == 0


def test_search_results_quote_text_not_markup(dialects_kb, capsys):
    assert main(["search", "callouts nested", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    results = data["queries"][0]["results"]
    assert results and results[0]["id"].startswith("dialects:obsidian/quartz/features/callouts")
    for r in results:
        assert not MARKUP.search(r["snippet"]) and "{ #" not in r["breadcrumb"], r


def test_gfm_table_cells_are_searchable(dialects_kb, capsys):
    assert main(["search", "number-only tags", "--list"]) == 0
    out = capsys.readouterr().out
    assert "dialects:obsidian/Getting Started/Tags.md#recognising-tags" in out
    snippet = out.split("\n", 2)[1]
    assert " | " not in snippet and "---" not in snippet  # cells, not the table's syntax


def _dump(files: dict) -> str:
    """One node per line, so a diff of the golden file reads node by node."""
    parts = []
    for rel, data in files.items():
        nodes = ",\n      ".join(json.dumps(row, ensure_ascii=False) for row in data["nodes"])
        text = ",\n      ".join(json.dumps(row, ensure_ascii=False) for row in data["text"])
        parts.append(f'  {json.dumps(rel, ensure_ascii=False)}: {{\n'
                     f'    "document": {json.dumps(data["document"], ensure_ascii=False)},\n'
                     f'    "nodes": [\n      {nodes}\n    ],\n'
                     f'    "text": [\n      {text}\n    ]\n  }}')
    return "{\n" + ",\n".join(parts) + "\n}\n"
