"""stdio for ``ra mcp`` on the event loop, without a thread per line.

The SDK's ``stdio_server`` reads and writes the process's stdin and stdout through
``anyio.wrap_file``: each line read, each write and each flush is a trip to a worker
thread and back, three per tool call, each waking another thread (and, on a busy machine,
a chance to lose the CPU to another process). When stdin and stdout are pipes or sockets
(what an agent runtime gives the server it starts), ``serve`` hands the SDK's transport
(``stdio_server(stdin, stdout)`` takes such streams) the same lines read and written with
non-blocking calls on the event loop, waiting only when a pipe is empty or full. Anything
else (a terminal, a file, /dev/null) is served by the SDK's own transport, unchanged.

As the SDK's transport does, the wire moves to private descriptors for the run: fd 0 reads
/dev/null and fd 1 writes to stderr (or nowhere, without one), so a stray print or a child
process cannot corrupt the protocol. Both are restored afterwards, blocking again: the
non-blocking flag belongs to the pipe, so a process sharing it would see it meanwhile (an
agent runtime gives the server pipes of its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections import deque
from collections.abc import Iterator

import anyio

CHUNK = 1 << 16  # bytes per read: a pipe's default capacity


def pipes() -> bool:
    """Whether stdin and stdout are pipes or sockets, which can be read and written
    without blocking."""
    try:
        modes = [os.fstat(fd).st_mode for fd in (0, 1)]
    except OSError:
        return False
    return all(stat.S_ISFIFO(m) or stat.S_ISSOCK(m) for m in modes)


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
    with claimed() as (rfd, wfd):
        async with stdio_server(Lines(rfd), Writer(wfd)) as (read, write):
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


class Lines:
    """The lines of a non-blocking descriptor as text, for ``stdio_server``'s ``async for
    line in stdin`` (undecodable bytes replaced, as the SDK's own reader does)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
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
                    raise StopAsyncIteration
                chunk = b"\n"
            *lines, self.partial = (self.partial + chunk).split(b"\n")
            self.lines.extend(lines)
        return self.lines.popleft().decode("utf-8", "replace")


class Writer:
    """Text written whole to a non-blocking descriptor, for ``stdio_server``'s writer."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:  # the reader is behind: wait for room
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        """Nothing is buffered."""
