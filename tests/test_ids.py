"""Chunk and document ids: the upstream conformance cases plus ra's stricter rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import conformance
from ra.errors import RaError
from ra.text.ids import ChunkId, DocId, InvalidIdError, format_chunk_id, format_doc_id

CASES = conformance("chunk_id_parse")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["input"] for c in CASES])
def test_conformance_chunk_id_parse(case):
    parse = DocId.parse if case["kind"] == "DocId" else ChunkId.parse
    expected = case["expected"]
    if expected.get("error"):
        with pytest.raises(InvalidIdError):
            parse(case["input"])
        return
    parsed = parse(case["input"])
    assert str(parsed) == expected["display"]
    if case["kind"] == "DocId":
        assert (parsed.tree, parsed.path) == (expected["tree"], expected["path"])
    else:
        assert str(parsed.doc_id) == expected["doc_id"]
        assert parsed.slug == expected["slug"]
        assert parsed.is_document == expected["is_document"]


def test_document_id_has_no_slug():
    cid = ChunkId.parse("docs:guide/intro.md")
    assert cid.is_document and cid.slug is None
    assert (cid.tree, cid.path) == ("docs", "guide/intro.md")
    assert str(cid) == "docs:guide/intro.md"


def test_path_may_contain_colons_and_hashes():
    assert ChunkId.parse("notes:a:b.md#x").path == "a:b.md"
    cid = ChunkId.parse("notes:lang/c#.md")
    assert cid.path == "lang/c#.md" and cid.is_document
    assert ChunkId.parse("notes:lang/c#.md#pointers") == ChunkId(DocId("notes", "lang/c#.md"),
                                                                  "pointers")


def test_a_dotted_slug_after_a_file_s_name_is_a_slug():
    """gomarkdoc declares ``<a name="AnyType.Equals"></a>`` and links ``#AnyType.Equals``:
    ``ra get …/README.md#AnyType.Equals`` read it all as a path, no chunk."""
    cid = ChunkId.parse("docs:gocode/README.md#AnyType.Equals")
    assert (cid.path, cid.slug) == ("gocode/README.md", "AnyType.Equals")
    assert ChunkId.parse("notes:lang/c#.md").is_document  # a '#' in a file's name


def test_unicode_slug_round_trips():
    cid = ChunkId.parse("wiki:jp.md#日本語")
    assert cid.slug == "日本語" and str(cid) == "wiki:jp.md#日本語"


@pytest.mark.parametrize("text", [
    "", ":", "docs:", "docs:#x", "docs:guide.md#", "D:\\docs\\guide.md", "c:/x.md",
    "docs:/etc/passwd", "docs:../secret.md", "docs:a/../../b.md", "docs:a\\b.md",
    "do/cs:x.md", " docs:x.md",
])
def test_malformed_ids_are_rejected(text):
    with pytest.raises(InvalidIdError):
        ChunkId.parse(text)


def test_a_one_character_tree_is_a_tree_and_a_windows_path_is_not():
    """`ra get d:notes.md` was "looks like a Windows drive letter", for an id `ra search`
    had given (the configuration allowed a tree named `d`)."""
    cid = ChunkId.parse("d:notes/a.md#intro")
    assert (cid.tree, cid.path, cid.slug) == ("d", "notes/a.md", "intro")
    for text in ("C:\\Users\\a.md", "C:/Users/a.md", "c:\\a.md"):
        with pytest.raises(InvalidIdError, match="looks like a Windows path"):
            ChunkId.parse(text)


def test_invalid_id_error_is_in_the_error_family():
    assert issubclass(InvalidIdError, RaError) and issubclass(InvalidIdError, ValueError)


def test_formatting_helpers():
    assert format_doc_id("docs", "a.md") == "docs:a.md"
    assert format_chunk_id("docs", "a.md", None) == "docs:a.md"
    assert format_chunk_id("docs", "a.md", "intro") == "docs:a.md#intro"


trees = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
segments = st.from_regex(r"[A-Za-z0-9_ -][A-Za-z0-9_. -]{0,8}", fullmatch=True).filter(
    lambda s: s not in (".", ".."))
paths = st.lists(segments, min_size=1, max_size=3).map("/".join)
slugs = st.none() | st.from_regex(r"[a-z0-9\u00e0-\u00ff][a-z0-9_\u00e0-\u00ff-]{0,12}",
                                  fullmatch=True)


@given(trees, paths, slugs)
def test_format_then_parse_round_trips(tree, path, slug):
    cid = ChunkId.parse(format_chunk_id(tree, path, slug))
    assert (cid.tree, cid.path, cid.slug) == (tree, path, slug)
