"""One thread that runs the MCP server's tool bodies, in order, for its event loop.

A tool body reads the index (DuckDB, NumPy) and may first update it, which can take
seconds, so it must not run on the event loop: the server would stop reading and
answering meanwhile. The SDK runs a synchronous tool with ``anyio.to_thread.run_sync``
(a capacity limiter, cancel scopes, a pool of idle threads); ra's tools run one at a time
anyway (``KnowledgeBase.call`` holds one lock), so ra's tools are coroutines that hand
their body to this one thread and wait for its answer: a queue in, ``call_soon_threadsafe``
back. That hop costs about half of anyio's, measured on the loaded 2-core machine (a
noop's round trip: median 143 us against 256 us), once per call.

As with anyio's default, a cancelled caller (a shutdown, a request the client cancelled)
still waits for the body it handed over, which a thread cannot be made to stop, before
its cancellation proceeds: so a session ends, and closes the index, only after its
bodies are done with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel


class Worker:
    """A thread, started on first use, that runs ``run``'s functions one after another."""

    def __init__(self, name: str = "ra-mcp-worker") -> None:
        self.name = name
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()

    async def run(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the worker thread; its value, or what it raised."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._jobs().put((loop, done, fn))
        with anyio.CancelScope(shield=True):
            return await done

    def close(self) -> None:
        """Let the thread end after the functions already handed over (a later ``run``
        starts another)."""
        with self._lock:
            if self.thread is not None:
                self.jobs.put(None)
                self.thread, self.jobs = None, queue.SimpleQueue()

    def _jobs(self) -> queue.SimpleQueue:
        with self._lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, args=(self.jobs,),
                                               name=self.name, daemon=True)
                self.thread.start()
            return self.jobs

    @staticmethod
    def _serve(jobs: queue.SimpleQueue) -> None:
        while (job := jobs.get()) is not None:
            loop, done, fn = job
            try:
                outcome = (fn(), None)
            except BaseException as exc:  # handed to the caller, which raises it
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_settle, done, *outcome)


def _settle(done: asyncio.Future, value: Any, exc: BaseException | None) -> None:
    if done.cancelled():  # cancelled by asyncio itself, not through anyio's scopes
        return
    if exc is not None:
        done.set_exception(exc)
    else:
        done.set_result(value)
