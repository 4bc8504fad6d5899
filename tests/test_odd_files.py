"""Odd files are skipped and reported, never fatal: a name that is not UTF-8, a file or a
folder ra cannot read, a file that vanishes while it is indexed, an ``index_dir`` that
is a file. Each is named by ``ra check`` (exit 1 for a skipped file, 2 for an index that
cannot be written), the rest of the knowledge base is served by the CLI, the daemon and
MCP, and nothing is served from a file ra can no longer read. A full disk or a read-only
index folder is said as such (not as an internal error), and the index stays as it was.

The suite runs as root in CI, where permissions do not stop a read, so "no permission"
is simulated where ra meets it (``os.open`` of a folder, ``read_document`` of a file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from mcp import Client

from ra.cli.app import main
from ra.pipeline import discover, run
from ra.serve.mcp import create_server

BAD_NAME = b"bad\xff\xfename.md"
RA = Path(sys.executable).with_name("ra")


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "good.md").write_text("# Good\n\nalpha words here\n")
    (docs / "sub" / "inner.md").write_text("# Inner\n\nalpha inside\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def found_paths(capsys, query: str = "alpha") -> list[str]:
    code, out, err = cli(capsys, "search", query, "--list", "--json")
    assert code == 0, err
    return sorted(r["path"] for r in json.loads(out)["queries"][0]["results"])


# --- names that are not UTF-8 ---------------------------------------------------------------

def add_bad_name(project: Path) -> None:
    with open(os.fsencode(project / "docs") + b"/" + BAD_NAME, "wb") as fh:
        fh.write(b"# Bad\n\nalpha in a badly named file\n")


def test_a_name_that_is_not_utf8_is_skipped_and_named(project, capsys):
    """Every search exited 70 (UnicodeEncodeError) while ``ra check`` said 1 warning."""
    add_bad_name(project)
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    code, _, err = cli(capsys, "check")
    assert code == 1
    assert "docs:bad\\xff\\xfename.md: unreadable (name is not valid UTF-8)" in err
    assert cli(capsys, "ls", "docs")[0] == 0
    assert cli(capsys, "context", "docs/good.md")[0] == 0


def test_a_name_that_is_not_utf8_after_the_index_was_built(project, capsys):
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    add_bad_name(project)  # an incremental update meets it
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]


@pytest.mark.anyio
async def test_a_name_that_is_not_utf8_over_mcp(project):
    add_bad_name(project)
    async with Client(create_server(project)) as client:
        found = await client.call_tool("search", {"queries": "alpha"})
        sources = await client.call_tool("list_sources", {})
    assert not found.is_error and not sources.is_error
    paths = {r["path"] for r in found.structured_content["queries"][0]["results"]}
    assert paths == {"good.md", "sub/inner.md"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.skipif(not RA.exists(), reason="the ra executable is not installed beside python")
def test_a_name_that_is_not_utf8_through_the_daemon(project):
    add_bad_name(project)
    env = {**os.environ, "RA_DAEMON": "1"}
    started = subprocess.run([str(RA), "daemon", "start", "--idle", "60"], cwd=project,
                             env=env, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    try:
        done = subprocess.run([str(RA), "search", "alpha", "--list", "--json"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=60)
        status = subprocess.run([str(RA), "daemon", "status", "--json"], cwd=project,
                                env=env, capture_output=True, text=True, timeout=60)
    finally:
        subprocess.run([str(RA), "daemon", "stop"], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(status.stdout)["requests"] == 1  # the daemon answered it
    paths = {r["path"] for r in json.loads(done.stdout)["queries"][0]["results"]}
    assert paths == {"good.md", "sub/inner.md"}


# --- what ra cannot read ---------------------------------------------------------------------

def test_an_unreadable_folder_is_named(project, capsys, monkeypatch):
    """A folder that became unreadable left the index without a word."""
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    real_open = os.open

    def no_permission(path, flags, *args, **kwargs):
        if os.fspath(path).endswith("/docs/sub"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(discover.os, "open", no_permission)
    assert found_paths(capsys) == ["good.md"]
    code, _, err = cli(capsys, "check")
    assert code == 1 and "docs:sub: unreadable (Permission denied): folder skipped" in err


def test_an_unreadable_file_is_named_and_its_old_text_not_served(project, capsys,
                                                                 monkeypatch):
    """A file made unreadable kept serving its old content: chmod changes no mtime."""
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    good = project / "docs" / "good.md"
    good.chmod(0)  # its ctime changes; as root the read would still succeed, so:
    real_read, real_open = run.read_document, open

    def no_permission(path):
        if path.endswith("good.md"):
            raise PermissionError(13, "Permission denied")
        return real_read(path)

    def no_open(path, *args, **kwargs):
        if os.fspath(path).endswith("good.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(run, "read_document", no_permission)
    assert found_paths(capsys) == ["sub/inner.md"]
    monkeypatch.setattr("builtins.open", no_open)
    code, _, err = cli(capsys, "check")
    assert code == 1 and "docs:good.md: unreadable (Permission denied): not indexed" in err


def test_a_file_that_vanishes_mid_walk_is_skipped(project, capsys, monkeypatch):
    real_read = run.read_document

    def vanishing(path):
        if path.endswith("good.md"):
            os.unlink(path)
        return real_read(path)

    with monkeypatch.context() as patched:
        patched.setattr(run, "read_document", vanishing)
        assert found_paths(capsys) == ["sub/inner.md"]
    assert found_paths(capsys) == ["sub/inner.md"]
    assert cli(capsys, "check")[0] == 0


def test_a_file_deleted_between_listing_and_stat_is_not_reported(project, monkeypatch):
    real_scandir = os.scandir

    def listing_then_delete(fd):
        entries = list(real_scandir(fd))
        for entry in entries:
            if entry.name == "good.md":
                (project / "docs" / "good.md").unlink()
        return _Entries(entries)

    monkeypatch.setattr(discover.os, "scandir", listing_then_delete)
    from ra.config.settings import load_config

    scan = discover.scan(load_config(project).trees)
    assert sorted(scan.files) == ["docs:sub/inner.md"] and scan.unreadable == []


class _Entries(list):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --- a file linked under a second name ------------------------------------------------------

def test_a_linked_file_is_one_answer_and_its_link_reaches_it(project, capsys):
    (project / "docs" / "AGENTS.md").write_text("# Agents\n\nalpha conventions\n")
    os.symlink("AGENTS.md", project / "docs" / "CLAUDE.md")
    assert found_paths(capsys) == ["AGENTS.md", "good.md", "sub/inner.md"]
    code, out, err = cli(capsys, "get", "docs:CLAUDE.md#agents", "--json")
    assert code == 0, err
    assert json.loads(out)["id"] == "docs:AGENTS.md#agents"
    code, _, err = cli(capsys, "get", "docs:CLAUDE.md#nothing")
    assert code == 1 and "no chunk with id 'docs:CLAUDE.md#nothing'" in err


def test_an_id_of_a_file_gone_says_so(project, capsys):
    """An agent holds ids from earlier answers: after the file was deleted, ``get`` said
    "no chunk with id" and offered other pages, as for a typo."""
    (project / "docs" / "sidekiq.md").write_text("# Sidekiq\n\nalpha queues\n")
    assert "sidekiq.md" in found_paths(capsys)
    (project / "docs" / "sidekiq.md").unlink()
    code, _, err = cli(capsys, "get", "docs:sidekiq.md#sidekiq")
    assert code == 1 and ("no chunk with id 'docs:sidekiq.md#sidekiq': docs:sidekiq.md is no "
                          "file of the tree (removed, renamed or never there)") in err
    code, _, err = cli(capsys, "get", "docs:good.md#nothing")  # a section: no such note
    assert code == 1 and "no file of the tree" not in err


def test_an_id_whose_slug_changed_suggests_its_page_s_sections_first(project, capsys):
    """deep-rl-class's ids were ``#markov-property-markov-property`` before its heading ids
    were read; asked for, "did you mean" offered the page, not ``#markov-property``."""
    (project / "docs" / "rl.md").write_text("# RL framework\n\n## Markov Property\n\nalpha "
                                            "state\n\n## Rewards\n\nalpha reward\n")
    assert "rl.md" in found_paths(capsys)
    code, _, err = cli(capsys, "get", "docs:rl.md#markov-property-markov-property")
    assert code == 1
    said = err.split("did you mean:")[1].split()
    assert said[0] == "docs:rl.md#markov-property"


# --- an index folder that is a file -----------------------------------------------------------

def test_an_index_dir_that_is_a_file_is_an_error_with_its_exit_code(project, capsys):
    """``ra search`` exited 70 and ``ra check`` reported 0 errors."""
    (project / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n'
                                      '[settings]\nindex_dir = "idx"\n')
    (project / "idx").write_text("not a folder\n")
    code, _, err = cli(capsys, "search", "alpha")
    assert code == 1 and "idx is not a folder" in err
    code, _, err = cli(capsys, "check")
    assert code == 2 and "error: the index folder" in err and "1 error," in err
    assert cli(capsys, "update")[0] == 1


# --- a full disk -------------------------------------------------------------------------------

#: What each writer raises when the disk is full: Python, pyarrow (errno set), DuckDB
#: (the errno in its text only)
FULL = [lambda: OSError(28, "No space left on device"),
        lambda: OSError(28, "Error writing bytes to file. Detail: [errno 28] No space left "
                            "on device"),
        lambda: __import__("duckdb").IOException(
            'IO Error: Could not write file "x.parquet": No space left on device')]


def fill_the_disk(monkeypatch, error) -> None:
    from ra.pipeline import partitions

    def full(*args, **kwargs):
        raise error()

    monkeypatch.setattr(partitions, "write_table", full)


@pytest.mark.parametrize("error", FULL, ids=["python", "pyarrow", "duckdb"])
def test_a_full_disk_is_said_and_the_index_kept(project, capsys, monkeypatch, error):
    """It was "internal error: OSError: [Errno 28] …", exit 70, as if ra had a bug."""
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    (project / "docs" / "new.md").write_text("# New\n\nalpha again\n")
    with monkeypatch.context() as patch:
        fill_the_disk(patch, error)
        for command in (["update"], ["search", "alpha"]):
            code, _, err = cli(capsys, *command)
            assert code == 1 and "internal error" not in err
            assert "no space left on the disk of the index folder" in err
            assert "free some space" in err and "The index is as it was" in err
    assert found_paths(capsys) == ["good.md", "new.md", "sub/inner.md"]


def test_a_full_disk_before_any_index(project, capsys, monkeypatch):
    fill_the_disk(monkeypatch, FULL[0])
    code, _, err = cli(capsys, "update")
    assert code == 1 and "No index was written" in err
    assert not [p for p in (project / ".ra" / "index").iterdir()
                if p.name not in (".writer.lock", ".gitignore")]


def test_a_refused_write_names_the_index_folder_only_when_it_is_there(tmp_path):
    from ra.store.generations import write_problem

    index = tmp_path / "idx"
    index.mkdir()
    inside = PermissionError(13, "Permission denied", str(index / "gen-1" / "x"))
    outside = PermissionError(13, "Permission denied", str(tmp_path / "notes.md"))
    assert "cannot be written (Permission denied)" in write_problem(index, inside)
    assert write_problem(index, outside) is None
    assert write_problem(index, RuntimeError("boom")) is None
    wrapped = RuntimeError("a partition failed")
    wrapped.__cause__ = OSError(122, "Disk quota exceeded")
    assert "no space left" in write_problem(index, wrapped)


def test_a_refused_write_elsewhere_is_said_as_the_system_says_it(tmp_path, capsys,
                                                                   monkeypatch):
    """`ra init` in a read-only folder was "internal error: OSError: [Errno 30] …"."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\ntext\n")
    monkeypatch.chdir(tmp_path)

    def read_only(*args, dir=None, **kwargs):  # ra writes a new file beside it first
        raise OSError(30, "Read-only file system", f"{dir}/.ra.toml.x1y2.tmp")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    code, _, err = cli(capsys, "init")
    assert code == 1 and "internal error" not in err
    assert f"error: Read-only file system: {tmp_path / '.ra.toml'}" in err


def test_a_read_only_index_folder_answers_while_current_and_says_so(project, capsys,
                                                                     monkeypatch):
    """`ra status` failed ("cannot be written") and `ra check` said nothing of it."""
    from ra.store import generations

    assert cli(capsys, "update")[0] == 0
    real = os.open

    def read_only(path, flags, *args, **kwargs):
        if str(path).endswith(generations.LOCK) and flags & (os.O_RDWR | os.O_WRONLY):
            raise OSError(30, "Read-only file system", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    code, out, _ = cli(capsys, "status")
    assert code == 0 and "state: current" in out
    assert "cannot be written (Read-only file system)" in out
    code, _, err = cli(capsys, "check")
    assert code == 1 and "searches are answered while no file changes" in err
    assert found_paths(capsys) == ["good.md", "sub/inner.md"]
    (project / "docs" / "new.md").write_text("# New\n\nalpha again\n")
    code, _, err = cli(capsys, "check")
    assert code == 2 and "it cannot be brought up to date" in err
    code, _, err = cli(capsys, "search", "alpha")
    assert code == 1 and "cannot be written (Read-only file system)" in err


@pytest.mark.anyio
async def test_a_full_disk_over_mcp_is_a_tool_error_and_the_server_goes_on(project,
                                                                           monkeypatch):
    (project / "docs" / "new.md").write_text("# New\n\nalpha again\n")
    async with Client(create_server(project)) as client:
        with monkeypatch.context() as patch:
            fill_the_disk(patch, FULL[1])
            full = await client.call_tool("search", {"queries": "alpha"})
        found = await client.call_tool("search", {"queries": "alpha"})
    assert full.is_error and "no space left on the disk" in full.content[0].text
    assert not found.is_error
    paths = {r["path"] for r in found.structured_content["queries"][0]["results"]}
    assert paths == {"good.md", "new.md", "sub/inner.md"}


@pytest.mark.anyio
async def test_a_name_that_is_not_utf8_appearing_while_mcp_watches(project):
    """The watcher names the new file in its event: the hint must not carry it."""
    from ra.index.warm import WarmIndex

    warm = WarmIndex.at(project).start()
    try:
        async with Client(create_server(project, warm)) as client:
            first = await client.call_tool("search", {"queries": "alpha"})
            add_bad_name(project)
            (project / "docs" / "good.md").write_text("# Good\n\nalpha beta words\n")
            found = await client.call_tool("search", {"queries": "beta"})
    finally:
        warm.close()
    assert not first.is_error and not found.is_error, found.content[0].text
    paths = {r["path"] for r in found.structured_content["queries"][0]["results"]}
    assert paths == {"good.md"}


@pytest.mark.anyio
async def test_an_index_dir_that_is_a_file_over_mcp(project):
    (project / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n'
                                      '[settings]\nindex_dir = "idx"\n')
    (project / "idx").write_text("not a folder\n")
    async with Client(create_server(project)) as client:
        found = await client.call_tool("search", {"queries": "alpha"})
        sources = await client.call_tool("list_sources", {})
    assert found.is_error and "idx is not a folder" in found.content[0].text
    assert "ra failed" not in found.content[0].text
    assert not sources.is_error


# --- markup that opens and never closes ------------------------------------------------------

#: Files of markup that opens and never closes, 50 KB each. Each pattern once scanned the
#: rest of its line (or of the file) from every opener: 40 KB of "[" took a minute to
#: read, 50 KB a minute and a half, and the build with it. Now each file reads in a fraction
#: of a second, so the deadline below (a guard against that, not a speed figure) has a
#: margin of some thirty times.
OPENERS = {"brackets": "[", "images": "![", "wiki": "[[", "footnotes": "[^",
           "shortcodes": "{{<", "comments": "<!--", "mdx": "{/*", "cdata": "<![CDATA[",
           "quoted": "> [", "table": "|[", "heading": "# [", "badges": "[![a](b)"}
#: Lines whose markup a pattern tried every way, each over the deadline alone before:
#: a heading's docsify options, tried as a run from each option in it (150 KB: 90 s);
#: "{" before blanks, which two runs of blanks around an optional colon split every way
#: (300 KB: over five minutes); an MDX import's blanks (4 KB: 35 s); a Liquid tag that
#: never closes (70 KB: 92 s); JSX fragments (200 KB: over 100 s); mdBook's helpers in a
#: list item (400 KB). And links: each inline link was checked against every link before
#: it in its chunk (60,000 links: about a minute and a half).
LINES = {"docsify": "# a" + " :id=x" * 25_000 + " y", "blanks": "{" + " " * 300_000 + "x",
         "links": "[a](b) " * 60_000,
         "kramdown": "{::a " * 10_000, "templates": "[a]({{ " + "{{ x }}" * 7_000,
         "import": "import" + " " * 8_000 + "x", "liquid": "{%" + "a" * 70_000,
         "fragments": "<>" * 100_000, "mdbook": "- " + "{{#x " * 80_000}


def test_markup_that_never_closes_is_read_in_linear_time(project, capsys):
    import signal

    for name, opener in OPENERS.items():
        (project / "docs" / f"{name}.md").write_text(
            f"# {name} openers\n\n{opener * (50_000 // len(opener))}\n\nclosing words\n")
    for name, line in LINES.items():
        (project / "docs" / f"{name}.md").write_text(
            f"# {name} openers\n\n{line}\n\nclosing words\n")

    def late(*_):
        raise TimeoutError("reading files of unclosed markup took over 60 s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(60)
    try:
        code, out, err = cli(capsys, "update")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code == 0, err
    code, out, err = cli(capsys, "search", "closing words", "--list", "--json", "--limit", "30",
                         "--cutoff-ratio", "0",  # their lengths differ: so do their scores
                         "--max-tokens", "0")  # and 30 entries need more than 4000 tokens
    found = {r["path"] for r in json.loads(out)["queries"][0]["results"]}
    assert found >= {f"{name}.md" for name in (*OPENERS, *LINES)}
