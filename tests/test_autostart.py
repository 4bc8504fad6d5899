"""The daemon starting itself: the first ``ra search`` with no daemon running answers in its
own process and starts one (``ra.cli.daemon_client.autostart``); the next calls are
forwarded to it. Real ``ra`` processes, each test with a HOME of its own.

What must hold: exactly one daemon, however many first calls come at once; none at all
when an opt-out says so (``RA_DAEMON=0``, ``RA_DAEMON_AUTOSTART=0``, a CI job, ``[daemon]
autostart = false``); no call waits for it, or breaks, or hangs, whatever happens to it
(killed in the middle of a search, unable to start, no place for its socket); and a
daemon that died is not started again by every call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import running_daemons
from test_daemon import RA, make_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="counts daemon processes through /proc")

QUERY = ("search", "--list", "error handling")


@pytest.fixture
def world(tmp_path: Path):
    """``(project, home)``: a built project and an empty HOME; any daemon left is stopped."""
    project, home = make_project(tmp_path), tmp_path / "home"
    home.mkdir()
    assert ra(project, home, "update", RA_DAEMON="0").returncode == 0
    yield project, home
    for pid in running_daemons(tmp_path).values():
        os.kill(pid, signal.SIGTERM)


def environment(home: Path, **extra: str) -> dict:
    """The test's environment with autostart allowed: no opt-out, not CI."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RA_DAEMON", "RA_DAEMON_AUTOSTART", "CI")}
    return {**env, "HOME": str(home), "NO_COLOR": "1", **extra}


def ra(project: Path, home: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``ra``, its output captured through pipes: a daemon it starts and that kept one
    of them open would hold this call until the timeout."""
    return subprocess.run([RA, *argv], cwd=project, env=environment(home, **env),
                          capture_output=True, text=True, timeout=60)


def daemon_pids(home: Path) -> list[int]:
    """Live ``ra daemon`` processes whose HOME is ``home``."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not a process
            continue
        if b"ra.serve.daemon" in cmdline and f"HOME={home}".encode() in environ:
            pids.append(int(proc.name))
    return pids


def status(home: Path, timeout: float = 60.0) -> dict | None:
    """The status of the daemon of ``home`` once it listens; None if none does in time."""
    from ra.cli.daemon_client import exchange

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = exchange(str(home / ".ra" / "run" / "daemon.sock"), {"op": "status"}, 1.0)
        if reply is not None:
            return reply
        time.sleep(0.1)
    return None


def nothing_started(home: Path) -> bool:
    run = home / ".ra" / "run"
    return not (run / "autostart").exists() and not daemon_pids(home) and not (
        run / "daemon.sock").exists()


def test_the_first_call_starts_one_daemon_and_the_next_ones_are_forwarded(world):
    project, home = world
    own = ra(project, home, *QUERY, RA_DAEMON="0")
    started = time.monotonic()
    first = ra(project, home, *QUERY)
    assert time.monotonic() - started < 10  # it did not wait for the daemon
    assert (first.returncode, first.stdout, first.stderr) == (0, own.stdout, own.stderr)
    info = status(home)
    assert info is not None and info["requests"] == 0
    assert daemon_pids(home) == [info["pid"]]
    assert info["idle_exit_s"] == 900  # ra.cli.daemon_client.AUTOSTART_IDLE
    # it warmed the index of the call that started it before listening
    assert info["indexes"] == [{"index_dir": str(project / ".ra" / "index")}]
    # what it runs never forwards to a daemon, nor starts one
    assert b"RA_DAEMON=0" in Path(f"/proc/{info['pid']}/environ").read_bytes().split(b"\0")
    for argv in (QUERY, ("ls", "docs"), QUERY):
        run = ra(project, home, *argv)
        assert run.returncode == 0, run.stderr
    assert (run.stdout, run.stderr) == (own.stdout, own.stderr)
    assert status(home)["requests"] == 3  # answered by the daemon
    assert daemon_pids(home) == [info["pid"]]


def test_simultaneous_first_calls_start_one_daemon(world):
    project, home = world
    calls = [subprocess.Popen([RA, *QUERY], cwd=project, env=environment(home),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [call.communicate(timeout=60) for call in calls]
    assert all(call.returncode == 0 for call in calls), outs
    assert len({out for out, _ in outs}) == 1
    info = status(home)
    assert info is not None
    time.sleep(1)  # a second daemon, had one started, would be alive by now
    assert daemon_pids(home) == [info["pid"]]
    log = (home / ".ra" / "run" / "daemon.log").read_text()
    assert "error" not in log  # none started and stepped aside: only one was started


@pytest.mark.parametrize("how", ["RA_DAEMON=0", "RA_DAEMON_AUTOSTART=0", "CI=true",
                                 "local config", "global config"])
def test_an_opt_out_starts_no_daemon(world, how):
    project, home = world
    env: dict[str, str] = {}
    if "=" in how:
        name, value = how.split("=")
        env[name] = value
    else:
        config = project / ".ra.toml" if how == "local config" else home / ".ra.toml"
        before = config.read_text() if config.exists() else ""
        config.write_text(before + "\n[daemon]\nautostart = false\n")
    for argv in (QUERY, ("ls", "docs"), ("get", "docs:guide.md#logging")):
        run = ra(project, home, *argv, **env)
        assert run.returncode == 0, run.stderr
    time.sleep(0.5)
    assert nothing_started(home)


def test_the_configured_idle_minutes_are_the_daemon_s(world):
    project, home = world
    (home / ".ra.toml").write_text("[daemon]\nidle_minutes = 2\n")
    assert ra(project, home, *QUERY).returncode == 0
    info = status(home)
    assert info is not None and info["idle_exit_s"] == 120


def test_ci_starts_one_when_asked_to(world):
    project, home = world
    assert ra(project, home, *QUERY, CI="true", RA_DAEMON_AUTOSTART="1").returncode == 0
    assert status(home) is not None


@pytest.mark.parametrize("argv", [("update",), ("check",), ("config",),
                                  ("get", "docs:guide.md#no-such-slug"),  # exit 1
                                  ("search", "--limit", "nope", "x")])  # exit 2
def test_other_commands_and_failed_ones_start_no_daemon(world, argv):
    project, home = world
    ra(project, home, *argv)
    time.sleep(0.3)
    assert nothing_started(home)


def test_a_daemon_killed_in_the_middle_of_a_search(world):
    """SIGKILL while a forwarded search waits for its answer: the search answers in its
    own process, so does the next call (the socket file is left behind), and no daemon
    is started again until ``AUTOSTART_RETRY`` has passed since the last start."""
    project, home = world
    own = ra(project, home, *QUERY, RA_DAEMON="0")
    ra(project, home, *QUERY)
    pid = status(home)["pid"]
    os.kill(pid, signal.SIGSTOP)  # the search connects and waits for an answer
    call = subprocess.Popen([RA, *QUERY], cwd=project, env=environment(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert call.poll() is None  # waiting for the daemon
    os.kill(pid, signal.SIGKILL)
    out, err = call.communicate(timeout=20)
    assert (call.returncode, out, err) == (0, own.stdout, own.stderr)
    assert (home / ".ra" / "run" / "daemon.sock").exists()  # a dead daemon's socket
    for _ in range(2):
        started = time.monotonic()
        run = ra(project, home, *QUERY)
        assert (run.returncode, run.stdout) == (0, own.stdout)
        assert time.monotonic() - started < 10
    time.sleep(0.5)
    assert daemon_pids(home) == []  # not started again at once
    stamp = home / ".ra" / "run" / "autostart"
    os.utime(stamp, (time.time() - 120, time.time() - 120))  # the last start is old now
    assert ra(project, home, *QUERY).returncode == 0
    info = status(home)
    assert info is not None and daemon_pids(home) == [info["pid"]] != [pid]


def test_a_daemon_that_cannot_start_breaks_nothing_and_is_not_retried(world):
    """Its socket's path is taken by a folder: the daemon exits at start. The calls
    answer in their own processes, and the next ones do not start it again."""
    project, home = world
    (home / ".ra" / "run" / "daemon.sock").mkdir(parents=True)
    own = ra(project, home, *QUERY, RA_DAEMON="0")
    first = ra(project, home, *QUERY)
    assert (first.returncode, first.stdout, first.stderr) == (0, own.stdout, own.stderr)
    log = home / ".ra" / "run" / "daemon.log"
    deadline = time.monotonic() + 30
    while "error" not in (log.read_text() if log.exists() else "") and (
            time.monotonic() < deadline):
        time.sleep(0.1)
    assert "error" in log.read_text()
    while daemon_pids(home) and time.monotonic() < deadline:  # it closes what it opened
        time.sleep(0.1)
    assert daemon_pids(home) == []
    stamp = (home / ".ra" / "run" / "autostart").stat().st_mtime_ns
    for _ in range(2):
        run = ra(project, home, *QUERY)
        assert (run.returncode, run.stdout, run.stderr) == (0, own.stdout, own.stderr)
    assert (home / ".ra" / "run" / "autostart").stat().st_mtime_ns == stamp
    assert log.read_text().count("error") == 1  # started once, not by every call


@pytest.mark.parametrize("home_kind", ["no room for a run folder", "path too long"])
def test_a_home_without_a_socket_place_answers_quietly(world, tmp_path, home_kind):
    project, _ = world
    if home_kind == "path too long":  # socket_path() is None beyond 104 bytes
        home = tmp_path / ("h" * 120)
        home.mkdir()
    else:  # ~/.ra is a file: ~/.ra/run cannot be made (a read-only home fails alike)
        home = tmp_path / "home2"
        home.mkdir()
        (home / ".ra").write_text("")
    own = ra(project, home, *QUERY, RA_DAEMON="0")
    run = ra(project, home, *QUERY)
    assert (run.returncode, run.stdout, run.stderr) == (0, own.stdout, own.stderr)
    assert own.stdout and not daemon_pids(home)


def test_a_failing_autostart_does_not_change_the_answer(tmp_path, monkeypatch, capsys):
    """Whatever goes wrong after the answer is not the command's problem: the same exit
    code, no traceback, nothing more on stderr."""
    from ra.cli import entry

    project = make_project(tmp_path)
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "argv", ["ra", "ls", "docs"])
    monkeypatch.setenv("RA_DAEMON_AUTOSTART", "1")

    def broken(cwd):
        raise RuntimeError("a bug")

    monkeypatch.setattr(entry, "autostart", broken)
    assert entry.main() == 0
    out, err = capsys.readouterr()
    assert "docs:guide.md" in out and "a bug" not in err and "Traceback" not in err


def test_status_says_a_daemon_is_starting(world):
    """A daemon holds the lock while it opens an index, before it listens."""
    import fcntl
    import json

    project, home = world
    assert ra(project, home, "daemon", "status").stdout == "no ra daemon is running\n"
    assert not (home / ".ra").exists()  # asking created nothing
    (home / ".ra" / "run").mkdir(parents=True)
    with open(home / ".ra" / "run" / "daemon.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = ra(project, home, "daemon", "status")
        assert (run.returncode, run.stdout) == (
            1, "ra daemon starting: it opens an index, then listens\n")
        assert json.loads(ra(project, home, "daemon", "status", "--json").stdout) == {
            "running": False, "starting": True}
        assert ra(project, home, *QUERY).returncode == 0
        assert daemon_pids(home) == []  # the lock is taken: none is started
