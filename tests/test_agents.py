"""``ra agents``: the pure generator (``ra.agents``) and the command, in process.

HOME is an empty temporary folder (conftest), so ``~/.agents.md`` is whatever a test
writes there; the working directory is a temporary project (monkeypatch.chdir).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ra import agents
from ra.cli.app import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["agents", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def written(folder: Path) -> set[str]:
    """The instruction files in ``folder`` (not the ``.agents.md`` template)."""
    return {p.name for p in folder.glob("*.md") if not p.name.startswith(".")}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    (tmp_path / ".agents.md").write_text("# Project rules\n\nUse tabs.\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- the pure generator --------------------------------------------------------------------

def test_compose_orders_project_then_global_then_section():
    text = agents.compose(["# Project\n\nP.\n\n\n", "# Global\nG.\n"])
    assert text.startswith(agents.HEADER + "\n\n# Project\n\nP.\n\n# Global\nG.\n\n## ra ")
    assert text.index("# Project") < text.index("# Global") < text.index("## ra knowledge")
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_compose_skips_empty_templates_and_is_deterministic():
    assert agents.compose(["", "  \n"]) == agents.compose([])
    assert agents.compose(["x"]) == agents.compose(["x"])


def test_section_teaches_search_context_triggers_and_mcp_tools():
    section = agents.SECTION
    assert "source of truth" in section or "authoritative" in section
    assert 'ra search "error handling" "logging conventions"' in section
    assert "ra context src/" in section
    assert "### When to search" in section and "**Before writing new code**" in section
    for tool in ("`search`", "`context`", "`get`", "`list_sources`"):
        assert tool in section


def test_file_names():
    assert agents.file_names() == ["AGENTS.md"]
    assert agents.file_names(claude=True) == ["AGENTS.md", "CLAUDE.md"]
    assert agents.file_names(gemini=True) == ["AGENTS.md", "GEMINI.md"]
    assert agents.file_names(all_=True) == ["AGENTS.md", "CLAUDE.md", "GEMINI.md"]


def test_project_root_is_the_nearest_local_config_folder(tmp_path, isolated_home):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    local, glob = tmp_path / ".ra.toml", isolated_home / ".ra.toml"
    assert agents.project_root([local, glob], sub) == tmp_path
    assert agents.project_root([glob], sub) == sub  # ~/.ra.toml does not make home the root
    assert agents.project_root([], sub) == sub


def test_template_paths_do_not_repeat_when_the_root_is_home(tmp_path):
    assert agents.template_paths(tmp_path / "p", tmp_path) == [
        tmp_path / "p" / ".agents.md", tmp_path / ".agents.md"]
    assert agents.template_paths(tmp_path, tmp_path) == [tmp_path / ".agents.md"]


def test_unified_diff_of_a_new_and_a_changed_file():
    created = agents.unified_diff(None, "one\ntwo\n", "AGENTS.md")
    assert created.startswith("--- /dev/null\n+++ b/AGENTS.md\n") and "+two\n" in created
    changed = agents.unified_diff("one\ntwo\n", "one\nthree\n", "AGENTS.md")
    assert "--- a/AGENTS.md" in changed and "-two\n" in changed and "+three\n" in changed
    assert agents.unified_diff("same\n", "same\n", "AGENTS.md") == ""
    assert agents.unified_diff("no newline", "x\n", "A.md").count("\\ No newline") == 1


# --- the command ---------------------------------------------------------------------------

def test_writes_agents_md_with_both_templates_and_shows_the_diff(project, capsys,
                                                                  isolated_home):
    (isolated_home / ".agents.md").write_text("# Everywhere\n\nBe brief.\n")
    code, out, err = run(capsys)
    written = (project / "AGENTS.md").read_text()
    assert code == 0 and "AGENTS.md: created" in err
    assert written.index("Use tabs.") < written.index("Be brief.") < written.index("## ra ")
    assert out.startswith("--- /dev/null\n+++ b/AGENTS.md\n") and "+Use tabs.\n" in out
    assert not (project / "CLAUDE.md").exists() and not (project / "GEMINI.md").exists()


def test_second_run_changes_nothing_and_says_so(project, capsys):
    run(capsys)
    before = (project / "AGENTS.md").stat().st_mtime_ns
    code, out, err = run(capsys)
    assert code == 0 and out == "" and "AGENTS.md: up to date, no changes" in err
    assert (project / "AGENTS.md").stat().st_mtime_ns == before


def test_a_template_change_is_shown_as_a_diff_and_written(project, capsys):
    run(capsys)
    (project / ".agents.md").write_text("# Project rules\n\nUse spaces.\n")
    code, out, err = run(capsys)
    assert code == 0 and "-Use tabs.\n" in out and "+Use spaces.\n" in out
    assert "AGENTS.md: updated" in err
    assert "Use spaces." in (project / "AGENTS.md").read_text()


def test_written_next_to_the_nearest_config_from_a_subfolder(project, capsys, monkeypatch):
    (project / "docs" / "deep").mkdir()
    monkeypatch.chdir(project / "docs" / "deep")
    assert run(capsys)[0] == 0
    assert written(project) == {"AGENTS.md"} and not written(project / "docs" / "deep")


def test_without_config_writes_in_the_working_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "--quiet")[0] == 0
    text = (tmp_path / "AGENTS.md").read_text()
    assert text == agents.compose([])


@pytest.mark.parametrize(("flags", "files"), [
    (["--claude"], {"AGENTS.md", "CLAUDE.md"}),
    (["--gemini"], {"AGENTS.md", "GEMINI.md"}),
    (["--claude", "--gemini"], {"AGENTS.md", "CLAUDE.md", "GEMINI.md"}),
    (["--all"], {"AGENTS.md", "CLAUDE.md", "GEMINI.md"}),
])
def test_variants(project, capsys, flags, files):
    assert run(capsys, *flags, "--quiet")[0] == 0
    assert written(project) == files
    assert len({(project / f).read_text() for f in files}) == 1


def test_stdout_prints_and_writes_nothing(project, capsys):
    code, out, _ = run(capsys, "--stdout", "--all")
    assert code == 0 and out == agents.compose(["# Project rules\n\nUse tabs.\n"])
    assert not written(project)


def test_diff_shows_pending_changes_and_writes_nothing(project, capsys):
    code, out, err = run(capsys, "--diff", "--claude")
    assert code == 0 and out.count("--- /dev/null") == 2 and "+++ b/CLAUDE.md" in out
    assert "would be created" in err and not written(project)
    run(capsys, "--quiet")
    code, out, err = run(capsys, "--diff")
    assert code == 0 and out == "" and "no changes" in err


def test_quiet_writes_without_a_diff(project, capsys):
    code, out, err = run(capsys, "--quiet", "--all")
    assert code == 0 and out == "" and err.count(": created") == 3


def test_stdout_and_diff_together_are_refused(project, capsys):
    code, _, err = run(capsys, "--stdout", "--diff")
    assert code == 2 and "--stdout" in err and not written(project)


def test_help_has_examples(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "Example" in out and "--claude" in out
