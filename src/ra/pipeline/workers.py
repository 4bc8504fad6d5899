"""Worker processes for a build that never outlive the writer that started them.

A full build chunks and analyses partitions on a ``ProcessPoolExecutor``. Its workers
are forked, so each inherits every descriptor of the writer, the writer lock among them
(``flock`` belongs to the open file, which the fork shares), and a worker whose parent
is killed keeps waiting on the task queue for ever: re-parented to init, it held the
lock, and every later update waited on it. Agent harnesses kill timed-out commands with
SIGKILL, SIGTERM or SIGHUP, so this is the ordinary case, not a corner.

Each worker therefore starts (``_adopt``) by closing its copies of the writer locks
(``ra.store.generations.held_locks``), asking the kernel to kill it when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` on Linux), checking that the parent has not died already
(it may have, before the worker ran), and watching the parent's pid on a thread (where
there is no ``prctl``). In the parent, an interrupted build (SIGINT, an error) cancels
the partitions not yet started instead of processing them for nobody, and waits only for
the ones under way (a partition takes a second or two); ``cancel_all`` does the same for
every pool of the process at interpreter exit and when a daemon is told to stop.

Why not kill the workers at once: a worker killed while it writes its result into the
result pipe leaves the pool's manager thread reading the rest of that message for ever
(the parent holds the pipe's other end, so no end of file comes), and the interpreter
then cannot exit. The workers ignore SIGINT (Ctrl-C reaches the whole process group) for
the same reason; their parent decides.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from concurrent.futures import process as _futures_process  # its exit hook first: see end

#: Seconds between two looks at the parent's pid (where ``prctl`` is missing).
WATCH_PARENT = 0.5

_live: weakref.WeakSet = weakref.WeakSet()  # pools of this process, for ``cancel_all``


@contextlib.contextmanager
def pool(workers: int) -> Iterator:
    """A ``ProcessPoolExecutor`` of ``workers`` processes that die with this one; an
    exception in the block (KeyboardInterrupt included) cancels the work not started."""
    executor = _futures_process.ProcessPoolExecutor(workers, mp_context=_context(),
                                                    initializer=_adopt,
                                                    initargs=(os.getpid(),))
    _live.add(executor)
    try:
        yield executor
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        _live.discard(executor)


def _context():
    """Fork on Linux, whatever the default (Python 3.14 made it forkserver): the workers
    are then this process's children, which ``_adopt`` relies on, and start without
    importing anything again. Elsewhere the platform's default (spawn: children too)."""
    if not sys.platform.startswith("linux"):
        return None
    import multiprocessing

    return multiprocessing.get_context("fork")


def cancel_all() -> None:
    """Cancel the work not yet started in every pool of this process (the builds waiting
    for it then fail); the partitions under way finish."""
    for executor in list(_live):
        executor.shutdown(wait=False, cancel_futures=True)


# --- in the worker ----------------------------------------------------------------------

def _adopt(parent: int) -> None:
    """Worker initializer: release the parent's locks and die with the parent."""
    from ra.store import generations

    generations.release_inherited()
    _live.clear()  # the parent's pools: this process must not cancel them when it exits
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before this ran
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it ends us
    threading.Thread(target=_watch_parent, args=(parent,), name="ra-watch-parent",
                     daemon=True).start()


def _die_with_parent() -> None:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills this process when the
    thread that forked it ends (Linux only; elsewhere ``_watch_parent`` does it)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(WATCH_PARENT)
    os._exit(1)


if hasattr(threading, "_register_atexit"):
    # Registered after concurrent.futures' own exit hook (imported above), so it runs
    # before it (they run in reverse): that hook waits for the pools' work to finish, and
    # a process that exits while a background build runs ends the build instead.
    threading._register_atexit(cancel_all)
