"""``ra inspect doc`` and ``ra ls``: look at how files are chunked and what is indexed."""

from __future__ import annotations

from pathlib import Path

import typer

from ra.cli.common import load, open_reader, write_output
from ra.cli.groups import HintingGroup
from ra.query import render


class _InspectGroup(HintingGroup):
    """``ra inspect docs/guide.md`` names a file where the subcommand goes."""

    def hint(self, name: str) -> str | None:
        return f"'ra inspect doc {name}'" if "/" in name or "." in name else None


inspect_app = typer.Typer(help="Show how ra sees a file.\n\nExample: ra inspect doc docs/guide.md",
                          no_args_is_help=True, cls=_InspectGroup)


def register(app: typer.Typer) -> None:
    app.add_typer(inspect_app, name="inspect")
    app.command("ls", help=LS_HELP)(ls)


LS_HELP = """List trees (the default), documents or chunks of the index.

Examples:

  ra ls

  ra ls docs --json

  ra ls chunks --tree docs
"""


@inspect_app.command("doc", help="Show how ra parses and chunks a file (the index is not "
                     "touched).\n\nExample: ra inspect doc docs/guide.md --json")
def inspect_doc(
    file: Path = typer.Argument(..., help="A markdown or text file."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
) -> None:
    from ra.pipeline.inspect import inspect_document

    info = inspect_document(file, load())
    if json_:
        write_output(render.dumps(info) + "\n")
        return
    lines = [f"File: {info['file']}", f"Type: {info['type']}", f"Title: {info['title']}"]
    if info["tags"]:
        lines.append(f"Tags: {', '.join(info['tags'])}")
    if info["frontmatter"]:
        lines.append("Frontmatter:")
        lines += [f"  {k}: {v!r}" for k, v in info["frontmatter"].items()]
    lines.append("\nChunks:")
    for i, c in enumerate(info["chunks"], 1):
        indent = "  " * c["depth"]
        lines.append(f"  {i}. {indent}{c['id']}")
        lines.append(f"     {indent}Title: {c['title']!r}  ({c['chars']:,} chars, "
                     f"{c['tokens']:,} tokens, bytes {c['byte_start']}-{c['byte_end']})")
        if c.get("warning"):
            lines.append(f"     {indent}warning: {c['warning']}")
    for p in info["problems"]:
        lines.append(f"warning: {p}")
    write_output("\n".join(lines) + "\n")


def ls(
    what: str = typer.Argument("trees", help="trees | docs | chunks",
                               show_default=True),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    tree: list[str] = typer.Option([], "--tree", "-t", help="Only these trees."),
) -> None:
    from ra.query.listing import list_chunks, list_docs, list_trees

    if what not in ("trees", "docs", "chunks"):
        raise typer.BadParameter("choose trees, docs or chunks", param_hint="WHAT")
    config = load()
    config.require_trees(tree)
    if what == "trees":
        rows = list_trees(config)
    else:
        with open_reader(config) as reader:
            rows = (list_docs if what == "docs" else list_chunks)(reader, tuple(tree))
    if json_:
        write_output(render.dumps(rows) + "\n")
        return
    write_output("".join(_ls_line(what, r) + "\n" for r in rows))


def _ls_line(what: str, r: dict) -> str:
    if what == "trees":
        return f"{r['name']}\t{r['scope']}\t{r['path']}"
    if what == "docs":
        status = f"\t[{r['status']}]" if r.get("status") else ""
        return f"{r['id']}\t{r['title']}\t{render.plural(r['chunks'], 'chunk')}{status}"
    return f"{r['id']}\t{r['title']}\t{r['tokens']} tokens"
