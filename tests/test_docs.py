"""The examples in docs/ and the README run: every SQL, shell, TOML and JSON example is
executed or parsed here against a real index of ra's own knowledge base (docs/ and the
README).

Command examples are found in the markdown itself (fenced ``sh`` blocks and the README's
indented blocks), so a new example is tested as soon as it is written. The README's tour
and every example in docs/ run on ra's own documentation and promise results: a search
must answer every topic with results, ``get`` a chunk, ``ls`` a listing, SQL a row. The
README's sections on your own documents and on the daemon run too (exit 0) where they
can run in a test. Code in the middle of a sentence is a mention, not an example."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tomllib
from pathlib import Path

import duckdb
import pytest

from ra.cli.app import main
from ra.config.settings import load_config, parse_config_text
from ra.index.freshness import open_index
from ra.query.sql import run_sql

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def blocks(name: str, lang: str) -> list[str]:
    text = (DOCS / name).read_text()
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def _commands(text: str) -> list[str]:
    """Command lines of the shell examples of a markdown text: fenced ``sh``/``bash``
    blocks and indented blocks, comments (`` # …``) dropped."""
    code = re.findall(r"```(?:sh|bash|shell)\n(.*?)```", text, flags=re.S)
    code += re.findall(r"(?:^|\n\n)((?: {4}[^\n]*\n)+)", text)
    lines = (re.sub(r"\s+#\s.*$", "", ln).strip() for block in code
             for ln in block.splitlines())
    return [ln for ln in lines if ln]


def _readme_part(start: str, end: str | None) -> str:
    readme = (REPO / "README.md").read_text()
    return readme[readme.index(start):readme.index(end) if end else None]


#: (where, command) for every ra command of the docs and the README; the README's tour
#: and docs/ promise results on ra's own documentation.
PROMISING = [(f"docs/{p.name}", c) for p in sorted(DOCS.glob("*.md"))
             for c in _commands(p.read_text()) if c.startswith("ra ")]
PROMISING += [("README tour", c) for c in _commands(
    _readme_part("## A short tour", "## Using ra on your own")) if c.startswith(".venv/bin/ra ")]
#: README commands for your own documents: they run here, results are not promised.
RUNNING = [("README", c) for c in _commands(_readme_part("## Using ra on your own", None))
           if c.startswith("ra ")]
def _argv(command: str) -> list[str]:
    return shlex.split(command)[1:]


#: Commands a test cannot run as written, and why.
NOT_RUN = {"daemon": "starts a background server (tests/test_daemon.py covers it)",
           "mcp": "serves until stopped (tests/test_server.py covers it)"}


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    """A copy of ra's own knowledge base, indexed."""
    root = tmp_path_factory.mktemp("kb")
    shutil.copytree(DOCS, root / "docs")
    shutil.copy(REPO / "README.md", root / "README.md")
    shutil.copy(REPO / ".ra.toml", root / ".ra.toml")
    config = load_config(root)
    reader, _ = open_index(config)
    yield root, config, reader
    reader.close()


def test_docs_have_examples():
    assert len(blocks("sql.md", "sql")) >= 3
    assert blocks("query-language.md", "sh")
    assert blocks("configuration.md", "toml")
    assert blocks("mcp.md", "json")


def test_the_knowledge_base_has_no_warnings(kb, capsys, monkeypatch):
    """ra's own documents read cleanly: docs/semantic.md's description once held an
    unquoted ': ', invalid YAML, and every build warned about it."""
    root, _, _ = kb
    monkeypatch.chdir(root)
    code = main(["check"])
    out = capsys.readouterr()
    assert code == 0 and "0 errors, 0 warnings" in out.out + out.err, out


def test_sql_count_equals_ls_chunks(kb, capsys, monkeypatch):
    root, _, _ = kb
    monkeypatch.chdir(root)
    assert main(["sql", "--json", "select count(*) as n from chunks"]) == 0
    n = json.loads(capsys.readouterr().out)[0]["n"]
    assert main(["ls", "chunks", "--json"]) == 0
    assert n == len(json.loads(capsys.readouterr().out)) > 0


@pytest.mark.parametrize("example", blocks("configuration.md", "toml"))
def test_configuration_examples_parse(example, tmp_path):
    source = tmp_path / ".ra.toml"
    source.write_text(example)
    tomllib.loads(example)
    parse_config_text(example, source)


def test_mcp_registration_snippet_is_valid_json():
    snippet = json.loads(blocks("mcp.md", "json")[0])
    server = snippet["mcpServers"]["ra"]
    assert server["command"] == "ra" and server["args"] == ["mcp"]


def test_readme_mcp_snippet_matches():
    readme = (REPO / "README.md").read_text()
    snippet = json.loads(re.findall(r"```json\n(.*?)```", readme, flags=re.S)[0])
    assert snippet["mcpServers"]["ra"]["args"] == ["mcp"]


def test_examples_are_found():
    wheres = {w for w, _ in PROMISING}
    assert {"README tour", "docs/query-language.md"} <= wheres
    assert len([c for w, c in PROMISING if w == "README tour"]) >= 7
    assert any(c.startswith("ra init") for _, c in RUNNING)
    # the commands not run here are the daemon's and the MCP server's, tested elsewhere
    assert {_argv(c)[0] for _, c in PROMISING + RUNNING} - {
        _argv(c)[0] for _, c in _runnable(PROMISING + RUNNING)} <= set(NOT_RUN)


def _runnable(examples: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(w, c) for w, c in examples if _argv(c)[0] not in NOT_RUN]


@pytest.mark.parametrize("where, command", _runnable(PROMISING), ids=lambda v: v[:60])
def test_documented_commands_return_results(kb, where, command, capsys, monkeypatch):
    root, _, _ = kb
    monkeypatch.chdir(root)
    argv = _argv(command)
    if argv[0] == "search":  # every topic answered with results
        code = main([*argv, *([] if "--json" in argv else ["--json"])])
        out, err = capsys.readouterr()
        assert code == 0, (command, err)
        topics = json.loads(out)["queries"]
        assert all(t["results"] for t in topics), (command, [t["query"] for t in topics
                                                             if not t["results"]])
        return
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, (command, err)
    assert out.strip(), f"{command}: printed nothing"
    if argv[0] == "get":
        assert out.startswith("─── ")


@pytest.mark.parametrize("where, command", _runnable(RUNNING), ids=lambda v: v[:60])
def test_readme_commands_for_your_own_documents_run(kb, where, command, capsys, monkeypatch,
                                                    tmp_path):
    root, _, _ = kb
    argv = _argv(command)
    monkeypatch.chdir(tmp_path if argv[0] == "init" else root)  # init writes a .ra.toml
    assert main(argv) == 0, (command, capsys.readouterr().err)


@pytest.mark.parametrize("query", [q for p in sorted(DOCS.glob("*.md"))
                                   for q in re.findall(r"```sql\n(.*?)```", p.read_text(),
                                                       flags=re.S)],
                         ids=lambda q: q.split("\n")[0][:40])
def test_every_sql_example_returns_rows(kb, query):
    _, _, reader = kb
    assert run_sql(reader, query).rows, query


def test_every_duckdb_example_runs(kb):
    root, config, reader = kb
    gen = reader.generation.path
    texts = [p.read_text() for p in sorted(DOCS.glob("*.md"))]
    commands = [re.search(r'duckdb -c "(.*)"', c).group(1)
                for t in texts for c in _commands(t) if c.startswith("duckdb -c")]
    assert len(commands) >= 4
    for command in commands:
        assert duckdb.sql(command.replace("$gen", str(gen))).fetchall(), command
