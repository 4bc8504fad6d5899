"""The structured output of each MCP tool, declared so that clients see its schema.

A tool of ``ra.serve.mcp`` returns ``Annotated[CallToolResult, Schema]``: the SDK publishes
the schema as the tool's ``outputSchema`` and checks the structured content of every
successful call against it. The shapes are those of the library's ``to_dict`` methods
(``SearchResponse``, ``ra.query.get.Chunk``, ``ra.index.status.collect_status``), which the
CLI prints with ``--json`` too; ``tests/test_server.py`` holds them together.

``published`` is the JSON schema a tool announces: pydantic's, flattened. A client checks
every result against it (the SDK's client with ``jsonschema``, in Python, on every call),
and that check costs per subschema it enters and per ``$ref`` it resolves, so the published
form has no ``$ref`` and no per-property ``title`` (pydantic's capitalised field name); the
types, required keys and enums, and so what a valid result is, are unchanged.
"""

from __future__ import annotations

from typing import (
    Any,
    Literal,
    NotRequired,  # pydantic wants these before 3.12
)

from typing_extensions import TypedDict


class SearchResult(TypedDict):
    id: str
    tree: str
    path: str
    title: str
    breadcrumb: str
    score: float
    snippet: str  # empty when given as id and title only
    tokens: int  # what the result costs as given
    content: NotRequired[str]  # in full only
    tier: NotRequired[Literal["list", "ref"]]  # shortened by the token budget
    seen_in: NotRequired[str]  # shown under this earlier topic already
    aggregated_from: NotRequired[list[str]]
    copies: NotRequired[list[str]]  # results with the same text, given once as this one
    near_copies: NotRequired[list[str]]  # the same section, nearly the same text
    partial: NotRequired[bool]  # holds some of the words, after the chunks holding all


class Topic(TypedDict):
    query: str
    match: Literal["all", "partial", "semantic", "none"]  # semantic: by meaning alone
    # chunks that match, before the limit and the budget (the chunks holding every word
    # when results marked partial follow them)
    total_matches: int
    results: list[SearchResult]
    omitted: int  # results the token budget left out entirely
    smallest_omitted_tokens: NotRequired[int]  # what the smallest of those needs
    note: NotRequired[str]  # how the query was read when not as written (syntax error)
    explain: NotRequired[dict]


class SearchOutput(TypedDict):
    """``search`` and ``context``: ``ra search --json``."""

    queries: list[Topic]
    tokens_used: int
    max_tokens: int | None
    truncated: bool  # whether the budget shortened or left out any result
    warnings: NotRequired[list[str]]  # context: files skipped, includes not found
    notes: NotRequired[list[str]]  # e.g. why meaning was not used ([semantic])


class OutLink(TypedDict):
    text: str
    target: str  # as written
    id: str | None  # the indexed chunk it reaches


class Linked(TypedDict):
    id: str
    title: str
    breadcrumb: str
    tokens: int
    tier: Literal["full", "list"]
    content: str | None  # in full only


class Section(TypedDict):
    id: str
    title: str
    depth: int
    tokens: int


class Cut(TypedDict):
    """A chunk larger than ``max_tokens``: its whole size, whether its own text was cut,
    its sections that fit as ids, how many more."""

    tokens: int
    own_cut: bool
    sections: list[Section]
    more: int
    more_line: int | None


class Lines(TypedDict):
    """The lines of its file a chunk's content holds (read from a line, or its own text
    cut): ``first``–``last`` of its ``start``–``end``; ``next``, where to read on."""

    first: int
    last: int
    start: int
    end: int
    next: int | None


class GetOutput(TypedDict):
    """``get``: ``ra get --json`` (the link keys with ``links`` only)."""

    id: str
    tree: str
    path: str
    title: str
    breadcrumb: str
    content: str
    tokens: int
    links: NotRequired[list[OutLink]]
    linked: NotRequired[list[Linked]]
    linked_omitted: NotRequired[int]
    max_tokens: NotRequired[int | None]
    tokens_used: NotRequired[int]
    cut: NotRequired[Cut]
    lines: NotRequired[Lines]


class SourceTree(TypedDict):
    name: str
    path: str
    scope: Literal["local", "global"]
    exists: bool
    include: list[str]
    exclude: list[str]
    documents: int
    chunks: int


class IndexState(TypedDict):
    path: str | None
    state: str
    generation: NotRequired[str]
    built_at: NotRequired[str | None]
    size_bytes: NotRequired[int]
    counts: NotRequired[dict | None]
    semantic: NotRequired[str]  # [semantic]: how many chunks are embedded


class SourcesOutput(TypedDict):
    """``list_sources``: ``ra status --json`` plus configuration errors."""

    config_files: list[str]
    trees: list[SourceTree]
    index: IndexState
    warnings: list[str]
    errors: list[str]  # a configuration that cannot be read (the trees are the last good)


# --- the published form ---------------------------------------------------------------------

DEFS = "#/$defs/"


def published(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (pydantic's JSON schema of one of the TypedDicts above) as a tool
    publishes it: each ``$ref`` replaced by its definition, each ``anyOf`` of bare types
    (``int | None``) written as one ``type`` list, and the titles below the root left out.
    The definitions are not recursive, so the inlining ends."""
    return _flat(schema, schema.get("$defs", {}), root=True)


def _flat(node: dict[str, Any], defs: dict[str, Any], root: bool = False) -> dict[str, Any]:
    if "$ref" in node:
        return _flat(defs[node["$ref"].removeprefix(DEFS)], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$defs" or (key == "title" and not root):
            continue
        if key == "properties":  # names to schemas: a property may be called "title"
            value = {name: _flat(sub, defs) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            value = _flat(value, defs)
        elif key == "anyOf":
            value = [_flat(sub, defs) for sub in value]
            if all(sub.keys() == {"type"} and isinstance(sub["type"], str) for sub in value):
                key, value = "type", [sub["type"] for sub in value]
        out[key] = value
    return out
