"""Stage 1, discover: which files are indexed, binary detection, decoding, manifest diffs."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from conftest import conformance
from ra.config.settings import Tree
from ra.index.freshness import diff
from ra.pipeline.discover import SNIFF_BYTES, discover, is_binary, kind_of, read_document, scan


def make_files(root: Path, files: dict[str, bytes | str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)


def rel_paths(tree: Tree) -> list[str]:
    return [f.path for f in discover([tree]).files]


# --- file_discovery conformance ----------------------------------------------------------

@pytest.mark.parametrize("case", conformance("file_discovery")["cases"],
                         ids=lambda c: c["source"].rsplit("::", 1)[-1])
def test_upstream_file_discovery(case, tmp_path):
    if "tree_path" in case:
        root = Path(case["tree_path"])
        assert not root.exists()
    else:
        root = tmp_path / "tree"
        make_files(root, {rel: f"# {rel}\n\ntext\n" for rel in case["files"]})
    tree = Tree("docs", root, tuple(case["include"]), tuple(case.get("exclude", ())))
    assert rel_paths(tree) == case["expected_rel_paths"]


def test_missing_tree_reports_no_problem(tmp_path):
    found = discover([Tree("docs", tmp_path / "nope")])
    assert found.files == [] and found.problems() == []


def test_hidden_files_and_nested_hidden_folders_are_skipped(tmp_path):
    make_files(tmp_path, {".hidden.md": "x", "a/.git/x.md": "x", "a/.obsidian/y.md": "x",
                          "a/b/visible.md": "x"})
    assert rel_paths(Tree("docs", tmp_path)) == ["a/b/visible.md"]


def test_a_dot_name_an_include_spells_out_is_walked(tmp_path):
    """Agent rules live in hidden folders (``.cursor/rules``, ``.github/instructions``):
    a pattern that spells the name out reaches it, as in a shell; ``*`` and ``**`` still
    reach no other dot name, and a path through a spelled-out name is matched only by
    the patterns that spell it (``**/*.md`` does not take ``.github/ISSUE_TEMPLATE``)."""
    make_files(tmp_path, {
        "docs/a.md": "x", ".cursor/rules/api.mdc": "x", ".cursor/rules/.old/b.mdc": "x",
        ".cursor/notes.md": "x", ".github/instructions/ts.instructions.md": "x",
        ".github/ISSUE_TEMPLATE/bug.md": "x", ".git/c.md": "x", ".cursorrules": "x",
        "sub/.github/instructions/d.md": "x"})
    include = ("**/*.md", ".cursor/rules/*.mdc", ".github/instructions/**", ".cursorrules")
    tree = Tree("proj", tmp_path, include)
    found = [".cursor/rules/api.mdc", ".cursorrules",
             ".github/instructions/ts.instructions.md", "docs/a.md"]
    assert sorted(rel_paths(tree)) == found
    assert sorted(r for r in (".cursor/notes.md", ".git/c.md", *found)
                  if tree.matches(r) and not tree.hidden(r)) == found
    anywhere = Tree("proj", tmp_path, ("**/.github/instructions/*.md",))
    assert sorted(rel_paths(anywhere)) == [".github/instructions/ts.instructions.md",
                                           "sub/.github/instructions/d.md"]
    assert rel_paths(Tree("proj", tmp_path, ("**/*.md", "**/*.mdc"))) == ["docs/a.md"]


def test_default_includes_and_kinds(tmp_path):
    make_files(tmp_path, {"a.md": "x", "b.markdown": "x", "c.txt": "x", "d.rst": "x",
                          "e.MD": "x"})
    found = discover([Tree("docs", tmp_path)])
    assert [(f.path, f.kind) for f in found.files] == [  # e.MD: an extension in any case
        ("a.md", "markdown"), ("b.markdown", "markdown"), ("c.txt", "text"),
        ("e.MD", "markdown")]
    assert kind_of("x.MD") == "markdown" and kind_of("x.txt") == "text"


def test_the_default_patterns_take_an_extension_in_any_case(tmp_path):
    """kubernetes/enhancements has a KEP in README.MD: `ra init` counted it, and the
    index left it out (`**/*.md` matched as written)."""
    make_files(tmp_path, {"docs/README.MD": "# Upper\n", "docs/Guide.Markdown": "x",
                          "docs/notes.Txt": "x", "docs/a.md": "x", "docs/logo.PNG": "x",
                          "docs/MD": "x", "docs/x.MD/inner.bin": "x"})
    tree = Tree("docs", tmp_path / "docs")
    assert rel_paths(tree) == ["Guide.Markdown", "README.MD", "a.md", "notes.Txt"]
    assert [f.kind for f in discover([tree]).files] == ["markdown", "markdown", "markdown",
                                                         "text"]
    assert tree.matches("sub/README.MD") and not tree.matches("logo.PNG")
    written = Tree("docs", tmp_path / "docs", include=("**/*.md",))  # as written
    assert rel_paths(written) == ["a.md"] and not written.matches("README.MD")
    assert sorted(scan([tree]).files) == [f"docs:{p}" for p in rel_paths(tree)]


def test_an_excluded_folder_is_not_walked(tmp_path, monkeypatch):
    """A tree at a JavaScript project's top excludes node_modules (ra init writes it so),
    and the walk still read every file of it: 86 ms for 46,000 files, every command."""
    from ra.pipeline import discover as module

    make_files(tmp_path, {"README.md": "x", "docs/a.md": "x", "node_modules/p/README.md": "x",
                          "pkg/node_modules/q/x.md": "x", "drafts/d.md": "x",
                          "node_modules.md": "x", "keep/node_modules2/k.md": "x"})
    tree = Tree("t", tmp_path, exclude=("**/node_modules/**", "drafts/**"))
    opened = []
    real = os.open
    monkeypatch.setattr(module.os, "open", lambda p, *a, **k: opened.append(str(p))
                        or real(p, *a, **k))
    found = rel_paths(tree)
    assert found == ["README.md", "docs/a.md", "keep/node_modules2/k.md", "node_modules.md"]
    assert not [p for p in opened if "node_modules/" in p + "/" or "drafts" in p]
    assert sorted(scan([tree]).files) == [f"t:{p}" for p in found]
    walked = [rel for rel, _ in module.walk_tree(tmp_path, pruned=module.excluded_folders(
        tree.exclude))]
    assert sorted(walked) == sorted(found)
    assert module.excluded_folders(("**/*.tmp", "**")) is None  # no folder is all excluded


def test_found_files_carry_fingerprints_and_posix_paths(tmp_path):
    make_files(tmp_path, {"sub/dir/note.md": "hello\n"})
    os.utime(tmp_path / "sub/dir/note.md", ns=(1_700_000_000_123_456_789,) * 2)
    (f,) = discover([Tree("docs", tmp_path, is_global=True)]).files
    assert (f.tree, f.path, f.size, f.mtime_ns, f.is_global) == (
        "docs", "sub/dir/note.md", 6, 1_700_000_000_123_456_789, True)
    assert Path(f.abspath) == tmp_path / "sub/dir/note.md"


def test_files_are_sorted_by_tree_then_path(tmp_path):
    make_files(tmp_path / "one", {"z.md": "x", "a/b.md": "x", "m.md": "x"})
    make_files(tmp_path / "two", {"a.md": "x"})
    found = discover([Tree("zeta", tmp_path / "two"), Tree("alpha", tmp_path / "one")])
    assert [(f.tree, f.path) for f in found.files] == [
        ("alpha", "a/b.md"), ("alpha", "m.md"), ("alpha", "z.md"), ("zeta", "a.md")]


# --- binary detection --------------------------------------------------------------------
# Deviation: the original decides by extension (binary_detection cases). DESIGN.md says
# "Binary files are detected by content", so ra sniffs the first 8 KB for NUL bytes and the
# extension-only upstream cases are adapted to content.

@pytest.mark.parametrize("case", conformance("binary_detection")["cases"],
                         ids=lambda c: c["source"].rsplit("::", 1)[-1])
def test_upstream_binary_names_are_judged_by_content(case, tmp_path):
    for name, upstream_binary in case["paths"].items():
        text_file = tmp_path / "text" / name
        binary_file = tmp_path / "binary" / name
        make_files(tmp_path, {f"text/{name}": "plain text\n",
                              f"binary/{name}": b"MZ\x00\x00\x90binary"})
        assert is_binary(str(text_file)) is False, (name, upstream_binary)
        assert is_binary(str(binary_file)) is True, (name, upstream_binary)


def test_text_file_named_md_is_indexed(tmp_path):
    make_files(tmp_path, {"x.md": "# Title\n\ntext\n"})
    found = discover([Tree("docs", tmp_path)])
    assert rel_paths(Tree("docs", tmp_path)) == ["x.md"] and found.problems() == []


def test_md_file_with_nul_is_skipped_and_reported_once(tmp_path):
    make_files(tmp_path, {"bin.md": b"# Looks like markdown\n\x00\x01\x02", "ok.md": "ok"})
    found = discover([Tree("docs", tmp_path)])
    assert [f.path for f in found.files] == ["ok.md"]
    assert found.problems() == ["docs:bin.md: binary file skipped"]


def test_nul_is_only_sniffed_in_the_first_8_kb(tmp_path):
    make_files(tmp_path, {"early.md": b"a" * (SNIFF_BYTES - 1) + b"\x00",
                          "late.md": b"a" * SNIFF_BYTES + b"\x00"})
    assert is_binary(str(tmp_path / "early.md")) is True
    assert is_binary(str(tmp_path / "late.md")) is False


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_text_with_a_byte_order_mark_is_read(tmp_path, encoding):
    """Windows PowerShell 5.1 writes UTF-16 with a byte-order mark unless told otherwise;
    such a file was "binary file skipped" (its ASCII letters come with NUL bytes)."""
    text = "# Título\r\n\nDeploy with blue green rollout.\r\n"
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(encoding, b"")
    make_files(tmp_path, {"wide.md": bom + text.encode(encoding)})
    assert is_binary(str(tmp_path / "wide.md")) is False
    assert read_document(str(tmp_path / "wide.md")) == (
        "# Título\n\nDeploy with blue green rollout.\n", [])


def test_utf16_without_a_byte_order_mark_is_binary(tmp_path):
    make_files(tmp_path, {"u16.md": "# Title\n".encode("utf-16-le")})
    assert is_binary(str(tmp_path / "u16.md")) is True


def test_invalid_utf16_is_replaced_and_reported(tmp_path):
    make_files(tmp_path, {"bad.md": codecs.BOM_UTF16_LE + "ok".encode("utf-16-le") + b"\x00\xd8"})
    text, problems = read_document(str(tmp_path / "bad.md"))
    assert text == "ok\ufffd" and problems == [
        "invalid UTF-16 at byte 6; decoded with replacement"]


def test_empty_file_is_text(tmp_path):
    make_files(tmp_path, {"empty.md": b""})
    assert is_binary(str(tmp_path / "empty.md")) is False
    assert rel_paths(Tree("docs", tmp_path)) == ["empty.md"]


def test_binary_file_excluded_by_pattern_is_not_reported(tmp_path):
    make_files(tmp_path, {"img.png": b"\x89PNG\x00", "bin.md": b"\x00"})
    found = discover([Tree("docs", tmp_path, exclude=("bin.md",))])
    assert found.files == [] and found.problems() == []


# --- decoding ----------------------------------------------------------------------------

def test_read_document_plain_utf8(tmp_path):
    make_files(tmp_path, {"a.md": "# Café\n\n日本語\n"})
    assert read_document(str(tmp_path / "a.md")) == ("# Café\n\n日本語\n", [])


def test_read_document_drops_bom_and_normalises_line_ends(tmp_path):
    make_files(tmp_path, {"a.md": "\ufeff# Title\r\nline\r\nold mac\rend\r\n"})
    assert read_document(str(tmp_path / "a.md")) == ("# Title\nline\nold mac\nend\n", [])


def test_read_document_replaces_invalid_utf8_and_reports_it(tmp_path):
    make_files(tmp_path, {"latin.md": "café zebraword".encode("latin-1")})
    text, problems = read_document(str(tmp_path / "latin.md"))
    assert text == "caf\ufffd zebraword"
    assert len(problems) == 1 and "invalid UTF-8" in problems[0] and "byte 3" in problems[0]


# --- symlinks ----------------------------------------------------------------------------

def test_symlink_to_file_is_followed(tmp_path):
    make_files(tmp_path, {"outside/real.md": "# Real\n", "docs/plain.md": "x"})
    os.symlink(tmp_path / "outside/real.md", tmp_path / "docs/link.md")
    found = discover([Tree("docs", tmp_path / "docs")])
    assert [f.path for f in found.files] == ["link.md", "plain.md"]
    assert found.files[0].size == len("# Real\n")


def test_symlink_to_folder_is_not_descended(tmp_path):
    make_files(tmp_path, {"outside/deep/real.md": "x", "docs/plain.md": "x"})
    os.symlink(tmp_path / "outside", tmp_path / "docs/linked", target_is_directory=True)
    found = discover([Tree("docs", tmp_path / "docs")])
    assert [f.path for f in found.files] == ["plain.md"]
    assert found.problems() == []


def test_symlink_to_parent_folder_cannot_trap_the_walk(tmp_path):
    make_files(tmp_path, {"docs/plain.md": "x"})
    os.symlink(tmp_path / "docs", tmp_path / "docs/self", target_is_directory=True)
    assert rel_paths(Tree("docs", tmp_path / "docs")) == ["plain.md"]


def test_dangling_symlink_is_reported_not_fatal(tmp_path):
    make_files(tmp_path, {"docs/plain.md": "x"})
    os.symlink(tmp_path / "missing.md", tmp_path / "docs/dangling.md")
    found = discover([Tree("docs", tmp_path / "docs")])
    assert [f.path for f in found.files] == ["plain.md"]
    assert len(found.problems()) == 1 and found.problems()[0].startswith("docs:dangling.md:")


def test_symlink_loop_is_reported_not_fatal(tmp_path):
    make_files(tmp_path, {"docs/plain.md": "x"})
    os.symlink("b.md", tmp_path / "docs/a.md")
    os.symlink("a.md", tmp_path / "docs/b.md")
    found = discover([Tree("docs", tmp_path / "docs")])
    assert [f.path for f in found.files] == ["plain.md"]
    problems = found.problems()
    assert problems and len(set(problems)) == len(problems)
    assert all(p.startswith(("docs:a.md:", "docs:b.md:")) for p in problems)


def test_a_link_to_a_file_a_tree_holds_is_not_indexed_again(tmp_path):
    """``CLAUDE.md`` → ``AGENTS.md``, a dated KEP → its folder's README (kubernetes/
    enhancements links eight so): indexed twice, every answer about them came twice."""
    make_files(tmp_path, {"docs/AGENTS.md": "# Agents\n", "docs/keps/1498/README.md": "x",
                          "notes/real.md": "x", "outside/out.md": "x"})
    os.symlink("AGENTS.md", tmp_path / "docs/CLAUDE.md")
    os.symlink("1498/README.md", tmp_path / "docs/keps/20200122-support.md")
    os.symlink(tmp_path / "notes/real.md", tmp_path / "docs/a-link-to-notes.md")
    os.symlink(tmp_path / "outside/out.md", tmp_path / "docs/out-1.md")
    os.symlink(tmp_path / "outside/out.md", tmp_path / "docs/out-2.md")
    docs, notes = Tree("docs", tmp_path / "docs"), Tree("notes", tmp_path / "notes")
    found = discover([docs, notes])
    assert [(f.tree, f.path) for f in found.files] == [
        ("docs", "AGENTS.md"), ("docs", "keps/1498/README.md"), ("docs", "out-1.md"),
        ("notes", "real.md")]  # a file outside every tree: under its first link
    assert found.problems() == []
    assert sorted(scan([docs, notes]).files) == [f"{f.tree}:{f.path}" for f in found.files]


# --- manifest_diff conformance -----------------------------------------------------------
# Ported onto ra.index.freshness.diff: keys are ``tree:path`` (not absolute paths) and values
# ``[size, mtime_ns]``. Deviation: the original compares mtime in whole seconds only; ra
# compares mtime_ns and size exactly (DESIGN "Freshness"), so sub-second edits and
# size-only changes count as modified too.

SIZE = 100


def as_fingerprints(entries: dict) -> dict[str, list[int]]:
    return {f"{e['tree']}:{e['rel']}": [SIZE, e["mtime"] * 1_000_000_000]
            for e in entries.values()}


DIFF_CASES = [c for c in conformance("manifest_diff")["cases"] if "discovered" in c]


@pytest.mark.parametrize("case", DIFF_CASES, ids=lambda c: c["source"].rsplit("::", 1)[-1])
def test_upstream_manifest_diff(case):
    added, modified, removed = diff(as_fingerprints(case["manifest"]),
                                    as_fingerprints(case["discovered"]))
    expected = case["expected"]
    if expected.get("is_empty"):
        assert (added, modified, removed) == ([], [], [])
    else:
        assert (len(added), len(modified), len(removed)) == (
            expected["added"], expected["modified"], expected["removed"])


def test_manifest_diff_names_the_keys():
    case = next(c for c in DIFF_CASES if c["source"].endswith("diff_handles_mixed_changes"))
    assert diff(as_fingerprints(case["manifest"]), as_fingerprints(case["discovered"])) == (
        ["docs:added.md"], ["docs:modified.md"], ["docs:removed.md"])


def test_manifest_diff_compares_nanoseconds_and_size_exactly():
    before = {"docs:a.md": [10, 1_000_000_000_000], "docs:b.md": [10, 5]}
    after = {"docs:a.md": [10, 1_000_000_000_001], "docs:b.md": [11, 5]}
    assert diff(before, after) == ([], ["docs:a.md", "docs:b.md"], [])


def test_manifest_diff_accepts_json_lists_and_tuples():
    assert diff({"docs:a.md": [1, 2]}, {"docs:a.md": (1, 2)}) == ([], [], [])
