"""``ra mcp``: serve the knowledge base of the working directory over MCP (``ra.serve.mcp``)."""

from __future__ import annotations

from pathlib import Path

import typer

from ra.cli import output


def register(app: typer.Typer) -> None:
    app.command("mcp", help=MCP_HELP)(mcp)


MCP_HELP = """Run the MCP server (tools: search, context, get, list_sources).

The working directory (or -C DIR) decides which .ra.toml files apply: start it in the
project. stdio is what agent runtimes launch; http (streamable HTTP, at /mcp) and sse
serve a persistent server on a loopback address.

Examples:

  ra mcp

  ra mcp -C /path/to/project

  ra mcp --transport http --port 8765

  claude mcp add ra -- ra mcp
"""

PATHS = {"http": "/mcp", "streamable-http": "/mcp", "sse": "/sse"}


def _exit_on_sigint() -> None:
    """Exit at once on SIGINT, as on SIGTERM, from the start: the kernel's default
    action, which needs no Python. Left to Python, a SIGINT during start-up could
    interrupt an import on one of the threads' behalf and leave them deadlocked, and
    once serving, asyncio's handler only cancels the server's task, which then waits for
    the thread reading stdin: a server whose client keeps stdin open outlived the signal.
    A Python handler that called ``os._exit`` runs only when the main thread next runs
    Python code; one full test run saw the server still up 10 s after the signal. Nothing
    is lost by leaving at once: an update under way is a ``.build-*`` folder the next
    writer removes, its lock goes with the process, and its workers die with it
    (``ra.pipeline.workers``)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def mcp(
    transport: str = typer.Option("stdio", "--transport", help="stdio | http | sse"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address for http and sse."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port for http and sse."),
    directory: Path | None = typer.Option(
        None, "--directory", "-C", exists=True, file_okay=False,
        help="Serve the project in this folder instead of the working directory."),
) -> None:
    from ra.index.warm import WarmIndex

    if transport != "stdio" and transport not in PATHS:
        raise typer.BadParameter("choose one of stdio, http, sse", param_hint="--transport")
    if transport == "stdio":
        _exit_on_sigint()
    cwd = directory.resolve() if directory else Path.cwd()
    # The index opens on a thread while the MCP SDK imports (about a second) below.
    index = WarmIndex.at(cwd).start()
    from ra.serve.mcp import LOOPBACK, run

    if transport in PATHS:
        shown = f"[{host}]" if ":" in host else host
        output.note(f"ra MCP server ({transport}) at http://{shown}:{port}{PATHS[transport]}")
        if host not in LOOPBACK:
            output.warn(f"listening on {host}: reachable from the network, no authentication")
    run(transport, host, port, cwd=cwd, index=index)
