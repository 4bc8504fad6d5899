"""stdio for ``ra mcp`` on the event loop, without a thread per line.

The SDK's ``stdio_server`` reads and writes the process's stdin and stdout through
``anyio.wrap_file``: each line read, each write and each flush is a trip to a worker
thread and back, three per tool call, each waking another thread (and, on a busy machine,
a chance to lose the CPU to another process). When stdin and stdout are pipes or sockets
(what an agent runtime gives the server it starts), ``serve`` hands the SDK's transport
(``stdio_server(stdin, stdout)`` takes such streams) the same lines read and written with
non-blocking calls on the event loop, waiting only when a pipe is empty or full. A file or
a device other than a terminal (``ra mcp < requests > answers``, ``2>/dev/null``) never
makes a call wait, and is served the same way; a terminal (someone typing) is served by
the SDK's own transport, unchanged.

At the end of input, the requests read and not yet answered are answered first (within
``DRAIN_SECONDS``): a script that pipes its requests in (``printf … | ra mcp``, or
``ra mcp < requests``) closes stdin right after the last one, and the SDK's server, its
input ended, stopped without answering the call in flight (``Exchange``).

As the SDK's transport does, the wire moves to private descriptors for the run: fd 0 reads
/dev/null and fd 1 writes to stderr (or nowhere, without one), so a stray print or a child
process cannot corrupt the protocol. Both are restored afterwards, blocking again: the
non-blocking flag belongs to the pipe, so a process sharing it would see it meanwhile (an
agent runtime gives the server pipes of its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import stat
from collections import deque
from collections.abc import Iterator

import anyio

CHUNK = 1 << 16  # bytes per read: a pipe's default capacity
DRAIN_SECONDS = 60.0  # how long the end of input waits for the answers still owed
#: An answer's id, as the SDK writes it: first but for the protocol's version
#: (``{"jsonrpc":"2.0","id":2,…``)
_ID = re.compile(r'"id":(-?\d+|"(?:[^"\\]|\\.)*")')


def pipes() -> bool:
    """Whether stdin and stdout are pipes, sockets, files or devices other than a terminal,
    which can be read and written without blocking (a file or a device never blocks: its
    calls return at once, and nothing waits on it)."""
    try:
        modes = [os.fstat(fd).st_mode for fd in (0, 1)]
    except OSError:
        return False
    return all(stat.S_ISFIFO(m) or stat.S_ISSOCK(m) or stat.S_ISREG(m)
               or (stat.S_ISCHR(m) and not os.isatty(fd)) for fd, m in enumerate(modes))


def run(server) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdin and stdout until stdin ends."""
    if pipes():
        anyio.run(serve, server)
    else:
        server.run("stdio")


async def serve(server) -> None:
    from mcp.server.stdio import stdio_server

    # What MCPServer.run_stdio_async does, over our streams: the SDK offers no public
    # way to hand an MCPServer its streams.
    low = server._lowlevel_server
    exchange = Exchange()
    with claimed() as (rfd, wfd):
        async with stdio_server(Lines(rfd, exchange), Writer(wfd, exchange)) as (read, write):
            await low.run(read, write, low.create_initialization_options())


@contextlib.contextmanager
def claimed() -> Iterator[tuple[int, int]]:
    """Private, non-blocking descriptors of stdin and stdout; meanwhile fd 0 reads
    /dev/null and fd 1 writes to stderr."""
    rfd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wfd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output goes nowhere
            os.dup2(null, 1)
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        yield rfd, wfd
    finally:
        os.close(null)
        for fd, private in ((0, rfd), (1, wfd)):
            os.set_blocking(private, True)  # the flag belongs to the pipe, not the fd
            os.dup2(private, fd)
            os.close(private)


class Exchange:
    """The ids of the requests read and not yet answered, so that the end of input can
    wait for their answers. A request is a message with a ``method`` and an ``id``; an
    answer one the server writes with a ``result`` or an ``error`` (found in its first
    characters, where the SDK writes its id: no answer is parsed whole)."""

    def __init__(self) -> None:
        self.owed: set[str] = set()
        self.settled = anyio.Event()

    def read(self, line: str) -> None:
        if '"method"' not in line or '"id"' not in line:
            return  # a notification, or a client's answer
        try:  # parsed whole: an argument may be named id too (``get``'s)
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.owed.add(json.dumps(message["id"], ensure_ascii=False))

    def written(self, text: str) -> None:
        if self.owed and ('"result"' in text or '"error"' in text) and (
                found := _ID.search(text, 0, 200)):
            self.owed.discard(found.group(1))
            if not self.owed:
                self.settled.set()

    async def drained(self) -> None:
        """Return once every request read has been answered, or after
        ``DRAIN_SECONDS`` (a request cancelled is never answered)."""
        if self.owed:
            with anyio.move_on_after(DRAIN_SECONDS):
                await self.settled.wait()


class Lines:
    """The lines of a non-blocking descriptor as text, for ``stdio_server``'s ``async for
    line in stdin`` (undecodable bytes replaced, as the SDK's own reader does); at the
    end of input, once ``exchange`` has every answer it owes."""

    def __init__(self, fd: int, exchange: Exchange | None = None) -> None:
        self.fd = fd
        self.exchange = exchange
        self.lines: deque[bytes] = deque()
        self.partial = b""

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        while not self.lines:
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if not chunk:  # end of input; a last line may lack its newline
                if not self.partial:
                    if self.exchange is not None:
                        await self.exchange.drained()
                    raise StopAsyncIteration
                chunk = b"\n"
            *lines, self.partial = (self.partial + chunk).split(b"\n")
            self.lines.extend(lines)
        line = self.lines.popleft().decode("utf-8", "replace")
        if self.exchange is not None:
            self.exchange.read(line)
        return line


class Writer:
    """Text written whole to a non-blocking descriptor, for ``stdio_server``'s writer."""

    def __init__(self, fd: int, exchange: Exchange | None = None) -> None:
        self.fd = fd
        self.exchange = exchange

    async def write(self, text: str) -> None:
        if self.exchange is not None:
            self.exchange.written(text)
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:  # the reader is behind: wait for room
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        """Nothing is buffered."""
