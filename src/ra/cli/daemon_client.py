"""Talking to ``ra daemon``: where it listens, one exchange over its socket, asking it
something, starting it (on request, or on first use: ``autostart``), the lock that keeps
it one per user. The daemon itself (``ra.serve.daemon``) runs the CLI, so the CLI
reaches it only through its socket and ``python -m ra.serve.daemon``, never by importing
it. Only the standard library at import: ``ra.cli.entry`` forwards through this module
before anything else is loaded.
"""

from __future__ import annotations

import os
import sys

CONNECT_SECONDS = 2.0


def socket_path() -> str | None:
    """Where the daemon of this user (this ``HOME``) listens; None if the path is too long
    for a Unix socket."""
    path = os.path.join(os.path.expanduser("~"), ".ra", "run", "daemon.sock")
    return path if len(path.encode()) < 104 else None


def exchange(path: str, message: dict, timeout: float) -> dict | None:
    """Send ``message`` as one JSON line to the socket at ``path`` and read the JSON reply
    up to the end of the connection, all within ``timeout`` seconds; None when nothing
    answers in time."""
    import json  # only when a daemon may answer: `ra --help` does not pay for them
    import socket
    import time

    deadline = time.monotonic() + timeout
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(min(timeout, CONNECT_SECONDS))
    try:
        conn.connect(path)
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        conn.sendall(json.dumps(message).encode() + b"\n")
        chunks = []
        while True:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        raw = b"".join(chunks)
        return json.loads(raw) if raw else None
    except (OSError, ValueError):
        return None
    finally:
        conn.close()


def socket_file():
    """``socket_path`` as a ``Path``; RuntimeError if the home folder's path is too long."""
    from pathlib import Path

    path = socket_path()
    if path is None:
        raise RuntimeError(f"the home folder's path is too long for a Unix socket: {Path.home()}")
    return Path(path)


def run_dir():
    return socket_file().parent


def ask(op: str, timeout: float = 5.0) -> dict | None:
    """Send ``{"op": op}`` to the running daemon; its reply, or None when none answers."""
    return exchange(str(socket_file()), {"op": op}, timeout)


def start(idle: float, wait: float = 15.0) -> dict:
    """Start a detached daemon (unless one is starting already) and wait until it
    answers; its status."""
    import time

    proc = None if starting() else spawn(["--idle", str(idle)])
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        status = ask("status", timeout=1.0)
        if status is not None:
            return status
        if proc is not None and proc.poll() is not None:
            tail = (run_dir() / "daemon.log").read_text(errors="replace").splitlines()[-1:]
            raise RuntimeError(f"the daemon exited at start: {' '.join(tail) or proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"the daemon did not answer within {wait:.0f} s; see "
                       f"{run_dir() / 'daemon.log'}")


def spawn(args: list[str], lock: int | None = None):
    """``python -m ra.serve.daemon ARGS`` detached from this process: a session of its own,
    no terminal, its output appended to ``daemon.log`` beside the socket, no file of ours
    open but the ``lock`` descriptor it inherits (``--lock-fd``). Its environment says
    ``RA_DAEMON=0``: nothing it runs forwards to a daemon or starts one."""
    import subprocess

    folder = private_run_dir()
    if lock is not None:
        args = [*args, "--lock-fd", str(lock)]
    log = os.open(folder / "daemon.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen([sys.executable, "-m", "ra.serve.daemon", *args],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/",
                                env={**os.environ, "RA_DAEMON": "0"},
                                pass_fds=() if lock is None else (lock,),
                                start_new_session=True)
    finally:
        os.close(log)


def private_run_dir():
    """``run_dir``, created if needed, private to this user (mode 0700)."""
    folder = run_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


# --- one daemon per user: the lock ----------------------------------------------------------

def lock_file() -> int:
    """An open descriptor of ``daemon.lock`` beside the socket. A daemon holds an
    exclusive ``flock`` on it from before it warms up until it exits (the kernel releases
    it however the daemon ends), so whoever gets the lock knows that no daemon runs or
    starts, and the one that starts it hands its own lock over."""
    return os.open(private_run_dir() / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)


def try_lock(fd: int) -> bool:
    """Take the lock on ``fd`` without waiting; False when another process holds it."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def starting() -> bool:
    """A daemon holds the lock but does not answer: it opens an index before it listens."""
    try:
        fd = os.open(run_dir() / "daemon.lock", os.O_RDWR)
    except (OSError, RuntimeError):  # no lock file, no run folder, no room for a socket
        return False
    try:
        return not try_lock(fd)
    finally:
        os.close(fd)  # closing releases the lock if it was taken here


# --- starting on first use ------------------------------------------------------------------

#: Seconds an autostarted daemon waits for a request before it exits, unless ``[daemon]
#: idle_minutes`` says otherwise: enough to span the pauses of an agent's task, short
#: enough that memory comes back soon after (a warm 10,000-file index holds about 500
#: MB). ``ra daemon start`` waits 30 minutes.
AUTOSTART_IDLE = 900.0
#: Seconds between two autostarts: a daemon that dies at start, or is killed, is started
#: again at most this often, not by every call.
AUTOSTART_RETRY = 60.0
#: Values of ``CI`` that do not mean a CI job.
NOT_CI = ("", "0", "false", "no")


def autostart(cwd: str) -> bool:
    """Start a daemon for the next calls, after a forwarded command (``ra.cli.entry``) was
    answered in this process because none runs; True when one was started. Not when
    ``RA_DAEMON=0`` or ``RA_DAEMON_AUTOSTART=0`` say so, nor (unless
    ``RA_DAEMON_AUTOSTART=1``) in a CI job or where ``[daemon] autostart = false``, nor
    while a daemon holds the lock (running or warming up), nor within
    ``AUTOSTART_RETRY`` seconds of the last attempt. The daemon warms up the index of
    ``cwd`` before it listens, so calls meanwhile are answered in their own processes
    instead of waiting for it. Costs this process a fork and exec at most."""
    import warnings

    wanted = os.environ.get("RA_DAEMON_AUTOSTART")
    if os.environ.get("RA_DAEMON") == "0" or wanted == "0" or socket_path() is None:
        return False
    idle = _configured(cwd)
    if wanted != "1" and (os.environ.get("CI", "").lower() not in NOT_CI or idle is None):
        return False
    try:
        fd = lock_file()
    except OSError:  # a read-only home, say: no daemon, nothing to remember
        return False
    try:
        if not try_lock(fd) or _tried_recently():
            return False
        (run_dir() / "autostart").touch(mode=0o600)
        with warnings.catch_warnings():  # "subprocess is still running": by design
            warnings.simplefilter("ignore", ResourceWarning)
            spawn(["--idle", str(AUTOSTART_IDLE if idle is None else idle), "--warm", cwd],
                  lock=fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # the daemon holds the lock through its own descriptor


def _configured(cwd: str) -> float | None:
    """The idle seconds (``[daemon] idle_minutes``) of a daemon the configuration seen
    from ``cwd`` lets start (``[daemon] autostart``, an index); None when it does not or
    cannot be read (``RA_DAEMON_AUTOSTART=1`` then starts one idle for
    ``AUTOSTART_IDLE``)."""
    from pathlib import Path

    from ra.config.settings import load_config
    from ra.errors import RaError

    try:
        config = load_config(Path(cwd))
    except (RaError, OSError):
        return None
    if not (config.daemon.autostart and config.index_dir is not None):
        return None
    return config.daemon.idle_minutes * 60.0


def _tried_recently() -> bool:
    import time

    try:
        when = (run_dir() / "autostart").stat().st_mtime
    except OSError:
        return False
    return abs(time.time() - when) < AUTOSTART_RETRY
