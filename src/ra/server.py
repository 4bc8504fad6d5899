"""The MCP server: ra's search, context, get and list_sources as tools for agents.

Shape (the MCP SDK v2 model):

    create_server(cwd)   loads the configuration once (the working directory decides which
                         .ra.toml files apply) and registers the tools on an ``MCPServer``
    lifespan             opens a ``KnowledgeBase``: one ``IndexReader`` of the published
                         generation, kept for as long as that generation is current;
                         a warm-up thread checks freshness (and builds) meanwhile
    each tool call       KnowledgeBase.call: freshness check (incremental rebuild when files
                         changed), reopen only if that published a new generation, then the
                         library call under one lock, on a worker thread
    run(transport, ...)  stdio (default), streamable HTTP or SSE

Tools are thin: arguments → library → ``ra.cli.output`` rendering, so the text an agent
reads is what ``ra search`` prints and the structured content is ``ra search --json``'s
``SearchResponse.to_dict()``. Library errors (``RaError``) become tool errors carrying
the CLI's message; bad arguments are rejected by the SDK's validation against the
``Annotated`` schemas; any other exception becomes a generic tool error and is logged,
so no call can take the server down. Every tool is annotated read-only: ``get`` resolves
ids only against the index and ``context`` refuses files outside the project root.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, StringConstraints

from ra import __version__
from ra.errors import NotFoundError, QueryError, RaError, message

log = logging.getLogger("ra.server")

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                            openWorldHint=False)
TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "streamable-http": "streamable-http",
              "sse": "sse"}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_QUERY, MAX_TOPICS, MAX_FILES = 1000, 20, 200  # per call; far past real use

INSTRUCTIONS = """\
ra searches this project's knowledge base: its conventions, designs, decisions and \
reference notes, which override general knowledge. Search before significant decisions. \
`search` takes keywords (AND'd, typo-tolerant, "quoted phrases"); pass an array of \
queries to research several topics in one call. Results carry ids (tree:path#heading) \
that `get` reads in full. `list_sources` shows the knowledge trees and the index state."""


class KnowledgeBase:
    """The configuration plus one reader of the current generation, shared by every call.

    ``call`` runs one operation at a time: a DuckDB connection serves one query at a
    time, and a rebuild must not swap the reader under a running search.
    """

    def __init__(self, config, cwd: Path) -> None:
        from ra.agents import project_root

        self.config, self.root = config, project_root(config.files, cwd).resolve()
        self.reader = self.searcher = None
        self.lock = threading.Lock()

    def open(self) -> None:
        """Open the published index if there is one; building waits for the first call,
        so the server answers the handshake at once."""
        from ra.freshness import open_index

        with self.lock:
            try:
                self._use(open_index(self.config, refresh=False)[0])
            except RaError as exc:
                log.info("no index opened at start: %s", exc)

    def warm(self) -> None:
        """Bring the index up to date and load the vocabulary before the first call asks
        (run on a thread at start: it overlaps the client's handshake)."""
        try:
            self.call(lambda s: s.reader.near_words(["warm"], 1))
        except Exception as exc:  # the first call reports it, with its message
            log.info("warm-up failed: %s", exc)

    def close(self) -> None:
        if not self.lock.acquire(timeout=5):  # a build still running: the process exits
            return
        try:
            if self.reader is not None:
                self.reader.close()
                self.reader = self.searcher = None
        finally:
            self.lock.release()

    def call(self, fn: Callable[[Any], Any], *, need_index: bool = True) -> Any:
        """``fn(searcher)`` against an index brought up to date first; without
        ``need_index``, a failure to bring it up to date gives ``fn(None)`` instead."""
        with self.lock:
            try:
                self._refresh()
            except RaError:
                if need_index:
                    raise
                return fn(None)
            with self.reader.lock:
                return fn(self.searcher)

    def _refresh(self) -> None:
        from ra.freshness import open_index, refresh_index
        from ra.generations import current_name

        if self.reader is None:
            reader, status = open_index(self.config)
        else:
            status = refresh_index(self.config)
            name = current_name(self.config.index_dir)
            if name == self.reader.generation.path.name:
                reader = None
            else:
                reader = open_index(self.config, refresh=False)[0]
        if status:
            log.info("%s", status)
        if reader is not None:
            self._use(reader)

    def _use(self, reader) -> None:
        from ra.query.search import Searcher

        reader.keep_vocabulary = True  # a long-lived reader keeps the words for fuzzy
        old, self.reader, self.searcher = self.reader, reader, Searcher(reader, self.config)
        if old is not None:
            old.close()

    def check_trees(self, trees: list[str] | None) -> tuple[str, ...]:
        """The tree names asked for, refusing names the configuration does not know."""
        known = [t.name for t in self.config.trees]
        unknown = [t for t in trees or () if t not in known]
        if unknown:
            raise NotFoundError(f"no tree named {unknown[0]!r}; trees: "
                                f"{', '.join(known) or '(none configured)'}")
        return tuple(trees or ())

    def inside_root(self, files: list[str]) -> list[str]:
        """Absolute paths of ``files`` (relative ones are taken from the project root),
        refusing any that resolve outside it."""
        out = []
        for name in files:
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise RaError(f"{name!r} is outside the project root {self.root}")
            out.append(str(path))
        return out


# --- results and errors --------------------------------------------------------------------

def _result(text: str, data: dict | None = None, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data, is_error=error)


def error_text(exc: RaError) -> str:
    """What the CLI prints for ``exc``, without colour."""
    return message(exc)


def _kb(ctx: Context) -> KnowledgeBase:
    return ctx.request_context.lifespan_context


def answer(ctx: Context, fn: Callable[[KnowledgeBase], CallToolResult]) -> CallToolResult:
    """Run one tool body, turning ra's errors into tool errors with the CLI's text, and
    any other failure into a tool error naming it (logged with its traceback)."""
    try:
        return fn(_kb(ctx))
    except RaError as exc:
        return _result(error_text(exc), error=True)
    except Exception as exc:
        log.exception("tool call failed")
        first = (str(exc).splitlines() or [""])[0]
        return _result(f"error: ra failed on this request ({type(exc).__name__}: {first})",
                       error=True)


def _search_result(response, list_only: bool) -> CallToolResult:
    from ra.cli.output import render_search

    text = render_search(response, "list" if list_only else "full")
    text += "".join(f"warning: {w}\n" for w in getattr(response, "warnings", ()))
    return _result(text, response.to_dict())


def _topics(queries: str | list[str]) -> list[str]:
    topics = [queries] if isinstance(queries, str) else queries
    if not any(t.strip() for t in topics):
        raise QueryError("empty query: give at least one search term", syntax=False)
    return topics


def _sources_text(info: dict) -> str:
    lines = ["| tree | scope | documents | chunks | path |", "|---|---|---|---|---|"]
    lines += [f"| {t['name']} | {t['scope']} | {t['documents']} | {t['chunks']} | {t['path']}"
              f"{'' if t['exists'] else ' (missing)'} |" for t in info["trees"]]
    idx = info["index"]
    lines += ["", f"index: {idx['state']}" + (f", built {idx['built_at']}"
                                             if idx.get("built_at") else "")]
    lines += [f"warning: {w}" for w in info["warnings"]]
    return "\n".join(lines) + "\n"


# --- the server ----------------------------------------------------------------------------

Query = Annotated[str, StringConstraints(max_length=MAX_QUERY)]
Queries = Annotated[Query | Annotated[list[Query], Field(max_length=MAX_TOPICS)], Field(
    description="Search terms: one string for one topic, or an array of strings to research "
    "several topics in one call (each answered separately). Words are AND'd and "
    "typo-tolerant; \"quote\" an exact phrase; -word excludes; a OR b.")]
Limit = Annotated[int | None, Field(ge=1, le=1000, description="Results per topic (default 5).")]
MaxTokens = Annotated[int | None, Field(ge=1, description=(
    "Token budget over all results (cl100k tokens). Results in rank order while they fit; "
    "one that does not fit is given as a list entry (id, title, snippet)."))]
Trees = Annotated[list[str] | None, Field(
    description="Only these knowledge trees (names from list_sources).")]
ListOnly = Annotated[bool, Field(description=(
    "Ids, titles and snippets only, no content (default false). Read one with `get`."))]
Tags = Annotated[list[str] | None, Field(
    description="Only documents with any of these frontmatter tags (case-insensitive).")]
PathGlob = Annotated[str | None, Field(max_length=500, description=(
    "Only documents whose tree-relative path matches this glob, e.g. 'api/**'."))]
Since = Annotated[str | None, Field(max_length=40, description=(
    "Only files modified on or after this ISO date (e.g. 2026-01-31)."))]
Until = Annotated[str | None, Field(max_length=40, description=(
    "Only files modified on or before this ISO date."))]
Offset = Annotated[int, Field(ge=0, le=100_000, description=(
    "Skip this many results per topic: with limit, fetches the next page (default 0)."))]
Sort = Annotated[Literal["score", "date", "path"], Field(description=(
    "Order of results: score (default), date (newest first) or path."))]
Archived = Annotated[bool, Field(description=(
    "Also search notes marked `status: archived` (default false)."))]


def create_server(cwd: Path) -> MCPServer:
    """An MCP server for the knowledge base configured at ``cwd``."""
    from ra.config import load_config

    config = load_config(cwd)

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[KnowledgeBase]:
        import anyio

        kb = KnowledgeBase(config, cwd)
        for warning in config.warnings:
            log.warning("%s", warning)
        await anyio.to_thread.run_sync(kb.open)
        threading.Thread(target=kb.warm, name="ra-warm-up", daemon=True).start()
        try:
            yield kb
        finally:
            kb.close()

    server = MCPServer("ra", version=__version__, instructions=INSTRUCTIONS,
                       lifespan=lifespan, log_level="WARNING")
    _add_search_tools(server)
    _add_context_tool(server)
    return server


def _tool(server: MCPServer) -> Callable:
    """Register a read-only tool whose description is its docstring, dedented."""
    def register(fn: Callable) -> Callable:
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=READ_ONLY)
        return fn
    return register


def _add_search_tools(server: MCPServer) -> None:
    @_tool(server)
    def search(
        queries: Queries,
        ctx: Context,
        limit: Limit = None,
        max_tokens: MaxTokens = None,
        list: ListOnly = False,
        trees: Trees = None,
        tags: Tags = None,
        path: PathGlob = None,
        since: Since = None,
        until: Until = None,
        offset: Offset = 0,
        sort: Sort = "score",
        include_archived: Archived = False,
    ) -> CallToolResult:
        """Search the project's knowledge base (conventions, designs, decisions, reference
        notes) before relying on general knowledge. Returns the best matching sections as
        markdown, best first, each under a `─── tree:path#heading ───` line. Use an array
        of queries to research several topics in one call."""
        from ra.query.search import SearchOptions

        def body(kb: KnowledgeBase) -> CallToolResult:
            topics, options = _topics(queries), SearchOptions(
                limit=limit, max_tokens=max_tokens, list_only=list, trees=kb.check_trees(trees),
                tags=tuple(tags or ()), path=path, since=since, until=until, offset=offset,
                sort=sort, include_archived=include_archived)
            return _search_result(kb.call(lambda s: s.search(topics, options)), list)
        return answer(ctx, body)

    @_tool(server)
    def get(
        id: Annotated[str, Field(description=(
            "Chunk id `tree:path#heading` or document id `tree:path`, as shown in results."))],
        ctx: Context,
        full_document: Annotated[bool, Field(description=(
            "The whole document the chunk belongs to (default false)."))] = False,
    ) -> CallToolResult:
        """Read one section of the knowledge base, with its subsections, or a whole
        document, by the id a search returned."""
        from ra.cli.output import RULE
        from ra.query.get import get_chunk

        def body(kb: KnowledgeBase) -> CallToolResult:
            c = kb.call(lambda s: get_chunk(s.reader, kb.config, id, full_document=full_document))
            text = f"{RULE} {c.id} {RULE}\n{c.breadcrumb}\n\n{c.content.rstrip()}\n"
            return _result(text, c.to_dict())
        return answer(ctx, body)

    @_tool(server)
    def list_sources(ctx: Context) -> CallToolResult:
        """List the knowledge trees ra searches (name, local or global scope, folder,
        document and chunk counts) and the state of the index."""
        from ra.status import collect_status

        def body(kb: KnowledgeBase) -> CallToolResult:
            info = kb.call(lambda _s: collect_status(kb.config), need_index=False)
            return _result(_sources_text(info), info)
        return answer(ctx, body)


def _add_context_tool(server: MCPServer) -> None:
    @_tool(server)
    def context(
        files: Annotated[list[str], Field(min_length=1, max_length=MAX_FILES, description=(
            "Files you are working on, relative to the project root (or absolute inside "
            "it). ra analyses their paths and content."))],
        ctx: Context,
        limit: Annotated[int | None, Field(ge=1, le=1000, description=(
            "Maximum sections to return (default 10)."))] = None,
        max_tokens: MaxTokens = None,
        list: ListOnly = False,
        trees: Trees = None,
    ) -> CallToolResult:
        """Find the knowledge relevant to the files you are working on: conventions,
        designs and notes matching their paths and content. Use before changing them."""
        from ra.query import context as module

        def body(kb: KnowledgeBase) -> CallToolResult:
            paths = kb.inside_root(files)
            opts = module.ContextOptions(limit=limit, max_tokens=max_tokens,
                                         list_only=list, trees=kb.check_trees(trees))
            response = kb.call(lambda s: module.context_search(s.reader, kb.config, paths, opts))
            return _search_result(response, list)
        return answer(ctx, body)


# --- transports ----------------------------------------------------------------------------

def transport_security(host: str):
    """DNS-rebinding protection: Host and Origin must name the address we listen on."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host in ("0.0.0.0", "::", ""):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [*LOOPBACK] if host in LOOPBACK else [host]
    hosts = [f"[{n}]:*" if ":" in n else f"{n}:*" for n in names]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


def run(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000,
        cwd: Path | None = None) -> None:
    """Serve the knowledge base of ``cwd`` (default: the working directory) until stopped."""
    kind = TRANSPORTS.get(transport)
    if kind is None:
        raise RaError(f"unknown transport {transport!r}; choose stdio, http or sse")
    server = create_server(cwd or Path.cwd())
    if kind == "stdio":
        server.run("stdio")
    else:
        server.run(kind, host=host, port=port, transport_security=transport_security(host))
