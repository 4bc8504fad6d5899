"""The examples in docs/ run: every SQL, shell, TOML and JSON example is executed or
parsed here against a real index of ra's own knowledge base (docs/ and the README)."""

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
from ra.config import load_config, parse_config_text
from ra.freshness import open_index
from ra.sql import run_sql

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def blocks(name: str, lang: str) -> list[str]:
    text = (DOCS / name).read_text()
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


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


@pytest.mark.parametrize("query", blocks("sql.md", "sql"), ids=lambda q: q.split("\n")[0][:40])
def test_sql_examples_run(kb, query):
    _, _, reader = kb
    result = run_sql(reader, query)
    assert result.columns


def test_plain_duckdb_examples_run(kb):
    root, config, reader = kb
    gen = reader.generation.path
    script = blocks("sql.md", "sh")[0]
    commands = re.findall(r'duckdb -c "(.*)"', script)
    assert len(commands) == 3
    for command in commands:
        sql = command.replace("$gen", str(gen))
        assert duckdb.sql(sql).fetchall() is not None


def test_sql_count_equals_ls_chunks(kb, capsys, monkeypatch):
    root, _, _ = kb
    monkeypatch.chdir(root)
    assert main(["sql", "--json", "select count(*) as n from chunks"]) == 0
    n = json.loads(capsys.readouterr().out)[0]["n"]
    assert main(["ls", "chunks", "--json"]) == 0
    assert n == len(json.loads(capsys.readouterr().out)) > 0


@pytest.mark.parametrize("line", [ln for b in blocks("query-language.md", "sh")
                                  for ln in b.splitlines() if ln.startswith("ra search")])
def test_query_language_examples_run(kb, line, capsys, monkeypatch):
    root, _, _ = kb
    monkeypatch.chdir(root)
    assert main(shlex.split(line)[1:]) == 0, capsys.readouterr().err


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


def test_readme_tour_commands_run(kb, capsys, monkeypatch):
    root, _, _ = kb
    monkeypatch.chdir(root)
    readme = (REPO / "README.md").read_text()
    tour = readme[readme.index("## A short tour"):readme.index("## Using ra on your own")]
    lines = [ln.strip().split("#")[0].strip() for ln in tour.splitlines()
             if ln.strip().startswith(".venv/bin/ra ")]
    assert len(lines) >= 5
    for line in lines:
        code = main(shlex.split(line)[1:])
        assert code == 0, (line, capsys.readouterr().err)
