"""``ra.index.warm.WarmIndex``: a long-lived reader that is never stale and checks nothing when
nothing changed.

Every change is made and then asked about at once, with no sleep between the write and
the call: the answer must already reflect it. Each behaviour runs twice, watching with
inotify and with watching off (the per-call stat check used where inotify is missing).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import GUIDE
from ra.errors import ConfigError
from ra.index import freshness
from ra.index.warm import WarmIndex
from ra.query.search import Searcher, SearchOptions

TOML = '[tree.docs]\npath = "docs"\n'


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "docs" / "sub" / "notes.txt").write_text("Plain notes about rust ownership.\n")
    (root / ".ra.toml").write_text(TOML)
    return root


LINUX = sys.platform == "linux"
linux_only = pytest.mark.skipif(not LINUX, reason="inotify is Linux's")


@pytest.fixture(params=[pytest.param(True, marks=linux_only), False],
                ids=["inotify", "stat-check"])
def watching(request) -> bool:
    return request.param


@pytest.fixture
def index(project, watching):
    warm = WarmIndex.at(project, watch=watching)
    yield warm
    warm.close()


def found(index: WarmIndex, query: str, **options) -> list[str]:
    """Paths of the results of ``query``, through a reader held for the search."""
    with index.use() as reader:
        response = Searcher(reader, index.config).search(
            [query], SearchOptions(**{"limit": 50, **options}))
    return sorted({r.path for r in response.queries[0].results})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def refreshes(monkeypatch) -> list[str]:
    """Each freshness check of a WarmIndex (``refresh_watched``, or ``refresh_index``),
    recorded."""
    calls: list[str] = []
    for name in ("refresh_index", "refresh_watched"):
        real = getattr(freshness, name)

        def counted(config, *args, real=real, **kw):
            calls.append(str(config.index_dir))
            return real(config, *args, **kw)

        monkeypatch.setattr(freshness, name, counted)
    return calls


@pytest.fixture
def walks(monkeypatch) -> list[int]:
    """Each stat walk of every file (``ra.pipeline.discover.scan``), recorded."""
    calls: list[int] = []
    real = freshness.scan

    def counted(trees):
        calls.append(1)
        return real(trees)

    monkeypatch.setattr(freshness, "scan", counted)
    return calls


# --- files -------------------------------------------------------------------------------

def test_edits_additions_deletions_and_renames_are_answered_at_once(index, project):
    docs = project / "docs"
    assert found(index, "ownership") == ["sub/notes.txt"]
    write(docs / "sub" / "notes.txt", "Plain notes about borrowing, now longer.\n")
    assert found(index, "ownership") == [] and found(index, "borrowing") == ["sub/notes.txt"]
    write(docs / "zoo.md", "# Giraffes\n\nLong necks.\n")
    assert found(index, "giraffes") == ["zoo.md"]
    (docs / "zoo.md").rename(docs / "park.md")
    assert found(index, "giraffes") == ["park.md"]
    (docs / "park.md").unlink()
    assert found(index, "giraffes") == []


def test_a_new_folder_is_watched_from_the_next_call_on(index, project):
    write(project / "docs" / "a" / "b" / "deep.md", "# Okapis\n\nForest giraffes.\n")
    assert found(index, "okapis") == ["a/b/deep.md"]
    write(project / "docs" / "a" / "b" / "deeper.md", "# Narwhals\n\nTusks.\n")
    assert found(index, "narwhals") == ["a/b/deeper.md"]
    (project / "docs" / "a").rename(project / "docs" / "moved")
    assert found(index, "narwhals") == ["moved/b/deeper.md"]
    write(project / "docs" / "moved" / "b" / "third.md", "# Wombats\n\nCubes.\n")
    assert found(index, "wombats") == ["moved/b/third.md"]
    shutil.rmtree(project / "docs" / "moved")
    assert found(index, "wombats") == [] and found(index, "okapis") == []


def test_the_target_of_a_symlinked_file_is_watched(index, project, tmp_path):
    outside = tmp_path / "elsewhere" / "target.md"
    write(outside, "# Capybaras\n\nLarge rodents.\n")
    (project / "docs" / "linked.md").symlink_to(outside)
    assert found(index, "capybaras") == ["linked.md"]
    write(outside, "# Tapirs\n\nLonger snouts than before.\n")
    assert found(index, "tapirs") == ["linked.md"] and found(index, "capybaras") == []


def test_a_removed_index_folder_is_rebuilt(index, project):
    assert found(index, "logging") == ["guide.md"]
    shutil.rmtree(project / ".ra")
    write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
    assert found(index, "giraffes") == ["zoo.md"]


def test_a_generation_published_by_another_process_is_taken(index, project):
    assert found(index, "logging") == ["guide.md"]
    code = ("import sys; from pathlib import Path; from ra.config.settings import load_config; "
            "from ra.index.freshness import refresh_index; p = Path(sys.argv[1]); "
            "(p / 'docs' / 'zoo.md').write_text('# Giraffes\\n\\nLong necks.\\n'); "
            "print(refresh_index(load_config(p)))")
    done = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True,
                          text=True, timeout=120)
    assert "indexed 1 changed file" in done.stdout, done.stderr
    index.last_status = None
    assert found(index, "giraffes") == ["zoo.md"]
    published = project / ".ra" / "index" / (project / ".ra" / "index" / "CURRENT"
                                               ).read_text().strip()
    assert index.reader().generation.path == published
    assert index.last_status is None  # the other process's generation, not one of ours


# --- configuration -------------------------------------------------------------------------

def test_a_changed_ra_toml_is_read_again(index, project):
    write(project / "more" / "extra.md", "# Pangolins\n\nScales.\n")
    assert found(index, "pangolins") == []
    (project / ".ra.toml").write_text(TOML + '\n[tree.more]\npath = "more"\n')
    assert [t.name for t in index.config.trees] == ["docs"]  # read at the next call
    assert found(index, "pangolins", trees=("more",)) == ["extra.md"]
    write(project / "more" / "later.md", "# Armadillos\n\nShells.\n")
    assert found(index, "armadillos") == ["later.md"]
    (project / ".ra.toml").write_text(TOML + '[tree.more]\npath = "more"\n'
                                      'exclude = ["later.md"]\n')
    assert found(index, "armadillos") == []


def test_a_new_ra_toml_nearer_the_working_folder_is_found(project, watching):
    sub = project / "docs" / "sub"
    index = WarmIndex.at(sub, watch=watching)
    try:
        assert found(index, "logging") == ["guide.md"]
        (sub / ".ra.toml").write_text('root = true\n[tree.notes]\npath = "."\n')
        assert found(index, "ownership") == ["notes.txt"]
        assert [t.name for t in index.config.trees] == ["notes"]
        assert found(index, "logging") == []
    finally:
        index.close()


def test_a_broken_ra_toml_is_reported_until_it_is_fixed(index, project):
    assert found(index, "logging") == ["guide.md"]
    (project / ".ra.toml").write_text('[tree.docs]\npath = \n')
    with pytest.raises(ConfigError):
        index.reader()
    (project / ".ra.toml").write_text(TOML)
    assert found(index, "logging") == ["guide.md"]


# --- what is (not) checked -----------------------------------------------------------------

@linux_only
def test_unchanged_files_are_not_walked_again(project, refreshes):
    index = WarmIndex.at(project)
    try:
        assert found(index, "logging") == ["guide.md"]
        before = len(refreshes)
        for _ in range(5):
            index.reader()
        write(project / "docs" / ".guide.md.swp", "editor scratch")  # the walk skips dot names
        write(project / "docs" / "picture.png", "not markdown")  # no tree includes it
        index.reader()
        assert len(refreshes) == before
        write(project / "docs" / "guide.md", GUIDE + "\nMore.\n")
        index.reader()
        assert len(refreshes) == before + 1
    finally:
        index.close()


def test_without_watching_every_call_checks_the_files(project, refreshes):
    index = WarmIndex.at(project, watch=False)
    try:
        index.reader()
        before = len(refreshes)
        index.reader()
        index.reader()
        assert len(refreshes) == before + 2 and index.watcher is None
    finally:
        index.close()


@linux_only
def test_events_name_the_files_they_are_about(project):
    from ra.config.settings import load_config
    from ra.index.watch import FILES, FOLDERS, Watcher, plan_watches

    watcher = Watcher()
    try:
        watcher.sync(plan_watches(load_config(project), project))
        docs = project / "docs"
        write(docs / "zoo.md", "# Giraffes\n")
        write(docs / "sub" / "notes.txt", "changed\n")
        write(docs / ".zoo.md.swp", "scratch")  # skipped by the walk: not named
        (docs / "sub" / "notes.txt").rename(docs / "sub" / "kept.txt")
        assert watcher.drain() == FILES
        assert watcher.take_keys() == {"docs:zoo.md", "docs:sub/notes.txt",
                                       "docs:sub/kept.txt"}
        assert watcher.take_keys() == set()  # taken
        (docs / "new").mkdir()  # a folder: its files are not named by any event
        write(docs / "guide.md", GUIDE + "\nMore.\n")
        assert watcher.drain() == FOLDERS | FILES and watcher.take_keys() is None
    finally:
        watcher.close()


def test_a_dot_folder_an_include_spells_out_is_watched(project, watching):
    """``.cursor/rules`` named by an include: a rule written there is answered at once,
    as any file is; a write in ``.git`` (never walked) is no event of the tree."""
    (project / ".ra.toml").write_text(
        TOML + 'include = ["**/*.md", "**/*.txt", ".cursor/rules/*.mdc"]\n')
    write(project / "docs/.cursor/rules/r.mdc", "# Rule\n\nquokkas only\n")
    index = WarmIndex.at(project, watch=watching)
    try:
        assert found(index, "quokkas") == [".cursor/rules/r.mdc"]
        write(project / "docs/.cursor/rules/r.mdc", "# Rule\n\nwombats only\n")
        write(project / "docs/.cursor/rules/s.mdc", "# Second\n\nwombats too\n")
        write(project / "docs/.git/w.md", "# W\n\nwombats\n")
        assert found(index, "wombats") == [".cursor/rules/r.mdc", ".cursor/rules/s.mdc"]
        assert found(index, "quokkas") == []
    finally:
        index.close()


@linux_only
def test_a_file_that_a_symlink_points_at_is_never_named_alone(project):
    """Writing the target of a symlink changes what both names read: its event leaves
    the files unnamed, so the check walks."""
    from ra.config.settings import load_config
    from ra.index.watch import Watcher, plan_watches

    docs = project / "docs"
    (docs / "alias.md").symlink_to(docs / "guide.md")
    watcher = Watcher()
    try:
        watcher.sync(plan_watches(load_config(project), project))
        write(docs / "guide.md", GUIDE + "\nMore.\n")
        watcher.drain()
        assert watcher.take_keys() is None
    finally:
        watcher.close()


@linux_only
def test_files_named_by_events_are_checked_without_a_walk(project, walks):
    """Edits, additions, renames and deletions of files are named by their events, so
    the check stats those files alone; a new folder (its files unnamed) is walked."""
    index = WarmIndex.at(project)
    try:
        docs = project / "docs"
        assert found(index, "logging") == ["guide.md"]
        index.reader()  # the index folder the build made is watched from here on
        before = len(walks)
        write(docs / "sub" / "notes.txt", "Plain notes about borrowing.\n")
        write(docs / "zoo.md", "# Giraffes\n\nLong necks.\n")
        assert found(index, "borrowing") == ["sub/notes.txt"]
        assert found(index, "giraffes") == ["zoo.md"]
        (docs / "zoo.md").rename(docs / "park.md")
        assert found(index, "giraffes") == ["park.md"]
        (docs / "park.md").unlink()
        assert found(index, "giraffes") == [] and found(index, "ownership") == []
        assert len(walks) == before
        write(docs / "new" / "deep.md", "# Okapis\n\nForest giraffes.\n")
        assert found(index, "okapis") == ["new/deep.md"]
        assert len(walks) == before + 1
    finally:
        index.close()


@linux_only
def test_a_full_event_queue_still_leads_to_a_full_check(project):
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    index = WarmIndex.at(project)
    try:
        index.reader()
        fds = [os.open(project / "docs" / name, os.O_WRONLY | os.O_CREAT)
               for name in ("a.tmp", "b.tmp")]
        for i in range(limit + 10):  # alternating names: the kernel cannot merge them
            os.write(fds[i % 2], b"x")
        for fd in fds:
            os.close(fd)
        write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
        assert found(index, "giraffes") == ["zoo.md"]
        assert index.watcher.overflows == 1
    finally:
        index.close()


@linux_only
def test_when_folders_cannot_be_watched_every_call_checks_instead(project, monkeypatch):
    import inotify_simple

    def limit_reached(self, path, mask):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(inotify_simple.INotify, "add_watch", limit_reached)
    index = WarmIndex.at(project)
    try:
        assert found(index, "logging") == ["guide.md"]
        assert index.watcher is None
        write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
        assert found(index, "giraffes") == ["zoo.md"]
    finally:
        index.close()


# --- following -----------------------------------------------------------------------------

def wait_for(condition, seconds: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@linux_only
def test_a_follower_updates_the_index_before_the_next_call(project, refreshes):
    index = WarmIndex.at(project).follow()
    try:
        assert found(index, "logging") == ["guide.md"]
        before, index.last_status = len(refreshes), None  # the build's status, taken
        write(project / "docs" / ".guide.md.swp", "editor scratch")  # nothing to index
        write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
        assert wait_for(lambda: len(refreshes) > before)  # no call made
        assert wait_for(lambda: index.last_status is not None)
        assert index.last_status.startswith("indexed 1 changed file"), index.last_status
        done = len(refreshes)
        assert found(index, "giraffes") == ["zoo.md"]
        assert len(refreshes) == done  # the call found the index current
    finally:
        index.close()
    assert index._follower is None


@linux_only
def test_a_follower_reports_every_update_until_the_status_is_taken(project, refreshes):
    index = WarmIndex.at(project).follow()
    try:
        index.reader()
        index.last_status = None
        for i, animal in enumerate(("giraffes", "okapis")):
            write(project / "docs" / f"{animal}.md", f"# {animal.title()}\n\nText.\n")
            assert wait_for(lambda n=i: index.last_status is not None
                            and index.last_status.count(";") >= n)
        assert found(index, "okapis") == ["okapis.md"]
    finally:
        index.close()


def test_without_watching_there_is_no_follower(project):
    index = WarmIndex.at(project, watch=False).follow()
    try:
        assert index._follower is None and found(index, "logging") == ["guide.md"]
    finally:
        index.close()


# --- readers -------------------------------------------------------------------------------

def test_a_warm_reader_takes_over_the_same_generation(index, project):
    cold = index.reader()
    assert index.wait_warm(60)
    warm = index.reader()
    assert warm.keep_vocabulary and warm.generation.path == cold.generation.path
    assert index.reader() is warm and found(index, "logging") == ["guide.md"]
    with pytest.raises(Exception, match="closed"):  # the cold one was closed
        cold.query("SELECT 1")
    write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
    fresh = index.reader()
    assert fresh.generation.path != warm.generation.path
    assert index.wait_warm(60) and index.reader().generation.path == fresh.generation.path


def test_a_held_reader_stays_open_until_released(index, project):
    with index.use() as held:
        write(project / "docs" / "zoo.md", "# Giraffes\n\nLong necks.\n")
        other = threading.Thread(target=lambda: found(index, "giraffes"))
        other.start()
        other.join(60)
        assert held.query("SELECT count(*) FROM chunks")[0][0] == 6  # still open, unchanged
    with pytest.raises(Exception, match="closed"):
        held.query("SELECT 1")


def test_concurrent_calls_while_files_change(index, project):
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(15):
                assert found(index, "logging") == ["guide.md"]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(5):
        write(project / "docs" / f"n{i}.md", f"# Note {i}\n\nNumber {i} of several.\n")
    for t in threads:
        t.join(120)
    assert not errors and found(index, "several") == [f"n{i}.md" for i in range(5)]
