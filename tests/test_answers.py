"""Answers an agent can act on, in every surface: each problem found by trying ra as a new
user and as an agent over MCP (issue 16's measured list) has its test here.

- a token budget too small for any result says so, with what the smallest needs, and
  lists what it can as ids and titles; it never reads "no results";
- the MCP tools answer within a default budget, say when they cut, and declare their
  output schema; ``list_sources`` reports a configuration it cannot read;
- an unknown tree is an error listing the trees, from ``--tree``, ``tree:`` and MCP;
- a query may start with ``-``;
- configuration: misspelled keys get a suggestion, ``ra check`` says each problem once,
  no trees and overlapping trees are warnings;
- polish: ``--json`` ends with a newline, counts agree with their nouns, ``ra init``
  writes no placeholder URL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from ra.cli.app import main
from ra.serve.mcp import create_server

LONG = "# Docker\n\n" + "Run the docker deploy with care. " * 1000 + "\n"  # ~7k tokens
NOTES = {
    "deploy.md": "# Deploy\n\nHow to deploy the app without containers.\n\n"
                 "## Docker deploy\n\nDeploy with docker compose.\n",
    "docker.md": LONG,
    "guide.md": "# Guide\n\nStart here: install, configure, deploy.\n",
}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs").mkdir()
    for name, text in NOTES.items():
        (tmp_path / "docs" / name).write_text(text)
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- budgets ----------------------------------------------------------------------------

def test_a_budget_too_small_for_any_result_says_what_matched(project, capsys):
    code, out, _ = run(capsys, "search", "docker", "--max-tokens", "3")
    assert code == 0 and "no results" not in out
    assert "match 'docker', but none fits in 3 tokens: the smallest needs" in out
    code, out, _ = run(capsys, "search", "docker", "--max-tokens", "3", "--json")
    topic = json.loads(out)["queries"][0]
    assert topic["total_matches"] >= 2 and topic["results"] == []
    assert topic["omitted"] >= 1 and topic["smallest_omitted_tokens"] > 3
    assert json.loads(out)["truncated"] is True


def test_results_that_do_not_fit_are_listed_as_ids_and_titles(project, capsys):
    # 80 tokens: the closing line that says what was cut takes 56 of them (it was 9
    # before that line counted)
    code, out, _ = run(capsys, "search", "docker", "--max-tokens", "80", "--json")
    data = json.loads(out)
    results = data["queries"][0]["results"]
    assert results and all(r["tier"] == "ref" and r["snippet"] == "" for r in results)
    assert "content" not in results[0] and data["tokens_used"] <= 80
    code, out, _ = run(capsys, "search", "docker", "--max-tokens", "80")
    assert f"{results[0]['id']}  {results[0]['title']}" in out
    assert "cut to fit:" in out and "as id and title" in out


# --- MCP ----------------------------------------------------------------------------------

pytestmark_anyio = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_search_applies_a_default_budget_and_says_it_cut(project):
    async with Client(create_server(project)) as client:
        result = await client.call_tool("search", {"queries": "docker", "limit": 1})
        wide = await client.call_tool("search", {"queries": "docker", "limit": 1,
                                                 "max_tokens": 100_000})
    data = result.structured_content
    assert data["max_tokens"] == 4000 and data["tokens_used"] <= 4000
    assert data["truncated"] and data["queries"][0]["results"][0]["tier"] == "list"
    assert "the max_tokens argument" in result.content[0].text
    assert len(result.content[0].text) < 4000 * 4
    assert wide.structured_content["queries"][0]["results"][0].get("tier") is None


@pytest.mark.anyio
async def test_mcp_budget_default_is_configurable(project):
    (project / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[mcp]\nmax_tokens = 50\n')
    async with Client(create_server(project)) as client:
        result = await client.call_tool("search", {"queries": "deploy"})
        context = await client.call_tool("context", {"files": ["docs/guide.md"]})
    assert result.structured_content["max_tokens"] == 50
    assert context.structured_content["max_tokens"] == 50


@pytest.mark.anyio
async def test_every_mcp_tool_declares_its_output_schema(project):
    async with Client(create_server(project)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        got = await client.call_tool("get", {"id": "docs:deploy.md", "links": True})
    for name in ("search", "context", "get", "list_sources"):
        schema = tools[name].output_schema
        assert schema and schema["type"] == "object" and schema["properties"], name
    assert {"queries", "truncated"} <= set(tools["search"].output_schema["properties"])
    assert "links" in tools["get"].output_schema["properties"]
    assert "errors" in tools["list_sources"].output_schema["properties"]
    assert not got.is_error and got.structured_content["linked"] == []


@pytest.mark.anyio
async def test_list_sources_reports_a_configuration_it_cannot_read(project):
    async with Client(create_server(project)) as client:
        good = await client.call_tool("list_sources", {})
        (project / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[settings\n')
        bad = await client.call_tool("list_sources", {})
        search = await client.call_tool("search", {"queries": "deploy"})
        (project / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
        fixed = await client.call_tool("search", {"queries": "deploy"})
    assert good.structured_content["errors"] == []
    errors = bad.structured_content["errors"]
    assert errors and "invalid TOML" in errors[0] and ".ra.toml" in errors[0]
    assert "\nerror: " in bad.content[0].text and "error: error:" not in bad.content[0].text
    assert "(last good configuration)" in bad.content[0].text
    # the tools keep serving the last configuration that could be read, and say so: an
    # editor saving a half-written .ra.toml had made every search an error until fixed
    assert not search.is_error and search.structured_content["queries"][0]["results"]
    first = search.content[0].text.splitlines()[0]
    assert first.startswith("warning: ") and "invalid TOML" in first and ".ra.toml" in first
    assert "last configuration that could be read" in first
    assert not fixed.is_error and not fixed.content[0].text.startswith("warning: ")


@pytest.mark.anyio
async def test_an_unknown_tree_is_an_error_listing_the_trees_over_mcp(project):
    async with Client(create_server(project)) as client:
        by_option = await client.call_tool("search", {"queries": "deploy", "trees": ["nope"]})
        by_query = await client.call_tool("search", {"queries": "tree:nope deploy"})
    for result in (by_option, by_query):
        assert result.is_error and "no tree named 'nope'; trees: docs" in result.content[0].text


# --- the CLI ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["search", "deploy", "--tree", "nope"],
    ["search", "tree:nope deploy"],
    ["search", "deploy", "-t", "docs", "-t", "nope", "--json"],
    ["context", "docs/guide.md", "--tree", "nope"],
    ["ls", "docs", "--tree", "nope"],
])
def test_an_unknown_tree_is_an_error_listing_the_trees(project, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert "no tree named 'nope'; trees: docs" in err


@pytest.mark.parametrize("argv", [
    ["search", "-docker deploy"],
    ["search", "-docker", "deploy", "--json"],  # two topics: the first is all negation
    ["search", "-n", "1", "-docker deploy", "-vv"],
    ["search", "--list", "--", "-docker deploy"],
])
def test_a_query_may_start_with_a_dash(project, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert "No such option" not in err
    if argv[1:3] == ["-docker", "deploy"]:  # '-docker' alone would exclude everything:
        topics = json.loads(out)["queries"]  # it names the flag, and is searched for
        assert code == 0 and topics[0]["query"] == "-docker"
        assert topics[0]["note"] == ("-docker alone would exclude every chunk; searched "
                                     "for it as written")
        assert topics[0]["results"][0]["id"].startswith("docs:docker.md")
        return
    assert code == 0 and "deploy" in out and "docs:docker.md" not in out  # docker excluded


def test_a_query_of_only_not_is_still_an_error(project, capsys):
    code, _, err = run(capsys, "search", "NOT docker")  # NOT in capitals is meant
    assert code == 2 and "not negated" in err


def test_an_unknown_long_option_is_a_query(project, capsys):
    """``ra search --no-dev``: an agent looking up a flag of the tool it documents. Only
    a near miss of one of ra's own options (next test) is taken for a typo."""
    code, out, err = run(capsys, "search", "--list", "--containers")
    assert code == 0 and "No such option" not in err
    assert out.startswith("docs:deploy.md")


def test_an_argument_with_a_space_is_a_query_even_after_two_dashes(project, capsys):
    """'--base option' (an agent asking about a command-line flag) is no option."""
    code, out, err = run(capsys, "search", "--list", "--deploy guide")
    assert "No such option" not in err
    assert code == 0 and "deploy" in out.lower()
    code, _, err = run(capsys, "search", "deploy", "--limit=2 x")  # a value may hold one
    assert code == 2 and "'2 x' is not a valid int" in err


def test_an_unknown_option_is_still_an_error_with_suggestions(project, capsys):
    code, _, err = run(capsys, "search", "deploy", "--limt", "3")
    assert code == 2 and "No such option: --limt" in err and "--limit" in err
    assert "to search for --limt itself, put it after --: ra search -- --limt" in err
    code, out, _ = run(capsys, "search", "--list", "--", "--limt")
    assert code == 0 and "no results for '--limt'" in out


def test_json_output_ends_with_a_newline(project, capsys):
    for argv in (["search", "deploy", "--json"], ["context", "docs/guide.md", "--json"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and out.endswith("}\n"), argv


def test_counts_agree_with_their_nouns(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "one.md").write_text("# One\n\nText.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\nexlude = []\n')
    monkeypatch.chdir(tmp_path)
    _, _, err = run(capsys, "update")
    assert "indexed 1 file into 2 chunks" in err
    _, out, _ = run(capsys, "status")
    assert ": 1 document, 2 chunks" in out
    code, _, err = run(capsys, "check")
    assert code == 1 and err.rstrip().endswith("0 errors, 1 warning")
    _, _, err = run(capsys, "search", "one")
    (tmp_path / "docs" / "one.md").write_text("# One\n\nText again.\n")
    _, _, err = run(capsys, "search", "one")
    assert "(1 file, 2 chunks," in err


def test_ra_check_reports_each_problem_once(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\nexlude = ["x"]\n'
                                       "[settings]\ndefault_limt = 3\n[serch]\nfuzzy = true\n")
    monkeypatch.chdir(tmp_path)
    run(capsys, "update")
    code, _, err = run(capsys, "check")
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert code == 1 and len(warnings) == len(set(warnings)) == 3
    assert err.rstrip().endswith("0 errors, 3 warnings")
    assert "(did you mean 'exclude'?)" in err and "(did you mean 'default_limit'?)" in err
    assert "[serch]: unknown key; ignored (did you mean 'search'?)" in err


def test_ra_check_reports_what_the_build_said_about_documents(tmp_path, monkeypatch, capsys):
    """A build warns about invalid frontmatter once; ``ra check`` keeps saying so (from
    the manifest), also after an incremental update of another file."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("---\ndescription: a: b\n---\n# A\n\nText.\n")
    (tmp_path / "docs" / "b.md").write_text("# B\n\nText.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    _, _, err = run(capsys, "update")
    assert "docs:a.md: frontmatter: invalid YAML" in err
    (tmp_path / "docs" / "b.md").write_text("# B\n\nOther text.\n")
    run(capsys, "update")
    code, _, err = run(capsys, "check")
    assert code == 1 and err.count("docs:a.md: frontmatter: invalid YAML") == 1
    assert err.rstrip().endswith("0 errors, 1 warning")


def test_no_trees_is_a_warning_not_a_silent_empty_answer(tmp_path, monkeypatch, capsys):
    (tmp_path / ".ra.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "search", "anything")
    assert "no trees configured" in err
    code, _, err = run(capsys, "check")
    assert code == 1 and err.count("no trees configured") == 1


def test_two_trees_over_one_folder_are_a_warning(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n'
                                       '[tree.all]\npath = "."\n'
                                       '[tree.readme]\npath = "."\ninclude = ["README.md"]\n')
    monkeypatch.chdir(tmp_path)
    _, _, err = run(capsys, "search", "text")
    overlaps = [line for line in err.splitlines() if "overlaps" in line]
    assert len(overlaps) == 1 and "[tree.docs]: overlaps tree 'all'" in overlaps[0]


def test_a_hidden_rule_folder_inside_a_tree_is_no_overlap(tmp_path, monkeypatch, capsys):
    """A project whose docs are its whole folder, with Claude Code's skills: ``ra init``
    makes ``.claude/skills`` a tree beside the tree ".", whose walks skip hidden folders.
    Nothing is indexed twice, and no command warns that it is (each one did, found on
    Mintlify's docs); a tree that spells the hidden folder out still overlaps."""
    skill = tmp_path / ".claude" / "skills" / "docs-writer"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: docs-writer\n---\n\n# Writing docs\n\nTone.\n")
    (tmp_path / "intro.mdx").write_text("# Introduction\n\nWelcome.\n")
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert "[tree.claude-skills]" in (tmp_path / ".ra.toml").read_text()
    capsys.readouterr()
    code, out, err = run(capsys, "search", "tone")
    assert code == 0 and "overlaps" not in err and "claude-skills:docs-writer/SKILL.md" in out
    code, out, _ = run(capsys, "sql", "select count(*) from files")
    assert code == 0 and "2" in out.split()
    (tmp_path / ".ra.toml").write_text(
        '[tree.all]\npath = "."\ninclude = ["**/*.mdx", ".claude/**/*.md"]\n'
        '[tree.skills]\npath = "./.claude/skills"\n')
    _, _, err = run(capsys, "search", "tone")
    assert "[tree.skills]: overlaps tree 'all'" in err


def test_ra_init_writes_no_placeholder_url(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    written = (tmp_path / ".ra.toml").read_text()
    assert "https://" not in written and "http://" not in written
    assert "[mcp]" in written
