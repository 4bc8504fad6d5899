"""Talking to ``ra daemon``: where it listens, one exchange over its socket, asking it
something, starting it. The daemon itself (``ra.serve.daemon``) runs the CLI, so the CLI
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
    """Start a detached daemon and wait until it answers; its status."""
    import subprocess
    import time

    run_dir().mkdir(parents=True, exist_ok=True)
    log = open(run_dir() / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
    with log:
        proc = subprocess.Popen([sys.executable, "-m", "ra.serve.daemon", "--idle", str(idle)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                cwd="/", start_new_session=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        status = ask("status", timeout=1.0)
        if status is not None:
            return status
        if proc.poll() is not None:
            tail = (run_dir() / "daemon.log").read_text(errors="replace").splitlines()[-1:]
            raise RuntimeError(f"the daemon exited at start: {' '.join(tail) or proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"the daemon did not answer within {wait:.0f} s; see "
                       f"{run_dir() / 'daemon.log'}")
