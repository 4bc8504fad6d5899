"""Interrupted updates are harmless: real processes, killed with the signals agent
harnesses use (SIGKILL, SIGTERM, SIGHUP, SIGINT).

What must hold after any kill: no process of the killed writer remains (its pool
workers included), the writer lock is free, the last published generation is served,
and the next command finishes within a bounded wait with the right results. Each writer
runs in a session of its own, so whatever it started is found by its session id.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ra.store.generations import writer_lock

RA = shutil.which("ra") or str(Path(sys.executable).with_name("ra"))
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
#: Files in the crash-test tree: more than one partition (256 files), so builds use workers.
FILES = 600
#: The bounded wait: every command after a kill must finish within this many seconds.
NEXT_COMMAND_SECONDS = 60


_started: list[int] = []  # sessions this module started, all killed at teardown


@pytest.fixture(autouse=True, scope="module")
def _hangups_end_processes():
    """The processes this module starts end on SIGHUP, as a terminal's hang-up ends
    them: a run under ``nohup`` ignores SIGHUP, and its children inherit that (the SIGHUP
    cases then waited 60 s for a writer that went on)."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, previous)


@pytest.fixture(autouse=True)
def _no_leftovers():
    yield
    while _started:
        gone(_started.pop(), seconds=0)


def session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (zombies are dead already)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(name))
    return pids


def gone(sid: int, seconds: float = 5.0) -> list[int]:
    """The processes of session ``sid`` still alive after up to ``seconds``; they are
    killed, so that a failing test leaves none behind."""
    deadline = time.monotonic() + seconds
    while (left := session(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def lock_is_free(index_dir: Path) -> bool:
    with writer_lock(index_dir, wait=False) as mine:
        return mine


def env(home: Path, **extra: str) -> dict:
    return {**os.environ, "HOME": str(home), "RA_DAEMON": "0", **extra}


# --- the pool's workers -------------------------------------------------------------------

WORKING = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import ra.pipeline.run as run
    from ra.store.generations import writer_lock
    from ra.pipeline.discover import FoundFile

    def slow(job):
        print("working", flush=True)
        time.sleep(float(sys.argv[3]))

    run._process = slow  # the forked workers run this too
    if sys.argv[2] == "watch":  # as where there is no prctl: the workers watch the parent
        import ra.pipeline.workers as workers
        workers._die_with_parent = lambda: None
    files = [FoundFile("t", f"{i}.md", f"/nowhere/{i}.md", "markdown", 1, 1, False, 1)
             for i in range(600)]
    with writer_lock(Path(sys.argv[1])):
        run.run_parts(files, {}, 2)
""")


@pytest.mark.parametrize("how", ["prctl", "watch"])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_workers_die_with_a_killed_writer_and_free_the_lock(tmp_path, sig, how):
    """The workers of a full build outlived a killed ``ra update`` and held the writer
    lock for ever: every later update waited on it. (On SIGINT the writer itself cancels
    the partitions not started and waits for the two under way, here 2 s each.)"""
    index_dir = tmp_path / "index"
    pid = _signal_when_working(WORKING, [str(index_dir), how], "working", sig)
    assert gone(pid) == []
    assert lock_is_free(index_dir)


def _signal_when_working(script: str, args: list[str], mark: str, sig) -> int:
    """Run ``script`` in a session of its own until a worker prints ``mark`` (each
    sleeps 2 s on SIGINT, which the writer waits for, else 120 s), send the writer
    ``sig``, wait for it, kill it if it is still there; its pid."""
    job = "2" if sig == signal.SIGINT else "120"
    proc = subprocess.Popen([sys.executable, "-c", script, *args, job],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    _started.append(proc.pid)
    try:
        assert proc.stdout.readline().startswith(mark)  # a worker is at work
        assert len(session(proc.pid)) >= 3  # the writer and its two workers
        proc.send_signal(sig)
        proc.wait(timeout=NEXT_COMMAND_SECONDS)
    finally:
        proc.kill()
        proc.wait()
    return proc.pid


POSTING = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import ra.pipeline.run as run
    from ra.config.settings import load_config

    def slow(out, pid, terms):  # the forked workers find it by name
        print("posting", flush=True)
        time.sleep(float(sys.argv[2]))

    run.write_postings = slow
    run.build(load_config(Path(sys.argv[1])), workers=2)
""")


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_workers_writing_postings_die_with_a_killed_writer(tmp_path, sig):
    """A full build keeps its workers for a second stage, each partition's postings: a
    writer killed then leaves none of them behind, nor its lock, nor a generation."""
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    for i in range(FILES):
        (kb / "docs" / f"{i}.md").write_text(f"# Note {i}\n\nwords of note {i}\n")
    (kb / ".ra.toml").write_text('[tree.notes]\npath = "docs"\n')
    pid = _signal_when_working(POSTING, [str(kb)], "posting", sig)  # writing postings
    assert gone(pid) == []
    index = kb / ".ra" / "index"
    assert lock_is_free(index)
    assert not [p for p in index.iterdir() if p.name.startswith("gen-")]


def _stream_interrupted(*_args, **_kwargs):
    """A DuckDB query over a stream whose Python reader Ctrl-C interrupts."""
    import duckdb
    import pyarrow as pa

    def batches():
        raise KeyboardInterrupt
        yield  # a generator

    con = duckdb.connect()
    con.register("terms", pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int32())]),
                                                            batches()))
    con.execute("SELECT * FROM terms").fetchall()


def _schema_interrupted(*_args, **_kwargs):
    """The error ra update printed as "internal error: InvalidInputException: …"."""
    import duckdb

    raise duckdb.InvalidInputException(
        "Invalid Input Error: reading the schema of the object registered as 'terms' "
        "failed: KeyboardInterrupt")


@pytest.mark.parametrize("raise_it", [_stream_interrupted, _schema_interrupted],
                         ids=["stream", "schema"])
def test_ctrl_c_inside_python_code_duckdb_calls_exits_130(tmp_path, monkeypatch, capsys,
                                                          raise_it):
    """Ctrl-C in the Python code a DuckDB query calls back (a registered relation's
    reader) comes out as DuckDB's InvalidInputException naming KeyboardInterrupt: the
    user's interruption (exit 130), not an internal error (exit 70; once in some twenty
    Ctrl-C's of ra update on cargo's docs)."""
    from ra.cli.app import main
    from ra.query.search import Searcher

    make_tree(tmp_path, files=3)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Searcher, "search", raise_it)
    assert main(["search", "alpha"]) == 130
    assert "internal error" not in capsys.readouterr().err


def test_a_duckdb_error_naming_keyboardinterrupt_elsewhere_is_no_interruption():
    """Only an error that ends with the interruption is one: a message that quotes the
    word in the middle is still an error."""
    import duckdb

    from ra.cli.app import interrupted

    assert not interrupted(duckdb.InvalidInputException(
        "no column named KeyboardInterrupt in table x"))
    assert not interrupted(ValueError("failed: KeyboardInterrupt"))  # not DuckDB's


BUSY_DAEMON = textwrap.dedent("""
    import sys, time
    import ra.serve.daemon as daemon

    real = daemon.Daemon.run

    def slow(self, req):  # a command busy when the signal comes
        print("running", flush=True)
        try:
            time.sleep(30)
        except BaseException:  # what DuckDB does to it: "Query interrupted"
            pass
        return real(self, req)

    daemon.Daemon.run = slow
    sys.exit(daemon.main(["--idle", "60"]))
""")


@pytest.mark.parametrize("sig", SIGNALS[1:], ids=lambda s: s.name)
def test_a_daemon_signalled_inside_duckdb_stops(tmp_path, sig):
    """DuckDB turns the exception a signal handler raises inside a query into its own
    RuntimeError ("Query interrupted"): the daemon answered the command and served on,
    while its killer waited."""
    root, home = make_tree(tmp_path / "proj", files=3), tmp_path / "home"
    home.mkdir()
    proc = start([sys.executable, "-c", BUSY_DAEMON], root, home)
    socket = home / ".ra" / "run" / "daemon.sock"
    deadline = time.monotonic() + NEXT_COMMAND_SECONDS
    while not socket.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    client = start([RA, "search", "marker1", "--raw", "--list"], root, home, RA_DAEMON="1")
    assert proc.stdout.readline() == "running\n"
    time.sleep(0.2)  # asleep by now
    proc.send_signal(sig)
    try:
        proc.wait(timeout=10)  # it stops, not serves on
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints where it is
        pytest.fail(f"the daemon serves on:\n{proc.communicate(timeout=30)[1][-4000:]}")
    out, err = client.communicate(timeout=NEXT_COMMAND_SECONDS)
    assert client.returncode == 0, err
    assert out.startswith("docs:n0001.md")  # answered in the client's own process
    assert not socket.exists()  # a later client does not try it


def test_ra_mcp_exits_on_sigint_while_its_client_keeps_stdin_open(tmp_path):
    """asyncio's SIGINT handler only cancelled the server's task, which then waited for
    the thread reading stdin: ``ra mcp`` outlived the signal until its client closed it."""
    root, home = make_tree(tmp_path / "proj", files=3), tmp_path / "home"
    home.mkdir()
    proc = start([RA, "mcp"], root, home)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    proc.stdin.write(json.dumps(hello) + "\n")
    proc.stdin.flush()
    assert '"id":1' in proc.stdout.readline().replace(" ", "")  # the server loop runs
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("ra mcp is still running 10 s after SIGINT")
    assert gone(proc.pid) == []


# --- the crash test -----------------------------------------------------------------------

def make_tree(root: Path, files: int = FILES) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for i in range(files):
        (docs / f"n{i:04d}.md").write_text(
            f"# Note {i}\n\nShared words alpha beta, and marker{i}.\n\n## Part\n\nMore {i}.\n")
    (root / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n')
    return root


def expect_served(root: Path, home: Path, edits: dict[int, str]) -> None:
    """The next command finishes in time and answers from the files as they are: a
    file's word finds that file alone, and an edited file's old word finds nothing."""
    probe = random.choice(list(edits)) if edits else random.randrange(FILES)
    assert search(root, home, edits.get(probe, f"marker{probe}")) == [f"n{probe:04d}.md"]
    if edits:
        assert search(root, home, f"marker{probe}") == []


def search(root: Path, home: Path, word: str) -> list[str]:
    done = subprocess.run([RA, "search", word, "--raw", "--list", "--json"], cwd=root,
                          env=env(home), capture_output=True, text=True,
                          timeout=NEXT_COMMAND_SECONDS)
    assert done.returncode == 0, done.stderr
    return [r["path"] for r in json.loads(done.stdout)["queries"][0]["results"]]


def start(argv: list[str], root: Path, home: Path, **extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(argv, cwd=root, env=env(home, PYTHONFAULTHANDLER="1", **extra),
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    _started.append(proc.pid)
    return proc


def kill_later(proc: subprocess.Popen, sig: signal.Signals, latest: float, where: str
               ) -> None:
    """Send ``sig`` at a random moment within ``latest`` seconds; wait for the end."""
    time.sleep(random.uniform(0.05, latest))
    proc.send_signal(sig)
    try:
        proc.wait(timeout=NEXT_COMMAND_SECONDS)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"{where}: still running {NEXT_COMMAND_SECONDS} s later:\n{err[-6000:]}")
    finally:
        proc.kill()
        proc.communicate()


def toggle_chunking(root: Path, round_: int) -> None:
    """A configuration change that forces a full build (on workers)."""
    (root / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n[settings]\n'
                                   f'chunk_at_headings = {str(round_ % 2 == 0).lower()}\n')


KINDS = ("update", "edit", "mcp", "daemon")


def test_crash_update_and_background_updates(tmp_path):
    """24 kills at random moments of ``ra update`` (a full build on workers), of an update
    on read after edits, of ``ra mcp`` and of ``ra daemon`` building in the background:
    no orphan, no hang, no wrong answer. ``RA_CRASH_SEED`` replays a run."""
    seed = int(os.environ.get("RA_CRASH_SEED", time.time_ns() % 1_000_000))
    random.seed(seed)
    root, home = make_tree(tmp_path / "proj"), tmp_path / "home"
    home.mkdir()
    index_dir = root / ".ra" / "index"
    edits: dict[int, str] = {}
    started = time.monotonic()
    subprocess.run([RA, "update"], cwd=root, env=env(home), check=True, capture_output=True,
                   timeout=NEXT_COMMAND_SECONDS)
    build = time.monotonic() - started  # one full build, start-up included
    for round_ in range(24):
        kind, sig = KINDS[round_ % 4], SIGNALS[(round_ + round_ // 4) % 4]
        where = f"seed {seed}, round {round_}: {kind} killed by {sig.name}"
        client = None
        if kind == "update":
            proc = start([RA, "update"], root, home)
        elif kind == "edit":  # an update on read: files changed since the last index
            for i in random.sample(range(FILES), 3):
                edits[i] = f"edited{round_}x{i}"
                (root / "docs" / f"n{i:04d}.md").write_text(f"# Note {i}\n\n{edits[i]}\n")
            proc = start([RA, "search", "alpha", "--list"], root, home)
        elif kind == "mcp":  # a background build: ``ra mcp`` starts on a changed config
            toggle_chunking(root, round_)
            proc = start([RA, "mcp"], root, home)
        else:  # ``ra daemon`` builds for a forwarded search; its client must not hang
            toggle_chunking(root, round_)
            proc = start([sys.executable, "-m", "ra.serve.daemon", "--idle", "60"], root, home)
            socket = home / ".ra" / "run" / "daemon.sock"
            deadline = time.monotonic() + NEXT_COMMAND_SECONDS
            while not socket.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            client = start([RA, "search", "alpha", "--list"], root, home, RA_DAEMON="1")
        kill_later(proc, sig, build * 1.2, where)
        if client is not None:
            _, err = client.communicate(timeout=NEXT_COMMAND_SECONDS)
            assert client.returncode == 0, (where, err)
            assert gone(client.pid) == [], where
        assert gone(proc.pid) == [], where
        assert lock_is_free(index_dir), where
        expect_served(root, home, edits)


def test_status_names_the_writer_of_an_update_under_way(tmp_path, monkeypatch, capsys):
    from ra.cli.app import main

    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    with writer_lock(tmp_path / ".ra" / "index"):
        assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert f"an update is under way (ra pid {os.getpid()})" in out
    assert main(["status"]) == 0
    assert "under way" not in capsys.readouterr().out


def test_ctrl_c_inside_a_duckdb_query_exits_130(tmp_path, monkeypatch, capsys):
    """DuckDB answers Ctrl-C in a query with RuntimeError("Query interrupted"): that is
    the user's interruption (exit 130), not an internal error (exit 70)."""
    from ra.cli.app import main
    from ra.query.search import Searcher

    def interrupted(*_args, **_kwargs):
        raise RuntimeError("Query interrupted")

    make_tree(tmp_path, files=3)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Searcher, "search", interrupted)
    assert main(["search", "alpha"]) == 130
    assert "internal error" not in capsys.readouterr().err
