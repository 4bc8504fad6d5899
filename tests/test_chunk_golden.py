"""Golden chunk trees of real files from ``../shared/corpora``.

Each golden file under ``tests/golden/chunks/`` records, for one corpus file, the document
fields and one row per node: [id, parent_id, depth, title, breadcrumb, byte_start,
byte_end, len(body)]. The corpus text is read at test time (it is not copied into this
repository), through the same reader the pipeline uses.

Regenerate after an intended change with ``RA_UPDATE_GOLDEN=1 pytest
tests/test_chunk_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import CORPORA, REPO
from ra.pipeline.discover import read_document
from ra.text.document import parse_document

GOLDEN = REPO / "tests" / "golden" / "chunks"

#: golden name -> (corpus, path inside the corpus, tree-relative path, what it exercises)
FILES = {
    "rust-book-ownership": (
        "rust-book", "src/ch04-01-what-is-ownership.md",
        "starts at ##, no h1 (title from the stem); an h3 inside a block quote sidebar"),
    "cpp-docs-join-deadlock": (
        "cpp-docs", "docs/parallel/concrt/walkthrough-using-join-to-prevent-deadlock.md",
        "YAML frontmatter with flow lists; <a name> anchors and non-ASCII in headings"),
    "cpp-docs-porting-guide": (
        "cpp-docs", "docs/porting/visual-cpp-porting-and-upgrading-guide.md",
        "emoji headings (slugs drop them), multi-byte offsets"),
    "gcp-vapor": (
        "gcp-community", "archived/run-swift-vapor-on-google-cloud/index.md",
        "comma-separated tags, title only in frontmatter, bodies start at ##"),
    "tldr-tar": ("tldr", "pages/common/tar.md", "one h1, blockquote description"),
    "powershell-write-host": (
        "powershell-docs", "reference/7.5/Microsoft.PowerShell.Utility/Write-Host.md",
        "byte-order mark before the frontmatter, whose `title:` line over `---` is a "
        "setext heading unless frontmatter is removed first (deviation 4)"),
}


def chunk_summary(corpus: str, path: str) -> dict:
    text, problems = read_document(str(CORPORA / corpus / path))
    doc = parse_document(text, corpus, path)
    return {
        "document": {"title": doc.title, "tags": list(doc.tags),
                     "description": doc.description, "problems": problems + list(doc.problems)},
        "nodes": [[n.id, n.parent_id, n.depth, n.title, n.breadcrumb, n.byte_start,
                   n.byte_end, len(n.body)] for n in doc.nodes],
    }


@pytest.mark.parametrize("name", sorted(FILES))
def test_chunk_tree_matches_golden(name):
    corpus, path, _what = FILES[name]
    if not (CORPORA / corpus / path).is_file():
        pytest.skip(f"corpus file {corpus}/{path} not available")
    actual = chunk_summary(corpus, path)
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("RA_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        golden.write_text(_dump(actual), encoding="utf-8")
    assert golden.is_file(), f"no golden file; run with RA_UPDATE_GOLDEN=1 to create {golden}"
    assert actual == json.loads(golden.read_text(encoding="utf-8"))


def _dump(summary: dict) -> str:
    """One node per line, so a diff of the golden file reads node by node."""
    rows = ",\n    ".join(json.dumps(row, ensure_ascii=False) for row in summary["nodes"])
    document = json.dumps(summary["document"], ensure_ascii=False)
    return f'{{\n  "document": {document},\n  "nodes": [\n    {rows}\n  ]\n}}\n'
