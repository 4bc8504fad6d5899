"""``ra sql`` reads the index and nothing else: DuckDB's external access is off (only the
current generation's folder allowed) and locked, after the views are made."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from conftest import GUIDE
from ra.cli.app import main


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(GUIDE)
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sql(capsys, query: str, *flags: str) -> tuple[int, str, str]:
    code = main(["sql", query, *flags])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("query", [
    "select * from read_csv('/etc/passwd')",               # printed the file
    "select * from read_text('/etc/hostname')",
    "select * from read_blob('/etc/passwd')",
    "select * from glob('/etc/*')",
    "select * from read_json('{home}/secret.json')",
    "select * from read_parquet('{home}/elsewhere.parquet')",
    "select * from read_parquet('{index}/../*/chunks/*.parquet')",
])
def test_files_outside_the_index_are_refused(project, capsys, query, tmp_path):
    (tmp_path / "secret.json").write_text('{"password": "hunter2"}')
    duckdb.execute(f"copy (select 'hunter2' as password) to '{tmp_path}/elsewhere.parquet'")
    assert sql(capsys, "select count(*) from chunks")[0] == 0  # builds the index
    index = project / ".ra" / "index" / (project / ".ra" / "index" / "CURRENT").read_text().strip()
    code, out, err = sql(capsys, query.format(home=tmp_path, index=index))
    assert code == 2 and out == ""
    assert "ra sql reads the index and nothing else" in err
    assert "hunter2" not in err and "root:" not in err


@pytest.mark.parametrize("query", ["set enable_external_access = true",
                                   "set lock_configuration = false",
                                   "reset allowed_directories"])
def test_the_sandbox_cannot_be_switched_off(project, capsys, query):
    code, _, err = sql(capsys, f"{query}; select * from read_csv('/etc/passwd')")
    assert code == 2 and "root:" not in err


def test_the_views_still_read_the_index(project, capsys):
    code, out, _ = sql(capsys, "select path, count(*) as n from chunks group by path", "--json")
    assert code == 0 and json.loads(out) == [{"path": "guide.md", "n": 5}]
    code, out, _ = sql(capsys, "select count(*) as n from postings p join terms t "
                               "using (term_id) join files f on true", "--json")
    assert code == 0 and json.loads(out)[0]["n"] > 0


def test_the_help_names_every_view():
    """``--schema`` lists them from ``VIEWS``; the help is written out, and had left out
    ``links``."""
    from ra.cli.sql_cmd import HELP
    from ra.query.sql import VIEWS

    named = HELP.split("Views: ")[1].split("(")[0].replace("\n", " ")
    assert [v.strip() for v in named.split(",")] == list(VIEWS)


def test_a_table_shortens_text_but_not_ids_or_paths(project, capsys):
    """An id shortened with … could not be copied into ``ra get`` (ruff's crate
    READMEs: ``docs:crates/ty_python_semantic/README.md#ty_python_sem…``); long prose
    is still shortened, so a row stays on one screen."""
    deep = project / "docs" / "a-folder-with-a-long-name" / "and-another-one-below-it"
    deep.mkdir(parents=True)
    (deep / "a-page-whose-name-is-long-too.md").write_text(
        "# A heading that is long enough to make the id long\n\n" + "Some words. " * 20)
    code, out, _ = sql(capsys, "SELECT id, path, plain FROM chunks WHERE path LIKE 'a-folder%'")
    wanted = ("docs:a-folder-with-a-long-name/and-another-one-below-it/"
              "a-page-whose-name-is-long-too.md#a-heading-that-is-long-enough-to-make-the-id-long")
    assert code == 0 and wanted in out
    assert ("  a-folder-with-a-long-name/and-another-one-below-it/a-page-whose-name-is-long"
            "-too.md  " in out)
    assert "make the id long Some word…" in out  # the text, shortened
