"""The MCP server: ra's search, context, get and list_sources as tools for agents.

Shape (the MCP SDK v2 model):

    ra mcp               starts a ``ra.index.warm.WarmIndex`` (configuration, freshness, reader)
                         on a thread *before* importing the SDK, so the second it takes to
                         import overlaps the index work; then ``run``
    create_server(cwd)   registers the tools on an ``MCPServer``; its lifespan yields a
                         ``KnowledgeBase`` over the process's WarmIndex (or, in-process, one
                         of its own)
    each tool call       a coroutine that hands its body to the session's one worker
                         thread (``ra.serve.worker``) and awaits it; there
                         KnowledgeBase.call: WarmIndex.use gives the current reader
                         (inotify says whether anything changed; a change refreshes the
                         index incrementally first), then the library call under one lock;
                         the configuration too is re-read when a .ra.toml changed, so tree
                         names and the project root are checked against the current one
    run(transport, ...)  stdio (default; ``ra.serve.stdio``: on the event loop when stdin
                         and stdout are pipes), streamable HTTP or SSE

Tools are thin: arguments → library → ``ra.query.render`` rendering, so the text an agent
reads is what ``ra search`` prints and the structured content is ``ra search --json``'s
``SearchResponse.to_dict()``; each tool declares that shape as its output schema
(``ra.serve.mcp_schemas``). ``search``, ``context`` and ``get`` with ``links`` answer within
a token budget unless the agent gives one (``[mcp] max_tokens``), and say what it cut.
Library errors (``RaError``) become tool errors carrying the CLI's message; bad arguments
are rejected by the SDK's validation against the ``Annotated`` schemas; any other
exception becomes a generic tool error and is logged, so no call can take the server
down. Every tool is annotated read-only: ``get`` resolves
ids only against the index and ``context`` refuses files outside the project root.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from ra import __version__
from ra.errors import QueryError, RaError, message
from ra.index.warm import WarmIndex
from ra.serve import mcp_schemas as schemas
from ra.serve.worker import Worker

log = logging.getLogger("ra.serve.mcp")
#: A tool's arguments that fail validation come back as pydantic's message, which ends
#: each error with a link to pydantic's documentation ("For further information visit
#: https://errors.pydantic.dev/…"): the agent needs the error, not the link.
os.environ.setdefault("PYDANTIC_ERRORS_INCLUDE_URL", "0")

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                            openWorldHint=False)
TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "streamable-http": "streamable-http",
              "sse": "sse"}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_QUERY, MAX_TOPICS, MAX_FILES = 10_000, 20, 200  # per call; a pasted traceback fits
MAX_TOKENS = 1_000_000  # a token budget: ten times the largest context window

INSTRUCTIONS = """\
ra searches this project's knowledge base: its conventions, designs, decisions and \
reference notes, which override general knowledge. Search before significant decisions. \
`search` takes keywords (AND'd, typo-tolerant, "quoted phrases"); pass an array of \
queries to research several topics in one call. Results carry ids (tree:path#heading) \
that `get` reads in full. `list_sources` shows the knowledge trees and the index state."""


class KnowledgeBase:
    """What every call of one session shares: the ``WarmIndex`` and a ``Searcher`` of its
    current reader and configuration.

    ``call`` runs one operation at a time: a DuckDB connection serves one query at a
    time, and the reader must not be swapped under a running search. The tools run their
    bodies on ``worker``, off the event loop.
    """

    def __init__(self, index: WarmIndex, cwd: Path) -> None:
        self.index, self.cwd = index, Path(cwd)
        self.lock = threading.Lock()
        self.searcher = None
        #: what the answer of the call in progress must say first (``_answer``): a
        #: ``.ra.toml`` that cannot be read, the last one that could serving meanwhile
        self.warning: str | None = None
        self.worker = Worker()

    @property
    def config(self):
        return self.index.config

    @property
    def root(self) -> Path:
        """The project root (the nearest .ra.toml's folder) of the current configuration."""
        from ra.agents import project_root

        return project_root(self.config.files, self.cwd).resolve()

    def call(self, fn: Callable[[Any], Any], *, need_index: bool = True) -> Any:
        """``fn(searcher)`` against an index brought up to date first; without
        ``need_index``, ``fn(error)`` after bringing it up to date if that can be done,
        ``error`` being why it could not (a broken ``.ra.toml``, say), else None."""
        with self.lock:
            if not need_index:
                error = None
                try:
                    self.index.reader()
                except RaError as exc:
                    log.info("%s", exc)
                    error = exc
                self._log_status()
                return fn(error)
            with self.index.use(lenient=True) as reader:
                self._log_status()
                out = fn(self._searcher(reader))
            if (error := self.index.config_error) is not None:
                self.warning = (f"{message(error, label='')}; answered with the last "
                                "configuration that could be read")
            return out

    def _searcher(self, reader):
        from ra.query.search import Searcher

        s = self.searcher
        if s is None or s.reader is not reader or s.config is not self.config:
            s = self.searcher = Searcher(reader, self.config)
        return s

    def _log_status(self) -> None:
        status, self.index.last_status = self.index.last_status, None
        if status:
            log.info("%s", status)

    def check_trees(self, trees: list[str] | None) -> tuple[str, ...]:
        """The tree names asked for, refusing names the configuration does not know."""
        return self.config.require_trees(trees or ())

    def inside_root(self, files: list[str]) -> list[str]:
        """Absolute paths of ``files`` (relative ones are taken from the project root),
        refusing any that resolve outside it."""
        out, root = [], self.root
        for name in files:
            if "\0" in name:  # no file system takes it; resolve() raised ValueError
                raise RaError(f"{name!r}: a file name cannot hold a NUL byte")
            path = (root / name).resolve()
            if not path.is_relative_to(root):
                raise RaError(f"{name!r} is outside the project root {root}")
            out.append(str(path))
        return out


# --- results and errors --------------------------------------------------------------------

def _result(text: str, data: dict | None = None, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data, is_error=error)


def _warned(result: CallToolResult, warning: str) -> CallToolResult:
    """``result`` with a warning line before its text: an editor saving a half-written
    ``.ra.toml`` had made every tool an error until it was fixed."""
    first, *rest = result.content or [TextContent(type="text", text="")]
    if not isinstance(first, TextContent):
        return result
    text = TextContent(type="text", text=f"warning: {warning}\n{first.text}")
    return result.model_copy(update={"content": [text, *rest]})


def error_text(exc: RaError) -> str:
    """What the CLI prints for ``exc``, without colour."""
    return message(exc)


def _kb(ctx: Context) -> KnowledgeBase:
    return ctx.request_context.lifespan_context


async def answer(ctx: Context, fn: Callable[[KnowledgeBase], CallToolResult]) -> CallToolResult:
    """Run one tool body on the session's worker thread, turning ra's errors into tool
    errors with the CLI's text, and any other failure into a tool error naming it (logged
    with its traceback)."""
    kb = _kb(ctx)
    return await kb.worker.run(lambda: _answer(kb, fn))


def _answer(kb: KnowledgeBase, fn: Callable[[KnowledgeBase], CallToolResult]) -> CallToolResult:
    kb.warning = None
    try:
        out = fn(kb)
        return out if kb.warning is None or out.is_error else _warned(out, kb.warning)
    except RaError as exc:
        return _result(error_text(exc), error=True)
    except Exception as exc:
        log.exception("tool call failed")
        first = (str(exc).splitlines() or [""])[0]
        return _result(f"error: ra failed on this request ({type(exc).__name__}: {first})",
                       error=True)


def _search_result(response, list_only: bool) -> CallToolResult:
    from ra.query.render import render_search

    text = render_search(response, "list" if list_only else "full",
                         budget_option="the max_tokens argument")
    text += "".join(f"warning: {w}\n" for w in getattr(response, "warnings", ()))
    text += "".join(f"note: {n}\n" for n in getattr(response, "notes", ()))
    return _result(text, response.to_dict())


def _budget(kb: KnowledgeBase, max_tokens: int | None) -> int:
    """The agent's token budget, else the configured default (``[mcp] max_tokens``)."""
    return max_tokens if max_tokens is not None else kb.config.mcp.max_tokens


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
    lines += [f"error: {e}" for e in info["errors"]]
    lines += [f"warning: {w}" for w in info["warnings"]]
    return "\n".join(lines) + "\n"


def _sources(kb: KnowledgeBase, error: RaError | None) -> dict:
    """``collect_status`` of the configuration in use, with why a newer one could not be
    used: the index state then describes the last configuration that could be read."""
    from ra.index.status import collect_status

    info = collect_status(kb.config)
    info["errors"] = [] if error is None else [message(error, label="")]
    if error is not None:
        info["index"]["state"] = f"{info['index']['state']} (last good configuration)"
    return info


# --- the server ----------------------------------------------------------------------------

Query = Annotated[str, StringConstraints(max_length=MAX_QUERY)]
#: ``query`` is taken for ``queries`` (the schema names ``queries`` only): agents call
#: search tools with a ``query`` first, and were refused it with a validation error
Queries = Annotated[Query | Annotated[list[Query], Field(max_length=MAX_TOPICS)], Field(
    validation_alias=AliasChoices("queries", "query"),
    description="Search terms: one string for one topic, or an array of strings to research "
    "several topics in one call (each answered separately). Words are AND'd and "
    "typo-tolerant (a question's opening words, \"how to\", \"what is a\", articles "
    "and \"vs\" only add score; \"words (ABBR)\" matches either); a question or sentence "
    "of six words or more, or one that says \"or\", is ranked, chunks with more of its "
    "words first; results holding only some words are marked partial; \"quote\" an exact "
    "phrase; -word excludes; a OR b.")]
Limit = Annotated[int | None, Field(ge=1, le=1000, description="Results per topic (default 5).")]
MaxTokens = Annotated[int | None, Field(ge=1, le=MAX_TOKENS, description=(
    "Token budget over all results (cl100k tokens; default [mcp] max_tokens, 4000). "
    "Results in rank order while they fit (search, context: a page larger than the "
    "budget comes as its best matching section; get: a chunk larger than the budget "
    "comes as its own text and its sections' ids, to get each by; a larger budget reads "
    "it whole); one that does not fit is given as a list entry (id, title, snippet), else "
    "as its id and title; the answer says what it cut."))]
SearchOut = Annotated[CallToolResult, schemas.SearchOutput]
GetOut = Annotated[CallToolResult, schemas.GetOutput]
SourcesOut = Annotated[CallToolResult, schemas.SourcesOutput]
Trees = Annotated[list[str] | None, Field(
    description="Only these knowledge trees (names from list_sources).")]
ListOnly = Annotated[bool, Field(description=(
    "Ids, titles and snippets only, no content (default false). Read one with `get`."))]
Tags = Annotated[list[str] | None, Field(
    description="Only documents with any of these frontmatter tags (case-insensitive).")]
PathGlob = Annotated[str | None, Field(max_length=500, description=(
    "Only documents whose tree-relative path matches this glob, e.g. 'api/**', or "
    "under this folder, e.g. 'api/'."))]
Since = Annotated[str | None, Field(max_length=40, description=(
    "Only files modified on or after this ISO date (e.g. 2026-01-31)."))]
Until = Annotated[str | None, Field(max_length=40, description=(
    "Only files modified on or before this ISO date."))]
Offset = Annotated[int, Field(ge=0, le=100_000, description=(
    "Skip this many results per topic: with limit, fetches the next page (default 0)."))]
Sort = Annotated[Literal["score", "date", "path"], Field(description=(
    "Order of results: score (default), date (newest first) or path."))]
Semantic = Annotated[bool | None, Field(description=(
    "Fuse meaning with keywords (needs [semantic] in .ra.toml and its extra); default: "
    "as configured."))]
Archived = Annotated[bool, Field(description=(
    "Also search notes marked `status: archived` or in an `archive/` folder (default "
    "false)."))]
Strict = Annotated[bool, Field(description=(
    "Report a query that is not valid syntax as an error (default false: its words are "
    "searched and the result carries a note)."))]


def create_server(cwd: Path, index: WarmIndex | None = None) -> MCPServer:
    """An MCP server for the knowledge base configured at ``cwd``, served from ``index``
    (which the caller closes); without one, each session opens its own."""
    from ra.config.settings import load_config

    if index is None:
        load_config(cwd)  # a configuration error is raised here, not in the first session

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[KnowledgeBase]:
        own = index is None
        warm = WarmIndex.at(cwd).start() if own else index
        for warning in warm.config.warnings:
            log.warning("%s", warning)
        kb = KnowledgeBase(warm, cwd)
        try:
            yield kb
        finally:
            kb.worker.close()
            if own:
                warm.close()

    tools: list[Tool] = []
    _add_search_tools(tools)
    _add_context_tool(tools)
    return MCPServer("ra", version=__version__, instructions=INSTRUCTIONS, tools=tools,
                     lifespan=lifespan, log_level="WARNING")


def _tool(tools: list[Tool]) -> Callable:
    """A read-only tool whose description is its docstring, dedented, and whose output
    schema is published flat (``ra.serve.mcp_schemas.published``)."""
    def register(fn: Callable) -> Callable:
        tool = Tool.from_function(fn, description=inspect.cleandoc(fn.__doc__ or ""),
                                  annotations=READ_ONLY)
        meta = tool.fn_metadata  # results are still validated against the TypedDict
        meta.output_schema = schemas.published(meta.output_schema)
        meta.arg_model = _closed(meta.arg_model)
        tool.parameters = meta.arg_model.model_json_schema(by_alias=True)
        tools.append(tool)
        return fn
    return register


def _closed(model: type[BaseModel]) -> type[BaseModel]:
    """The tool's arguments with no others allowed: a misspelt one (``max_token``,
    ``limt``) is a tool error naming it and the arguments the tool takes, where the SDK
    drops it and the call runs without it; the published schema says
    ``additionalProperties: false``."""
    names = [f.alias or name for name, f in model.model_fields.items()]
    known = set(names) | {a for f in model.model_fields.values()
                          if isinstance(f.validation_alias, AliasChoices)
                          for a in f.validation_alias.choices if isinstance(a, str)}

    def unknown(cls, data: Any) -> Any:
        extra = [k for k in data if k not in known] if isinstance(data, dict) else []
        if extra:
            import difflib

            said = "; ".join(
                f"unknown argument {k!r}" + (f" (did you mean {close[0]!r}?)" if (
                    close := difflib.get_close_matches(str(k), names, 1, 0.6)) else "")
                for k in extra)
            raise ValueError(f"{said}; the tool takes {', '.join(names) or 'none'}")
        return data

    return type(model.__name__, (model,), {
        "__module__": model.__module__,
        "model_config": ConfigDict(**model.model_config,  # an alias beside its name: ignored
                                   json_schema_extra={"additionalProperties": False}),
        "_unknown": model_validator(mode="before")(classmethod(unknown))})


def _add_search_tools(tools: list[Tool]) -> None:
    @_tool(tools)
    async def search(
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
        semantic: Semantic = None,
        strict: Strict = False,
    ) -> SearchOut:
        """Search the project's knowledge base (conventions, designs, decisions, reference
        notes) before relying on general knowledge. Returns the best matching sections as
        markdown, best first, each under a `─── tree:path#heading ───` line. Use an array
        of queries to research several topics in one call."""
        def body(kb: KnowledgeBase) -> CallToolResult:
            from ra.query.search import SearchOptions

            topics = _topics(queries)

            def run(s):  # after the refresh: trees of the current configuration
                return s.search(topics, SearchOptions(
                    limit=limit, max_tokens=_budget(kb, max_tokens), list_only=list,
                    trees=kb.check_trees(trees), tags=tuple(tags or ()), path=path,
                    since=since, until=until, offset=offset, sort=sort,
                    include_archived=include_archived, semantic=semantic,
                    strict=strict, read_budget=kb.config.mcp.max_tokens))
            return _search_result(kb.call(run), list)
        return await answer(ctx, body)

    @_tool(tools)
    async def get(
        id: Annotated[str, Field(description=(
            "Chunk id `tree:path#heading` or document id `tree:path`, as shown in results."))],
        ctx: Context,
        full_document: Annotated[bool, Field(description=(
            "The whole document the chunk belongs to (default false)."))] = False,
        links: Annotated[bool, Field(description=(
            "Also the chunks this one links to, each once, within max_tokens (default "
            "false)."))] = False,
        max_tokens: MaxTokens = None,
        from_line: Annotated[int | None, Field(ge=1, description=(
            "Read on from this line of the chunk's file: the text of a chunk larger "
            "than max_tokens, a page at a time (the answer says the line to read on "
            "from)."))] = None,
    ) -> GetOut:
        """Read one section of the knowledge base, with its subsections, or a whole
        document, by the id a search returned; with links, the sections it links to."""
        def body(kb: KnowledgeBase) -> CallToolResult:
            from ra.query.get import get_chunk
            from ra.query.render import READ_ON_MCP, render_chunk

            c = kb.call(lambda s: get_chunk(
                s.reader, kb.config, id, full_document=full_document, links=links,
                max_tokens=_budget(kb, max_tokens), from_line=from_line))
            return _result(render_chunk(c, "max_tokens", READ_ON_MCP), c.to_dict())
        return await answer(ctx, body)

    @_tool(tools)
    async def list_sources(ctx: Context) -> SourcesOut:
        """List the knowledge trees ra searches (name, local or global scope, folder,
        document and chunk counts), the state of the index and configuration errors."""
        def body(kb: KnowledgeBase) -> CallToolResult:
            info = kb.call(lambda error: _sources(kb, error), need_index=False)
            return _result(_sources_text(info), info)
        return await answer(ctx, body)


def _add_context_tool(tools: list[Tool]) -> None:
    @_tool(tools)
    async def context(
        files: Annotated[str | Annotated[list[str], Field(min_length=1, max_length=MAX_FILES)],
                         Field(description=(
            "Files you are working on, relative to the project root (or absolute inside "
            "it): one path, or an array of paths. ra analyses their paths and content; a "
            "file not written yet, its path."))],
        ctx: Context,
        limit: Annotated[int | None, Field(ge=1, le=1000, description=(
            "Maximum sections to return (default 10)."))] = None,
        max_tokens: MaxTokens = None,
        list: ListOnly = False,
        trees: Trees = None,
    ) -> SearchOut:
        """Find the knowledge relevant to the files you are working on: conventions,
        designs and notes matching their paths and content. Use before changing them."""
        def body(kb: KnowledgeBase) -> CallToolResult:
            from ra.query import context as module

            def run(s):  # after the refresh: root and trees of the current configuration
                opts = module.ContextOptions(limit=limit, max_tokens=_budget(kb, max_tokens),
                                             list_only=list, trees=kb.check_trees(trees),
                                             read_budget=kb.config.mcp.max_tokens)
                return module.context_search(s.reader, kb.config, kb.inside_root(
                    [files] if isinstance(files, str) else files), opts)
            return _search_result(kb.call(run), list)
        return await answer(ctx, body)


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
        cwd: Path | None = None, index: WarmIndex | None = None) -> None:
    """Serve the knowledge base of ``cwd`` (default: the working directory) until stopped;
    ``index``, when given, is that knowledge base's WarmIndex, already started."""
    kind = TRANSPORTS.get(transport)
    if kind is None:
        raise RaError(f"unknown transport {transport!r}; choose stdio, http or sse")
    cwd = cwd or Path.cwd()
    index = index or WarmIndex.at(cwd).start()
    try:
        server = create_server(cwd, index)
        if kind == "stdio":
            from ra.serve import stdio

            stdio.run(server)
        else:
            server.run(kind, host=host, port=port, transport_security=transport_security(host))
    finally:
        index.close()
