"""Generations (publish, pins, garbage collection, damage) and freshness (stale, rebuild)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra.config.settings import load_config
from ra.errors import IndexStateError
from ra.index.freshness import check_state, open_index, refresh_index
from ra.pipeline import partitions, run
from ra.query.search import Searcher
from ra.store import generations
from ra.store.layout import COMPACT, MANIFEST

DOCS_TOML = '[tree.docs]\npath = "./docs"\n'


def make_project(root: Path, files: dict[str, str], toml: str = DOCS_TOML):
    (root / ".ra.toml").write_text(toml)
    (root / "docs").mkdir(exist_ok=True)
    for rel, text in files.items():
        write(root / "docs" / rel, text)
    return load_config(root)


def write(path: Path, text: str, *, bump: int = 0) -> None:
    """Write ``text``; ``bump`` seconds move mtime forward so the change is always seen."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else None
    path.write_text(text)
    if bump:
        mtime = max(path.stat().st_mtime_ns, (before or 0) + bump * 1_000_000_000)
        os.utime(path, ns=(mtime, mtime))


def search_ids(config, query: str) -> list[str]:
    reader, _ = open_index(config)
    try:
        return [r.id for r in Searcher(reader, config).search([query]).queries[0].results]
    finally:
        reader.close()


def gen_dirs(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith("gen-"))


FILES = {"alpha.md": "# Alpha\n\nfirstword here\n", "beta.md": "# Beta\n\nsecondword here\n",
         "sub/gamma.md": "# Gamma\n\nthirdword here\n"}


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path, FILES)


# --- publication ---------------------------------------------------------------------------

def fake_build(index_dir: Path, marker: str) -> Path:
    out = generations.new_build_dir(index_dir)
    (out / MANIFEST).write_text(json.dumps({"marker": marker}))
    return out


def test_publish_points_current_at_the_new_generation(tmp_path):
    index_dir = tmp_path / "index"
    assert generations.current_name(index_dir) is None
    assert generations.open_current(index_dir) is None
    first = generations.publish(index_dir, fake_build(index_dir, "one"))
    assert first.name.startswith("gen-") and first.is_dir()
    assert generations.current_name(index_dir) == first.name
    second = generations.publish(index_dir, fake_build(index_dir, "two"))
    assert generations.current_name(index_dir) == second.name != first.name
    gen = generations.open_current(index_dir)
    try:
        assert gen.path == second and gen.manifest == {"marker": "two"}
    finally:
        gen.close()
    assert not [p for p in index_dir.iterdir() if p.name.startswith(".build-")]
    assert not [p for p in index_dir.iterdir() if p.name.endswith(".tmp")]


def test_build_publishes_and_reports_the_generation(project):
    report = run.build(project)
    assert generations.current_name(project.index_dir) == report.generation
    assert gen_dirs(project.index_dir) == [report.generation]
    assert (report.files, report.problems) == (3, [])


def test_index_lives_beside_the_nearest_config(project, tmp_path):
    assert project.index_dir == tmp_path / ".ra" / "index"


# --- pins and garbage collection -----------------------------------------------------------

def test_pinned_generation_survives_rebuilds_until_released(project, tmp_path):
    run.build(project)
    old = generations.open_current(project.index_dir)
    try:
        write(tmp_path / "docs/alpha.md", "# Alpha\n\nchangedword\n", bump=5)
        new_name = run.build(project).generation
        assert generations.current_name(project.index_dir) == new_name != old.path.name
        assert gen_dirs(project.index_dir) == sorted([old.path.name, new_name])
        # the old reader still reads its own, unchanged files
        bodies = pq.read_table(old.file("chunks"))["body"].to_pylist()
        assert "firstword here\n" in bodies and "changedword\n" not in bodies
    finally:
        old.close()
    assert run.build(project).generation not in (old.path.name, new_name)
    assert len(gen_dirs(project.index_dir)) == 1  # both unpinned old ones removed


def test_open_reader_keeps_its_generation_while_the_index_changes(project, tmp_path):
    reader, _ = open_index(project)
    try:
        write(tmp_path / "docs/alpha.md", "# Alpha\n\nchangedword\n", bump=5)
        assert search_ids(project, "changedword") == ["docs:alpha.md#alpha"]
        assert Searcher(reader, project).search(["firstword"]).queries[0].results
        assert reader.generation.path.is_dir()
    finally:
        reader.close()


def test_garbage_collection_removes_unpinned_generations_and_leftovers(project):
    run.build(project)
    index_dir = project.index_dir
    current = generations.current_name(index_dir)
    stale = generations.publish(index_dir, fake_build(index_dir, "stale"))
    (index_dir / generations.CURRENT).write_text(current + "\n")  # back to the real one
    dead_build = generations.new_build_dir(index_dir)  # a killed writer's leftover
    bare_build = index_dir / ".build-nopin"
    bare_build.mkdir()
    tmp_pointer = index_dir / ".CURRENT.999.tmp"
    tmp_pointer.write_text("gen-x\n")
    foreign = index_dir / "notes.txt"
    foreign.write_text("not ours")
    pinned = generations.publish(index_dir, fake_build(index_dir, "pinned"))
    (index_dir / generations.CURRENT).write_text(current + "\n")
    fd = os.open(pinned / generations.PIN, os.O_RDONLY)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_SH)
        removed = generations.collect_garbage(index_dir)
        assert sorted(removed) == sorted(
            [stale.name, dead_build.name, bare_build.name, tmp_pointer.name])
        assert pinned.is_dir() and (index_dir / current).is_dir() and foreign.exists()
    finally:
        os.close(fd)
    assert generations.collect_garbage(index_dir) == [pinned.name]
    assert gen_dirs(index_dir) == [current]


def test_reader_racing_garbage_collection_gets_a_live_generation(tmp_path, monkeypatch):
    import fcntl

    index_dir = tmp_path / "index"
    generations.publish(index_dir, fake_build(index_dir, "a"))

    class WriterStrikesBeforeTheReaderLocks:
        LOCK_SH, LOCK_EX, LOCK_NB = fcntl.LOCK_SH, fcntl.LOCK_EX, fcntl.LOCK_NB
        fired = False

        def flock(self, fd, op):
            if op == fcntl.LOCK_SH and not self.fired:  # the reader, between open and lock
                self.fired = True
                generations.publish(index_dir, fake_build(index_dir, "b"))
                assert len(generations.collect_garbage(index_dir)) == 1
            return fcntl.flock(fd, op)

    monkeypatch.setattr(generations, "fcntl", WriterStrikesBeforeTheReaderLocks())
    gen = generations.open_current(index_dir)
    try:
        assert gen.manifest == {"marker": "b"} and (gen.path / MANIFEST).exists()
    finally:
        gen.close()


def test_build_cleans_leftovers_of_a_killed_build(project):
    run.build(project)
    leftover = generations.new_build_dir(project.index_dir)
    (leftover / "chunks.parquet").write_bytes(b"half written")
    run.build(project)
    assert not leftover.exists()


def test_failed_build_leaves_the_published_generation_intact(project, monkeypatch):
    before = run.build(project).generation

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(run, "write_generation", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        run.build(project)
    assert generations.current_name(project.index_dir) == before
    assert not [p for p in project.index_dir.iterdir() if p.name.startswith(".build-")]
    monkeypatch.undo()
    assert search_ids(project, "firstword") == ["docs:alpha.md#alpha"]


@pytest.mark.parametrize("cores", [1, 2])
def test_a_failed_write_fails_the_update_and_publishes_nothing(project, tmp_path,
                                                               monkeypatch, cores):
    """Files are written on a thread per core (``partitions.Writer``): a write that fails
    on one of them fails the update, and the generation before stays published."""
    monkeypatch.setattr(partitions, "available_cores", lambda: cores)
    before = run.build(project).generation
    write(tmp_path / "docs/beta.md", "# Beta\n\nreplacementword\n", bump=5)
    real = partitions.write_table

    def full_disk(table, path, *args, **kwargs):
        if path.parent.name == "postings":
            raise OSError(28, "No space left on device")
        return real(table, path, *args, **kwargs)

    monkeypatch.setattr(partitions, "write_table", full_disk)
    with pytest.raises(IndexStateError, match="no space left on the disk of the index"):
        refresh_index(project)
    assert generations.current_name(project.index_dir) == before
    monkeypatch.setattr(partitions, "write_table", real)
    assert search_ids(project, "replacementword") == ["docs:beta.md#beta"]


def test_a_writer_raises_the_first_error_and_bounds_what_waits():
    waiting = []

    def slow(i):
        time.sleep(0.005)
        if i in (3, 5):
            raise ValueError(f"write {i} failed")

    with pytest.raises(ValueError, match="write 3 failed"):
        with partitions.Writer(2) as writer:
            for i in range(8):
                writer.submit(slow, i)
                waiting.append(len(writer._pending))
    assert max(waiting) <= 4
    done = []
    with partitions.Writer(1) as writer:  # one core: at once, in the caller's thread
        writer.submit(lambda: done.append(threading.current_thread()))
        assert done == [threading.current_thread()]


def test_builds_and_updates_write_the_same_files_on_one_core_or_two(tmp_path, monkeypatch):
    files = {f"p{i}.md": f"# Page {i}\n\nword{i} shared text\n\n## Part\n\nmore {i}\n"
             for i in range(9)}
    monkeypatch.setattr(run, "PART_FILES", 2)
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 2)
    out = {}
    for n in (1, 2):
        monkeypatch.setattr(partitions, "available_cores", lambda n=n: n)
        (tmp_path / str(n)).mkdir()
        config = make_project(tmp_path / str(n), files)
        for path in (tmp_path / str(n) / "docs").iterdir():  # the same in both
            os.utime(path, ns=(1_700_000_000 * 10**9,) * 2)
        run.build(config)
        edited = tmp_path / str(n) / "docs/p3.md"
        write(edited, "# Page 3\n\nedited words\n")
        os.utime(edited, ns=(1_700_000_100 * 10**9,) * 2)
        assert refresh_index(config).startswith("indexed 1 changed file")
        gen = config.index_dir / generations.current_name(config.index_dir)
        out[n] = {str(f.relative_to(gen)): pq.read_table(f)
                  for f in sorted(gen.rglob("*.parquet"))}
    assert out[1].keys() == out[2].keys()
    for name, table in out[1].items():
        other = out[2][name]
        diff = [c for c in table.column_names  # but where the files are and their ctimes
                if c not in ("abspath", "ctime_ns") and not table[c].equals(other[c])]
        assert not diff, (name, diff)


def test_publish_makes_every_written_file_and_folder_durable_first(project, tmp_path,
                                                                   monkeypatch):
    """Before the pointer moves, each file written for the generation (partitions in their
    folders too) and each folder is fsynced; partitions hard-linked from the previous
    generation were made durable with it."""
    monkeypatch.setattr(run, "PART_FILES", 1)  # three partitions, one per file
    monkeypatch.setattr("ra.pipeline.update.PART_FILES", 1)
    synced: list[str] = []
    fsync = generations._fsync
    monkeypatch.setattr(generations, "_fsync",
                        lambda path: synced.append(str(path).replace("/.build-", "/gen-"))
                        or fsync(path))
    gen = project.index_dir / run.build(project).generation
    assert set(synced) == {str(p) for p in gen.rglob("*")} | {str(gen), str(project.index_dir)}
    synced.clear()
    old = generations.open_current(project.index_dir)  # pinned: its files keep their links
    try:
        write(tmp_path / "docs/beta.md", "# Beta\n\nedited\n", bump=5)
        refresh_index(project)
        gen = project.index_dir / generations.current_name(project.index_dir)
        linked = {str(p) for p in gen.rglob("*.*") if p.suffix in (".parquet", ".arrow")
                  and p.stat().st_nlink > 1}
        # two partitions of seven artifacts, and the compact artifacts (ra.pipeline.compact)
        assert len(linked) == 2 * 7 + len(COMPACT)
        assert set(synced) == {str(p) for p in gen.rglob("*")} - linked | {
            str(gen), str(project.index_dir)}
    finally:
        old.close()


def test_a_folder_ra_creates_for_the_index_is_left_out_of_git(project, tmp_path):
    """`git add -A` in a project committed .ra/index (ra's own .gitignore lists .ra/)."""
    import shutil
    import subprocess

    run.build(project)
    run.build(project)  # and garbage collection leaves it
    assert (project.index_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                                cwd=tmp_path, capture_output=True, text=True, check=True)
        assert ".ra/" not in status.stdout and "docs/alpha.md" in status.stdout
    mine = tmp_path / "mine"
    mine.mkdir()
    with generations.writer_lock(mine):
        pass
    assert not (mine / ".gitignore").exists()  # a folder the user made is theirs


def test_writer_lock_is_exclusive(tmp_path):
    index_dir = tmp_path / "index"
    with generations.writer_lock(index_dir) as held:
        assert held is True
        with generations.writer_lock(index_dir, wait=False) as second:
            assert second is False
    with generations.writer_lock(index_dir, wait=False) as again:
        assert again is True


# --- damage --------------------------------------------------------------------------------

def test_current_naming_a_missing_generation_is_an_index_state_error(project):
    run.build(project)
    (project.index_dir / generations.CURRENT).write_text("gen-missing\n")
    with pytest.raises(IndexStateError, match="gen-missing"):
        generations.open_current(project.index_dir)
    assert check_state(project).state == "damaged"


def test_generation_without_manifest_is_an_index_state_error(project):
    run.build(project)
    gen = project.index_dir / generations.current_name(project.index_dir)
    (gen / MANIFEST).unlink()
    with pytest.raises(IndexStateError, match="damaged"):
        generations.open_current(project.index_dir)


def test_damaged_index_is_rebuilt_by_open_index(project):
    run.build(project)
    (project.index_dir / generations.CURRENT).write_text("gen-missing\n")
    assert search_ids(project, "secondword") == ["docs:beta.md#beta"]
    assert check_state(project).state == "current"


def test_reading_without_refresh_never_builds(project):
    with pytest.raises(IndexStateError, match="no index"):
        open_index(project, refresh=False)
    assert generations.current_name(project.index_dir) is None


# --- freshness -----------------------------------------------------------------------------
# manifest_diff conformance: `manifest_load_missing_file_returns_empty` is the "missing"
# state below; `apply_diff_updates_manifest` is the manifest after a refresh.

def test_no_index_is_missing(project):
    state = check_state(project)
    assert (state.state, state.changed) == ("missing", 0)


def test_fresh_build_is_current(project):
    run.build(project)
    assert check_state(project).state == "current"
    assert refresh_index(project) is None  # nothing to do


def test_edited_file_makes_the_index_stale_and_open_index_rebuilds(project, tmp_path):
    run.build(project)
    write(tmp_path / "docs/beta.md", "# Beta\n\nreplacementword\n", bump=5)
    state = check_state(project)
    assert (state.state, state.modified, state.added, state.removed) == (
        "stale", ["docs:beta.md"], [], [])
    reader, status = open_index(project)
    try:
        assert "1 changed file" in status
        results = Searcher(reader, project).search(["replacementword"]).queries[0].results
        assert [r.id for r in results] == ["docs:beta.md#beta"]
        assert not Searcher(reader, project).search(["secondword"]).queries[0].results
    finally:
        reader.close()
    assert check_state(project).state == "current"


def test_same_size_edit_within_the_same_second_is_seen(project, tmp_path):
    run.build(project)
    path = tmp_path / "docs/alpha.md"
    st = path.stat()
    path.write_text("# Alpha\n\nfirstwork here\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # 1 ns later, same size
    assert path.stat().st_size == st.st_size
    assert check_state(project).modified == ["docs:alpha.md"]


def test_added_file_is_found(project, tmp_path):
    run.build(project)
    write(tmp_path / "docs/new/delta.md", "# Delta\n\nfourthword\n")
    assert check_state(project).added == ["docs:new/delta.md"]
    assert search_ids(project, "fourthword") == ["docs:new/delta.md#delta"]


def test_deleted_file_leaves_search(project, tmp_path):
    run.build(project)
    assert search_ids(project, "thirdword") == ["docs:sub/gamma.md#gamma"]
    (tmp_path / "docs/sub/gamma.md").unlink()
    assert check_state(project).removed == ["docs:sub/gamma.md"]
    assert search_ids(project, "thirdword") == []
    reader, _ = open_index(project)
    try:
        assert reader.query("select count(*) from chunks where path = 'sub/gamma.md'") == [(0,)]
    finally:
        reader.close()


def test_renamed_file_moves_its_id(project, tmp_path):
    run.build(project)
    os.rename(tmp_path / "docs/alpha.md", tmp_path / "docs/omega.md")
    state = check_state(project)
    assert (state.added, state.removed) == (["docs:omega.md"], ["docs:alpha.md"])
    assert search_ids(project, "firstword") == ["docs:omega.md#alpha"]
    reader, _ = open_index(project)
    try:
        ids = {i for (i,) in reader.query("select id from chunks")}
    finally:
        reader.close()
    assert "docs:omega.md" in ids and not any(i.startswith("docs:alpha.md") for i in ids)


def test_replaced_file_updates_the_manifest(project, tmp_path):
    run.build(project)
    (tmp_path / "docs/alpha.md").unlink()
    write(tmp_path / "docs/new.md", "# New\n\nnewword\n")
    open_index(project)[0].close()
    gen = generations.open_current(project.index_dir)
    try:
        files = generations.read_fingerprints(gen.path).files
    finally:
        gen.close()
    assert "docs:new.md" in files and "docs:alpha.md" not in files and len(files) == 3
    st = (tmp_path / "docs/new.md").stat()
    assert files["docs:new.md"] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def test_changed_exclude_pattern_is_a_config_change(project, tmp_path):
    run.build(project)
    changed = make_project(tmp_path, {}, DOCS_TOML + 'exclude = ["sub/**"]\n')
    assert check_state(changed).state == "config-changed"
    assert search_ids(changed, "thirdword") == []
    assert check_state(changed).state == "current"
    assert check_state(project).state == "config-changed"  # the old config no longer fits


@pytest.mark.parametrize("extra", [
    '\n[settings]\nchunk_at_headings = false\n',
    '\n[search]\nstemmer = "french"\n',
    'include = ["**/*.md"]\n',
])
def test_index_shaping_settings_are_config_changes(project, tmp_path, extra):
    run.build(project)
    assert check_state(make_project(tmp_path, {}, DOCS_TOML + extra)).state == "config-changed"


def test_settings_that_do_not_shape_the_index_keep_it_current(project, tmp_path):
    run.build(project)
    toml = DOCS_TOML + "\n[settings]\ndefault_limit = 9\n\n[search]\nk1 = 1.5\n"
    assert check_state(make_project(tmp_path, {}, toml)).state == "current"


def test_refresh_reads_only_the_changed_files(project, tmp_path, monkeypatch):
    run.build(project)
    write(tmp_path / "docs/beta.md", "# Beta\n\nreplacementword\n", bump=5)
    read = []
    original = run.read_document

    def counting(abspath):
        read.append(Path(abspath).name)
        return original(abspath)

    monkeypatch.setattr(run, "read_document", counting)
    assert search_ids(project, "replacementword") == ["docs:beta.md#beta"]
    assert read == ["beta.md"]


def test_tables_an_update_wrote_are_read_back_from_memory_as_they_are_on_disk(
        project, tmp_path):
    """A long-lived process reads the partition and global tables the last update wrote
    from memory: they must be the files' content, metadata and all; a full build keeps
    none, and only the newest generation's are kept."""
    import pyarrow.parquet as pq

    from ra.pipeline import partitions, update

    run.build(project)
    assert not partitions._WRITTEN
    write(tmp_path / "docs/beta.md", "# Beta\n\nreplacementword\n", bump=5)
    assert refresh_index(project).startswith("indexed 1 changed file")
    gen = project.index_dir / generations.current_name(project.index_dir)
    kept = dict(partitions._WRITTEN)
    assert {g for g, _ in kept} == {generations.generation_id(gen)}
    assert {"terms.parquet", "words.parquet", "chunks/part-0000.parquet"} <= {f for _, f in kept}
    for (_, within), table in kept.items():
        disk = pq.ParquetFile(gen / within).read()  # lists' items are named "element" there
        assert table.equals(disk) and table.schema.metadata == disk.schema.metadata
        assert [f.metadata for f in table.schema] == [f.metadata for f in disk.schema]
        assert partitions.read_table(gen / within) is table
    write(tmp_path / "docs/alpha.md", "# Alpha\n\nanotherword\n", bump=5)
    assert search_ids(project, "anotherword") == ["docs:alpha.md#alpha"]
    assert search_ids(project, "replacementword") == ["docs:beta.md#beta"]
    newest = generations.generation_id(
        project.index_dir / generations.current_name(project.index_dir))
    assert {g for g, _ in partitions._WRITTEN} == {newest}
    update.rehearse(project.index_dir / generations.current_name(project.index_dir))
    assert search_ids(project, "secondword") == []  # rehearsing changes nothing


fingerprint = st.tuples(*[st.integers(0, 2**62)] * 3)
file_tables = st.dictionaries(st.text(min_size=1, max_size=6).map(lambda t: f"docs:{t}.md"),
                              fingerprint, max_size=6)


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.tuples(file_tables, file_tables), min_size=1, max_size=4))
def test_a_record_as_text_is_its_json(records):
    """``FileRecord.to_text`` writes what ``json.dumps`` writes of ``to_json``, record
    after record (a column equal to the last one reuses its text: keys with quotes,
    backslashes and any character included)."""
    for files, binary in records:
        record = generations.FileRecord(files, binary, {k: len(k) % 3 for k in files})
        text = record.to_text()
        assert text == json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"))
        assert generations.FileRecord.from_json(json.loads(text)) == record

def test_a_record_like_the_last_encodes_only_the_columns_that_changed(monkeypatch):
    files = {f"docs:{i}.md": (i, 10 * i, 20 * i) for i in range(50)}
    generations.FileRecord(files, {"docs:b.bin": (1, 2, 3)}, dict.fromkeys(files, 0)).to_text()
    encoded = []
    real = json.dumps
    monkeypatch.setattr(generations.json, "dumps", lambda v, **kw: encoded.append(v) or
                        real(v, **kw))
    files["docs:7.md"] = (7, 71, 141)  # modified: only its times change
    generations.FileRecord(files, {"docs:b.bin": (1, 2, 3)}, dict.fromkeys(files, 0)).to_text()
    assert len(encoded) == 2 and all(71 in v or 141 in v for v in encoded)

def test_an_update_in_a_warm_process_looks_for_no_module(project, tmp_path, monkeypatch):
    """Once a process has updated, the next update imports nothing, not even in vain:
    pyarrow handed a bare Python value tries to import ``dateutil`` every time, which
    searches ``sys.path`` again where it is not installed (``ra.pipeline.typed``)."""
    import sys

    searched: list[str] = []

    class Finder:
        def find_spec(self, name, path=None, target=None):
            searched.append(name)

    run.build(project)
    for step, word in enumerate(("firstword", "secondword", "thirdword")):
        write(tmp_path / "docs/beta.md", f"# Beta\n\n{word}\n\n## Part\n\nmore\n",
              bump=5 + step)
        if step == 2:
            monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
        assert refresh_index(project).startswith("indexed 1 changed file")
    assert searched == []

def test_an_update_keeps_the_lookups_of_the_global_tables_it_wrote(project, tmp_path):
    """The term and word lookups an update derived (``ra.pipeline.lookups``) are kept for
    the tables the next update reads back from memory, so that it builds none afresh;
    a lookup is never taken for another table of the same rows."""
    import pyarrow as pa

    from ra.pipeline import lookups

    run.build(project)
    for step, word in enumerate(("firstword", "secondword")):
        write(tmp_path / "docs/beta.md", f"# Beta\n\n{word}\n", bump=5 + step)
        assert refresh_index(project).startswith("indexed 1 changed file")
        gen = project.index_dir / generations.current_name(project.index_dir)
        terms = partitions.read_table(gen / "terms.parquet")
        words = partitions.read_table(gen / "words.parquet")
        assert lookups._get(terms, "terms") == dict(zip(
            terms["term"].to_pylist(), terms["term_id"].to_pylist(), strict=True))
        assert lookups._get(words, "words") == words["word"].to_pylist()
    same = pa.table(terms.columns, schema=terms.schema)
    assert same.equals(terms) and lookups._get(same, "terms") is None
    lookups.keep(same, "terms", {"made": 1})
    assert lookups.term_ids(same) == {"made": 1} and lookups.term_ids(terms) != {"made": 1}
    unsorted = pa.table({"word": ["b", "a"]})
    with pytest.raises(ValueError, match="not sorted"):
        lookups.word_list(unsorted)
