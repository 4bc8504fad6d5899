"""``ra context``, ``ra likethis`` and ``ra inspect ctx``: parse options, call
``ra.query.context``, render like ``ra search``.

Warnings (skipped files, includes missing from the index) go to stderr; results go to
stdout in the shapes of ``ra search`` (``--json``: ``{"queries": [...]}``, one entry).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ra.cli import output
from ra.cli.common import BUDGET_HELP, budget, load, open_reader, write_output
from ra.cli.inspect_cmd import inspect_app
from ra.query import render


def register(app: typer.Typer) -> None:
    app.command("context", help=CONTEXT_HELP, no_args_is_help=True)(context)
    app.command("likethis", help=LIKETHIS_HELP, no_args_is_help=True)(likethis)
    inspect_app.command("ctx", help=CTX_HELP, no_args_is_help=True)(inspect_ctx)


CONTEXT_HELP = """Find the knowledge relevant to the files you are about to edit.

Terms come from each file's path, the [[context.rules]] matching it, and its most
distinctive words (TF-IDF against the index); they form one weighted OR query. Files
inside a tree never return their own chunks. Agent rule files whose front matter names
the file (globs, paths, applyTo) come first, then the AGENTS.md or CLAUDE.md of the
folders above it (below the project root), nearest first.

Examples:

  ra context src/api/handlers.rs

  ra context src/api/handlers.rs src/models/user.rs --list

  ra context $(git diff --name-only HEAD~1) --json --max-tokens 4000

  ra context src/main.rs --explain
"""

LIKETHIS_HELP = """Find chunks similar to an indexed chunk (by id) or to a file.

The chunk itself, its sections and the sections containing it are left out.

Examples:

  ra likethis docs:guide.md#error-handling

  ra likethis notes/draft.md --list
"""

CTX_HELP = """Show the context signals of a file: path terms, matching rules, ranked
content terms and the query `ra context` would run (nothing is searched).

Example: ra inspect ctx src/api/handlers.rs --json
"""


def _options(config, limit, terms, tree, list_, max_tokens, explain, tag, path, since,
             until):
    from ra.query.context import ContextOptions

    return ContextOptions(limit=limit, terms=terms, trees=tuple(tree), list_only=list_,
                          max_tokens=budget(max_tokens, config), explain=explain,
                          tags=tuple(tag), path=path, since=since, until=until,
                          read_budget=config.search.max_tokens)


# Filters shared with `ra search` (DESIGN: "Filters on search and context").
_TAG = typer.Option([], "--tag", help="Only documents with this tag (repeatable: any).")
_PATH = typer.Option(None, "--path", help="Only tree-relative paths matching this glob, "
                     "or under this folder.")
_SINCE = typer.Option(None, "--since", help="Only files modified on or after this date.")
_UNTIL = typer.Option(None, "--until", help="Only files modified on or before this date.")


def _render(response, config, json_: bool, list_: bool) -> None:
    from ra.text.analysis import analyzer_for

    for warning in response.warnings:
        output.warn(warning)
    mode = "json" if json_ else "list" if list_ else "full"
    text = render.render_search(response, mode, color=output.use_color(),
                                analyzer=analyzer_for(config.search.stemmer))
    explain = response.queries[0].explain if response.queries else None
    if explain is not None and mode != "json":
        text += render_files(explain.get("files", []), explain.get("included", []))
    write_output(text)


def context(
    files: list[Path] = typer.Argument(..., help=(
        "The files you are working on (one not written yet: its path).")),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, max=1_000_000,
                                     help="Maximum results (default [context] limit, 10)."),
    terms: int | None = typer.Option(None, "--terms", min=1, max=1_000_000,
                                     help="Terms per file in the query (default 15)."),
    tree: list[str] = typer.Option([], "--tree", "-t", help="Only these trees."),
    list_: bool = typer.Option(False, "--list", help="Ids, titles and snippets only."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", "--budget", min=0, max=1_000_000,
                                          help=BUDGET_HELP),
    explain: bool = typer.Option(False, "--explain",
                                 help="Show each file's ranked terms and the query."),
    tag: list[str] = _TAG, path: str | None = _PATH, since: str | None = _SINCE,
    until: str | None = _UNTIL,
) -> None:
    from ra.query.context import context_search

    config = load()
    with open_reader(config) as reader:
        response = context_search(reader, config, list(files),
                                  _options(config, limit, terms, tree, list_, max_tokens,
                                           explain, tag, path, since, until))
    _render(response, config, json_, list_)


def likethis(
    target: str = typer.Argument(..., metavar="ID|FILE", help="A chunk id or a file."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, max=1_000_000,
                                     help="Maximum results (default [context] limit, 10)."),
    terms: int | None = typer.Option(None, "--terms", min=1, max=1_000_000,
                                      help="Terms in the query."),
    tree: list[str] = typer.Option([], "--tree", "-t", help="Only these trees."),
    list_: bool = typer.Option(False, "--list", help="Ids, titles and snippets only."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", "--budget", min=0, max=1_000_000,
                                          help=BUDGET_HELP),
    explain: bool = typer.Option(False, "--explain", help="Show the ranked terms and query."),
    tag: list[str] = _TAG, path: str | None = _PATH, since: str | None = _SINCE,
    until: str | None = _UNTIL,
) -> None:
    from ra.query.context import likethis as find_similar

    config = load()
    with open_reader(config) as reader:
        response = find_similar(reader, config, target,
                                _options(config, limit, terms, tree, list_, max_tokens,
                                         explain, tag, path, since, until))
    _render(response, config, json_, list_)


def inspect_ctx(
    file: Path = typer.Argument(..., help="A file you are working on."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    terms: int | None = typer.Option(None, "--terms", min=1, max=1_000_000,
                                      help="Terms in the query."),
    tree: list[str] = typer.Option([], "--tree", "-t", help="Rank against these trees."),
) -> None:
    from ra.query.signals import extract_signals

    config = load()
    indexed = None
    if config.index_dir is None or not config.trees:
        signals = extract_signals(file, config, trees=tuple(tree), max_terms=terms)
    else:
        with open_reader(config) as reader:
            signals = extract_signals(file, config, reader, trees=tuple(tree),
                                      max_terms=terms)
            # a file in a tree's folder that its include or exclude leaves out is no chunk
            indexed = signals.doc_id is not None and reader.meta(signals.doc_id) is not None
    for warning in signals.warnings:
        output.warn(warning)
    found = {**signals.to_dict(), **({} if indexed is None else {"indexed": indexed})}
    if json_:
        write_output(render.dumps(found) + "\n")
    else:
        write_output(render_files([found], []).lstrip("\n"))


def render_files(files: list[dict], included: list[str]) -> str:
    """Each file's signals as text: rules, ranked terms (source, frequency, IDF, score)."""
    lines = ["", "context:"]
    for f in files:
        where = "" if not f["indexed_as"] else (
            f"indexed as {f['indexed_as']}; " if f.get("indexed", True) else
            f"in tree {f['indexed_as'].split(':', 1)[0]}, not indexed (its include and "
            "exclude leave it out); ")
        trees = ", ".join(f["trees"]) or "all"
        lines.append(f"  {f['file']}  ({f['kind']}; path {f['path']}; {where}trees: {trees})")
        rules = f["rules"]
        if any(rules[k] for k in ("terms", "trees", "include", "search")):
            lines.append("    rules: " + "; ".join(
                f"{k} {v if isinstance(v, dict) else ', '.join(v)}"
                for k, v in rules.items() if v and k != "tree_conflict")
                + ("  (rule trees conflict: all searched)" if rules["tree_conflict"] else ""))
        lines.append(f"    {'term':<18} {'word':<18} {'source':<12} {'origin':<14} "
                     f"{'freq':>5} {'idf':>6} {'score':>8} {'boost':>6}")
        for t in f["terms"]:
            idf, score = ("-", "-") if t["idf"] is None else (f"{t['idf']:.2f}",
                                                                f"{t['score']:.2f}")
            boost = f"{t['boost']:.3g}" if t["selected"] else "-"
            lines.append(f"    {t['term'][:18]:<18} {t['word'][:18]:<18} {t['source']:<12} "
                         f"{t['origin']:<14} {t['frequency']:>5} {idf:>6} "
                         f"{score:>8} {boost:>6}")
        lines.append(f"    ({f['candidates']} candidate terms)")
        lines.append(f"    query: {f['query'] or '(none)'}")
    if included:
        lines.append("  included (a rule's include, a document whose front matter names "
                     "the file, an instruction file of a folder above it): "
                     + ", ".join(included))
    return "\n".join(lines) + "\n"
