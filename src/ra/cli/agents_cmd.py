"""``ra agents``: write, print or diff the agent instruction files (see ``ra.agents``)."""

from __future__ import annotations

from pathlib import Path

import typer

from ra.cli import output
from ra.cli.common import write_file, write_output


def register(app: typer.Typer) -> None:
    app.command("agents", help=AGENTS_HELP)(agents)


AGENTS_HELP = """Generate AGENTS.md (and CLAUDE.md, GEMINI.md) that teach agents to use ra.

The file is .agents.md of the project, then ~/.agents.md, then a generated section on
why and how to search ra. It is written next to the nearest .ra.toml (else here), and
the changes are shown as a diff.

Examples:

  ra agents

  ra agents --all --quiet

  ra agents --claude --diff

  ra agents --stdout
"""


def agents(
    claude: bool = typer.Option(False, "--claude", help="Also generate CLAUDE.md."),
    gemini: bool = typer.Option(False, "--gemini", help="Also generate GEMINI.md."),
    all_: bool = typer.Option(False, "--all", help="Generate every variant."),
    stdout: bool = typer.Option(False, "--stdout", help="Print instead of writing files."),
    diff: bool = typer.Option(False, "--diff", help="Show the pending changes; write nothing."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No diff when writing."),
) -> None:
    from ra import agents as gen
    from ra.config.settings import discover_config_files

    if stdout and diff:
        raise typer.BadParameter("choose one of --stdout and --diff", param_hint="--diff")
    cwd = Path.cwd()
    root = gen.project_root(discover_config_files(cwd), cwd)
    text = gen.compose(gen.read_templates(gen.template_paths(root, Path.home())))
    if stdout:
        write_output(text)
        return
    for name in gen.file_names(claude, gemini, all_):
        _update(root / name, text, show=not quiet or diff, write=not diff)


def _update(path: Path, text: str, *, show: bool, write: bool) -> None:
    from ra.agents import unified_diff

    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if old == text:
        output.note(f"{path.name}: up to date, no changes")
        return
    if show:
        write_output(unified_diff(old, text, path.name))
    if write:
        write_file(path, text)
        output.note(f"{path.name}: {'created' if old is None else 'updated'} ({path})")
    else:
        output.note(f"{path.name}: would be {'created' if old is None else 'updated'}")
