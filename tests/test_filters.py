"""Filters, paging, sorting and archived notes — in the library, the CLI and MCP."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ra.cli.app import main
from ra.config.settings import load_config
from ra.errors import QueryError
from ra.index.freshness import open_index
from ra.query.search import Searcher, SearchOptions

DAY = 86_400
JAN = 1_767_225_600  # 2026-01-01T00:00:00Z


def doc(title: str, tags: str | None, body: str, status: str | None = None) -> str:
    front = [f"title: {title}"]
    if tags is not None:
        front.append(f"tags: {tags}")
    if status:
        front.append(f"status: {status}")
    return "---\n" + "\n".join(front) + f"\n---\n\n# {title}\n\n{body}\n"


FILES = {  # path: (text, mtime: days after 2026-01-01)
    "ops/deploy.md": (doc("Deploy", "[ops, Release]", "deploy the service widget"), 10),
    "ops/rollback.md": (doc("Rollback", "ops, incident", "rollback the widget deploy"), 40),
    "api/widgets.md": (doc("Widgets API", "[api]", "the widget endpoint and deploy hooks"), 70),
    "notes/old.md": (doc("Old deploy", "[ops]", "legacy widget deploy", "archived"), 5),
    "notes/plain.md": (doc("Plain", None, "widget notes without tags"), 100),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("filters")
    for rel, (text, day) in FILES.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (JAN + day * DAY, JAN + day * DAY))
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n[tree.more]\n'
                                   'path = "./more"\n')
    (root / "more").mkdir()
    (root / "more" / "widget.md").write_text("# More widget\n\nanother widget deploy\n")
    return root


def paths(project: Path, query: str = "widget", **options) -> list[str]:
    config = load_config(project)
    reader, _ = open_index(config)
    try:
        opts = SearchOptions(**{"limit": 20, "cutoff_ratio": 0.0, **options})
        results = Searcher(reader, config).search([query], opts).queries[0].results
    finally:
        reader.close()
    return sorted({f"{r.tree}:{r.path}" for r in results})


def test_without_filters_archived_notes_are_hidden(project):
    assert paths(project) == ["docs:api/widgets.md", "docs:notes/plain.md", "docs:ops/deploy.md",
                              "docs:ops/rollback.md", "more:widget.md"]
    assert "docs:notes/old.md" in paths(project, include_archived=True)


def test_tree_filter(project):
    assert paths(project, trees=("more",)) == ["more:widget.md"]
    assert len(paths(project, trees=("docs", "more"))) == 5


def test_tag_filter_matches_lists_and_comma_strings_case_insensitively(project):
    assert paths(project, tags=("ops",)) == ["docs:ops/deploy.md", "docs:ops/rollback.md"]
    assert paths(project, tags=("RELEASE",)) == ["docs:ops/deploy.md"]
    assert paths(project, tags=("incident", "api")) == ["docs:api/widgets.md",
                                                        "docs:ops/rollback.md"]
    assert paths(project, tags=("ops",), include_archived=True)[-1] == "docs:ops/rollback.md"


def test_path_filter_is_a_tree_relative_glob(project):
    assert paths(project, path="ops/**") == ["docs:ops/deploy.md", "docs:ops/rollback.md"]
    assert paths(project, path="*.md") == paths(project)  # '*' crosses '/', as in globset
    assert paths(project, path="api/*") == ["docs:api/widgets.md"]


def test_a_path_filter_naming_a_folder_keeps_what_is_under_it(project):
    """GOV.UK's developer docs: "rake" with ``--path kubernetes/`` answered "no results",
    its pages under ``kubernetes/`` saying "rake": an agent passes the folder it means,
    with or without its ``/``; a path without glob characters is also the file itself."""
    for folder in ("ops/", "ops", "./ops"):
        assert paths(project, path=folder) == ["docs:ops/deploy.md", "docs:ops/rollback.md"]
    assert paths(project, path="ops/deploy.md") == ["docs:ops/deploy.md"]
    assert paths(project, path="op") == []  # a folder's name, not the start of one


def test_filters_that_keep_out_every_match_say_so(project):
    """"no results" read as "ra knows nothing of it"; the topic says that chunks match
    outside the filters, and stays silent when nothing matches at all."""
    config = load_config(project)
    reader, _ = open_index(config)
    try:
        searcher = Searcher(reader, config)
        topic = searcher.search(["widget"], SearchOptions(path="nowhere/**", tags=("ops",))
                                ).queries[0]
        nothing = searcher.search(["zyzzyva"], SearchOptions(path="nowhere/**")).queries[0]
        unfiltered = searcher.search(["zyzzyva"], SearchOptions()).queries[0]
    finally:
        reader.close()
    assert topic.results == [] and topic.note == (
        "5 chunks outside --path 'nowhere/**' --tag 'ops' match: the filters kept none; "
        "a path is relative to its tree's folder")
    assert nothing.note is None and unfiltered.note is None


def test_since_and_until_use_file_mtime_inclusively(project):
    assert paths(project, since="2026-02-01", trees=("docs",)) == [
        "docs:api/widgets.md", "docs:notes/plain.md", "docs:ops/rollback.md"]
    assert paths(project, until="2026-01-11", trees=("docs",)) == ["docs:ops/deploy.md"]
    assert paths(project, since="2026-01-12", until="2026-03-12", trees=("docs",)) == [
        "docs:api/widgets.md", "docs:ops/rollback.md"]


def test_filters_combine(project):
    assert paths(project, tags=("ops",), path="ops/**", since="2026-02-01") == [
        "docs:ops/rollback.md"]
    assert paths(project, tags=("ops",), trees=("more",)) == []


def test_bad_filters_are_query_errors(project):
    with pytest.raises(QueryError, match="ISO date"):
        paths(project, since="yesterday")
    with pytest.raises(QueryError, match="path"):
        paths(project, path="[unclosed")
    with pytest.raises(QueryError, match="sort"):
        paths(project, sort="random")


def test_sort_by_date_and_path(project):
    config = load_config(project)
    reader, _ = open_index(config)
    try:
        s = Searcher(reader, config)
        by_date = s.search(["widget"], SearchOptions(limit=20, cutoff_ratio=0.0,
                                                     trees=("docs",), sort="date"))
        by_path = s.search(["widget"], SearchOptions(limit=20, cutoff_ratio=0.0, sort="path"))
    finally:
        reader.close()
    assert [r.path for r in by_date.queries[0].results] == [
        "notes/plain.md", "api/widgets.md", "ops/rollback.md", "ops/deploy.md"]
    keys = [(r.tree, r.path) for r in by_path.queries[0].results]
    assert keys == sorted(keys)


@pytest.fixture(scope="module")
def ties(tmp_path_factory) -> Path:
    """Thirty documents that all score the same for 'same'."""
    root = tmp_path_factory.mktemp("ties")
    for i in range(30):
        path = root / "docs" / f"n{i:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("same words here\n")
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    return root


def test_pages_are_stable_without_overlap_or_gaps(ties):
    config = load_config(ties)
    reader, _ = open_index(config)
    try:
        s = Searcher(reader, config)

        def page(offset: int) -> list[str]:
            opts = SearchOptions(limit=7, offset=offset, cutoff_ratio=0.0)
            return [r.id for r in s.search(["same"], opts).queries[0].results]

        pages = [page(o) for o in range(0, 42, 7)]
        everything = [r.id for r in s.search(["same"], SearchOptions(
            limit=100, cutoff_ratio=0.0)).queries[0].results]
    finally:
        reader.close()
    flat = [i for p in pages for i in p]
    assert flat == everything and len(flat) == len(set(flat)) == 30
    assert flat == sorted(flat)  # equal scores: ties broken by id
    assert pages[-1] == []


def test_cli_filters_and_explain(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    code = main(["search", "widget", "--tag", "ops", "--path", "ops/**", "--since",
                 "2026-02-01", "--json", "--explain", "--cutoff-ratio", "0"])
    out = json.loads(capsys.readouterr().out)
    topic = out["queries"][0]
    assert code == 0 and [r["path"] for r in topic["results"]] == ["ops/rollback.md"]
    assert topic["explain"]["filters"] == {"tags": ["ops"], "path": "ops/**",
                                           "since": "2026-02-01"}
    code = main(["search", "widget", "--include-archived", "--tag", "ops", "--list",
                 "--sort", "path", "--offset", "1", "-n", "1", "--cutoff-ratio", "0"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("docs:ops/deploy.md")
    assert main(["search", "widget", "--since", "soon"]) == 2
    assert "ISO date" in capsys.readouterr().err


def test_ls_docs_shows_archived_status(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert main(["ls", "docs"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "notes/old.md" in ln)
    assert "[archived]" in line
    assert main(["ls", "docs", "--json"]) == 0
    docs = {d["path"]: d for d in json.loads(capsys.readouterr().out)}
    assert docs["notes/old.md"]["status"] == "archived" and docs["ops/deploy.md"]["status"] is None


def test_sql_output_formats_and_refusal(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert main(["sql", "select tree, count(*) n from files group by tree order by tree"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["tree", "n"] and table[2].split() == ["docs", "5"]
    assert main(["sql", "--csv", "select tree, count(*) n from files group by 1 order by 1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["tree,n", "docs,5", "more,1"]
    assert main(["sql", "--json", "select count(*) n from chunks where depth = 0"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 6}]
    for statement in ["create table x as select 1", "insert into files select * from files",
                      "copy (select 1) to 'out.csv'", "drop view chunks",
                      "select 1; delete from files"]:
        assert main(["sql", statement]) == 2
        assert "read-only" in capsys.readouterr().err
    assert not (project / "out.csv").exists()
    assert main(["sql", "select count(*) from chunks"]) == 0  # still intact
    assert main(["sql", "--schema"]) == 0
    assert "breadcrumb" in capsys.readouterr().out


def test_mcp_search_filters(project):
    import anyio
    from mcp import Client

    from ra.serve.mcp import create_server

    async def call() -> dict:
        async with Client(create_server(project)) as client:
            result = await client.call_tool("search", {
                "queries": "widget", "tags": ["ops"], "path": "ops/**",
                "since": "2026-02-01", "limit": 5})
            bad = await client.call_tool("search", {"queries": "widget", "since": "soon"})
            first = await client.call_tool("search", {"queries": "widget deploy", "limit": 3,
                                                      "sort": "path"})
            paged = await client.call_tool("search", {"queries": "widget deploy", "limit": 2,
                                                      "offset": 1, "sort": "path"})
            return {"ok": result.structured_content, "bad": bad.is_error,
                    "bad_text": bad.content[0].text, "paged": paged.structured_content,
                    "first": first.structured_content}

    out = anyio.run(call)
    assert [r["path"] for r in out["ok"]["queries"][0]["results"]] == ["ops/rollback.md"]
    assert out["bad"] and "ISO date" in out["bad_text"]
    first = [r["id"] for r in out["first"]["queries"][0]["results"]]
    paged = [r["id"] for r in out["paged"]["queries"][0]["results"]]
    assert len(first) == 3 and paged == first[1:]


def test_a_page_in_an_archive_folder_is_archived(tmp_path):
    """The HTTP working group keeps 34 superseded drafts in ``archive/``, Google Cloud's
    community its unmaintained tutorials in ``archived/``: an archived draft outranked
    the current one. Such pages are archived, as ``status: archived`` says; a front
    matter's own status, a file named so, and an archive's folder name elsewhere in a
    word stay as they are."""
    from ra.text.document import parse_document

    pages = {"archive/cookies.md": "# Cookies\n\nSameSite widget draft.\n",
             "Archived/old.txt": "SameSite widget notes.\n",
             "archives/list.md": "# List\n\nSameSite widget list.\n",
             "archive.md": "# Archive\n\nSameSite widget index.\n",
             "cookies.md": "# Cookies\n\nSameSite widget rules.\n"}
    for rel, text in pages.items():
        (tmp_path / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / rel).write_text(text)
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    assert paths(tmp_path, "samesite widget") == [
        "docs:archive.md", "docs:archives/list.md", "docs:cookies.md"]
    assert paths(tmp_path, "samesite widget", include_archived=True) == [
        "docs:Archived/old.txt", "docs:archive.md", "docs:archive/cookies.md",
        "docs:archives/list.md", "docs:cookies.md"]
    draft = parse_document("---\nstatus: draft\n---\n# D\n", "d", "archive/d.md")
    assert draft.status == "draft"
