"""The MCP server, through the SDK's in-memory ``Client(server)`` and over real transports.

In-memory tests call every tool and every error path and compare what an agent reads
with what the CLI prints for the same request (text and ``--json``), so the two surfaces
cannot drift apart. End-to-end tests spawn the installed ``ra mcp`` over stdio and over
streamable HTTP on a loopback port, each bounded in time.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import duckdb
import pytest
from mcp import Client, StdioServerParameters

from conftest import GUIDE
from ra.cli.app import main
from ra.config.settings import load_config
from ra.index.warm import WarmIndex
from ra.serve.mcp import KnowledgeBase, create_server, transport_security

pytestmark = pytest.mark.anyio


RA = Path(sys.executable).with_name("ra")
E2E_SECONDS = 60


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "guide.md").write_text(GUIDE)
    (tmp_path / "docs" / "sub" / "notes.txt").write_text("Plain notes about rust ownership.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def call(root: Path, tool: str, args: dict):
    async with Client(create_server(root)) as client:
        return await client.call_tool(tool, args)


def text(result) -> str:
    return result.content[0].text


# --- tools ---------------------------------------------------------------------------------

async def test_tools_are_listed_read_only_with_agent_descriptions(project):
    async with Client(create_server(project)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search", "get", "list_sources", "context"}
    for tool in tools.values():
        hints = tool.annotations
        assert hints.read_only_hint is True and hints.destructive_hint is False
        assert len(tool.description) > 60 and "\n    " not in tool.description
    props = tools["search"].input_schema["properties"]
    assert tools["search"].input_schema["required"] == ["queries"]
    assert {"queries", "limit", "max_tokens", "list", "trees"} <= set(props)
    assert {s["type"] for s in props["queries"]["anyOf"]} == {"string", "array"}
    assert all(p.get("description") for p in props.values())
    assert tools["get"].input_schema["required"] == ["id"]
    assert tools["list_sources"].input_schema["properties"] == {}


def _broken(data: dict) -> list[dict]:
    """Copies of a search result with one thing wrong each, at every depth."""
    def edit(fn):
        copy = json.loads(json.dumps(data))
        fn(copy)
        return copy
    first = ("queries", 0, "results", 0)

    def at(d, path):
        for key in path:
            d = d[key]
        return d
    return [edit(lambda d: at(d, first).update(score="high")),
            edit(lambda d: at(d, first).pop("tokens")),
            edit(lambda d: at(d, first).update(title=None)),
            edit(lambda d: at(d, first).update(tier="sometimes")),
            edit(lambda d: at(d, first).update(aggregated_from=[1])),
            edit(lambda d: at(d, ("queries", 0)).update(match="most")),
            edit(lambda d: at(d, ("queries", 0)).pop("omitted")),
            edit(lambda d: d.update(max_tokens="4000")),
            edit(lambda d: d.update(truncated=1.5)),
            edit(lambda d: d.update(queries={}))]


async def test_output_schemas_are_published_flat_and_accept_what_pydantic_does(project):
    """The published output schema (no $ref, no per-property title: cheaper for the client
    to check on every call) accepts and rejects exactly what pydantic's schema does."""
    from jsonschema import Draft202012Validator
    from pydantic import TypeAdapter

    from ra.serve import mcp_schemas

    async with Client(create_server(project)) as client:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"queries": ["logging", "rust"]})
    for name, schema in tools.items():
        Draft202012Validator.check_schema(schema)
        assert "$ref" not in json.dumps(schema) and "$defs" not in schema, name
    result = tools["search"]["properties"]["queries"]["items"]["properties"]["results"]["items"]
    assert result["properties"]["title"] == {"type": "string"}  # a property, kept
    assert result["required"][:3] == ["id", "tree", "path"]
    assert tools["search"]["properties"]["max_tokens"] == {"type": ["integer", "null"]}
    full = Draft202012Validator(TypeAdapter(mcp_schemas.SearchOutput).json_schema())
    flat = Draft202012Validator(tools["search"])
    good = found.structured_content
    for sample in (good, *_broken(good), {**good, "max_tokens": None}):
        assert flat.is_valid(sample) == full.is_valid(sample), sample
    assert flat.is_valid(good) and not any(flat.is_valid(b) for b in _broken(good))


async def test_search_text_and_structured_content_match_the_cli(project, capsys):
    result = await call(project, "search", {"queries": "logging conventions"})
    assert not result.is_error
    # the MCP tool answers within [mcp] max_tokens (4000) unless asked otherwise
    _, full, _ = cli(capsys, "search", "logging conventions", "--max-tokens", "4000")
    _, as_json, _ = cli(capsys, "search", "logging conventions", "--json", "--max-tokens",
                        "4000")
    assert text(result) == full
    assert result.structured_content == json.loads(as_json)
    assert text(result).startswith("─── docs:guide.md#logging ───\n")


async def test_search_array_is_multi_topic_and_list_matches_cli(project, capsys):
    args = {"queries": ["logging", "rust ownership"], "list": True, "limit": 3}
    result = await call(project, "search", args)
    budget = ("--max-tokens", "4000")  # the MCP default, [mcp] max_tokens
    _, listed, _ = cli(capsys, "search", "logging", "rust ownership", "--list", "-n", "3",
                       *budget)
    _, as_json, _ = cli(capsys, "search", "logging", "rust ownership", "--list", "-n", "3",
                        "--json", *budget)
    assert text(result) == listed and result.structured_content == json.loads(as_json)
    topics = result.structured_content["queries"]
    assert [t["query"] for t in topics] == ["logging", "rust ownership"]
    assert all("content" not in r for t in topics for r in t["results"])


async def test_search_token_budget_and_tree_filter(project, capsys):
    result = await call(project, "search", {"queries": "rust", "max_tokens": 100,
                                            "trees": ["docs"]})
    _, as_json, _ = cli(capsys, "search", "rust", "--max-tokens", "100", "--tree", "docs",
                        "--json")
    data = result.structured_content
    assert data == json.loads(as_json)
    assert data["max_tokens"] == 100 and 0 < data["tokens_used"] <= 100
    assert text(result).rstrip().endswith(f"[{data['tokens_used']} of 100 tokens]")


async def test_a_list_offers_the_same_ids_whatever_its_budget(project):
    """A list's entries are read next with ``get``'s default budget ([mcp] max_tokens),
    so a large page's part is chosen for that at any budget of the list (on cargo's
    docs each budget listed another section of one page)."""
    (project / "docs" / "handbook.md").write_text(
        "# Handbook\n\nShipping: deployment and rollbacks.\n\n## Deployment\n\n"
        + "Deployment runs the pipeline stage after stage and waits. " * 400
        + "\n\n## Rollbacks\n\n" + "A rollback restores the previous release: ship rollback. " * 60
        + "\n\n## Checklist\n\nBefore a rollback, tell the team.\n")
    listed = []
    for budget in (150, 1000, None):
        args = {"queries": "handbook rollback shipping", "list": True}
        result = await call(project, "search", args | ({"max_tokens": budget} if budget else {}))
        listed.append(result.structured_content["queries"][0]["results"][0]["id"])
    assert listed == ["docs:handbook.md#rollbacks"] * 3


@pytest.mark.parametrize("budget", [200, 300, 500])
async def test_a_context_s_warnings_are_within_its_budget(project, budget):
    """The warnings come after the answer, a line each ("… no such file yet: its path
    alone"): go-task's context of a missing file at 300 tokens printed 306. (Below the
    lines saying that nothing fits, no budget holds them.)"""
    from ra.text.tokens import count_tokens

    (project / "src").mkdir()
    (project / "src" / "logging_setup.py").write_text(
        "# logging conventions\nimport logging\n\ndef configure_logging():\n"
        "    logging.basicConfig()  # logging conventions for handlers and rust ownership\n")
    result = await call(project, "context", {"files": [
        "src/logging/a_handler_not_written_yet_with_a_long_name.py", "src/logging_setup.py"],
        "max_tokens": budget})
    assert "no such file yet" in text(result)
    assert count_tokens(text(result)) <= result.structured_content["tokens_used"] <= budget


async def test_get_matches_the_cli(project, capsys):
    for args, argv in [({"id": "docs:guide.md#logging"}, ["docs:guide.md#logging"]),
                       ({"id": "docs:guide.md#logging", "full_document": True},
                        ["docs:guide.md#logging", "--full-document"])]:
        result = await call(project, "get", args)
        _, out, _ = cli(capsys, "get", *argv)
        _, as_json, _ = cli(capsys, "get", *argv, "--json")
        assert not result.is_error and text(result) == out
        assert result.structured_content == json.loads(as_json)
    assert result.structured_content["id"] == "docs:guide.md"


def _big_page(project: Path) -> None:
    """A page of 2,000 tokens or so: an introduction of 30 lines, then 12 sections."""
    intro = "".join(f"Line {i} of the introduction.\n" for i in range(30))
    parts = "".join(f"## Part {i}\n\n" + "Words of this part. " * 20 + "\n\n"
                    for i in range(12))
    (project / "docs" / "big.md").write_text(f"# Big page\n\n{intro}\n{parts}")


async def test_get_cuts_a_chunk_larger_than_the_budget(project, capsys):
    """As ``ra get --max-tokens``: its own text and its sections by id; the structured
    content passes the client's check of the output schema. The budget is the agent's,
    else ``[mcp] max_tokens``."""
    _big_page(project)
    result = await call(project, "get", {"id": "docs:big.md#big-page", "max_tokens": 400})
    _, as_json, _ = cli(capsys, "get", "docs:big.md#big-page", "--max-tokens", "400",
                        "--json")
    data = result.structured_content
    assert not result.is_error and data == json.loads(as_json)
    assert data["cut"]["sections"][0]["id"] == "docs:big.md#part-0"
    assert not data["cut"]["own_cut"] and "Line 29 of" in data["content"]
    assert "more than max_tokens 400" in text(result)
    assert "`get` reads one by its id" in text(result) and "ra get" not in text(result)
    assert f"`get` with from_line {data['cut']['more_line']} reads on from the first" in text(
        result)  # the sections not shown, as the agent's tool reads them
    result = await call(project, "get", {"id": "docs:guide.md"})
    assert "cut" not in result.structured_content  # within [mcp] max_tokens: whole
    # no budget given: [mcp] max_tokens (OpenAPI's 55,000-token "Objects and Fields" came
    # whole, twice: as text and as structured content)
    config = project / ".ra.toml"
    config.write_text(config.read_text() + "\n[mcp]\nmax_tokens = 400\n")
    result = await call(project, "get", {"id": "docs:big.md#big-page"})
    assert result.structured_content["cut"] == data["cut"]


async def test_get_reads_on_from_a_line_as_the_cli_does(project, capsys):
    """``from_line`` reads a chunk larger than the budget a page at a time, as ``ra get
    --from-line``; the note says how to read on in the tool's own terms."""
    _big_page(project)
    args = {"id": "docs:big.md#big-page", "max_tokens": 200, "from_line": 10}
    result = await call(project, "get", args)
    argv = ["get", "docs:big.md#big-page", "--max-tokens", "200", "--from-line", "10"]
    _, out, _ = cli(capsys, *argv)
    _, as_json, _ = cli(capsys, *argv, "--json")
    data = result.structured_content
    assert not result.is_error and data == json.loads(as_json)
    assert data["content"].startswith("Line 7 of")  # line 10 of big.md
    assert data["lines"]["first"] == 10 and data["tokens"] <= 200 and data["lines"]["next"]
    assert text(result) == out.replace(
        f"`ra get docs:big.md#big-page --from-line {data['lines']['next']}`",
        f"`get` with from_line {data['lines']['next']}")


async def test_list_sources_reports_trees_counts_and_index_state(project, capsys):
    result = await call(project, "list_sources", {})
    data = result.structured_content
    _, as_json, _ = cli(capsys, "status", "--json")
    assert data["trees"] == json.loads(as_json)["trees"]
    tree = data["trees"][0]
    assert (tree["name"], tree["scope"], tree["documents"], tree["chunks"]) == (
        "docs", "local", 2, 6)
    assert tree["path"] == str(project / "docs")
    assert data["index"]["state"] == "current"
    assert "| docs | local | 2 | 6 |" in text(result) and "index: current" in text(result)


# --- errors --------------------------------------------------------------------------------

async def test_invalid_query_syntax_is_searched_as_words_with_a_note(project, capsys):
    result = await call(project, "search", {"queries": '"error handling'})
    # the CLI with the server's default budget ([mcp] max_tokens) answers the same
    budget = ("--max-tokens", "4000")
    _, out, _ = cli(capsys, "search", '"error handling', *budget)
    _, as_json, _ = cli(capsys, "search", '"error handling', "--json", *budget)
    assert not result.is_error and text(result) == out
    assert result.structured_content == json.loads(as_json)
    assert "unclosed quote" in result.structured_content["queries"][0]["note"]
    assert text(result).startswith("(note: not valid query syntax (unclosed quote")


async def test_copies_and_a_flag_note_reach_the_agent_as_the_cli_gives_them(project, capsys):
    """A page kept twice (``v2/`` a copy of the guide) is one result naming its copy, and
    a ``-word`` that took matches out says so: in the text and the structured content,
    as ``ra search`` and ``ra search --json`` give them, and valid against the schema."""
    (project / "docs" / "v2").mkdir()
    (project / "docs" / "v2" / "guide.md").write_text(GUIDE)
    queries = ["logging conventions", "error handling -rust"]
    result = await call(project, "search", {"queries": queries})
    budget = ("--max-tokens", "4000")
    _, out, _ = cli(capsys, "search", *queries, *budget)
    _, as_json, _ = cli(capsys, "search", *queries, "--json", *budget)
    assert not result.is_error and text(result) == out
    assert result.structured_content == json.loads(as_json)
    copied, flagged = result.structured_content["queries"]
    assert [r["id"] for r in copied["results"]] == ["docs:guide.md#logging"]
    assert copied["results"][0]["copies"] == ["docs:v2/guide.md#logging"]
    assert "(the same text at docs:v2/guide.md#logging)" in text(result)
    # both guides' error handling sections hold "Rust", and their installation sections
    # hold them: four chunks out, nothing left
    assert flagged["results"] == [] and flagged["note"] == (
        '-rust excluded 4 matching chunks; to search for -rust itself, quote it: "-rust"')
    assert flagged["note"] in text(result)


@pytest.mark.parametrize(("tool", "args", "argv"), [
    ("search", {"queries": '"error handling', "strict": True},
     ["search", '"error handling', "--strict"]),
    ("search", {"queries": "(install", "strict": True}, ["search", "(install", "--strict"]),
    ("get", {"id": "docs:../../etc/passwd"}, ["get", "docs:../../etc/passwd"]),
    ("get", {"id": "/etc/passwd"}, ["get", "/etc/passwd"]),
    ("get", {"id": "docs:guide.md#loging"}, ["get", "docs:guide.md#loging"]),
    ("get", {"id": "docs:missing.md"}, ["get", "docs:missing.md"]),
])
async def test_errors_carry_the_cli_message(project, capsys, tool, args, argv):
    result = await call(project, tool, args)
    code, out, err = cli(capsys, *argv)
    assert result.is_error and code != 0 and out == ""
    assert text(result) == err.rstrip("\n")
    assert "Traceback" not in text(result)


async def test_traversal_ids_never_read_outside_the_trees(project):
    (project / "secret.md").write_text("# Secret\n\nclassified\n")
    for bad in ["docs:../secret.md", "docs:sub/../../secret.md", "docs:/etc/passwd",
                "docs:..\\secret.md", "secret:secret.md", "docs:%2e%2e/secret.md"]:
        result = await call(project, "get", {"id": bad})
        assert result.is_error and "classified" not in text(result), bad


async def test_search_takes_query_for_queries_without_publishing_it(project):
    """Agents call a search tool with ``query`` first; it was a validation error and a
    round trip. The schema still names ``queries`` only."""
    async with Client(create_server(project)) as client:
        schema = {t.name: t.input_schema for t in (await client.list_tools()).tools}["search"]
        found = await client.call_tool("search", {"query": "logging conventions"})
        both = await client.call_tool("search", {"queries": "logging", "query": "rust"})
        wrong = await client.call_tool("search", {"query": 5})
    assert "query" not in schema["properties"] and schema["required"] == ["queries"]
    assert not found.is_error
    assert found.structured_content["queries"][0]["results"][0]["id"] == "docs:guide.md#logging"
    assert both.structured_content["queries"][0]["query"] == "logging"  # queries wins
    assert wrong.is_error


async def test_malformed_calls_are_tool_errors_and_the_server_keeps_serving(project):
    bad_calls = [
        ("search", {}),                                  # missing field
        ("search", {"queries": 5}),                      # wrong type
        ("search", {"queries": ["ok", 3]}),
        ("search", {"queries": {"q": "x"}}),
        ("search", {"queries": "x", "limit": "many"}),
        ("search", {"queries": "x", "limit": 0}),
        ("search", {"queries": "x", "max_tokens": -5}),
        ("search", {"queries": "x", "list": "sometimes"}),
        ("search", {"queries": "x", "trees": ["nope"]}),  # unknown tree
        ("search", {"queries": '"unclosed phrase', "strict": True}),
        ("search", {"queries": "title:", "strict": True}),
        ("search", {"queries": "x", "strict": "maybe"}),
        ("search", {"queries": ""}),
        ("search", {"queries": []}),
        ("search", {"queries": "(" * 20_000}),            # too long
        ("search", {"queries": ["logging"] * 500}),       # too many topics
        ("search", {"queries": " ".join(f"w{i}" for i in range(3000))}),
        ("get", {}),
        ("get", {"id": 42}),
        ("get", {"id": "docs:../../etc/passwd"}),
        ("get", {"id": "not an id"}),
        ("get", {"id": "docs:guide.md#nope", "full_document": "perhaps"}),
        ("get", {"id": "docs:guide.md", "from_line": 0}),
        ("get", {"id": "docs:guide.md", "from_line": "ten"}),
        ("get", {"id": "docs:guide.md", "from_line": 999}),  # past its end
        ("list_sources", {"unexpected": True}),
        ("no_such_tool", {}),
    ]
    async with Client(create_server(project)) as client:
        with anyio.fail_after(60):
            for tool, args in bad_calls:
                result = await client.call_tool(tool, args)
                assert result.is_error, (tool, args)
                assert text(result).strip(), (tool, args)
                assert "pydantic.dev" not in text(result)  # the error, not a link
            good = await client.call_tool("search", {"queries": "logging conventions"})
    assert not good.is_error
    assert good.structured_content["queries"][0]["results"][0]["id"] == "docs:guide.md#logging"


async def test_a_pasted_traceback_is_a_query(project):
    """An agent pastes the traceback it got, 1,449 characters: the tool refused it with
    two validation errors (queries of 1,000 characters at most); the CLI searched it."""
    frames = '  File "/app/x.py", line 12, in handler\n    resp = client.get(url)\n' * 20
    traceback = (f"Traceback (most recent call last):\n{frames}RuntimeError: logging "
                 "conventions were not configured")
    result = await call(project, "search", {"queries": traceback})
    assert len(traceback) > 1_000 and not result.is_error
    assert result.structured_content["queries"][0]["results"]


async def test_an_argument_a_tool_does_not_take_is_named_not_dropped(project):
    # the SDK drops unknown keys: a misspelt `max_token` ran with the default budget
    async with Client(create_server(project)) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        wrong = await client.call_tool("search", {"queries": "logging", "max_token": 50,
                                                  "limt": 1})
        alias = await client.call_tool("search", {"query": "logging"})
        empty = await client.call_tool("list_sources", {"verbose": True})
    assert all(s["additionalProperties"] is False for s in schemas.values())
    assert wrong.is_error
    assert "unknown argument 'max_token' (did you mean 'max_tokens'?)" in text(wrong)
    assert "unknown argument 'limt' (did you mean 'limit'?)" in text(wrong)
    assert "the tool takes queries, limit, max_tokens, list" in text(wrong)
    assert not alias.is_error  # an alias the tool declares is no stranger
    assert empty.is_error and "unknown argument 'verbose'; the tool takes none" in text(empty)


async def test_an_unexpected_failure_is_a_tool_error_not_a_crash(project, monkeypatch):
    from ra.query.search import Searcher

    def broken(self, topics, options):
        raise RuntimeError("boom")

    async with Client(create_server(project)) as client:
        monkeypatch.setattr(Searcher, "search", broken)
        result = await client.call_tool("search", {"queries": "logging"})
        assert result.is_error and "RuntimeError: boom" in text(result)
        monkeypatch.undo()
        assert not (await client.call_tool("search", {"queries": "logging"})).is_error


async def test_without_configuration_tools_say_how_to_fix_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    result = await call(tmp_path, "search", {"queries": "anything"})
    _, _, err = cli(capsys, "search", "anything")
    assert result.is_error and text(result) == err.rstrip("\n") and "ra init" in text(result)
    sources = await call(tmp_path, "list_sources", {})
    assert not sources.is_error and sources.structured_content["trees"] == []


async def test_concurrent_calls_are_serialized_and_all_answered(project):
    results = []
    async with Client(create_server(project)) as client:

        async def one(i: int) -> None:
            q = ["logging", "error handling", "rust ownership"][i % 3]
            results.append(await client.call_tool("search", {"queries": q}))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(24):
                    tg.start_soon(one, i)
    assert len(results) == 24 and not any(r.is_error for r in results)


async def test_a_tool_body_runs_off_the_event_loop_which_keeps_answering(project, monkeypatch):
    """A search that takes long (an index update, a large request) holds the worker
    thread, not the event loop: the server still answers meanwhile."""
    import threading

    from ra.query.search import Searcher

    entered, release, threads = threading.Event(), threading.Event(), []
    original = Searcher.search

    def slow(self, topics, options):
        threads.append(threading.current_thread().name)
        entered.set()
        assert release.wait(30)
        return original(self, topics, options)

    monkeypatch.setattr(Searcher, "search", slow)
    results = []
    async with Client(create_server(project)) as client:
        async with anyio.create_task_group() as tg:
            async def one() -> None:
                results.append(await client.call_tool("search", {"queries": "logging"}))

            tg.start_soon(one)
            assert await anyio.to_thread.run_sync(entered.wait, 30)
            with anyio.fail_after(10):
                listed = await client.list_tools()  # while the search still runs
            assert not results and len(listed.tools) == 4
            release.set()
    assert threads == ["ra-mcp-worker"]
    assert not results[0].is_error and "logging" in text(results[0])


async def test_the_worker_runs_in_order_hands_back_errors_and_lets_bodies_finish():
    import threading

    from ra.serve.worker import Worker

    worker = Worker()
    assert await worker.run(lambda: 6 * 7) == 42
    with pytest.raises(ValueError, match="invalid literal"):
        await worker.run(lambda: int("x"))
    gate, ran = threading.Event(), []
    threading.Timer(0.3, gate.set).start()
    with anyio.move_on_after(0.05) as waited:  # cancelled, the caller waits for its body
        await worker.run(lambda: (gate.wait(10), ran.append("first")))
        await anyio.sleep(5)  # not reached: the cancellation proceeds after the body
    assert waited.cancelled_caught and ran == ["first"]
    assert await worker.run(lambda: [*ran, "second"]) == ["first", "second"]
    with anyio.move_on_after(0.05):
        await anyio.sleep(1)
        await worker.run(lambda: ran.append("never"))  # cancelled before: never started
    assert await worker.run(lambda: ran) == ["first"]
    first = worker.thread
    worker.close()
    assert await worker.run(lambda: threading.current_thread().name) == "ra-mcp-worker"
    assert worker.thread is not first and first.join(5) is None and not first.is_alive()
    worker.close()


# --- freshness and the reader -------------------------------------------------------------

def test_reader_is_kept_while_nothing_changes_and_replaced_when_files_change(project):
    index = WarmIndex.at(project)
    kb = KnowledgeBase(index, project)
    assert kb.call(lambda s: s.search(["logging"])).queries[0].results
    assert index.wait_warm(60)
    warm = kb.call(lambda s: s.reader)
    assert warm.keep_vocabulary and kb.call(lambda s: s.reader) is warm
    (project / "docs" / "new.md").write_text("# Zebras\n\nStriped horses.\n")
    second = kb.call(lambda s: s.reader)
    assert second is not warm and second.generation.path != warm.generation.path
    hits = kb.call(lambda s: s.search(["zebras"]))
    assert hits.queries[0].results[0].path == "new.md"
    with pytest.raises(duckdb.ConnectionException):  # the old reader was closed
        warm.query("SELECT 1")
    index.close()


async def test_a_server_given_an_index_serves_from_it_and_leaves_it_open(project):
    index = WarmIndex.at(project).start()
    try:
        async with Client(create_server(project, index)) as client:
            found = await client.call_tool("search", {"queries": "logging"})
        assert not found.is_error
        assert index.reader().query("SELECT count(*) FROM chunks")[0][0] == 6  # still open
    finally:
        index.close()


async def test_search_sees_edits_between_calls(project):
    async with Client(create_server(project)) as client:
        before = await client.call_tool("search", {"queries": "giraffes"})
        (project / "docs" / "zoo.md").write_text("# Giraffes\n\nLong necks.\n")
        after = await client.call_tool("search", {"queries": "giraffes"})
    assert before.structured_content["queries"][0]["results"] == []
    assert after.structured_content["queries"][0]["results"][0]["path"] == "zoo.md"


async def test_a_changed_ra_toml_applies_from_the_next_call(project):
    (project / "more").mkdir()
    (project / "more" / "extra.md").write_text("# Pangolins\n\nScales.\n")
    async with Client(create_server(project)) as client:
        before = await client.call_tool("search", {"queries": "pangolins", "trees": ["more"]})
        with (project / ".ra.toml").open("a") as fh:
            fh.write('[tree.more]\npath = "./more"\n')
        after = await client.call_tool("search", {"queries": "pangolins", "trees": ["more"]})
        sources = await client.call_tool("list_sources", {})
    assert before.is_error and "no tree named 'more'" in text(before)
    assert after.structured_content["queries"][0]["results"][0]["id"] == (
        "more:extra.md#pangolins")
    assert [t["name"] for t in sources.structured_content["trees"]] == ["docs", "more"]


# --- context ------------------------------------------------------------------------------

async def test_context_matches_the_library_and_refuses_files_outside_the_project(project):
    from ra.index.freshness import open_index
    from ra.query.context import ContextOptions, context_search

    (project / "src").mkdir()
    (project / "src" / "logging_setup.py").write_text(
        "# logging conventions\nimport logging\n\ndef configure_logging():\n"
        "    logging.basicConfig()  # logging conventions for handlers\n")
    (project / "src" / "escape.py").symlink_to("/etc/hostname")
    async with Client(create_server(project)) as client:
        with anyio.fail_after(60):
            ok = await client.call_tool("context", {"files": ["src/logging_setup.py"]})
            # one path as a string, as search takes one query (it was refused)
            one = await client.call_tool("context", {"files": "src/logging_setup.py"})
            bad = [await client.call_tool("context", {"files": [f]})
                   for f in ["../outside.py", "/etc/passwd", "src/../../x.py", "src/escape.py"]]
            missing = await client.call_tool("context", {"files": ["src/logging/new_handler.py"]})
            empty = await client.call_tool("context", {"files": []})
    reader, _ = open_index(load_config(project))
    with reader:
        expected = context_search(reader, load_config(project),
                                  [str(project / "src" / "logging_setup.py")],
                                  ContextOptions(max_tokens=4000))  # [mcp] max_tokens
    assert not ok.is_error and ok.structured_content == expected.to_dict()
    assert not one.is_error and one.structured_content == ok.structured_content
    assert "Configure logging conventions here." in text(ok)
    assert all(r.is_error and "outside the project root" in text(r) for r in bad)
    assert not missing.is_error  # a file not written yet: its path
    assert missing.structured_content["warnings"] == [
        f"{project / 'src' / 'logging' / 'new_handler.py'}: no such file yet: its path alone"]
    assert empty.is_error


async def test_context_brings_the_rule_files_that_name_the_file_as_they_change(project):
    """The server's warm reader looks the rule files up once per generation: a rule
    written between two calls (an update of the index) comes in the second."""
    (project / "rules").mkdir()
    (project / "rules" / "api.mdc").write_text(
        "---\nglobs: src/api/**/*.py\n---\n\n# API rules\n\nValidate every payload.\n")
    with (project / ".ra.toml").open("a") as fh:
        fh.write('[tree.rules]\npath = "./rules"\n')
    (project / "src" / "api").mkdir(parents=True)
    (project / "src" / "api" / "orders.py").write_text(
        "def create_order(payload):\n    return store(payload)  # rust ownership of payload\n")
    async with Client(create_server(project)) as client:
        with anyio.fail_after(60):
            first = await client.call_tool("context", {"files": ["src/api/orders.py"]})
            (project / "rules" / "orders.md").write_text(
                "---\npaths:\n  - \"src/api/orders.py\"\n---\n\n# Orders\n\nIdempotent.\n")
            second = await client.call_tool("context", {"files": ["src/api/orders.py"]})
    ids = [[r["id"] for r in c.structured_content["queries"][0]["results"]]
           for c in (first, second)]
    assert ids[0][0] == "rules:api.mdc" and "rules:orders.md" not in ids[0]
    assert ids[1][:2] == ["rules:orders.md", "rules:api.mdc"]  # the file itself: most specific


# --- transports ----------------------------------------------------------------------------

def test_transport_security_guards_against_dns_rebinding():
    loop = transport_security("127.0.0.1")
    assert loop.enable_dns_rebinding_protection and "127.0.0.1:*" in loop.allowed_hosts
    assert "http://localhost:*" in loop.allowed_origins
    lan = transport_security("192.168.1.5")
    assert lan.allowed_hosts == ["192.168.1.5:*"]
    assert transport_security("::1").allowed_hosts[-1] == "[::1]:*"
    assert not transport_security("0.0.0.0").enable_dns_rebinding_protection


def _python(code: str, **options) -> subprocess.CompletedProcess:
    """``python -c code`` in a process of its own, its output captured as text."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, **options)


def test_the_cli_imports_the_sdk_only_for_ra_mcp():
    code = ("import sys; from ra.cli.app import main; main(['--help']); "
            "print('mcp' in sys.modules, 'ra.serve.mcp' in sys.modules, file=sys.stderr)")
    done = _python(code)
    assert done.stderr.strip().endswith("False False")


def test_ra_mcp_opens_the_index_before_importing_the_sdk(project):
    """The SDK's import (about a second) overlaps the index work: when ``mcp`` is first
    imported, the WarmIndex thread is already running."""
    code = ("import sys, threading\n"
            "class Spy:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'mcp':\n"
            "            names = [t.name for t in threading.enumerate()]\n"
            "            print('warm' if 'ra-warm-start' in names else 'cold', file=sys.stderr)\n"
            "            sys.meta_path.remove(self)\n"
            "sys.meta_path.insert(0, Spy())\n"
            "from ra.cli.app import main\n"
            "sys.exit(main(['mcp']))\n")
    done = _python(code, cwd=project, stdin=subprocess.DEVNULL)
    assert done.stderr.splitlines()[0] == "warm", done.stderr


async def test_get_of_a_path_is_a_tool_error_that_names_the_id(project):
    async with Client(create_server(project)) as client:
        got = await client.call_tool("get", {"id": "docs/guide.md#logging"})
        again = await client.call_tool("get", {"id": "docs:guide.md#logging"})
    assert got.is_error and "did you mean:\n  docs:guide.md#logging" in text(got)
    assert not again.is_error


def test_mcp_command_rejects_unknown_transport(project, capsys):
    code, _, err = cli(capsys, "mcp", "--transport", "carrier-pigeon")
    assert code == 2 and "stdio, http, sse" in err


@pytest.mark.skipif(not RA.exists(), reason="the ra executable is not installed beside python")
async def test_stdio_end_to_end(project):
    params = StdioServerParameters(command=str(RA), args=["mcp"], cwd=str(project))
    with anyio.fail_after(E2E_SECONDS):
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            bad = await client.call_tool("get", {"id": "docs:../../etc/passwd"})
            found = await client.call_tool("search", {"queries": ["logging", "rust"]})
            sources = await client.call_tool("list_sources", {})
            (project / "docs" / "zoo.md").write_text("# Giraffes\n\nLong necks.\n")
            edited = await client.call_tool("search", {"queries": "giraffes"})
    assert {"search", "get", "list_sources"} <= names
    assert bad.is_error and "may not leave its tree" in text(bad)
    assert [r["path"] for r in edited.structured_content["queries"][0]["results"]] == ["zoo.md"]
    assert [t["query"] for t in found.structured_content["queries"]] == ["logging", "rust"]
    assert "## logging" in text(found)
    assert sources.structured_content["trees"][0]["documents"] == 2


@pytest.mark.skipif(not RA.exists(), reason="the ra executable is not installed beside python")
@pytest.mark.parametrize("ends", ["pipes", "files"])
def test_stdio_answers_the_calls_in_flight_when_input_ends(project, tmp_path, ends):
    """``printf '…' | ra mcp``: stdin ends right after the last request, while the search
    runs; every request read is answered before the server stops (it stopped first). The
    same from a file into a file (``ra mcp < requests > answers``: the SDK's transport,
    which served files, answered the first request alone)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "tools/call", "id": 2,  # an argument named id too
         "params": {"name": "get", "arguments": {"id": "docs:guide.md#logging"}}},
        {"jsonrpc": "2.0", "id": "three", "method": "tools/call",
         "params": {"name": "search", "arguments": {"queries": "logging"}}}]
    requests = "".join(json.dumps(m) + "\n" for m in messages)
    if ends == "pipes":
        done = subprocess.run([str(RA), "mcp"], cwd=project, capture_output=True, text=True,
                              timeout=E2E_SECONDS, input=requests)
        out = done.stdout
    else:
        (tmp_path / "requests").write_text(requests)
        with open(tmp_path / "requests") as stdin, open(tmp_path / "answers", "w") as stdout:
            done = subprocess.run([str(RA), "mcp"], cwd=project, stdin=stdin, stdout=stdout,
                                  stderr=subprocess.PIPE, text=True, timeout=E2E_SECONDS)
        out = (tmp_path / "answers").read_text()
    answers = {a["id"]: a for a in map(json.loads, out.splitlines())}
    assert done.returncode == 0 and set(answers) == {1, 2, "three"}, done.stderr
    assert answers[2]["result"]["structuredContent"]["id"] == "docs:guide.md#logging"
    assert not answers["three"]["result"]["isError"]


NOISY_SERVER = """\
import os, sys, threading
import ra.serve.mcp as m
real = m._search_result
def noisy(*args):
    os.write(1, b"stray")  # no newline: on the wire it would spoil the answer after it
    print("stray print")
    names = sorted(t.name for t in threading.enumerate())
    open(os.environ["RA_TEST_THREADS"], "w").write("\\n".join(names))
    return real(*args)
m._search_result = noisy
from ra.cli.app import main
sys.exit(main(["mcp"]))
"""


async def test_stdio_keeps_stray_output_off_the_wire_and_needs_no_thread_per_line(
        project, tmp_path):
    """Over pipes, ``ra mcp`` reads and writes on the event loop (``ra.serve.stdio``): no
    anyio worker threads; fd 1 is stderr meanwhile, so stray output misses the wire."""
    threads = tmp_path / "threads.txt"
    params = StdioServerParameters(command=sys.executable, args=["-c", NOISY_SERVER],
                                   cwd=str(project), env={"RA_TEST_THREADS": str(threads)})
    with anyio.fail_after(E2E_SECONDS):
        async with Client(params) as client:
            found = await client.call_tool("search", {"queries": "logging"})
            again = await client.call_tool("search", {"queries": ["logging", "rust"]})
    assert not found.is_error and not again.is_error
    assert found.structured_content["queries"][0]["results"][0]["id"] == "docs:guide.md#logging"
    names = threads.read_text().split("\n")
    assert "ra-mcp-worker" in names
    assert not [n for n in names if n.startswith("AnyIO")], names


def test_stdio_claims_the_standard_descriptors_and_gives_them_back():
    code = ("import os\n"
            "from ra.serve.stdio import claimed, pipes\n"
            "assert pipes()\n"
            "with claimed() as (rfd, wfd):\n"
            "    print('stray', flush=True)\n"
            "    os.write(wfd, b'wire\\n')\n"
            "    assert not os.get_blocking(rfd) and not os.get_blocking(wfd)\n"
            "    assert os.read(0, 10) == b''\n"
            "print('after', flush=True)\n"
            "assert os.get_blocking(0) and os.get_blocking(1)\n"
            "assert os.read(0, 10) == b'input'\n")
    done = _python(code, input="input")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "wire\nafter\n" and "stray" in done.stderr
    no_stderr = ("import os\n"
                 "from ra.serve.stdio import claimed\n"
                 "os.close(2)\n"
                 "with claimed() as (rfd, wfd):\n"
                 "    os.write(1, b'stray')\n"
                 "    os.write(wfd, b'wire')\n")
    done = _python(no_stderr, input="")
    assert (done.returncode, done.stdout) == (0, "wire")
    with open(__file__) as regular:  # a file or /dev/null never blocks: ours too
        done = _python("from ra.serve.stdio import pipes; print(pipes())", stdin=regular)
    assert done.stdout == "True\n"
    done = _python("from ra.serve.stdio import pipes; print(pipes())",
                   stdin=subprocess.DEVNULL)
    assert done.stdout == "True\n"


async def test_stdio_lines_come_whole_across_reads_and_writes_wait_for_room():
    import os
    import threading

    from ra.serve.stdio import Lines, Writer

    long = "x" * 200_000  # past a pipe's capacity: reads in pieces, writes wait
    parts = [b'{"a": 1}\n{"b"', b': 2}\n', long.encode() + b"\n", b"caf\xc3", b"\xa9 \xff\n",
             b"last without newline"]
    r, w = os.pipe()
    os.set_blocking(r, False)

    def feed() -> None:
        with os.fdopen(w, "wb", buffering=0) as pipe:
            for part in parts:
                pipe.write(part)

    feeder = threading.Thread(target=feed)
    feeder.start()
    with anyio.fail_after(30):
        lines = [line async for line in Lines(r)]
    feeder.join()
    os.close(r)
    assert lines == ['{"a": 1}', '{"b": 2}', long, "café \ufffd", "last without newline"]

    r, w = os.pipe()
    os.set_blocking(w, False)
    received = bytearray()

    def drain() -> None:
        with os.fdopen(r, "rb", buffering=0) as pipe:
            while chunk := pipe.read(4096):
                received.extend(chunk)
                time.sleep(0.001)

    reader = threading.Thread(target=drain)
    reader.start()
    text_out = "é" * 300_000 + "\n"
    with anyio.fail_after(30):
        await Writer(w).write(text_out)
        await Writer(w).flush()
    os.close(w)
    reader.join(30)
    assert received.decode() == text_out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"ra mcp exited early: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"ra mcp did not listen on port {port} within {seconds}s")


class Served:
    """``ra mcp`` on a free loopback port in a child process, stopped on exit."""

    def __init__(self, transport: str, project: Path) -> None:
        self.port = _free_port()
        self.argv = [str(RA), "mcp", "--transport", transport, "--port", str(self.port),
                     "-C", str(project)]
        self.cwd = project.parent  # the project is named by -C, not by the working dir

    def __enter__(self) -> Served:
        self.proc = subprocess.Popen(self.argv, cwd=self.cwd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        try:
            _wait_for_port(self.port, self.proc, 30)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()


def _post_with_host(port: int, path: str, host: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body="{}", headers={
            "Host": host, "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"})
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.skipif(not RA.exists(), reason="the ra executable is not installed beside python")
async def test_http_end_to_end_on_loopback(project):
    with Served("http", project) as served:
        with anyio.fail_after(E2E_SECONDS):
            async with Client(f"http://127.0.0.1:{served.port}/mcp") as client:
                found = await client.call_tool("search", {"queries": "logging conventions"})
                chunk = await client.call_tool("get", {"id": "docs:guide.md#logging"})
        rebinding = _post_with_host(served.port, "/mcp", "evil.example:80")
    assert not found.is_error, text(found)
    assert found.structured_content["queries"][0]["results"][0]["id"] == "docs:guide.md#logging"
    assert chunk.structured_content["content"].startswith("## Logging")
    assert rebinding == 421  # a foreign Host header is refused (DNS rebinding)


@pytest.mark.skipif(not RA.exists(), reason="the ra executable is not installed beside python")
async def test_sse_end_to_end_on_loopback(project):
    from mcp.client.sse import sse_client

    with Served("sse", project) as served:
        with anyio.fail_after(E2E_SECONDS):
            async with Client(sse_client(f"http://127.0.0.1:{served.port}/sse")) as client:
                found = await client.call_tool("search", {"queries": ["logging", "rust"]})
        rebinding = _post_with_host(served.port, "/messages/", "evil.example:80")
    assert [t["query"] for t in found.structured_content["queries"]] == ["logging", "rust"]
    assert rebinding == 421
