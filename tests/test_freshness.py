"""Always fresh, never corrupt: incremental updates, atomic generations, concurrent use.

- Searches answer from the files as they are, without ``ra update``, after adds, edits,
  renames, deletes and configuration changes.
- An index updated incrementally scores exactly like a full rebuild of the same files.
- ``ra update`` killed with SIGKILL at random moments never leaves a broken index.
- Readers running while a writer rebuilds see complete generations only.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ra.config.settings import load_config
from ra.index.freshness import (
    Hint,
    check_state,
    fingerprints,
    open_index,
    refresh_index,
    refresh_watched,
)
from ra.pipeline import run
from ra.pipeline.discover import fingerprint_digest
from ra.query.search import Searcher, SearchOptions
from ra.store.generations import current_name, open_current, read_fingerprints

TOML = '[tree.docs]\npath = "./docs"\n'
RA = [sys.executable, "-c", "import sys; from ra.cli.app import main; sys.exit(main())"]


def write(path: Path, text: str, bump: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if bump:  # make sure the fingerprint changes even within one mtime tick
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 1_000_000_000))


def project(root: Path, files: dict[str, str], toml: str = TOML):
    for rel, text in files.items():
        write(root / "docs" / rel, text)
    (root / ".ra.toml").write_text(toml)
    return load_config(root)


def search(config, query: str, **options) -> list:
    reader, _ = open_index(config)
    try:
        opts = SearchOptions(**{"limit": 50, "cutoff_ratio": 0.0, **options})
        return Searcher(reader, config).search([query], opts).queries[0].results
    finally:
        reader.close()


def ids(config, query: str) -> list[str]:
    return sorted(r.id for r in search(config, query))


BASE = {
    "alpha.md": "# Alpha\n\nalpha apples and shared words\n\n## Details\n\nalpha details\n",
    "beta.md": "# Beta\n\nbeta bananas and shared words\n",
    "sub/gamma.md": "# Gamma\n\ngamma grapes and shared words\n",
}


# --- freshness without `ra update` -------------------------------------------------------

def test_fingerprints_select_the_files_discover_selects(tmp_path):
    """The freshness walk (plain strings and ``fstatat``, for speed) follows discover's
    rules: hidden names skipped, file symlinks followed, folder symlinks and loops not,
    patterns and binaries as configured; so both see the same files with the same
    fingerprints, and those are what ``walk_tree`` and ``Tree.matches`` select."""
    from ra.index.freshness import fingerprints
    from ra.pipeline.discover import discover, walk_tree

    docs = tmp_path / "docs"
    for rel in ("a.md", "sub/b.md", "sub/deeper/c.txt", "sub/skip.md", ".hidden/d.md",
                "sub/.e.md", "notes.rst", "x/y/z.markdown", "dir.md/inner.md"):
        write(docs / rel, f"# {rel}\n")
    (docs / "bin.md").write_bytes(b"\0binary")
    write(tmp_path / "outside/real.md", "# real\n")
    write(tmp_path / "outside/dir/inner.md", "# inner\n")
    os.symlink(tmp_path / "outside/real.md", docs / "link.md")
    os.symlink(tmp_path / "outside/dir", docs / "linked", target_is_directory=True)
    os.symlink(tmp_path / "outside/dir", docs / "linked.md", target_is_directory=True)
    os.symlink(docs, docs / "sub/self", target_is_directory=True)
    os.symlink(tmp_path / "missing.md", docs / "dangling.md")
    os.symlink("loop2.md", docs / "loop1.md")
    os.symlink("loop1.md", docs / "loop2.md")
    toml = TOML + 'exclude = ["sub/skip.md"]\n'
    config = project(tmp_path, {}, toml)
    found = discover(config.trees, sniff=False)
    want = {f"{f.tree}:{f.path}": f.fingerprint for f in found.files}
    assert "docs:link.md" in want and "docs:bin.md" in want and "docs:sub/b.md" in want
    assert "docs:dir.md/inner.md" in want and "docs:linked.md" not in want
    assert fingerprints(config) == want
    tree = config.trees[0]
    reference = {}
    for rel, abspath in walk_tree(tree.path):
        if tree.matches(rel) and os.path.isfile(abspath):
            st = os.stat(abspath)
            reference[f"docs:{rel}"] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    assert want == reference


def test_dot_names_an_include_spells_out_are_fresh_like_any_file(tmp_path):
    """A rule file in ``.cursor/rules`` (an include spells the folder out) is seen by the
    freshness walk as discover sees it: edited, it makes the index stale, and a search
    answers from the new text; ``.git`` stays unwalked."""
    from ra.index.freshness import fingerprints
    from ra.pipeline.discover import discover

    toml = ('[tree.docs]\npath = "./docs"\n'
            'include = ["**/*.md", ".cursor/rules/*.mdc"]\n')
    config = project(tmp_path, {"a.md": "# A\n\nalpha\n", ".cursor/rules/r.mdc":
                                "# Rule\n\nquokka\n", ".git/x.md": "# X\n\nquokka\n"}, toml)
    want = {f"{f.tree}:{f.path}": f.fingerprint for f in discover(config.trees).files}
    assert sorted(want) == ["docs:.cursor/rules/r.mdc", "docs:a.md"]
    assert fingerprints(config) == want
    assert ids(config, "quokka") == ["docs:.cursor/rules/r.mdc#rule"]
    write(tmp_path / "docs/.cursor/rules/r.mdc", "# Rule\n\nwombat\n", bump=1)
    write(tmp_path / "docs/.git/x.md", "# X\n\nwombat\n", bump=1)
    assert ids(config, "wombat") == ["docs:.cursor/rules/r.mdc#rule"]
    assert ids(config, "quokka") == []


def test_the_walk_keeps_one_folder_open_at_a_time(tmp_path):
    """A tree with more folders than the process may open files still yields every file."""
    for i in range(120):
        write(tmp_path / "docs" / f"d{i:03d}" / "n.md", "# n\n")
    project(tmp_path, {})
    code = ("import resource, sys; from ra.config.settings import load_config; "
            "from ra.index.freshness import fingerprints; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
            "print(len(fingerprints(load_config(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "120"


def test_added_edited_renamed_and_deleted_files_are_seen(tmp_path):
    config = project(tmp_path, BASE)
    assert ids(config, "shared") == ["docs:alpha.md#alpha", "docs:beta.md#beta",
                                     "docs:sub/gamma.md#gamma"]
    write(tmp_path / "docs/delta.md", "# Delta\n\ndelta dates and shared words\n")
    assert "docs:delta.md#delta" in ids(config, "shared")
    write(tmp_path / "docs/beta.md", "# Beta\n\nbeta blueberries only\n", bump=3)
    assert ids(config, "bananas") == []
    assert ids(config, "blueberries") == ["docs:beta.md#beta"]
    (tmp_path / "docs/sub/gamma.md").rename(tmp_path / "docs/sub/renamed.md")
    assert ids(config, "grapes") == ["docs:sub/renamed.md#gamma"]
    (tmp_path / "docs/alpha.md").unlink()
    assert ids(config, "apples") == []
    assert ids(config, "shared") == ["docs:delta.md#delta", "docs:sub/renamed.md#gamma"]
    assert check_state(config).state == "current"


def test_status_line_says_what_was_indexed(tmp_path):
    config = project(tmp_path, BASE)
    reader, status = open_index(config)
    reader.close()
    assert status.startswith("built the index")
    write(tmp_path / "docs/beta.md", "# Beta\n\nchanged\n", bump=3)
    write(tmp_path / "docs/new.md", "# New\n\nnew\n")
    reader, status = open_index(config)
    reader.close()
    assert status.startswith("indexed 2 changed files")
    reader, status = open_index(config)
    reader.close()
    assert status is None


def test_an_incremental_update_touches_only_the_changed_partition(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    files = {f"n{i}.md": f"# Note {i}\n\nnote{i} text\n" for i in range(6)}
    config = project(tmp_path, files)
    search(config, "text")
    write(tmp_path / "docs/n3.md", "# Note 3\n\nrewritten\n", bump=3)
    assert ids(config, "rewritten") == ["docs:n3.md#note-3"]
    before = current_name(config.index_dir)
    write(tmp_path / "docs/n3.md", "# Note 3\n\nrewritten again\n", bump=4)
    assert ids(config, "again") == ["docs:n3.md#note-3"]
    gen = open_current(config.index_dir)
    try:
        assert gen.manifest["update"] == {"kind": "incremental", "base": before, "added": 0,
                                          "modified": 1, "removed": 0, "partitions": [1]}
        # untouched partitions are hard links to the previous generation's files
        assert (gen.path / "chunks" / "part-0000.parquet").stat().st_nlink >= 1
    finally:
        gen.close()


def test_the_record_an_update_keeps_is_the_one_it_wrote_and_places_every_file(
        tmp_path, monkeypatch):
    """After edits, additions, removals (a partition emptied), a file turned binary and
    one back: the record of files an update keeps in memory equals its
    ``fingerprints.json``, and names for each indexed file the partition that holds it;
    the generation before, still pinned, is left as it was (no partition written over a
    link to its file)."""
    import json

    from ra.store import generations

    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    monkeypatch.setattr("ra.index.freshness.FULL_BUILD_MIN", 100)
    docs = tmp_path / "docs"
    config = project(tmp_path, {f"n{i}.md": f"# Note {i}\n\nnote{i} text\n" for i in range(7)})
    search(config, "text")
    steps = [lambda: write(docs / "n3.md", "# Note 3\n\nchanged\n", bump=3),
             lambda: [write(docs / f"n{i}.md", f"# New {i}\n\ntext\n") for i in (7, 8)],
             lambda: [(docs / f"n{i}.md").unlink() for i in (0, 1)],
             lambda: (docs / "n5.md").write_bytes(b"\x00binary\x00" * 10),
             lambda: write(docs / "n0.md", "# Back\n\ntext\n"),
             lambda: write(docs / "n5.md", "# Five\n\ntext again\n", bump=5)]
    for step in steps:
        prev = open_current(config.index_dir)  # pinned: an update must leave it as it was
        before = {f: f.read_bytes() for f in prev.path.glob("*/part-*.parquet")}
        step()
        search(config, "text")
        assert {f: f.read_bytes() for f in before} == before
        prev.close()
        gen = open_current(config.index_dir)
        try:
            kept = generations._RECORDS[generations.generation_id(gen.path)]
            disk = json.loads((gen.path / "fingerprints.json").read_text())
            assert kept == generations.FileRecord.from_json(disk)
            assert kept.partition.keys() == kept.files.keys()
            held = {}
            for pid in gen.manifest["partitions"]:
                rows = pq.read_table(gen.path / "files" / f"part-{pid:04d}.parquet")
                held.update((f"{t}:{p}", pid) for t, p in zip(
                    rows["tree"].to_pylist(), rows["path"].to_pylist(), strict=True))
            assert held == kept.partition
            assert gen.manifest["update"]["kind"] == "incremental"
        finally:
            gen.close()
    assert {k.split(":")[1] for k in kept.files} == {
        f"n{i}.md" for i in (0, 2, 3, 4, 5, 6, 7, 8)}

def test_an_update_of_most_files_is_a_full_build(tmp_path, monkeypatch):
    """Half the files or more changed (and at least ``FULL_BUILD_MIN``): a full build,
    whose compact artifacts are all fresh; fewer: an incremental update."""
    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    monkeypatch.setattr("ra.index.freshness.FULL_BUILD_MIN", 3)
    files = {f"n{i}.md": f"# Note {i}\n\nnote{i} text\n" for i in range(8)}
    config = project(tmp_path, files)
    search(config, "text")

    def update_of_generation() -> tuple:
        gen = open_current(config.index_dir)
        try:
            return gen.manifest.get("update"), gen.manifest["compact"]["stale"]
        finally:
            gen.close()

    first, second = ["apple", "brick", "cloud"], ["eagle", "flute", "grape", "house"]
    for i, word in enumerate(first):  # 3 of 8: incremental
        write(tmp_path / f"docs/n{i}.md", f"# Note {i}\n\n{word}\n", bump=3)
    assert ids(config, "cloud") == ["docs:n2.md#note-2"]
    update, stale = update_of_generation()
    assert update["kind"] == "incremental" and stale == [0, 1]
    for i, word in enumerate(second):  # 4 of 8: rebuilt
        write(tmp_path / f"docs/n{i}.md", f"# Note {i}\n\n{word}\n", bump=4)
    assert ids(config, "house") == ["docs:n3.md#note-3"]
    assert update_of_generation() == ({"kind": "full"}, [])
    assert ids(config, "apple") == []
    assert sorted(ids(config, "text")) == [f"docs:n{i}.md#note-{i}" for i in range(4, 8)]


def test_changing_an_exclude_pattern_is_applied(tmp_path):
    config = project(tmp_path, BASE)
    assert "docs:sub/gamma.md#gamma" in ids(config, "shared")
    (tmp_path / ".ra.toml").write_text(TOML + 'exclude = ["sub/**"]\n')
    config = load_config(tmp_path)
    assert check_state(config).state == "config-changed"
    assert ids(config, "shared") == ["docs:alpha.md#alpha", "docs:beta.md#beta"]


def test_a_rebuild_says_whether_the_configuration_or_ra_changed(tmp_path, monkeypatch):
    """A rebuild after an upgrade whose reading of files changed (``ANALYZER_VERSION``)
    does not blame a configuration the user never touched: the manifest's hash is that
    of the configuration as it is with an earlier version. A configuration that changed
    is blamed, whatever the version."""
    import ra.text.analysis

    config = project(tmp_path, BASE)
    open_index(config)[0].close()
    monkeypatch.setattr(ra.text.analysis, "ANALYZER_VERSION", 99)
    state = check_state(config)
    assert (state.state, state.describe()) == (
        "config-changed", "stale (ra upgraded: it reads files differently)")
    reader, status = open_index(config)
    reader.close()
    assert status.startswith("ra upgraded: it reads files differently: rebuilt the index")
    assert check_state(config).state == "current"

    (tmp_path / ".ra.toml").write_text(TOML + 'exclude = ["sub/**"]\n')
    config = load_config(tmp_path)
    assert check_state(config).describe() == "stale (config changed)"
    reader, status = open_index(config)
    reader.close()
    assert status.startswith("configuration changed: rebuilt the index")

    # an upgrade after several: each earlier version is tried
    assert check_state(config).state == "current"
    monkeypatch.setattr(ra.text.analysis, "ANALYZER_VERSION", 100)
    assert check_state(config).describe() == "stale (ra upgraded: it reads files differently)"
    (tmp_path / ".ra.toml").write_text(TOML)
    assert load_config(tmp_path).config_hash() != config.config_hash()
    assert check_state(load_config(tmp_path)).describe() == "stale (config changed)"


def test_a_default_include_that_grew_is_an_upgrade_and_indexes_the_new_kind(tmp_path,
                                                                            monkeypatch):
    """An index built when the default ``include`` had no ``**/*.mdoc`` (Markdoc) and
    no ``**/*.mdc`` (Cursor's rules) is rebuilt for ra's sake, not for a configuration
    the user never touched, and the rebuild reads those files as markdown. Patterns the
    user wrote are theirs: not widened."""
    import ra.config.settings as settings
    import ra.text.analysis

    files = {**BASE, "guide.mdoc": "# Guide\n\n{% callout %}\nmarkdoc pears\n{% /callout %}\n",
             "api.mdc": "---\nglobs: src/api/**\n---\n\n# API rules\n\nPaginate plums.\n"}
    old = settings.EARLIER_DEFAULT_INCLUDES[0]
    assert "**/*.mdoc" not in old and "**/*.mdoc" in settings.DEFAULT_INCLUDE
    monkeypatch.setattr(settings, "DEFAULT_INCLUDE", old)
    monkeypatch.setattr(ra.text.analysis, "ANALYZER_VERSION",
                        ra.text.analysis.ANALYZER_VERSION - 1)
    config = project(tmp_path, files, TOML)
    assert ids(config, "pears") == []
    monkeypatch.undo()

    config = load_config(tmp_path)
    assert check_state(config).describe() == "stale (ra upgraded: it reads files differently)"
    assert ids(config, "pears") == ["docs:guide.mdoc#guide"]
    assert ids(config, "callout") == []  # read as markdown (Markdoc's tags), not as text
    assert ids(config, "plums") == ["docs:api.mdc#api-rules"]
    assert ids(config, "globs") == []  # front matter, not text
    for earlier in settings.EARLIER_DEFAULT_INCLUDES:  # each release's default: ra's change
        monkeypatch.setattr(settings, "DEFAULT_INCLUDE", earlier)
        earlier_hash = load_config(tmp_path).config_hash()
        monkeypatch.undo()
        assert earlier_hash in load_config(tmp_path).earlier_config_hashes()

    (tmp_path / ".ra.toml").write_text(TOML + 'include = ["**/*.md"]\n')
    assert load_config(tmp_path).earlier_config_hashes() == []


# --- the fingerprint digest ---------------------------------------------------------------

def _manifest_and_record(config):
    gen = open_current(config.index_dir)
    try:
        return gen.manifest, read_fingerprints(gen.path)
    finally:
        gen.close()


def test_the_manifest_digest_is_the_digest_of_the_recorded_fingerprints(tmp_path):
    config = project(tmp_path, {**BASE, "bin.md": "x"})
    (tmp_path / "docs/bin.md").write_bytes(b"\0binary")
    search(config, "shared")
    write(tmp_path / "docs/beta.md", "# Beta\n\nedited\n", bump=2)
    write(tmp_path / "docs/new.md", "# New\n\nnew\n")
    for step in ("full", "incremental"):
        if step == "incremental":
            search(config, "edited")
        manifest, record = _manifest_and_record(config)
        assert manifest["update"]["kind"] == step
        assert "docs:bin.md" in record.binary and "docs:bin.md" not in record.files
        assert manifest["fingerprint"] == fingerprint_digest({**record.files,
                                                             **record.binary})
        assert {**record.files, **record.binary} == fingerprints(config) or step == "full"
    assert check_state(config).state == "current"


def test_fingerprint_digest_depends_on_every_key_size_and_mtime_not_on_order():
    files = {"docs:a.md": (10, 1_000), "docs:b.md": (20, 2_000), "docs:c/d.md": (0, 5)}
    digest = fingerprint_digest(files)
    assert fingerprint_digest(dict(reversed(list(files.items())))) == digest
    variants = [
        {**files, "docs:a.md": (11, 1_000)},  # size
        {**files, "docs:a.md": (10, 1_001)},  # mtime, by one nanosecond
        {**files, "docs:a.md": (20, 1_000), "docs:b.md": (10, 2_000)},  # sizes swapped
        {k.replace("a.md", "e.md"): v for k, v in files.items()},  # renamed
        {k: v for k, v in files.items() if k != "docs:c/d.md"},  # removed
        {**files, "docs:z.md": (0, 0)},  # added
        {"docs:a.md": (10, 1_000), "docs:b.md\0": (20, 2_000), "docs:c/d.md": (0, 5)},
    ]
    assert len({digest, *(fingerprint_digest(v) for v in variants)}) == len(variants) + 1
    assert fingerprint_digest({}) != digest


def _change_same_size_new_mtime(docs: Path) -> None:
    path = docs / "beta.md"
    st = path.stat()
    path.write_text(path.read_text().replace("bananas", "kumquat"))  # 7 letters each
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert path.stat().st_size == st.st_size


def _change_same_mtime_new_size(docs: Path) -> None:
    path = docs / "beta.md"
    st = path.stat()
    path.write_text(path.read_text() + "kumquat\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _file_becomes_folder(docs: Path) -> None:
    (docs / "beta.md").unlink()
    write(docs / "beta.md" / "inner.md", "# Inner\n\nkumquat inside\n")


def _binary_becomes_text(docs: Path) -> None:
    write(docs / "bin.md", "# Was binary\n\nkumquat now\n", bump=2)


def _text_becomes_binary(docs: Path) -> None:
    (docs / "beta.md").write_bytes(b"\0kumquat")
    st = (docs / "beta.md").stat()
    os.utime(docs / "beta.md", ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def _binary_removed(docs: Path) -> None:
    (docs / "bin.md").unlink()


def _dangling_link_resolves(docs: Path) -> None:
    write(docs.parent / "target.md", "# Target\n\nkumquat linked\n")


CHANGES = {  # name: change, (added, modified, removed), what "kumquat" finds after it
    "same size, new mtime": (_change_same_size_new_mtime, ([], ["docs:beta.md"], []),
                             ["docs:beta.md#beta"]),
    "same mtime, new size": (_change_same_mtime_new_size, ([], ["docs:beta.md"], []),
                             ["docs:beta.md#beta"]),
    "file replaced by a folder": (_file_becomes_folder,
                                  (["docs:beta.md/inner.md"], [], ["docs:beta.md"]),
                                  ["docs:beta.md/inner.md#inner"]),
    "binary file becomes text": (_binary_becomes_text, ([], ["docs:bin.md"], []),
                                 ["docs:bin.md#was-binary"]),
    "text file becomes binary": (_text_becomes_binary, ([], ["docs:beta.md"], []), []),
    "binary file removed": (_binary_removed, ([], [], ["docs:bin.md"]), []),
    "dangling symlink resolves": (_dangling_link_resolves, (["docs:link.md"], [], []),
                                  ["docs:link.md#target"]),
}


@pytest.mark.parametrize("hinted", [False, True], ids=["walk", "hint"])
@pytest.mark.parametrize("name", CHANGES)
def test_a_stored_digest_never_hides_a_change(tmp_path, name, hinted):
    """Each change is named exactly by the check, indexed by the update, and the result
    is a full build's (terms, words, statistics and problems). ``hint``: the check is
    told the changed files and an unchanged one, as a watcher would (``Hint``), and stats
    only those; the generation that recorded the dangling link falls back to the walk."""
    change, expected, found = CHANGES[name]
    config = project(tmp_path / "inc", {**BASE, "bin.md": "x"})
    docs = tmp_path / "inc" / "docs"
    (docs / "bin.md").write_bytes(b"\0binary")
    os.symlink(tmp_path / "inc" / "target.md", docs / "link.md")
    search(config, "shared")
    change(docs)
    hint = Hint(current_name(config.index_dir),
                frozenset([*sum(expected, []), "docs:alpha.md"])) if hinted else None
    state = check_state(config, hint)
    assert (state.state, (state.added, state.modified, state.removed)) == ("stale", expected)
    if hinted:
        status, generation = refresh_watched(config, hint)
        assert status.startswith("indexed") and generation == current_name(config.index_dir)
    assert ids(config, "kumquat") == found
    assert check_state(config).state == "current"
    assert _manifest_and_record(config)[0]["update"]["kind"] == "incremental"
    if name == "text file becomes binary":
        assert ids(config, "bananas") == []
    full_root = tmp_path / "full"
    shutil.copytree(tmp_path / "inc" / "docs", full_root / "docs", symlinks=True)
    if (tmp_path / "inc" / "target.md").exists():
        shutil.copy(tmp_path / "inc" / "target.md", full_root / "target.md")
        (full_root / "docs" / "link.md").unlink()
        os.symlink(full_root / "target.md", full_root / "docs" / "link.md")
    full = project(full_root, {})
    search(full, "shared")
    assert _terms(config) == _terms(full)
    assert _problems(config) == _problems(full)


def test_a_hint_is_used_only_for_its_generation(tmp_path, monkeypatch):
    """A hint names what changed since one generation: for another (published by some
    other process meanwhile) the check walks every file, and so it does when a file
    named cannot be stat'ed for another reason than being gone, or has other links."""
    from ra.index import freshness

    config = project(tmp_path, BASE)
    search(config, "shared")
    first = current_name(config.index_dir)
    write(tmp_path / "docs" / "beta.md", "# Beta\n\nkumquat\n", bump=1)
    walks: list[int] = []
    real = freshness.scan
    monkeypatch.setattr(freshness, "scan", lambda trees: walks.append(1) or real(trees))
    nothing = Hint(first, frozenset())
    assert check_state(config, nothing).state == "current"  # trusted: nothing named
    assert walks == []
    assert refresh_watched(config, Hint(first, frozenset({"docs:beta.md"})))[1] != first
    assert walks == []
    write(tmp_path / "docs" / "alpha.md", "# Alpha\n\nfig\n", bump=1)
    state = check_state(config, nothing)  # ``first`` is not current any more: a walk
    assert (state.state, state.modified, walks) == ("stale", ["docs:alpha.md"], [1])
    refresh_index(config)
    (tmp_path / "docs" / "loop.md").symlink_to(tmp_path / "docs" / "loop.md")
    hint = Hint(current_name(config.index_dir), frozenset({"docs:loop.md"}))
    before = len(walks)
    assert check_state(config, hint).state == "current" and len(walks) == before + 1
    (tmp_path / "docs" / "loop.md").unlink()  # unreadable entries recorded: no hints
    os.link(tmp_path / "docs" / "beta.md", tmp_path / "docs" / "twin.md")
    refresh_index(config)
    write(tmp_path / "docs" / "twin.md", "# Beta\n\nquince\n", bump=1)  # beta.md too
    hint = Hint(current_name(config.index_dir), frozenset({"docs:twin.md"}))
    assert check_state(config, hint).modified == ["docs:beta.md", "docs:twin.md"]


NAMES = ["alpha.md", "beta.md", "sub/gamma.md", "sub/delta.md", "new/eps.md", "skip.png"]
OPS = st.lists(st.tuples(st.sampled_from(["write", "touch", "delete", "rename"]),
                         st.sampled_from(NAMES), st.sampled_from(NAMES)), max_size=6)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, extra=st.sets(st.sampled_from(NAMES + ["ghost.md", ".hidden.md"])))
def test_a_hint_naming_every_changed_file_finds_what_the_walk_finds(tmp_path_factory, ops,
                                                                      extra):
    """Property: after any file operations, a check told the files they touched (plus
    any others) finds exactly the state, additions, changes and removals of a walk."""
    root = tmp_path_factory.mktemp("hint")
    config = project(root, BASE)
    docs = root / "docs"
    refresh_index(config)
    touched = set()
    for i, (op, name, other) in enumerate(ops):
        path, target = docs / name, docs / other
        touched |= {name, other}
        if op == "write":
            write(path, f"# Note {i}\n\nwords {i}\n")
        elif op == "touch" and path.is_file():
            st_ = path.stat()
            os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
        elif op == "delete" and path.is_file():
            path.unlink()
        elif op == "rename" and path.is_file() and not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
    hint = Hint(current_name(config.index_dir),
                frozenset(f"docs:{n}" for n in touched | extra))
    walked, hinted = check_state(config), check_state(config, hint)
    assert (hinted.state, hinted.added, hinted.modified, hinted.removed) == (
        walked.state, walked.added, walked.modified, walked.removed)
    if walked.state == "stale":
        assert hinted.scan.files == walked.scan.files


def _problems(config) -> list[str]:
    return _manifest_and_record(config)[0]["problems"]


def test_problems_of_unchanged_files_outlive_an_update(tmp_path):
    config = project(tmp_path, BASE)
    (tmp_path / "docs/latin.md").write_bytes("# Latin\n\ncafé\n".encode("latin-1"))
    search(config, "shared")
    before = _problems(config)
    assert [p for p in before if p.startswith("docs:latin.md: invalid UTF-8")]
    write(tmp_path / "docs/beta.md", "# Beta\n\nedited\n", bump=2)
    search(config, "edited")
    assert _problems(config) == before


def test_an_update_walks_once_and_opens_only_the_changed_files(tmp_path, monkeypatch):
    from ra.pipeline import discover

    config = project(tmp_path, BASE)
    search(config, "shared")
    write(tmp_path / "docs/beta.md", "# Beta\n\nedited\n", bump=2)
    walks, sniffed = [], []
    scan_tree, is_binary = discover.scan_tree, discover.is_binary
    monkeypatch.setattr(discover, "scan_tree", lambda tree: walks.append(1) or scan_tree(tree))
    monkeypatch.setattr(discover, "is_binary",
                        lambda path: sniffed.append(Path(path).name) or is_binary(path))
    reader, status = open_index(config)
    reader.close()
    assert status.startswith("indexed 1 changed file")
    assert (len(walks), sniffed) == (1, ["beta.md"])


def test_a_check_older_than_the_current_generation_is_checked_again(tmp_path):
    """A state found before another writer published is not applied to its generation."""
    from ra.index.freshness import _refresh

    config = project(tmp_path, BASE)
    search(config, "shared")
    write(tmp_path / "docs/beta.md", "# Beta\n\nedited\n", bump=2)
    stale = check_state(config)
    assert stale.state == "stale"
    assert refresh_index(config).startswith("indexed 1 changed file")  # another writer
    name = current_name(config.index_dir)
    assert _refresh(config, stale) is None
    assert current_name(config.index_dir) == name


# --- incremental == full ------------------------------------------------------------------

QUERIES = ["shared", "shared words", "alpha OR beta", "details", "fruit -shared", "note*",
           "grapes", "bananas words", "\"shared words\"", "blueberry"]


def scores(config) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for q in QUERIES:
        results = search(config, q, aggregation=False, candidate_limit=1000)
        out[q] = sorted((r.id, round(r.score, 9)) for r in results)
    return out


def test_incremental_updates_score_like_a_full_rebuild(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    rng = random.Random(7)
    words = ["shared", "words", "fruit", "apples", "bananas", "grapes", "blueberry",
             "details", "notes", "alpha", "beta", "orchard"]
    files = {f"f{i}.md": f"# File {i}\n\n{' '.join(rng.choices(words, k=12))}\n"
             for i in range(7)}
    inc = project(tmp_path / "inc", files)
    search(inc, "shared")  # first build
    for step in range(6):  # add, edit and remove files, searching in between
        name = f"f{rng.randrange(10)}.md"
        path = tmp_path / "inc" / "docs" / name
        if path.exists() and step % 3 == 2:
            path.unlink()
        else:
            body = " ".join(rng.choices(words, k=rng.randrange(3, 20)))
            write(path, f"# File {name}\n\n{body}\n\n## More\n\n{body} notes\n", bump=step + 1)
        search(inc, "shared")
    gen = open_current(inc.index_dir)
    try:
        assert gen.manifest["update"]["kind"] == "incremental"
    finally:
        gen.close()
    # a full build of the same files in another folder
    full_root = tmp_path / "full"
    (full_root / "docs").mkdir(parents=True)
    for path in sorted((tmp_path / "inc" / "docs").glob("*.md")):
        write(full_root / "docs" / path.name, path.read_text())
    full = project(full_root, {})
    # the full build scores plain queries from its impacts (quantized to 16 bits), the
    # updated index with the formula (its impacts no longer hold): the same results,
    # scores within half a step per word, weight 2.5 × idf < 3 × 2.2 / 131070 each
    got, want = scores(inc), scores(full)
    assert {q: [i for i, _ in r] for q, r in got.items()} == {
        q: [i for i, _ in r] for q, r in want.items()}
    assert {q: [s for _, s in r] for q, r in got.items()} == {
        q: [pytest.approx(s, abs=1e-3) for _, s in r] for q, r in want.items()}
    assert _terms(inc) == _terms(full)


def _terms(config) -> tuple:
    gen = open_current(config.index_dir)
    try:
        terms = pq.read_table(gen.file("terms")).to_pylist()
        words = pq.read_table(gen.file("words")).to_pylist()
        stats = gen.manifest["stats"]
    finally:
        gen.close()
    return (sorted((t["term"], t["df"], t["cf"]) for t in terms),
            sorted((w["word"], w["term"], w["freq"]) for w in words), stats)


# --- crashes --------------------------------------------------------------------------------

def _corpus(root: Path, n: int, marker: str) -> None:
    for i in range(n):
        write(root / "docs" / f"page{i:03d}.md",
              f"# Page {i}\n\n{marker} common text {i}\n\n## Section\n\nmore {marker}\n")


def test_sigkill_during_update_never_breaks_the_index(tmp_path):
    _corpus(tmp_path, 60, "version0")
    (tmp_path / ".ra.toml").write_text(TOML)
    assert subprocess.run([*RA, "update"], cwd=tmp_path, capture_output=True).returncode == 0
    rng = random.Random(11)
    for attempt in range(20):
        if attempt % 2:  # half the kills hit an incremental update, half a full rebuild
            write(tmp_path / "docs" / f"page{attempt:03d}.md",
                  f"# Page {attempt}\n\nedited{attempt} common text\n", bump=attempt + 1)
            cmd = [*RA, "search", "--list", "common"]
        else:
            cmd = [*RA, "update"]
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        out = subprocess.run([*RA, "search", "--json", "common text"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr
        import json

        results = json.loads(out.stdout)["queries"][0]["results"]
        assert results, f"attempt {attempt}: no results"
    leftovers = [p.name for p in (tmp_path / ".ra" / "index").iterdir()
                 if p.name.startswith(".build-")]
    assert len(leftovers) <= 1  # at most the one a killed writer left; the next run cleans


def test_a_damaged_generation_is_rebuilt_with_a_message(tmp_path):
    config = project(tmp_path, BASE)
    search(config, "shared")
    gen = open_current(config.index_dir)
    path = gen.path
    gen.close()
    (path / "manifest.json").write_text("{ broken")
    out = subprocess.run([*RA, "search", "--list", "apples"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "docs:alpha.md" in out.stdout
    assert "damaged" in out.stderr and "Traceback" not in out.stderr


def test_a_truncated_artifact_file_is_found_at_open_and_rebuilt(tmp_path):
    """Readers see artifacts through views, read lazily: a file cut short (or missing) is
    still caught when the index is opened, and the index is rebuilt."""
    config = project(tmp_path, BASE)
    search(config, "shared")
    gen = open_current(config.index_dir)
    path = gen.path
    gen.close()
    victim = sorted((path / "chunks").glob("*.parquet"))[-1]
    victim.write_bytes(victim.read_bytes()[:100])
    reader, status = open_index(config)
    try:
        assert status and status.startswith("built the index")
        assert reader.generation.path != path
    finally:
        reader.close()
    assert ids(config, "apples") == ["docs:alpha.md#alpha"]


# --- concurrency -----------------------------------------------------------------------------

READER = r"""
import json, sys, time
from ra.config.settings import load_config
from ra.index.freshness import open_index
from ra.query.search import Searcher, SearchOptions
config = load_config(sys.argv[1])
deadline = time.time() + float(sys.argv[2])
answers = errors = 0
while time.time() < deadline:
    try:
        reader, _ = open_index(config, refresh=False)
        try:
            res = Searcher(reader, config).search(["common"], SearchOptions(limit=100,
                    cutoff_ratio=0.0, aggregation=False)).queries[0].results
            versions = {w for r in res for w in r.content.split() if w.startswith("version")}
            n_docs = reader.manifest["counts"]["files"]
        finally:
            reader.close()
        if len(versions) != 1 or n_docs != 40:
            print(json.dumps({"inconsistent": sorted(versions), "files": n_docs}))
            sys.exit(1)
        answers += 1
    except Exception as exc:
        errors += 1
        print(json.dumps({"error": repr(exc)}))
        sys.exit(1)
print(json.dumps({"answers": answers}))
"""


@pytest.mark.parametrize("readers", [3])
def test_concurrent_readers_while_a_writer_rebuilds(tmp_path, readers):
    _corpus(tmp_path, 40, "version0")
    (tmp_path / ".ra.toml").write_text(TOML)
    config = load_config(tmp_path)
    run.build(config)
    procs = [subprocess.Popen([sys.executable, "-c", READER, str(tmp_path), "8"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(readers)]
    for version in range(1, 6):  # the writer rewrites every file and rebuilds
        _corpus(tmp_path, 40, f"version{version}")
        run.build(load_config(tmp_path))
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        assert '"answers"' in out


def test_a_restored_mtime_does_not_hide_an_edit(tmp_path):
    """``cp -p``, ``rsync -t``, archive tools and ``os.utime`` set the mtime back; a
    rewrite at the same size then kept serving the old text and ``ra check`` said
    current. The inode change time is in the fingerprint: no tool can set it back."""
    config = project(tmp_path, {"a.md": "# Alpha\n\nzebra crossing\n", "b.md": "# B\n\nb\n"})
    open_index(config)[0].close()
    path = tmp_path / "docs" / "a.md"
    before = path.stat()
    time.sleep(0.01)  # a ctime tick on coarse clocks
    path.write_text("# Alpha\n\nhorse crossing\n")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert check_state(config).state == "stale"
    reader, status = open_index(config)
    reader.close()
    assert status and "indexed 1 changed file" in status
    assert {r.path for r in search(config, "horse")} == {"a.md"}
    assert search(config, "zebra") == []
