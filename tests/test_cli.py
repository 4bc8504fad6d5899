"""The command line, in process: isolated HOME (conftest) and working directory (chdir).

Each test runs ``ra.cli.app.main(argv)`` and reads what it printed, so these exercise the
same code path as the installed ``ra`` script, errors translated at the border included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import GUIDE
from ra.cli.app import SYNONYMS, app, main
from ra.config.settings import load_config


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "guide.md").write_text(GUIDE)
    (tmp_path / "docs" / "sub" / "notes.txt").write_text("Plain notes about rust ownership.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_has_help_with_an_example(capsys):
    names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert {"search", "get", "update", "status", "check", "init", "config", "ls",
            "inspect"} <= set(names)
    for name in names:
        code, out, _ = run(capsys, name, "--help")
        assert code == 0, name
        assert "Example" in out, f"`ra {name} --help` shows no example"


@pytest.mark.parametrize(("typed", "meant"), [("index", "update"), ("list", "ls"),
                                              ("serch", "search"), ("REINDEX", "update")])
def test_an_unknown_command_says_which_command_was_meant(tmp_path, monkeypatch, capsys,
                                                          typed, meant):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, typed)
    assert code == 2 and out == ""
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in err
    assert "Traceback" not in err


def test_a_file_where_inspect_wants_a_subcommand_says_which(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "inspect", "docs/guide.md")
    assert code == 2 and out == ""
    assert "Did you mean 'ra inspect doc docs/guide.md'?" in err
    assert "Did you mean" not in run(capsys, "inspect", "nothing")[2]


def test_commands_in_one_process_share_one_click_command(project, capsys, monkeypatch):
    """The daemon runs every forwarded command through ``main`` in one process: typer's
    click command (every command's signature and type hints read) is built once, not per
    command, and serves each as the first."""
    import typer.main

    import ra.cli.app

    built = []
    real = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda a: built.append(a) or real(a))
    ra.cli.app.command.cache_clear()
    answers = [run(capsys, "search", "--list", "logging")[:2] for _ in range(3)]
    assert len(built) == 1
    assert answers[0][0] == 0 and "guide.md" in answers[0][1]
    assert answers == [answers[0]] * 3
    assert run(capsys, "serch")[0] == 2 and run(capsys, "ls")[0] == 0  # others, after it


def test_every_synonym_names_a_command():
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert set(SYNONYMS.values()) <= names
    assert not set(SYNONYMS) & names


def test_search_full_output(project, capsys):
    code, out, err = run(capsys, "search", "logging conventions")
    assert code == 0
    assert out.startswith("─── docs:guide.md#logging ───\n")
    assert "Getting Started › Installation › Logging" in out
    assert "Configure logging conventions here." in out
    assert "\x1b[" not in out  # not a terminal: no ANSI
    assert "built the index" in err


def test_search_json_shape(project, capsys):
    code, out, _ = run(capsys, "search", "logging", "rust ownership", "--json")
    assert code == 0
    data = json.loads(out)
    assert [q["query"] for q in data["queries"]] == ["logging", "rust ownership"]
    first = data["queries"][0]
    assert first["match"] == "all" and first["total_matches"] >= 1
    result = first["results"][0]
    assert {"id", "tree", "path", "title", "breadcrumb", "score", "snippet", "content",
            "tokens"} <= set(result)
    assert data["max_tokens"] == 4000 and data["tokens_used"] > 0


def test_search_list_omits_content(project, capsys):
    code, out, _ = run(capsys, "search", "logging", "--list", "--json")
    result = json.loads(out)["queries"][0]["results"][0]
    assert code == 0 and "content" not in result and "**logging**" in result["snippet"].lower()


def test_search_matches_shows_line_numbers(project, capsys):
    code, out, _ = run(capsys, "search", "conventions", "--matches")
    assert code == 0
    # "Configure logging conventions here." is line 18 of the file.
    assert "   18: Configure logging **conventions** here." in out


def test_invalid_query_syntax_is_searched_as_words_with_a_note(project, capsys):
    code, out, err = run(capsys, "search", '"error handling')
    assert code == 0 and "error" not in err
    assert out.startswith("(note: not valid query syntax (unclosed quote at character 1); "
                          "searched for its words instead")
    assert "Use Result types for error handling in Rust." in out
    code, out, _ = run(capsys, "search", '"error handling', "--json")
    topic = json.loads(out)["queries"][0]
    assert code == 0 and "unclosed quote" in topic["note"] and topic["results"]


def test_strict_query_syntax_error_shows_caret_and_exits_2(project, capsys):
    code, out, err = run(capsys, "search", '"error handling', "--strict")
    assert code == 2 and out == ""
    assert "query syntax error: unclosed quote" in err
    assert "  \"error handling\n  ^" in err
    assert "hint:" in err and "Traceback" not in err


def test_get_chunk_and_unknown_id(project, capsys):
    code, out, _ = run(capsys, "get", "docs:guide.md#logging", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "docs:guide.md#logging"
    assert data["content"].startswith("## Logging")
    code, out, err = run(capsys, "get", "docs:guide.md#loging")
    assert code == 1 and "did you mean" in err and "docs:guide.md#logging" in err


@pytest.mark.parametrize("path, meant", [
    ("docs/guide.md", "docs:guide.md"),  # from the project: the folder holds the tree
    ("guide.md#logging", "docs:guide.md#logging"),  # from the tree's folder
    ("docs/guide.md#nothing", "docs:guide.md"),  # an anchor it lacks: the document
    ("docs/sub/notes.txt", "docs:sub/notes.txt"),
])
def test_get_of_a_path_says_the_id_it_means(project, capsys, path, meant):
    """An agent gives the path of the file it has open; it was "not an id" alone."""
    code, _, err = run(capsys, "get", path)
    assert code == 2 and "not an id (expected tree:path)" in err
    assert err.split("did you mean:\n")[1].split() == [meant]


def test_get_of_a_path_outside_the_index_suggests_nothing(project, capsys):
    for path in ("missing.md", "../../etc/passwd", ".ra.toml"):
        code, _, err = run(capsys, "get", path)
        assert code == 2 and "did you mean" not in err


def test_get_reads_an_anchor_copied_from_a_browser(tmp_path, monkeypatch, capsys):
    """A browser shows ``#翻译须知`` as ``#%E7%BF%BB%E8%AF%91%E9%A1%BB%E7%9F%A5``; an agent
    that copies the address gets the section, not "no chunk with id"."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# 指南\n\n## 翻译须知\n\n先读这里。\n\n"
                                                "## Set up & run\n\nSteps.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "get", "docs:guide.md#%E7%BF%BB%E8%AF%91%E9%A1%BB%E7%9F%A5")
    assert code == 0 and out.startswith("─── docs:guide.md#翻译须知 ───")
    assert run(capsys, "get", "docs:guide.md#%E4%B8%8D%E5%9C%A8")[0] == 1  # 不在: none


def test_get_cuts_a_chunk_larger_than_the_budget_to_its_own_text_and_sections(
        tmp_path, monkeypatch, capsys):
    """A KEP's page is 15,000 tokens; ``ra get ID --max-tokens 500`` gave all of them.
    A chunk larger than a budget given comes as its own text (cut at a line when even
    that is too large) and its sections by id while they fit, and says so."""
    (tmp_path / "docs").mkdir()
    intro = "".join(f"Line {i} of the introduction says something.\n" for i in range(40))
    sections = "".join(f"## Part {i}\n\n" + "Words of this part. " * 60 + "\n\n"
                       for i in range(30))
    (tmp_path / "docs" / "kep.md").write_text(f"# KEP-1: Big\n\n{intro}\n{sections}")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "get", "docs:kep.md#kep-1-big", "--max-tokens", "600",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["max_tokens"] == 600 and data["tokens"] <= 600
    cut = data["cut"]
    assert cut["tokens"] > 9_000 and not cut["own_cut"]
    assert data["content"].startswith("# KEP-1: Big") and "Line 39" in data["content"]
    assert "## Part 0" not in data["content"]
    assert cut["sections"][0] == {"id": "docs:kep.md#part-0", "title": "Part 0",
                                  "depth": 2, "tokens": cut["sections"][0]["tokens"]}
    assert 0 < len(cut["sections"]) < 30 and cut["more"] == 30 - len(cut["sections"])
    lines = (tmp_path / "docs" / "kep.md").read_text().splitlines()  # where the rest is
    assert lines[cut["more_line"] - 1] == f"## Part {len(cut['sections'])}"
    code, out, _ = run(capsys, "get", "docs:kep.md#kep-1-big", "--max-tokens", "200")
    end = len((tmp_path / "docs" / "kep.md").read_text().splitlines())
    shown = re.search(r"lines 1–(\d+) of kep\.md above", out)
    last = int(shown[1])  # the note, counted, leaves room for the first lines only
    assert 3 < last < 30 and f"Line {last - 3} of" in out and f"Line {last - 2} of" not in out
    assert (f"lines 1–{last} of kep.md above (docs:kep.md#kep-1-big is lines 1–{end}); `ra "
            f"get docs:kep.md#kep-1-big --from-line {last + 1}` reads on" in out)
    from ra.text.tokens import count_tokens

    assert count_tokens(out) <= 200  # as printed, the lines above and the note below too
    code, out, _ = run(capsys, "get", "docs:kep.md#part-3", "--max-tokens", "600", "--json")
    assert "cut" not in json.loads(out)  # it fits: as before
    code, out, _ = run(capsys, "get", "docs:kep.md#kep-1-big", "--max-tokens", "0", "--json")
    assert "cut" not in json.loads(out)  # no budget: the whole chunk
    # without --max-tokens, [search] max_tokens (4000): the OpenAPI spec's "Objects and
    # Fields" (55,000 tokens) came whole, as a zettelkasten's generated index (196 KB)
    code, out, _ = run(capsys, "get", "docs:kep.md#kep-1-big", "--json")
    assert json.loads(out)["max_tokens"] == 4000 and json.loads(out)["cut"]["more"] >= 0
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[search]\n'
                                       'max_tokens = 0\n')
    code, out, _ = run(capsys, "get", "docs:kep.md#kep-1-big", "--json")
    assert "cut" not in json.loads(out)


def test_get_reads_a_chunk_larger_than_the_budget_a_page_at_a_time(
        tmp_path, monkeypatch, capsys):
    """A page of 1,500 bullets under one heading (an outliner's, a changelog's) is one
    chunk of 30,000 tokens: ``ra get`` gave its first 216 lines within 4,000 tokens and
    no way to the rest but a budget of 30,000. The cut says which lines of the file it
    gave, and ``--from-line`` reads on from the next, page after page, to its end."""
    (tmp_path / "docs").mkdir()
    items = "".join(f"- item {i}: the words of bullet number {i} of the list\n"
                    for i in range(1500))
    (tmp_path / "docs" / "log.md").write_text(f"---\ntitle: Log\n---\n# Log\n\n{items}")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    lines = (tmp_path / "docs" / "log.md").read_text().splitlines()
    code, out, _ = run(capsys, "get", "docs:log.md#log", "--max-tokens", "800", "--json")
    data = json.loads(out)
    assert code == 0 and data["cut"]["own_cut"] and data["tokens"] <= 800
    page = data["lines"]
    assert (page["first"], page["start"], page["end"]) == (4, 4, 1505)  # after front matter
    assert data["content"].splitlines() == lines[3:page["last"]]  # the file's lines
    seen, pages, line = [], 0, page["next"]
    seen += data["content"].splitlines()
    while line is not None:  # each page within the budget, each line once, in order
        code, out, _ = run(capsys, "get", "docs:log.md#log", "--max-tokens", "800",
                           "--from-line", str(line), "--json")
        data = json.loads(out)
        assert code == 0 and data["tokens"] <= 800 and data["lines"]["first"] == line
        seen += data["content"].splitlines()
        line, pages = data["lines"]["next"], pages + 1
    assert seen == lines[3:] and 10 < pages < 40
    code, out, _ = run(capsys, "get", "docs:log.md#log", "--max-tokens", "800")
    assert "lines 4–" in out and "`ra get docs:log.md#log --from-line " in out
    code, out, _ = run(capsys, "get", "docs:log.md#log", "--from-line", "1400")
    assert out.rstrip().endswith("(docs:log.md#log is lines 4–1505): its end]")
    assert "- item 1394:" in out and "- item 1393:" not in out  # line 6 is item 0
    code, out, _ = run(capsys, "get", "docs:log.md", "--from-line", "1")  # before its text
    assert "- item 0:" in out and code == 0
    code, _, err = run(capsys, "get", "docs:log.md#log", "--from-line", "1506")
    assert code == 1 and "is lines 4–1505 of log.md: line 1506 is past its end" in err
    assert "Traceback" not in err


def test_search_keeps_to_a_default_budget_that_config_and_the_option_change(
        tmp_path, monkeypatch, capsys):
    """A style guide of one file (airbnb's: 35,000 tokens) came whole for a query its
    sections answer: ``ra search`` keeps to ``[search] max_tokens`` (4000) as the MCP
    tools keep to theirs, a page larger than it given as its best matching section;
    ``--max-tokens 0`` or ``max_tokens = 0`` is no budget."""
    (tmp_path / "docs").mkdir()
    rules = "".join(f"## Rule {i}\n\n" + "Prefer plain words over jargon. " * 80 + "\n\n"
                    for i in range(20))
    (tmp_path / "docs" / "guide.md").write_text(
        f"# Style guide\n\nPrefer template literals.\n\n{rules}## Strings\n\nUse template "
        "literals, not string concatenation.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "search", "prefer template literals jargon", "--json")
    data = json.loads(out)
    assert code == 0 and data["max_tokens"] == 4000 and data["tokens_used"] <= 4000
    code, out, _ = run(capsys, "search", "prefer template literals jargon", "--json",
                       "--max-tokens", "0")
    whole = json.loads(out)
    assert whole["max_tokens"] is None and whole["tokens_used"] > 10_000
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n\n[search]\n'
                                       "max_tokens = 0\n")
    code, out, _ = run(capsys, "search", "prefer template literals jargon", "--json")
    assert json.loads(out)["tokens_used"] == whole["tokens_used"]
    # the docs call it a token budget, and so do agents: "--budget 500" was two topics,
    # "--budget" and "500", within the default 4,000
    for argv in (["search", "prefer template literals jargon"], ["context", "docs/guide.md"],
                 ["get", "docs:guide.md"]):
        code, out, _ = run(capsys, *argv, "--budget", "300", "--json")
        data = json.loads(out)
        assert code == 0 and data["max_tokens"] == 300 and "--budget" not in out


@pytest.mark.parametrize(("argv", "noted"), [
    (["how", "to", "configure", "logging"], True),
    (["logging", "in", "rust"], True),
    (["install", "the", "tool"], True),
    (["configure", "logging"], False),      # two topics, as typed
    (["a", "b"], True),                     # a word no one searches for alone
    (["error handling", "logging"], False),  # quoted: topics meant
    (["logging"], False),
])
def test_a_sentence_typed_without_quotes_is_noted(project, capsys, argv, noted):
    """``ra search how to set a timeout`` searched five topics, "how", "to", "set", "a"
    and "timeout" (3,848 tokens of httpx's docs, without the timeouts page), and said
    nothing: a note says how the words were read and how to search them together."""
    code, out, err = run(capsys, "search", *argv, "--list")
    said = f'quote them: ra search "{" ".join(argv)}"'
    assert code == 0 and (said in err) == noted and said not in out
    code, out, _ = run(capsys, "search", *argv, "--json")
    assert (said in " ".join(json.loads(out).get("notes", []))) == noted


def test_get_whole_document(project, capsys):
    code, out, _ = run(capsys, "get", "docs:guide.md#logging", "--full-document", "--json")
    data = json.loads(out)
    assert code == 0 and data["id"] == "docs:guide.md"
    assert "# Installation" in data["content"] and "# Usage" in data["content"]


def test_get_refuses_paths_escaping_the_tree(project, capsys):
    code, _, err = run(capsys, "get", "docs:../secret.md")
    assert code == 2 and "Traceback" not in err


def test_broken_config_names_file_and_line(project, capsys):
    (project / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[settings]\n'
                                      'default_limit = "five"\n')
    code, _, err = run(capsys, "search", "anything")
    assert code == 2
    assert ".ra.toml:4" in err and "default_limit" in err and "Traceback" not in err


def test_ls_and_status_json(project, capsys):
    code, out, _ = run(capsys, "ls", "chunks", "--json")
    chunks = json.loads(out)
    assert code == 0 and {c["id"] for c in chunks} >= {"docs:guide.md", "docs:guide.md#logging"}
    code, out, _ = run(capsys, "ls", "docs", "--json")
    docs = json.loads(out)
    assert {d["id"] for d in docs} == {"docs:guide.md", "docs:sub/notes.txt"}
    code, out, _ = run(capsys, "ls", "trees", "--json")
    assert json.loads(out)[0]["name"] == "docs"
    code, out, _ = run(capsys, "ls")  # 001's `ra ls [WHAT]`: the trees, as a start
    assert code == 0 and out.startswith("docs\t")
    code, out, _ = run(capsys, "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["index"]["state"] == "current"
    assert status["trees"][0]["documents"] == 2


def test_inspect_doc_json_shape(project, capsys):
    code, out, _ = run(capsys, "inspect", "doc", "docs/guide.md", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["title"] == "Getting Started" and info["tags"] == ["intro", "setup"]
    assert info["chunks"][0]["id"] == "docs:guide.md"
    assert {"id", "slug", "title", "depth", "parent_id", "breadcrumb", "byte_start",
            "byte_end", "chars", "tokens"} <= set(info["chunks"][1])


def test_inspect_doc_names_the_tree_that_indexes_the_file(tmp_path, monkeypatch, capsys):
    """ESLint with a tree ``changelog`` (``.``, its CHANGELOG.md alone) declared before
    ``docs``: ``inspect doc docs/src/use/x.md`` gave ids in ``changelog``, which ``ra get``
    refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("# X\n\nText.\n")
    (tmp_path / "CHANGELOG.md").write_text("# Changes\n\n## 1.0\n\nFirst.\n")
    (tmp_path / ".ra.toml").write_text('[tree.changelog]\npath = "."\ninclude = '
                                       '["CHANGELOG.md"]\n[tree.docs]\npath = "./docs"\n')
    code, out, _ = run(capsys, "inspect", "doc", "docs/x.md", "--json")
    assert code == 0 and json.loads(out)["chunks"][1]["id"] == "docs:x.md#x"
    code, out, _ = run(capsys, "inspect", "doc", "CHANGELOG.md", "--json")
    assert code == 0 and json.loads(out)["chunks"][0]["id"] == "changelog:CHANGELOG.md"


def test_inspect_doc_outside_any_tree(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loose.md").write_text("# Loose\n\nText.\n")
    code, out, _ = run(capsys, "inspect", "doc", "loose.md", "--json")
    assert code == 0 and json.loads(out)["chunks"][1]["id"] == "doc:loose.md#loose"


def test_init_writes_config_and_refuses_to_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "init")
    assert code == 0 and "[tree.docs]" in (tmp_path / ".ra.toml").read_text()
    code, _, err = run(capsys, "init")
    assert code == 1 and "--force" in err
    assert run(capsys, "init", "--force")[0] == 0


def _files(root: Path, names: list[str]) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {Path(name).stem}\n\nAbout {Path(name).stem}.\n")


def _initialised(capsys, monkeypatch, root: Path, names: list[str]) -> tuple[str, str]:
    """``ra init`` in ``root`` holding the files ``names``: the configuration it wrote
    and what it said."""
    _files(root, names)
    monkeypatch.chdir(root)
    code, _, err = run(capsys, "init")
    assert code == 0
    return (root / ".ra.toml").read_text(), err


def _listed(capsys) -> list[str]:
    """The ids of the documents ``ra ls docs`` lists here, sorted."""
    code, out, _ = run(capsys, "ls", "docs")
    assert code == 0
    return sorted(line.split("\t")[0] for line in out.splitlines())


def test_init_includes_the_hidden_folders_its_pages_include(tmp_path, monkeypatch, capsys):
    """Svelte's reference pages are each a few ``@include .generated/client-errors.md``
    lines; a tree's walk skips hidden folders, so the errors they list were in no tree and
    every pasted error code found nothing. ``ra init`` includes the hidden folders the
    pages include; a hidden folder no page includes stays out."""
    _files(tmp_path, [*(f"docs/{n}.md" for n in "abcd"), "docs/.drafts/unfinished.md",
                      "docs/reference/.generated/client-errors.md"])
    (tmp_path / "docs" / "reference" / "errors.md").write_text(
        "# Runtime errors\n\n## Client errors\n\n@include .generated/client-errors.md\n")
    (tmp_path / "docs" / "reference" / ".generated" / "client-errors.md").write_text(
        "### state_unsafe_mutation\n\nUpdating state inside a derived is forbidden.\n")
    config, err = _initialised(capsys, monkeypatch, tmp_path, [])
    assert '"reference/.generated/**"]' in config and ".drafts" not in config
    assert "hidden folders its pages include: reference/.generated/ (1 file)" in err
    assert "docs:reference/.generated/client-errors.md" in _listed(capsys)
    assert "docs:.drafts/unfinished.md" not in _listed(capsys)
    code, out, _ = run(capsys, "search", "state_unsafe_mutation", "--list")
    assert out.startswith("docs:reference/.generated/client-errors.md#state_unsafe_mutation")


def _checked_as_the_whole_folder(capsys, root: Path) -> str:
    """What ``ra check`` says of ``root`` configured by hand (or before ``ra init`` left
    anything out) with the tree ``.``, the index updated: a note only."""
    (root / ".ra.toml").write_text('[tree.docs]\npath = "."\n')
    assert run(capsys, "update")[0] == 0
    code, _, err = run(capsys, "check")
    assert code == 0
    return err


@pytest.mark.parametrize(("names", "folder"), [
    # an Astro site: the notes deep down, a README on top, dependencies beside
    (["README.md", "node_modules/pkg/README.md", "node_modules/b/c.md", "node_modules/d.md",
      *(f"src/content/docs/en/{n}.mdx" for n in "abcd"), "src/content/docs/en/g/e.mdx"],
     "./src/content/docs/en"),
    (["README.md", "CHANGELOG.md", "docs/index.md", "docs/guide/a.md", "docs/guide/b.md",
      "docs/guide/c.md", "docs/guide/d.md"], "./docs"),  # docs/ has notes of its own
    (["notes/a.md", "notes/b.md", "design/c.md", "design/d.md"], "."),  # spread out
    (["README.md"], "."),
    (["src/main.py", ".github/x.md"], "./docs"),  # none: the starter's folder
    # a site generator's repository: pages to build in its tests, test data in fixtures
    (["README.md", *(f"docs/{n}.md" for n in "abcd"), *(f"test/source/_posts/{n}.md"
                                                        for n in "abcdefgh"),
      *(f"spec/fixtures/{n}.md" for n in "abcdefgh")], "./docs"),
    (["tests/a.md", "tests/b.md", "tests/c/d.md"], "./tests"),  # notes there alone
    # Zola: sites to build in test_site/ and test_site_i18n/ beside docs/content/
    (["README.md", *(f"docs/content/{n}.md" for n in "abcd"), *(f"test_site/content/{n}.md"
                                                              for n in "abcdef"),
      *(f"test_site_i18n/content/{n}.md" for n in "ab")], "./docs/content"),
    (["contest/a.md", "contest/b.md", "latest/c.md", "latest/d.md"], "."),  # no tests
])
def test_init_names_the_folder_that_holds_the_notes(tmp_path, monkeypatch, capsys, names,
                                                    folder):
    _files(tmp_path, names)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    assert code == 0 and f'path = "{folder}"' in (tmp_path / ".ra.toml").read_text()
    assert (f"tree docs is {folder}" in err) == any(n.endswith("md") and not
                                                     n.startswith(".") for n in names)


def test_init_names_the_top_when_its_readme_is_the_notes(tmp_path, monkeypatch, capsys):
    """coding-interview-university: its README (and how-to.md) at the top, 30 READMEs in
    other languages in ``translations/``, which ``ra init`` named as the tree, leaving
    the English out; the System Design Primer: its 110 KB README at the top, eight
    solutions (and their Chinese) in ``solutions/system_design/``, which it named."""
    _files(tmp_path / "ciu", ["README.md", "how-to.md", *(
        f"translations/README-{lang}.md" for lang in ("cn", "de", "es", "fr", "ja", "kh"))])
    monkeypatch.chdir(tmp_path / "ciu")
    code, _, err = run(capsys, "init")
    assert code == 0 and 'path = "."' in (tmp_path / "ciu" / ".ra.toml").read_text()
    assert "tree docs is . (2 markdown files; translations left out: README-cn.md" in err
    primer = tmp_path / "primer"
    _files(primer, ["CONTRIBUTING.md", *(f"solutions/system_design/{n}/README{lang}.md"
                                         for n in "abcdefgh" for lang in ("", "-zh-Hans"))])
    (primer / "README.md").write_text("# The primer\n\n" + "Caches and queues. " * 400)
    (primer / "CHANGELOG.md").write_text("# Changes\n\n" + "A change. " * 2000)
    monkeypatch.chdir(primer)
    code, _, err = run(capsys, "init")
    assert code == 0 and 'path = "."' in (primer / ".ra.toml").read_text()
    (primer / "README.md").write_text("# The primer\n\nSee the solutions.\n")
    code, _, err = run(capsys, "init", "--force")  # a README about the notes: theirs
    assert 'path = "./solutions/system_design"' in (primer / ".ra.toml").read_text()


def test_init_names_the_markdown_it_leaves_outside_the_tree(tmp_path, monkeypatch, capsys):
    """Swift's evolution repository: the proposals in ``proposals/``; beside them the
    process, the commonly rejected changes and ``visions/``, which only a tree of their
    own indexes. ``ra init`` says so (tests and dependencies are not notes)."""
    _files(tmp_path, [*(f"proposals/{n:04}-x.md" for n in range(12)), "process.md",
                      "README.md", "commonly_proposed.md", "visions/a.md", "visions/b.md",
                      "node_modules/p/README.md", "tests/t.md"])
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    assert code == 0
    assert ("tree docs is ./proposals (12 markdown files; outside it: 5 markdown files "
            "(visions/ 2, commonly_proposed.md, process.md, README.md): add a tree for "
            "those that are notes)") in " ".join(err.split())
    _files(tmp_path / "all", ["notes/a.md", "design/b.md"])
    monkeypatch.chdir(tmp_path / "all")
    assert "outside it" not in run(capsys, "init")[2]  # the tree is "."


def test_init_leaves_out_tests_that_hold_snapshots_of_their_pages(tmp_path, monkeypatch,
                                                                  capsys, isolated_home):
    """Prettier's ``tests/format/`` holds 313 of its 403 markdown files, pages its tests
    format, beside ``format.test.js`` and its ``__snapshots__``: a copy of its options
    page came 6th for "trailingComma default changed to all". A folder of tests without
    snapshots (a page on how to run them) stays."""
    _files(tmp_path, ["README.md", "CHANGELOG.md", "docs/options.md", "docs/api.md",
                      "tests/format/markdown/lists/options.md",
                      "tests/format/markdown/lists/format.test.js",
                      "tests/format/markdown/lists/__snapshots__/format.test.js.snap",
                      "tests/format/markdown/code/a.md", "tests/format/markdown/code/b.md",
                      "e2e-tests/README.md"])
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0 and 'path = "."' in config
    assert 'exclude = ["**/tests/**"]' in config and "left out: tests/" in err
    assert _listed(capsys) == [
        "docs:CHANGELOG.md", "docs:README.md", "docs:docs/api.md", "docs:docs/options.md",
        "docs:e2e-tests/README.md"]
    # what it says it indexes is what it indexes (on Prettier it said 401 for 87)
    assert "tree docs is . (5 markdown files;" in err


def test_init_leaves_out_a_packages_resources_beside_its_sources(tmp_path, monkeypatch,
                                                                 capsys, isolated_home):
    """ruff: ``crates/ty_python_semantic/resources/mdtest/`` holds 487 markdown files of
    type-checker tests beside the crate's ``src/``, and ``ra init`` named ``./crates``
    as the notes: the user docs in ``docs/`` and CONTRIBUTING.md were outside it, and 9
    of 15 tasks found nothing. A package's resources are not counted and are left out;
    a notes folder named ``resources`` (a vault's Resources) is notes."""
    config, err = _initialised(capsys, monkeypatch, tmp_path, [
        "README.md", "CONTRIBUTING.md", *(f"docs/{n}.md" for n in "abcd"),
        "crates/ty/src/lib.rs", "crates/ty/README.md",
        *(f"crates/ty/resources/mdtest/{n}.md" for n in "abcdefghijkl"),
        "crates/lint/src/lib.rs", "crates/lint/README.md", "crates/lint/resources/test/README.md"])
    assert 'path = "."' in config
    assert 'exclude = ["**/lint/resources/**", "**/ty/resources/**"]' in config
    assert "left out: lint/resources/, ty/resources/" in err
    assert _listed(capsys) == [
        "docs:CONTRIBUTING.md", "docs:README.md", "docs:crates/lint/README.md",
        "docs:crates/ty/README.md", *(f"docs:docs/{n}.md" for n in "abcd")]
    _files(tmp_path / "uv", ["README.md", *(f"docs/{n}.md" for n in "abcd"), "guides/a.md",
                             "crates/reqs/README.md", "crates/reqs/test-data/black.txt",
                             "crates/reqs/test_data/a.txt", "test/requirements/trio.txt",
                             "test/README.md"])
    monkeypatch.chdir(tmp_path / "uv")  # uv's requirements files to resolve: test data
    code, _, err = run(capsys, "init", "--force")
    assert ('exclude = ["**/test/**/*.txt", "**/test-data/**", "**/test_data/**"]'
            in (tmp_path / "uv" / ".ra.toml").read_text())
    code, out, _ = run(capsys, "ls", "docs")
    assert "docs:test/README.md" in out and ".txt" not in out  # a test's README stays
    _files(tmp_path / "vault", [*(f"resources/{n}.md" for n in "abcdef"), "projects/a.md"])
    monkeypatch.chdir(tmp_path / "vault")
    code, _, err = run(capsys, "init")
    assert 'path = "./resources"' in (tmp_path / "vault" / ".ra.toml").read_text()


def test_init_leaves_out_licenses_and_site_files(tmp_path, monkeypatch, capsys,
                                                 isolated_home):
    """awesome-copilot's skills hold 17 ``LICENSE.txt`` and 27 font licences (``OFL.txt``):
    "redistribution of fonts" gave only those; GOV.UK's developer docs indexed their
    ``robots.txt`` as a document "robots". A page on a license stays (uv's
    ``policies/license.md``: "uv is licensed under either of …")."""
    _files(tmp_path, ["docs/a.md", "docs/choosing-a-license.md", "docs/LICENSE.md",
                      "docs/policies/license.md", "docs/fonts/a/OFL.txt", "docs/fonts/b/OFL.txt",
                      "docs/robots.txt", "docs/skills/pdf/LICENSE.txt"])
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0 and 'path = "./docs"' in config
    assert ('    # licenses and site files: not notes\n    "**/LICENSE.md", "**/LICENSE.txt", '
            '"**/OFL.txt", "**/robots.txt",\n') in config
    assert ("(3 markdown files; licenses and site files: LICENSE.md, LICENSE.txt, "
            "OFL.txt (2), robots.txt)") in err
    assert _listed(capsys) == [
        "docs:a.md", "docs:choosing-a-license.md", "docs:policies/license.md"]


def test_init_leaves_out_a_sites_navigation(tmp_path, monkeypatch, capsys, isolated_home):
    """Docsify's ``_sidebar.md`` and ``_navbar.md`` (lists of every page's title) came 3rd
    for "how to add a sidebar" and "translation fallback languages" on Docsify's docs; a
    GitHub wiki's ``_Sidebar.md`` and ``_Footer.md`` are the same. A page on writing a
    sidebar stays."""
    _files(tmp_path, ["docs/README.md", "docs/more-pages.md", "docs/_sidebar.md",
                      "docs/_navbar.md", "docs/_coverpage.md", "docs/zh-cn/_sidebar.md",
                      "docs/wiki/_Sidebar.md", "docs/wiki/_Footer.md", "docs/wiki/Home.md"])
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0 and 'path = "./docs"' in config
    for name in ("_sidebar.md", "_navbar.md", "_coverpage.md", "_Sidebar.md", "_Footer.md"):
        assert f'"**/{name}"' in config
    assert "_sidebar.md (2)" in err
    assert _listed(capsys) == [
        "docs:README.md", "docs:more-pages.md", "docs:wiki/Home.md"]


def test_init_leaves_out_the_dependencies_it_did_not_count(tmp_path, monkeypatch, capsys,
                                                          isolated_home):
    """Notes spread out make the tree ``.``, which holds ``node_modules`` (a README and a
    CHANGELOG per package) and ``vendor``: ``ra init`` counted neither, and the index it
    builds takes neither; a dependency folder without markdown is not named."""
    config, err = _initialised(capsys, monkeypatch, tmp_path, [
        "README.md", "AGENTS.md", "docs/a.md", "design/b.md", "node_modules/lodash/README.md",
        "packages/app/node_modules/x/y.md", "vendor/lib/CHANGELOG.md", "build/out.js",
        ".venv/lib/z.md", "tests/fixtures/page.md"])
    assert 'path = "."' in config
    assert 'exclude = ["**/fixtures/**", "**/node_modules/**", "**/vendor/**"]' in config
    assert "4 markdown files; left out: fixtures/, node_modules/, vendor/" in err
    assert _listed(capsys) == [
        "docs:AGENTS.md", "docs:README.md", "docs:design/b.md", "docs:docs/a.md"]
    # a tree that holds no such folder gets no exclude
    (tmp_path / "notes").mkdir()
    _files(tmp_path / "notes", ["a.md", "b.md"])
    monkeypatch.chdir(tmp_path / "notes")
    assert run(capsys, "init")[0] == 0
    assert "\nexclude" not in (tmp_path / "notes" / ".ra.toml").read_text()


def test_init_leaves_out_what_git_ignores(tmp_path, monkeypatch, capsys, isolated_home):
    """A Python project's ``*.egg-info`` holds ``SOURCES.txt`` and ``requires.txt``, a
    site's build output copies of its pages, its ``llms-full.txt`` all of them: git
    ignores them, and a tree ``.`` indexed them. What git tracks, or does not ignore,
    stays; so does a folder of neither markdown nor text."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _files(tmp_path, ["README.md", "docs/a.md", "design/b.md", "src/pkg.egg-info/SOURCES.txt",
                      "_site/docs/a.md", "static/llms-full.txt", "static/glossary.txt",
                      "artifacts/x.parquet", "notes/kept.md"])
    (tmp_path / ".gitignore").write_text("*.egg-info/\n_site/\nstatic/llms-full.txt\n"
                                         "artifacts/\nnotes/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", "notes/kept.md"], check=True)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0 and 'path = "."' in config
    assert "# ignored by git: generated, not written" in config
    assert '"_site/**", "src/pkg.egg-info/**", "static/llms-full.txt",' in config
    assert ("tree docs is . (4 markdown files; ignored by git: _site/, src/pkg.egg-info/, "
            "static/llms-full.txt)") in err
    assert _listed(capsys) == [
        "docs:README.md", "docs:design/b.md", "docs:docs/a.md", "docs:notes/kept.md",
        "docs:static/glossary.txt"]
    assert "git ignores" not in run(capsys, "check")[2]
    # a configuration written before, or by hand: `ra check` names them, a note only
    err = _checked_as_the_whole_folder(capsys, tmp_path)
    assert (
        'tree docs: 3 files git ignores (generated, not written) are indexed; exclude = '
        '["_site/**", "src/pkg.egg-info/**", "static/llms-full.txt"] leaves them out') in err


def test_init_leaves_out_the_translations_of_the_notes(tmp_path, monkeypatch, capsys,
                                                       isolated_home):
    """A site's translations mirror its pages, path for path, in folders named for their
    language (Starlight's ``src/content/docs/de/``, Mintlify's ``es/``): searched with
    the pages, they answer a query two and three times over. ``ra init`` leaves them out
    (and reads the notes' language without them: German pages sort before English
    ones); a folder with a language's name that mirrors nothing (``it/``: the IT team's
    notes) stays, and so does the largest of sibling language folders (Hugo's
    ``content/en/`` beside ``content/de/``)."""
    from tests.test_languages import SAMPLES

    pages = ["index.md", "guides/sidebar.md", "guides/search.md", "reference/config.md"]
    site = tmp_path / "site"
    _files(site / "src/content/docs", pages + ["it/vpn.md", "it/laptops.md"])
    _files(site, ["README.md", "blog/a.md", "blog/b.md", "blog/c.md", "examples/x.md"])
    (site / "src/content/docs/guides/sidebar.md").write_text(
        "# Sidebar\n\nConfigure the sidebar navigation.\n")
    for lang in ("de", "pt-br"):
        for page in pages[:3]:
            path = site / "src/content/docs" / lang / page
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# Seite\n\nDie Seitenleiste konfigurieren, sidebar. "
                            + " ".join([SAMPLES["german"]] * 8) + "\n")
    monkeypatch.chdir(site)
    code, _, err = run(capsys, "init")
    config = (site / ".ra.toml").read_text()
    assert code == 0 and '"src/content/docs/de/**", "src/content/docs/pt-br/**",' in config
    assert "# translations of these pages" in config and "it/**" not in config
    assert ("tree docs is . (11 markdown files; translations left out: "
            "src/content/docs/{de,pt-br}/ (6 files))") in err
    assert "stemmer" not in err  # English: the German translation is not the notes
    assert load_config(site).trees[0].exclude == ("src/content/docs/de/**",
                                                  "src/content/docs/pt-br/**")
    code, out, _ = run(capsys, "search", "sidebar", "--list")
    assert code == 0 and "guides/sidebar.md" in out and "/de/" not in out
    # a configuration written before, or by hand: `ra check` names them, a note only
    err = _checked_as_the_whole_folder(capsys, site)
    assert (
        "tree docs: 6 files in translations of its pages (src/content/docs/{de,pt-br}/) are "
        'indexed with them; exclude = ["src/content/docs/de/**", "src/content/docs/pt-br/**"]'
        " leaves them out") in err
    # sibling language folders: the largest is the original
    hugo = tmp_path / "hugo"
    _files(hugo / "content", [f"en/{p}" for p in pages] + [f"fr/{p}" for p in pages[:2]])
    monkeypatch.chdir(hugo)
    code, _, err = run(capsys, "init")
    config = (hugo / ".ra.toml").read_text()
    assert code == 0 and 'path = "./content"' in config and '    "fr/**",\n' in config
    assert "en/**" not in config and "translations left out: fr/ (2 files)" in err
    # Docusaurus: i18n/<locale>/ mirrors docs/, wherever it is
    docusaurus = tmp_path / "docusaurus"
    _files(docusaurus, [f"docs/{p}" for p in pages] + ["blog/2024-01-01-hello.md"] + [
        f"i18n/{lang}/docusaurus-plugin-content-docs/current/{p}"
        for lang, n in (("fr", 4), ("ja", 2)) for p in pages[:n]])
    monkeypatch.chdir(docusaurus)
    code, _, err = run(capsys, "init")
    config = (docusaurus / ".ra.toml").read_text()
    assert code == 0 and 'path = "."' in config and '"i18n/fr/**", "i18n/ja/**",' in config
    assert "(5 markdown files; translations left out: i18n/{fr,ja}/ (6 files))" in err


def test_init_leaves_out_the_older_versions_of_the_docs(tmp_path, monkeypatch, capsys,
                                                        isolated_home):
    """Docusaurus keeps each released version of the docs in ``versioned_docs/`` beside
    the current ``docs/`` (Jest keeps three): searched with them, a page answers once per
    version. ``ra init`` leaves them out, and ``ra check`` names them in a configuration
    that indexes them; a site whose only docs are versioned keeps them."""
    pages = ["Getting-Started.md", "Mocks.md", "Timers.md"]
    site = tmp_path / "jest"
    _files(site, [f"docs/{p}" for p in pages] + ["website/blog/2024-01-01-v30.md"] + [
        f"website/{kind}/version-{v}/{p}" for v in ("29.7", "30.0") for p in pages
        for kind in ("versioned_docs",)] + [
        f"website/community_versioned_docs/version-1.0/{p}" for p in pages[:1]])
    (site / "docs/Timers.md").write_text("# Timer Mocks\n\nFake timers replace setTimeout.\n")
    for v in ("29.7", "30.0"):
        (site / f"website/versioned_docs/version-{v}/Timers.md").write_text(
            f"# Timer Mocks\n\nFake timers ({v}) replace setTimeout.\n")
    monkeypatch.chdir(site)
    code, _, err = run(capsys, "init")
    config = (site / ".ra.toml").read_text()
    assert code == 0 and "# older versions of these pages" in config
    assert load_config(site).trees[0].exclude == ("website/community_versioned_docs/**",
                                                  "website/versioned_docs/**")
    assert ("tree docs is . (4 markdown files; older versions left out: "
            "website/community_versioned_docs/, website/versioned_docs/ (7 files))") in err
    code, out, _ = run(capsys, "search", "fake timers", "--list")
    assert code == 0 and "docs/Timers.md" in out and "versioned" not in out
    err = _checked_as_the_whole_folder(capsys, site)
    assert (
        "tree docs: 7 files in older versions of its pages (website/community_versioned_docs/, "
        'website/versioned_docs/) are indexed with them; exclude = ["website/community_'
        'versioned_docs/**", "website/versioned_docs/**"] leaves them out') in err
    only = tmp_path / "only"  # no current docs beside them: they are the docs
    _files(only, [f"versioned_docs/version-1.0/{p}" for p in pages])
    monkeypatch.chdir(only)
    code, _, err = run(capsys, "init")
    assert code == 0 and "older versions" not in err
    assert load_config(only).trees[0].exclude == ()


def test_init_leaves_out_a_specification_s_older_snapshots(tmp_path, monkeypatch, capsys,
                                                            isolated_home):
    """The MCP specification keeps a folder per released version, named for its day
    (``2024-11-05/`` … ``2025-06-18/``), and ``draft/``: an old version's shorter section
    outranked the current one's. The older snapshots are left out; the newest and the
    draft stay. Folders numbered for versions (PowerShell's ``5.1/``, ``7.4/``: products
    supported side by side) and a changelog's two pages per release stay."""
    pages = ["index.md", "basic/lifecycle.md", "basic/transports.md", "server/tools.md",
             "server/resources.md", "server/prompts.md"]
    spec = tmp_path / "spec"
    _files(spec, [f"docs/specification/{v}/{p}" for v in ("2024-11-05", "2025-06-18",
                                                          "draft") for p in pages]
           + ["docs/specification/2024-11-05/old-only.md", "docs/index.md"]
           + [f"docs/changelog/{v}/{p}" for v in ("2024-01", "2024-02")
              for p in ("index.md", "highlights.md")]
           + [f"docs/reference/{v}/{p}" for v in ("5.1", "7.4") for p in pages])
    monkeypatch.chdir(spec)
    code, _, err = run(capsys, "init")
    assert code == 0
    assert load_config(spec).trees[0].exclude == ("specification/2024-11-05/**",)
    assert "older versions left out: specification/2024-11-05/ (7 files)" in err


def test_init_stems_the_notes_in_their_language(tmp_path, monkeypatch, capsys,
                                               isolated_home):
    """Notes in Portuguese get Portuguese's stemmer: "aplicação" then finds the notes that
    say "aplicações" (on SEFAZ-SP's Azure DevOps wiki, 131 chunks with English's, 198
    with Portuguese's). Notes in English, or too few words to tell, get the default."""
    from tests.test_languages import SAMPLES

    docs = tmp_path / "pt" / "docs"
    docs.mkdir(parents=True)
    for i in range(12):
        (docs / f"nota-{i}.md").write_text(f"# Nota {i}\n\n" + " ".join(
            [SAMPLES["portuguese"]] * 6) + "\n")
    (docs / "servidores.md").write_text("# Servidores\n\nAs aplicações rodam aqui.\n")
    monkeypatch.chdir(tmp_path / "pt")
    code, _, err = run(capsys, "init")
    config = (tmp_path / "pt" / ".ra.toml").read_text()
    assert code == 0 and "\n[search]\n" in config and '\nstemmer = "portuguese"' in config
    assert 'the notes are in Portuguese: [search] stemmer is "portuguese"' in err
    assert load_config(tmp_path / "pt").search.stemmer == "portuguese"
    code, out, _ = run(capsys, "search", "aplicação", "--list", "--fuzzy", "0", "--limit", "20")
    assert code == 0 and "docs:servidores.md" in out  # "aplicações": the same stem
    _files(tmp_path / "en", ["docs/a.md", "docs/b.md"])
    monkeypatch.chdir(tmp_path / "en")
    code, _, err = run(capsys, "init")
    config = (tmp_path / "en" / ".ra.toml").read_text()
    assert code == 0 and "\n# [search]\n" in config and '# stemmer = "english"' in config
    assert "stemmer" not in err
    # a configuration written before, or by hand: `ra check` notes the notes' language
    (tmp_path / "pt" / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path / "pt")
    assert run(capsys, "update")[0] == 0
    code, _, err = run(capsys, "check")
    assert code == 0 and ('the notes read as Portuguese and [search] stemmer is "english": '
                          'stemmer = "portuguese"') in err
    monkeypatch.chdir(tmp_path / "en")
    assert "the notes read as" not in run(capsys, "check")[2]


def test_init_names_agent_rule_folders_as_trees(tmp_path, monkeypatch, capsys, isolated_home):
    """Cursor's, Claude Code's and Copilot's rule folders are hidden, so the notes tree
    skips them: ``ra init`` names each that holds markdown as a tree, and ``ra context``
    then puts the rules that name a file first."""
    _files(tmp_path, ["docs/a.md", "docs/b.md", ".github/ISSUE_TEMPLATE/bug.md",
                      ".windsurf/rules/notes.txt", "src/api/users.py", "src/App.tsx"])
    rules = {".cursor/rules/react.mdc": "globs: src/**/*.tsx", ".claude/rules/api.md":
             "paths:\n  - src/api/**", ".github/instructions/py.instructions.md":
             'applyTo: "**/*.py"', ".claude/skills/release/SKILL.md":
             "name: release\ndescription: Cut a release", ".agents/skills/pr/SKILL.md":
             "name: pr\ndescription: Open a pull request", ".github/skills/ci/SKILL.md":
             "name: ci\ndescription: Fix CI", ".roo/rules/01-style.md":
             "description: style", ".roo/rules-code/01-ts.md": "description: ts",
             ".amazonq/rules/cdk.md": "description: cdk"}
    for rel, front in rules.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"---\n{front}\n---\n\n# {Path(rel).stem}\n\nRule.\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0 and 'path = "./docs"' in config
    assert ('[tree.cursor]\npath = "./.cursor/rules"\n\n[tree.claude]\npath = "./.claude/'
            'rules"\n\n[tree.claude-skills]\npath = "./.claude/skills"\n\n'
            '[tree.agent-skills]\npath = "./.agents/skills"\n\n[tree.copilot-skills]\n'
            'path = "./.github/skills"\n\n[tree.copilot]\n'
            'path = "./.github/instructions"\n\n[tree.roo]\npath = "./.roo/rules"\n\n'
            '[tree.roo-code]\npath = "./.roo/rules-code"\n\n'
            '[tree.amazonq]\npath = "./.amazonq/rules"\n') in config
    assert "windsurf" not in config  # no markdown there
    assert ("agent rules: tree cursor is ./.cursor/rules (1 file), tree claude is "
            "./.claude/rules (1 file), tree claude-skills is ./.claude/skills (1 file), "
            "tree agent-skills is ./.agents/skills (1 file), tree copilot-skills is "
            "./.github/skills (1 file), tree copilot is ./.github/instructions (1 file), "
            "tree roo is ./.roo/rules (1 file), tree roo-code is ./.roo/rules-code (1 file), "
            "tree amazonq is ./.amazonq/rules (1 file)") in err
    code, out, _ = run(capsys, "search", "--list", "cut a release")
    assert code == 0 and out.split()[0] == "claude-skills:release/SKILL.md"
    code, out, err = run(capsys, "context", "--list", "src/api/users.py")
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines() if line and line[0] not in " ["] == [
        "claude:api.md", "copilot:py.instructions.md"]
    code, out, _ = run(capsys, "context", "--list", "src/App.tsx")
    assert out.split()[0] == "cursor:react.mdc"
    assert run(capsys, "init", "--force")[0] == 0  # no rule folder twice
    assert (tmp_path / ".ra.toml").read_text().count("[tree.cursor]") == 1


def test_init_names_agents_prompts_commands_and_repository_instructions(
        tmp_path, monkeypatch, capsys, isolated_home):
    """awesome-copilot's users keep prompts, agents and chat modes beside the instructions,
    and the repository's own in ``.github/copilot-instructions.md``: none was a tree, and
    a search for that file's rule found nothing."""
    _files(tmp_path, ["docs/a.md", ".github/prompts/review.prompt.md",
                      ".claude/commands/release.md", ".claude/agents/reviewer.md",
                      ".github/agents/planner.agent.md", ".github/chatmodes/debug.chatmode.md",
                      ".github/ISSUE_TEMPLATE/bug.md"])
    (tmp_path / ".github" / "copilot-instructions.md").write_text(
        "# Repository rules\n\nMoney is stored in integer cents.\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "init")
    config = (tmp_path / ".ra.toml").read_text()
    assert code == 0
    assert ('[tree.copilot-prompts]\npath = "./.github/prompts"\n\n[tree.copilot-agents]\n'
            'path = "./.github/agents"\n\n[tree.copilot-chatmodes]\npath = '
            '"./.github/chatmodes"\n\n[tree.copilot-repo]\npath = "./.github"\n'
            'include = ["copilot-instructions.md"]\n') in config
    assert "tree copilot-repo is ./.github/copilot-instructions.md (1 file)" in err
    assert ('[tree.claude-commands]\npath = "./.claude/commands"\n\n[tree.claude-agents]\n'
            'path = "./.claude/agents"\n') in config  # Claude Code's commands and subagents
    code, out, _ = run(capsys, "search", "--list", "money cents")
    assert code == 0 and out.split()[0] == "copilot-repo:copilot-instructions.md#repository-rules"
    code, out, _ = run(capsys, "ls", "docs")
    assert "ISSUE_TEMPLATE" not in out


def test_a_write_killed_half_way_leaves_the_old_file(tmp_path, monkeypatch, capsys):
    """``ra init --force`` and ``ra agents`` replace a user's file whole or not at all:
    a command killed before the new text is in place leaves the old one as it was and no
    stray file; a symlink (CLAUDE.md -> AGENTS.md) is written through, and stays a link;
    an existing file keeps its permissions."""
    import os

    from ra.cli import common

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".ra.toml").write_text("# mine\n")
    os.chmod(tmp_path / ".ra.toml", 0o640)

    def killed(*_):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(os, "replace", killed)
        with pytest.raises(KeyboardInterrupt):
            common.write_file(tmp_path / ".ra.toml", "# new\n" * 1000)
    assert (tmp_path / ".ra.toml").read_text() == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ra.toml"]
    assert run(capsys, "init", "--force")[0] == 0
    assert "[tree.docs]" in (tmp_path / ".ra.toml").read_text()
    assert (tmp_path / ".ra.toml").stat().st_mode & 0o777 == 0o640
    (tmp_path / "AGENTS.md").write_text("old\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    common.write_file(tmp_path / "CLAUDE.md", "new\n")
    assert (tmp_path / "CLAUDE.md").is_symlink()
    assert (tmp_path / "AGENTS.md").read_text() == "new\n"


def test_check_warns_about_a_tree_that_indexes_dependencies(tmp_path, monkeypatch, capsys):
    _files(tmp_path, ["README.md", "docs/a.md", "node_modules/a/README.md",
                      "node_modules/b/CHANGELOG.md", "web/vendor/x/README.md", "dist/c.md"])
    (tmp_path / ".ra.toml").write_text('[tree.proj]\npath = "."\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "check")
    assert code == 1
    assert ('tree proj: 2 files under node_modules/ (dependencies, not notes) are indexed; '
            'exclude = ["**/node_modules/**"] leaves them out') in err
    assert "tree proj: 1 file under vendor/ (dependencies, not notes) is indexed" in err
    assert "dist/" not in err  # build output may be meant: no warning
    (tmp_path / ".ra.toml").write_text('[tree.proj]\npath = "."\n'
                                       'exclude = ["**/node_modules/**", "**/vendor/**"]\n')
    _, _, err = run(capsys, "check")
    assert "dependencies" not in err


def test_a_new_user_searches_right_after_init(tmp_path, monkeypatch, capsys, isolated_home):
    _files(tmp_path, ["README.md", "site/content/guides/tailwind.md",
                      "site/content/guides/deploy.md", "site/content/index.md"])
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init")[0] == 0
    code, out, err = run(capsys, "search", "--list", "tailwind")
    assert 'path = "./site/content"' in (tmp_path / ".ra.toml").read_text()
    assert code == 0 and "docs:guides/tailwind.md#tailwind" in out, err


def test_a_quarto_site_is_found_and_read_as_markdown(tmp_path, monkeypatch, capsys,
                                                     isolated_home):
    """Quarto (.qmd) and R Markdown (.Rmd) documents: ``ra init`` names their folder, the
    default patterns take them, and they are chunked at their headings."""
    _files(tmp_path, ["README.md", "docs/index.qmd", "docs/guide/callouts.qmd",
                      "docs/guide/layout.qmd", "docs/guide/report.Rmd"])
    (tmp_path / "docs/guide/callouts.qmd").write_text(
        "---\ntitle: Callout Blocks\n---\n\n## Callout Types\n\n::: {.callout-note}\n"
        "## Five kinds\n\nNote that there are five types of callouts.\n:::\n")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init")[0] == 0
    assert 'path = "./docs"' in (tmp_path / ".ra.toml").read_text()
    code, out, err = run(capsys, "search", "--list", "callouts five types")
    assert code == 0 and out.startswith("docs:guide/callouts.qmd#callout-types"), (out, err)
    assert "#five-kinds" not in out  # a callout's title, not a section
    code, out, err = run(capsys, "search", "--list", "report")
    assert code == 0 and "docs:guide/report.Rmd#report" in out, (out, err)


def test_init_global(tmp_path, monkeypatch, capsys, isolated_home):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init", "--global")[0] == 0
    assert (isolated_home / ".ra.toml").exists()


def test_init_in_the_home_folder_points_elsewhere(monkeypatch, capsys, isolated_home):
    """It wrote ~/.ra.toml, the global configuration, with the tree "." : the whole home
    folder, walked and searched from every project."""
    (isolated_home / "proj" / "docs").mkdir(parents=True)
    (isolated_home / "proj" / "docs" / "a.md").write_text("# A\n")
    monkeypatch.chdir(isolated_home)
    code, _, err = run(capsys, "init")
    assert code == 1 and "is your home folder" in err and "ra init --global" in err
    assert not (isolated_home / ".ra.toml").exists()
    monkeypatch.chdir(isolated_home / "proj")
    assert run(capsys, "init")[0] == 0


def test_config_prints_effective_toml(project, capsys):
    import tomllib

    code, out, _ = run(capsys, "config")
    assert code == 0 and tomllib.loads(out)["settings"]["default_limit"] == 5


def test_check_exit_codes(project, capsys):
    run(capsys, "update")
    code, _, err = run(capsys, "check")
    assert code == 0, err
    (project / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[tree.gone]\n'
                                      'path = "./nowhere"\n')
    code, _, err = run(capsys, "check")
    assert code == 1 and "nowhere" in err


def test_search_without_config_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "search", "x")
    assert code != 0 and "ra init" in err and "Traceback" not in err
