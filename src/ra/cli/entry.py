"""The ``ra`` console script: forward to a running ``ra daemon``, else run in this process.

An agent runs ``ra search`` dozens of times a task, and a fresh Python process pays about
half a second before it can answer (importing DuckDB, checking every file's fingerprint,
opening the index). When the user has started ``ra daemon start``, the reading commands
(``FORWARDED``) are sent to it over a Unix socket instead: it runs the very same command
with modules imported and the index open, and this process only prints what comes back.
This module imports nothing but the standard library, so forwarding costs a bare Python
start. Anything unusual (no daemon, a daemon of another ra build, ``RA_DAEMON=0``, a
connection that fails before any output, a daemon that has not answered within
``FORWARD_SECONDS``) falls back to running the command here.

No daemon running: the command is answered here, as it always was, and then a daemon is
started for the next calls (``ra.cli.daemon_client.autostart``: a fork and exec after
the answer, a session of its own, opt-out by ``RA_DAEMON_AUTOSTART=0`` or ``[daemon]
autostart = false``). This call never waits for it.
"""

from __future__ import annotations

import os
import sys

from ra.cli.daemon_client import autostart, exchange, socket_path

#: Commands a daemon answers: they only read (and, through freshness, update) the index.
FORWARDED = frozenset({"search", "context", "get", "ls"})
#: Environment variables that shape a command's output or behaviour.
PASSED = ("NO_COLOR", "TERM", "COLUMNS", "LINES", "RA_DEBUG")
#: Seconds a forwarded command waits for the daemon's whole answer before running itself
#: (a daemon busy with a long build, or wedged): connecting may take 2 of them.
FORWARD_SECONDS = 30.0


def main() -> int:
    argv = sys.argv[1:]
    system_allocator()
    forwarded = bool(argv) and argv[0] in FORWARDED and os.environ.get("RA_DAEMON") != "0"
    if forwarded:
        code = forward(argv)
        if code is not None:
            return code
    from ra.cli.app import main as run

    code = run(argv)
    if forwarded and code == 0:
        start_for_next_calls()
    return code


def system_allocator() -> None:
    """Arrow allocates with the C library's ``malloc`` in this process and the workers
    it forks, unless ``ARROW_DEFAULT_MEMORY_POOL`` says otherwise; set before pyarrow is
    imported, as Arrow reads it once (``pyarrow.set_memory_pool`` reaches only what
    Python allocates, not Parquet's writers or Acero). pyarrow's default here,
    mimalloc, keeps the pages a stage has freed: a full build of the C++ docs peaked at
    486 MB with it and 360 MB with ``malloc``, in the same time; a reader holds the same
    and answers as fast with either."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def start_for_next_calls() -> None:
    """The answer is out: start a daemon for the calls to come. Whatever goes wrong there
    is no concern of this call, whose output and exit code are settled."""
    try:
        autostart(os.getcwd())
    except Exception:  # noqa: BLE001 - a cwd that vanished, a bug: never this call's problem
        if os.environ.get("RA_DEBUG"):
            raise


def build_id() -> str:
    """Which ra this is: its version and the newest source file of the package, so that a
    daemon started before an upgrade or an edit (an editable install) is not used."""
    from ra import __version__

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    newest, count, stack = 0, 0, [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(e.path)
                elif e.name.endswith(".py"):
                    newest, count = max(newest, e.stat().st_mtime_ns), count + 1
    return f"{__version__}:{count}:{newest}"


def request(argv: list[str]) -> dict:
    env = {k: os.environ[k] for k in PASSED if k in os.environ}
    tty = [sys.stdout.isatty(), sys.stderr.isatty()]
    if tty[0] and "COLUMNS" not in env:
        import shutil

        env["COLUMNS"] = str(shutil.get_terminal_size().columns)
    return {"argv": argv, "cwd": os.getcwd(), "env": env, "tty": tty, "build": build_id()}


def forward(argv: list[str]) -> int | None:
    """Run ``argv`` in the daemon and print its output; its exit code, or None when this
    process should run the command itself."""
    path = socket_path()
    if path is None or not os.path.exists(path):
        return None
    try:
        reply = exchange(path, request(argv), FORWARD_SECONDS)
    except OSError:  # e.g. the working directory is gone: let the command say so
        return None
    if not isinstance(reply, dict) or not isinstance(reply.get("exit"), int):
        return None  # refused (another build) or broken: nothing was printed yet
    try:
        sys.stdout.write(reply.get("out", ""))
        sys.stdout.flush()
    except BrokenPipeError:  # `ra search … | head`
        pass
    sys.stderr.write(reply.get("err", ""))
    return int(reply["exit"])
