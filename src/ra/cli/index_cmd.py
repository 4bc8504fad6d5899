"""Commands about configuration and the index: init, config, update, status, check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import typer

from ra.cli import output
from ra.cli.common import load, progress_bar, write_output


def register(app: typer.Typer) -> None:
    app.command("init", help=INIT_HELP)(init)
    app.command("config", help="Print the effective merged configuration as TOML.\n\n"
                "Example: ra config")(config_cmd)
    app.command("update", help="Rebuild the whole index now.\n\nExample: ra update")(update)
    app.command("status", help="Configuration files, trees, and the index's state.\n\n"
                "Examples: ra status; ra status --json")(status)
    app.command("check", help=CHECK_HELP)(check)


INIT_HELP = """Create a starter .ra.toml (with commented examples) in this folder.

Examples:

  ra init

  ra init --global      (writes ~/.ra.toml)
"""

CHECK_HELP = """Validate configuration, trees, files and the index.

Exit code 0 when all is well, 1 with warnings, 2 with errors.

Example: ra check
"""

STARTER = """\
# ra configuration: https://github.com/ (see `ra --help`)
# Trees are named folders of markdown and text files to index.

[tree.docs]
path = "./docs"
# include = ["**/*.md", "**/*.markdown", "**/*.txt"]   # the default
# exclude = ["**/drafts/**"]

# [settings]
# default_limit = 5          # results per topic
# local_boost = 1.5          # score multiplier for trees not from ~/.ra.toml
# chunk_at_headings = true   # one chunk per heading (false: one per file)
# max_chunk_size = 50000     # warn about chunks longer than this (characters)
# index_dir = ".ra/index"    # where the index lives

# [search]
# fuzzy = true               # typo tolerance for words longer than 4 characters
# fuzzy_distance = 1         # edits allowed (0-2)
# stemmer = "english"
# candidate_limit = 100
# cutoff_ratio = 0.5         # elbow: stop where the score drops below this ratio
# aggregation_threshold = 0.75
# long_query_words = 6       # from this many words a query is ranked, not filtered
# coordination = 1.0         # how much a chunk missing some of those words loses

# [context]
# limit = 10
# terms = 15

# [[context.rules]]
# match = "src/api/**"
# terms = ["http", "routing"]
# include = ["docs:api/overview.md"]
"""

GLOBAL_STARTER = STARTER.replace('path = "./docs"', 'path = "~/docs"')


def init(
    global_: bool = typer.Option(False, "--global", help="Write ~/.ra.toml instead."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    target = (Path.home() if global_ else Path.cwd()) / ".ra.toml"
    if target.exists() and not force:
        output.error(FileExistsError(f"{target} exists; use --force to overwrite it"))
        raise typer.Exit(1)
    target.write_text(GLOBAL_STARTER if global_ else STARTER)
    output.note(f"wrote {target}")
    if not global_:
        ignored = _gitignore_index(Path.cwd())
        if ignored:
            output.note(f"added .ra/ to {ignored}")


def _gitignore_index(cwd: Path) -> Path | None:
    """Add ``.ra/`` to the repository's .gitignore when cwd is inside a git repo."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, text=True,
                             capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    ignore = Path(top) / ".gitignore"
    lines = ignore.read_text().splitlines() if ignore.exists() else []
    if any(line.strip() in (".ra/", ".ra", "/.ra/", "/.ra") for line in lines):
        return None
    prefix = "" if not lines or ignore.read_text().endswith("\n") else "\n"
    with ignore.open("a") as fh:
        fh.write(f"{prefix}.ra/\n")
    return ignore


def config_cmd() -> None:
    write_output(load().to_toml())


def update() -> None:
    from ra.pipeline.run import build

    config = load()
    report = build(config, progress=progress_bar())
    for problem in report.problems:
        output.warn(problem)
    limit = config.settings.max_chunk_size
    for chunk_id, chars in report.oversized:
        output.warn(f"{chunk_id}: {chars} characters (over max_chunk_size {limit})")
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in report.stage_seconds.items())
    output.note(f"indexed {report.files} files into {report.chunks} chunks, "
                f"{report.terms} terms in {report.seconds:.1f}s ({stages})")


def status(json_: bool = typer.Option(False, "--json", help="JSON output.")) -> None:
    from ra.status import collect_status

    info = collect_status(load())
    if json_:
        write_output(output.dumps(info) + "\n")
        return
    lines = ["config files (nearest first):"]
    lines += [f"  {f}" for f in info["config_files"]] or ["  (none)"]
    lines.append("trees:")
    for t in info["trees"]:
        missing = "" if t["exists"] else "  [missing folder]"
        lines.append(f"  {t['name']} ({t['scope']}) {t['path']}: {t['documents']} documents, "
                     f"{t['chunks']} chunks{missing}")
    idx = info["index"]
    lines.append(f"index: {idx['path']}")
    lines.append(f"  state: {idx['state']}")
    if idx.get("built_at"):
        lines.append(f"  last update: {idx['built_at']}, size {idx['size_bytes']:,} bytes")
    write_output("\n".join(lines) + "\n")


def check() -> None:
    from ra.status import run_checks

    config = load()
    findings = run_checks(config)
    for level, message in findings:
        if level == "error":
            output.error(RuntimeError(message))
        elif level == "warning":
            output.warn(message)
        else:
            output.note(message)
    errors = sum(1 for level, _ in findings if level == "error")
    warnings = sum(1 for level, _ in findings if level == "warning") + len(config.warnings)
    output.note(f"{errors} errors, {warnings} warnings")
    raise typer.Exit(2 if errors else 1 if warnings else 0)
