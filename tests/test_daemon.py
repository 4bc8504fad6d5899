"""``ra daemon``: a real daemon process (isolated HOME) answering real ``ra`` processes.

What must hold: a forwarded command prints exactly what it prints in its own process
(stdout, stderr, exit code), the daemon sees files changed a moment before the call, a
client of another ra build is not served, and stop/status/idle exit work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import GUIDE

RA = shutil.which("ra") or str(Path(sys.executable).with_name("ra"))


def make_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / ".ra.toml").write_text('[tree.docs]\npath = "docs"\n')
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "docs" / "notes.md").write_text("# Notes\n\nRetry with exponential backoff.\n")
    (root / "src").mkdir()
    (root / "src" / "main.rs").write_text("fn main() { let r: Result<(), String> = Ok(()); "
                                          "log_error(r); }\n")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def ra(project: Path, *argv: str, daemon: bool = True) -> tuple[int, str, str]:
    env = {**os.environ, "RA_DAEMON": "1" if daemon else "0"}
    out = subprocess.run([RA, *argv], cwd=project, env=env, capture_output=True, text=True,
                         timeout=60)
    return out.returncode, out.stdout, out.stderr


def requests_served() -> int:
    from ra.serve import daemon

    info = daemon.ask("status")
    return -1 if info is None else info["requests"]


@pytest.fixture
def running(project: Path):
    code, out, err = ra(project, "daemon", "start", "--idle", "120")
    assert code == 0, err
    assert "started" in out
    yield project
    ra(project, "daemon", "stop")


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory):
    """One project and daemon for the read-only comparisons: ``(project, HOME)``."""
    tmp = tmp_path_factory.mktemp("daemon")
    home = tmp / "home"
    home.mkdir()
    project = make_project(tmp)
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
    subprocess.run([RA, "daemon", "start", "--idle", "300"], env=env, check=True,
                   capture_output=True, timeout=60)
    subprocess.run([RA, "search", "warm up"], cwd=project, env=env, capture_output=True,
                   timeout=60)  # the first call indexes; later ones are plain answers
    yield project, home
    subprocess.run([RA, "daemon", "stop"], env=env, capture_output=True, timeout=60)


@pytest.mark.parametrize("argv", [
    ("search", "error handling"),
    ("search", "--json", "error handling"),
    ("search", "--list", "logging", "backoff"),
    ("search", "--matches", "retry"),
    ("search", "--explain", "--json", "eror handling"),
    ("search", '"unclosed phrase'),            # exit 2, caret on stderr
    ("search", "--limit", "nope", "x"),        # usage error from click, exit 2
    ("get", "docs:guide.md#error-handling"),
    ("get", "docs:guide.md#no-such-slug"),     # exit 1 with suggestions
    ("get", "docs:../outside.md"),
    ("ls", "docs", "--json"),
    ("ls", "chunks"),
    ("context", "src/main.rs"),
    ("search", "--help"),
])
def test_forwarded_output_is_the_commands_own(shared_daemon, monkeypatch, argv):
    project, home = shared_daemon
    monkeypatch.setenv("HOME", str(home))
    before = requests_served()
    own = ra(project, *argv, daemon=False)
    forwarded = ra(project, *argv)
    assert requests_served() == before + 1  # answered by the daemon, not in process
    if "--explain" in argv:  # the same explanation, but measured at another time and
        # with the SQL of a reader that holds the index in memory
        forwarded, own = (_explained(r) for r in (forwarded, own))
    assert forwarded == own


def _explained(run: tuple[int, str, str]) -> tuple[int, dict, str]:
    data = json.loads(run[1])
    for topic in data["queries"]:
        for key in ("timings_ms", "sql", "params"):
            assert key in topic["explain"]
            del topic["explain"][key]
    return run[0], data, run[2]


def test_daemon_sees_changes_made_just_before_the_call(running):
    assert "docs:fruit.md" not in ra(running, "search", "--list", "pomegranate")[1]
    new = running / "docs" / "fruit.md"
    new.write_text("# Fruit\n\nA pomegranate a day.\n")
    code, out, _ = ra(running, "search", "--list", "pomegranate")
    assert code == 0 and "docs:fruit.md" in out
    new.write_text("# Fruit\n\nA quince a day.\n")
    assert "docs:fruit.md" in ra(running, "search", "--list", "quince")[1]
    assert "docs:fruit.md" not in ra(running, "search", "--list", "pomegranate")[1]
    new.unlink()
    assert "docs:fruit.md" not in ra(running, "search", "--list", "quince")[1]


def test_config_change_is_applied(running):
    assert "docs:notes.md" in ra(running, "search", "--list", "backoff")[1]
    (running / ".ra.toml").write_text('[tree.docs]\npath = "docs"\nexclude = ["notes.md"]\n')
    assert "docs:notes.md" not in ra(running, "search", "--list", "backoff")[1]


def test_client_of_another_build_is_not_served(running, monkeypatch, capsys):
    from ra.cli import entry

    monkeypatch.chdir(running)
    assert entry.forward(["search", "logging"]) is not None  # same build: served
    capsys.readouterr()
    monkeypatch.setattr(entry, "build_id", lambda: "0.0.0:other")
    assert entry.forward(["search", "logging"]) is None  # runs in its own process instead
    assert capsys.readouterr() == ("", "")
    assert requests_served() >= 1  # the daemon's own code did not change: it keeps serving


def test_status_and_stop(running):
    code, out, _ = ra(running, "daemon", "status", "--json")
    info = json.loads(out)
    assert code == 0 and info["running"] and info["pid"] > 0
    ra(running, "search", "logging")
    assert any(i["index_dir"].startswith(str(running)) for i in
               json.loads(ra(running, "daemon", "status", "--json")[1])["indexes"])
    assert ra(running, "daemon", "start")[1].startswith("ra daemon already running")
    code, out, _ = ra(running, "daemon", "stop")
    assert code == 0 and "stopped" in out
    code, out, _ = ra(running, "daemon", "status")
    assert code == 1 and "no ra daemon" in out
    code, out, _ = ra(running, "search", "--list", "logging")  # falls back to in-process
    assert code == 0 and "docs:guide.md#logging" in out


def test_idle_daemon_exits(project):
    assert ra(project, "daemon", "start", "--idle", "1")[0] == 0
    deadline = time.monotonic() + 30
    while requests_served() >= 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert requests_served() == -1
    from ra.serve import daemon

    assert not daemon.socket_file().exists()


@pytest.mark.parametrize("config", [None, '[tree.docs]\npath = "docs"\nlimit = [\n'])
def test_forwarded_errors_are_the_commands_own(shared_daemon, monkeypatch, tmp_path, config):
    """No .ra.toml, or a broken one: the daemon says what the command says, exit code too."""
    _, home = shared_daemon
    monkeypatch.setenv("HOME", str(home))
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    if config is not None:
        (folder / ".ra.toml").write_text(config)
    before = requests_served()
    own = ra(folder, "search", "logging", daemon=False)
    forwarded = ra(folder, "search", "logging")
    assert requests_served() == before + 1
    assert forwarded == own and own[0] != 0 and own[2].startswith("error: ")


# --- a daemon that distrusts its clients ------------------------------------------------------

def raw_exchange(payload: bytes, timeout: float = 20.0) -> dict | None:
    """Send ``payload`` as is to the daemon; its JSON answer (None when it sent none)."""
    import socket

    from ra.serve import daemon

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(daemon.socket_file()))
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        raw = b"".join(iter(lambda: conn.recv(1 << 16), b""))
    return json.loads(raw) if raw else None


def a_request(argv: list[str], cwd: Path) -> dict:
    from ra.cli.entry import build_id

    return {"argv": argv, "cwd": str(cwd), "env": {}, "tty": [False, False],
            "build": build_id()}


@pytest.mark.parametrize("payload", [
    b"[1, 2]\n",                                          # a JSON list: the daemon exited
    b"\"search\"\n",
    b"not json at all\n",
    b"\xff\xfe\n",
    b"[" * 100_000 + b"\n",                               # nesting past the recursion limit
    b'{"op": "launch"}\n',
    json.dumps({"argv": ["search", "x"], "cwd": "/", "env": {}}).encode() + b"\n",  # no tty
    json.dumps({"argv": "search x", "cwd": "/", "env": {}, "tty": [False, False],
                "build": "b"}).encode() + b"\n",
    json.dumps({"argv": ["search", "x"], "cwd": "/", "env": {"NO_COLOR": 1},
                "tty": [False, False], "build": "b"}).encode() + b"\n",
    json.dumps({"argv": ["search", "x"], "cwd": "relative", "env": {},
                "tty": [False, False], "build": "b"}).encode() + b"\n",
])
def test_a_bad_request_gets_an_error_answer_and_the_daemon_serves_on(running, payload):
    reply = raw_exchange(payload)
    assert reply is not None and reply["error"].startswith("bad request")
    before = requests_served()
    code, out, _ = ra(running, "search", "--list", "logging")
    assert code == 0 and "docs:guide.md#logging" in out
    assert requests_served() == before + 1


@pytest.mark.parametrize("argv", [["update"], ["init", "--global"], ["daemon", "stop"],
                                  ["sql", "select 1"], ["mcp"]])
def test_only_forwarded_commands_are_run(running, argv):
    """The daemon ran any subcommand it was sent, ``update`` and ``init`` included."""
    reply = raw_exchange(json.dumps(a_request(argv, running)).encode() + b"\n")
    assert reply == {"error": f"bad request: {argv[0]!r} is not a command the daemon answers"}
    assert requests_served() == 0
    assert not (running / ".ra" / "index").exists()  # nothing was indexed: no update ran


def test_a_stalled_client_blocks_nobody(running):
    """A client that sent half a line blocked the daemon, and every forwarded command then
    waited with no time limit."""
    import socket

    from ra.serve import daemon

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stalled:
        stalled.connect(str(daemon.socket_file()))
        stalled.sendall(b'{"argv": ["search", ')  # and nothing more
        started = time.monotonic()
        code, out, _ = ra(running, "search", "--list", "logging")
        took = time.monotonic() - started
        assert code == 0 and "docs:guide.md#logging" in out
        assert took < daemon.READ_SECONDS + 15
        assert requests_served() == 1  # answered by the daemon once the stall timed out
        reply = json.loads(b"".join(iter(lambda: stalled.recv(1 << 16), b"")))
    assert reply["error"] == ("bad request: the request did not arrive within "
                              f"{daemon.READ_SECONDS:g} s")


def test_the_client_gives_up_on_a_silent_daemon(monkeypatch, tmp_path, capsys):
    """A daemon that accepts and never answers: the client runs the command itself."""
    import socket
    import threading

    from ra.cli import entry

    path = entry.socket_path()
    Path(path).parent.mkdir(parents=True)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(path)
    silent.listen(4)  # never accepts: connections wait in its backlog
    monkeypatch.setattr(entry, "FORWARD_SECONDS", 0.5)
    result = []
    worker = threading.Thread(target=lambda: result.append(entry.forward(["search", "x"])),
                              daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(timeout=10)
    silent.close()
    assert not worker.is_alive() and result == [None]  # None: run it here instead
    assert time.monotonic() - started < 5
    assert capsys.readouterr() == ("", "")
