"""``ra daemon``: a warm process that answers the CLI's reading commands.

The console script (``ra.cli.entry``) forwards ``search``, ``context``, ``get`` and ``ls``
here when a daemon of the same ra build is listening on ``~/.ra/run/daemon.sock``: the
request carries the arguments, the working directory, the terminal flags and the few
environment variables that shape output, and this process runs the very same typer
command (``ra.cli.app.main``) with stdout and stderr captured, so the answer is the one the
command would have printed itself. What it saves is the start-up: modules stay imported
and each index stays open in a ``ra.index.warm.WarmIndex``, which learns of changed files from
the operating system and updates the index incrementally before answering, exactly as a
fresh process would.

Requests are served one at a time (a command changes the working directory and the
environment of the process while it runs). The socket's folder is private to the user
(mode 0700), and even so the daemon trusts no client: a request must arrive whole within
``READ_SECONDS`` and ``MAX_REQUEST`` bytes, must have the shape ``ra.cli.entry.request``
gives it and name a forwarded command (``FORWARDED``); anything else gets an error answer
and the daemon goes on serving. A client that does not read its answer is dropped after
``WRITE_SECONDS``. A daemon whose own source files changed since it started (an upgrade, an
edited editable install) refuses requests, so clients run the command themselves, and
exits; so does a daemon idle for ``idle`` seconds. It keeps at most ``MAX_INDEXES``
indexes open, least recently used first out.

One daemon per user: from its start to its end a daemon holds the lock ``daemon.lock``
beside the socket (``hold_lock``). Started on first use (``ra.cli.daemon_client.autostart``)
it inherits the lock from the command that started it, and with ``--warm`` opens that
command's index before it listens (``Daemon.warm_up``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import sys
import time
from collections import OrderedDict

from ra.cli.daemon_client import ask, lock_file, private_run_dir, socket_file, try_lock
from ra.cli.entry import FORWARDED, PASSED, build_id, system_allocator

#: Indexes kept open at once (a warm reader of a 10k-file corpus holds ~500 MB).
MAX_INDEXES = 3
IDLE_SECONDS = 1800.0
#: Seconds a client has to send its whole request, and to take its whole answer: a
#: stalled client blocks the others no longer than this.
READ_SECONDS = 5.0
WRITE_SECONDS = 10.0
#: Bytes a request may have (arguments, working directory and a few variables).
MAX_REQUEST = 1 << 20


class _Capture(io.StringIO):
    """A captured stream that answers ``isatty`` as the client's stream would."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = bool(tty)

    def isatty(self) -> bool:
        return self._tty


class Readers:
    """One ``WarmIndex`` per index (and configuration), lent to commands through
    ``ra.cli.common.lender``."""

    def __init__(self, limit: int = MAX_INDEXES) -> None:
        self.limit = limit
        self.warm: OrderedDict[tuple[str, str], object] = OrderedDict()

    def __call__(self, config):
        from ra.index.warm import WarmIndex
        from ra.store.layout import config_hash

        key = (str(config.index_dir), config_hash(config))
        warm = self.warm.get(key)
        if warm is None:
            for old in [k for k in self.warm if k[0] == key[0]]:  # its configuration changed
                self.warm.pop(old).close()
            warm = self.warm[key] = WarmIndex(config).follow()
            while len(self.warm) > self.limit:
                self.warm.popitem(last=False)[1].close()
        self.warm.move_to_end(key)
        reader = warm.reader()
        status, warm.last_status = warm.last_status, None
        return reader, status

    def describe(self) -> list[dict]:
        return [{"index_dir": k[0]} for k in self.warm]

    def close(self) -> None:
        while self.warm:
            self.warm.popitem()[1].close()


class Daemon:
    def __init__(self, idle: float = IDLE_SECONDS) -> None:
        self.idle = idle
        self.build = build_id()
        self.readers = Readers()
        self.started = time.time()
        self.requests = 0
        self.stopping = False

    def warm_up(self, cwd: str) -> None:
        """Import the commands and open the index seen from ``cwd`` before listening: until
        then, commands answer in their own processes. Not waiting for the index to be held
        in memory: while it loads on a thread, the daemon answers from its Parquet files
        (``ra.index.warm``), faster than a fresh process does (cpp-docs, load 3-4 on 2
        cores, 20 calls right after the first: mean 133 ms, p95 358 ms; waiting for the
        load, 261 ms and 1,113 ms). A problem here is the first command's to report: it is
        noted in the log and the daemon serves on."""
        from pathlib import Path

        try:
            from ra.cli import app  # noqa: F401 - typer and the commands, imported once
            from ra.config.settings import load_config

            self.readers(load_config(Path(cwd)))
        except Exception as exc:  # noqa: BLE001 - see above
            sys.stderr.write(f"ra daemon: warming up {cwd}: {type(exc).__name__}: {exc}\n")

    def serve(self, listener: socket.socket) -> None:
        from ra.cli import common

        common.lender = self.readers
        listener.settimeout(min(self.idle, 60.0))
        last = time.monotonic()
        while not self.stopping and time.monotonic() - last < self.idle:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                if self.handle(conn):
                    last = time.monotonic()

    def handle(self, conn: socket.socket) -> bool:
        """Answer one connection; True when it ran a command (status and stop requests do
        not keep the daemon alive)."""
        try:
            req = json.loads(_read_line(conn, time.monotonic() + READ_SECONDS))
        except (OSError, ValueError, RecursionError) as exc:  # stalled, too long, not JSON
            self.reply(conn, {"error": f"bad request: {exc}"})
            return False
        problem = invalid(req)
        command = False
        if problem:
            reply = {"error": f"bad request: {problem}"}
        elif req.get("op") == "status":
            reply = self.status()
        elif req.get("op") == "stop":
            self.stopping = True
            reply = {"stopped": os.getpid()}
        elif req.get("build") != self.build:
            reply = {"refused": "another ra build"}
            self.stopping = build_id() != self.build  # this daemon's code is outdated
        else:
            self.requests += 1
            reply, command = self.run(req), True
        self.reply(conn, reply)
        return command

    @staticmethod
    def reply(conn: socket.socket, reply: dict) -> bool:
        """Send ``reply`` within ``WRITE_SECONDS``; False when the client did not take it."""
        try:
            conn.settimeout(WRITE_SECONDS)
            conn.sendall(json.dumps(reply).encode())
        except OSError:
            return False
        return True

    def status(self) -> dict:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        return {"pid": os.getpid(), "started": self.started, "requests": self.requests,
                "build": self.build, "indexes": self.readers.describe(),
                "peak_rss_mb": rss, "idle_exit_s": self.idle}

    def run(self, req: dict) -> dict:
        from ra.cli.app import main

        out, err = _Capture(req["tty"][0]), _Capture(req["tty"][1])
        saved_env = dict(os.environ)
        saved = sys.stdout, sys.stderr
        try:
            os.chdir(req["cwd"])
        except OSError as exc:
            return {"exit": 1, "out": "", "err": f"error: working directory: {exc}\n"}
        try:
            for name in PASSED:
                os.environ.pop(name, None)
            os.environ.update({k: str(v) for k, v in req["env"].items() if k in PASSED})
            sys.stdout, sys.stderr = out, err
            code = main(list(req["argv"]), prog_name="ra")
        finally:
            sys.stdout, sys.stderr = saved
            os.environ.clear()
            os.environ.update(saved_env)
            os.chdir("/")
        return {"exit": code, "out": out.getvalue(), "err": err.getvalue()}


def _read_line(conn: socket.socket, deadline: float) -> bytes:
    """One request line, read before ``deadline`` (``time.monotonic``); TimeoutError when
    it does not come whole in time, ValueError when it is too long."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            conn.settimeout(left)
            chunk = conn.recv(1 << 16)
        except TimeoutError:
            raise TimeoutError(f"the request did not arrive within {READ_SECONDS:g} s") from None
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError(f"the request is over {MAX_REQUEST} bytes")
    return data


def invalid(req) -> str | None:
    """What is wrong with request ``req`` (parsed JSON), or None: an ``op`` of ``status``
    or ``stop``, or a command as ``ra.cli.entry.request`` makes it."""
    if not isinstance(req, dict):
        return "not a JSON object"
    if "op" in req:
        return None if req["op"] in ("status", "stop") else f"unknown op {req['op']!r}"
    shapes = {"argv": list, "cwd": str, "env": dict, "tty": list, "build": str}
    for key, kind in shapes.items():
        if not isinstance(req.get(key), kind):
            return f"{key!r} missing or not a {kind.__name__}"
    argv, env, tty = req["argv"], req["env"], req["tty"]
    if not argv or not all(isinstance(a, str) for a in argv):
        return "'argv' must be a non-empty list of strings"
    if argv[0] not in FORWARDED:
        return f"{argv[0]!r} is not a command the daemon answers"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return "'env' must map strings to strings"
    if len(tty) != 2 or not all(isinstance(t, bool) for t in tty):
        return "'tty' must be two booleans"
    if not os.path.isabs(req["cwd"]) or "\0" in req["cwd"]:
        return "'cwd' must be an absolute path"
    if any("\0" in a for a in argv) or any("\0" in v for v in env.values()):
        return "NUL in the arguments or the environment"
    return None


def hold_lock(fd: int | None) -> int:
    """The lock that makes this daemon the only one of the user (``daemon_client.lock_file``):
    ``fd``, inherited from the process that took it and started this one, else taken here;
    ``RuntimeError`` when another daemon holds it."""
    if fd is None:
        fd = lock_file()
    if not try_lock(fd):
        raise RuntimeError(f"another ra daemon is running or starting ({socket_file()})")
    os.set_inheritable(fd, False)  # what this daemon starts must not keep it
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # who holds it, for people and tests
    return fd


def listen() -> socket.socket:
    """Bind the daemon's socket in a private folder; ``RuntimeError`` if a daemon already
    answers there (one of an older ra, which took no lock)."""
    private_run_dir()
    path = socket_file()
    if ask("status", timeout=1.0) is not None:
        raise RuntimeError(f"a daemon is already listening on {path}")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a daemon that was killed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _leave(signum: int, _frame) -> None:
    """A signal before the daemon listens: leave at once (see ``_stop``)."""
    os._exit(128 + signum)


def _stop(signum: int, _frame) -> None:
    """SIGTERM, SIGHUP, SIGINT: leave at once, whatever runs. An exception raised here
    would not do: inside a DuckDB query it becomes the query's RuntimeError, which the
    command answers, and inside an import it can leave other threads deadlocked on the
    import lock. Nothing is lost: a client waiting for an answer gets none and runs its
    command itself, an update under way is a ``.build-*`` folder the next writer
    removes, its lock goes with the process, and its workers die with it."""
    with contextlib.suppress(OSError, RuntimeError):
        socket_file().unlink()
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ra.serve.daemon")
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS)
    parser.add_argument("--warm", metavar="FOLDER",
                        help="open the index seen from FOLDER before listening")
    parser.add_argument("--lock-fd", type=int, help="the lock, taken by whoever started this")
    args = parser.parse_args(argv)
    system_allocator()  # its builds and updates, as the command line's
    os.chdir("/")
    daemon = Daemon(idle=args.idle)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _leave)
    try:
        lock = hold_lock(args.lock_fd)
        if args.warm:
            daemon.warm_up(args.warm)
        listener = listen()
    except (RuntimeError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} ra daemon pid {os.getpid()} "
                     f"listening, {time.process_time():.2f} s CPU and "
                     f"{time.time() - daemon.started:.2f} s after its start\n")
    sys.stderr.flush()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _stop)
    try:
        daemon.serve(listener)
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            socket_file().unlink()
        os.close(lock)  # gone from the socket: the next daemon may start while this one
        daemon.readers.close()  # closes its indexes (status would call it "starting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
