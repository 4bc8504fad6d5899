"""``ra search`` and ``ra get``: parse options, call the library, render."""

from __future__ import annotations

import typer
from typer.core import TyperCommand

from ra.cli import output
from ra.cli.common import BUDGET_HELP, budget, load, open_reader, write_output
from ra.query import render


def register(app: typer.Typer) -> None:
    app.command("search", help=SEARCH_HELP, no_args_is_help=True, cls=QueryCommand)(search)
    app.command("get", help=GET_HELP, no_args_is_help=True)(get)


class QueryCommand(TyperCommand):
    """A command whose arguments are queries, which may start with ``-``: ``ra search
    '-docker deploy'`` excludes docker, it is no option ``-d``, and ``ra search --no-dev``
    searches for the flag ``--no-dev``. An argument that is not one of the command's
    options (nor the value of one) goes after a ``--``, so click reads it as an argument;
    options keep their meaning wherever they stand."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        import sys

        # the click typer runs on (its own copy since typer 0.20, click before)
        click = sys.modules[typer.BadParameter.__module__]
        try:
            return super().parse_args(ctx, queries_last(self.params, args))
        except click.NoSuchOption as e:  # a mistyped option: say how to search for it
            raise click.UsageError(
                f"{e.format_message()}; to search for {e.option_name} itself, put it "
                f"after --: ra {ctx.info_name} -- {e.option_name}", ctx) from None


#: How close an unknown ``--name`` must be to an option to be taken for a typo of it
#: (``difflib`` ratio; click suggests from 0.6): ``--lmit``, ``--jsno`` and ``--tags`` are
#: typos, ``--no-dev``, ``--prefix`` and ``--force`` are flags to search for.
TYPO_OF_OPTION = 0.75


def queries_last(params, args: list[str]) -> list[str]:
    """``args`` with everything that is not an option moved after ``--``."""
    takes_value = {"-h": False, "--help": False}
    for p in params:
        if any(o.startswith("-") for o in p.opts):  # an option (typer vendors click)
            for name in (*p.opts, *p.secondary_opts):
                takes_value[name] = not (p.is_flag or p.count)
    options, queries = [], []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            queries += list(rest)
        elif _is_option(arg, takes_value):
            options.append(arg)
            if takes_value.get(arg):
                options += [v for v in [next(rest, None)] if v is not None]
        else:
            queries.append(arg)
    return options + (["--", *queries] if queries else [])


def _is_option(arg: str, takes_value: dict[str, bool]) -> bool:
    """``--name``, ``--name=value``, ``-n``, ``-n5`` (a short option with its value) and
    ``-vv`` (short flags together) are options; ``-docker`` and ``-foo bar`` are text.
    An unknown ``--long`` option close to one of the command's (``--lmit``) stays an
    option, for click to say it does not exist and suggest the right one; any other
    (``--no-dev``) is a query, as is an argument whose name holds a space (``'--base
    option'``)."""
    if arg.startswith("--"):
        name = arg.split("=", 1)[0]
        if any(c.isspace() for c in name):
            return False
        if name in takes_value or len(name) == 2:
            return True
        import difflib

        return bool(difflib.get_close_matches(name, takes_value, 1, TYPO_OF_OPTION))
    if not arg.startswith("-") or len(arg) < 2:
        return False
    if arg in takes_value:
        return True
    if takes_value.get(arg[:2]) and arg[2:].isdigit():
        return True
    return all(takes_value.get(f"-{c}") is False for c in arg[1:])


SEARCH_HELP = """Search the knowledge base; every argument is its own topic.

Words are AND'd and typo-tolerant, but for a question's opening words ("how to", "what
is a"), articles and "vs", which only add score; an abbreviation defined in parentheses
("generic associated types (GATs)") may stand for its words; a long query (six words or
more) or one that says "or" is ranked instead, chunks with more of its words first. When fewer
chunks than asked for hold every word, the chunks holding most of them follow, marked.
"quoted phrases", OR, -term / NOT term, (groups), field:term (title, tags, path, body,
tree), term^2 boosts and prefix* work too; only capital AND/OR/NOT are operators. A
query that is not valid syntax is searched for its words, with a note (--strict: an
error). A flag is a query too: ra search --no-dev (an argument after -- is never an
option).

Examples:

  ra search "error handling"

  ra search "error handling" "logging conventions" --list

  ra search 'title:install -windows' --json --max-tokens 2000

  ra search deploy --tag ops --path 'runbooks/**' --since 2026-01-01 --sort date
"""

GET_HELP = """Print one chunk, or a whole document, by id.

With --links, the chunks it links to follow (each once, in the order of the links),
within --max-tokens if given: in full while they fit, else as id and title.

Examples:

  ra get docs:guide.md#installation

  ra get docs:guide.md            (the whole document)

  ra get docs:guide.md#setup --full-document --json

  ra get docs:guide.md#setup --links --max-tokens 3000
"""


def _mode(list_: bool, matches: bool, json_: bool, output_: str | None) -> str:
    if output_:
        if output_ not in render.MODES:
            raise typer.BadParameter(f"choose one of {', '.join(render.MODES)}",
                                     param_hint="--output")
        return output_
    return "json" if json_ else "list" if list_ else "matches" if matches else "full"


def search(
    queries: list[str] = typer.Argument(..., help="One or more topics."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, max=1_000_000,
                                     help="Results per topic (default 5)."),
    list_: bool = typer.Option(False, "--list", help="Ids, titles and snippets only."),
    matches: bool = typer.Option(False, "--matches", help="Only the matching lines."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    output_: str | None = typer.Option(None, "--output", "-o",
                                       help="full | list | matches | json"),
    max_tokens: int | None = typer.Option(None, "--max-tokens", "--budget", min=0, max=1_000_000,
                                          help=BUDGET_HELP),
    explain: bool = typer.Option(False, "--explain",
                                 help="Show the parsed query, expansions, SQL, timings."),
    tree: list[str] = typer.Option([], "--tree", "-t", help="Only these trees."),
    candidate_limit: int | None = typer.Option(None, "--candidate-limit", min=1, max=1_000_000),
    cutoff_ratio: float | None = typer.Option(None, "--cutoff-ratio", min=0.0, max=1.0),
    aggregation_threshold: float | None = typer.Option(None, "--aggregation-threshold",
                                                       min=0.0, max=1.0),
    no_aggregation: bool = typer.Option(False, "--no-aggregation"),
    fuzzy: int | None = typer.Option(None, "--fuzzy", min=0, max=2,
                                     help="Fuzzy edit distance (0 turns fuzzy off)."),
    raw: bool = typer.Option(False, "--raw", help=(
        "BM25F over the exact terms only: no fuzzy matching, feedback or meaning, no "
        "preference for the page or file the query names, release notes scored in full.")),
    include_archived: bool = typer.Option(False, "--include-archived",
                                          help="Also search notes with status: archived, "
                                          "or in an archive/ folder."),
    tag: list[str] = typer.Option([], "--tag", help="Only documents with this tag "
                                  "(repeatable: any of them)."),
    path: str | None = typer.Option(None, "--path", help="Only paths matching this glob "
                                    "(tree-relative, e.g. 'api/**'), or under this "
                                    "folder (e.g. 'api/')."),
    since: str | None = typer.Option(None, "--since", help="Only files modified on or "
                                     "after this ISO date."),
    until: str | None = typer.Option(None, "--until", help="Only files modified on or "
                                     "before this ISO date."),
    offset: int = typer.Option(0, "--offset", min=0, max=1_000_000,
                               help="Skip this many results (pages)."),
    sort: str = typer.Option("score", "--sort", help="score | date | path"),
    semantic: bool | None = typer.Option(None, "--semantic/--no-semantic", help="Fuse "
                                         "meaning with words ([semantic]; default: as "
                                         "configured)."),
    strict: bool = typer.Option(False, "--strict", help="Report a query that is not valid "
                                "syntax as an error, instead of searching for its words."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True),
) -> None:
    from ra.query.search import Searcher, SearchOptions

    mode = _mode(list_, matches, json_, output_)
    config = load()
    options = SearchOptions(
        limit=limit, candidate_limit=candidate_limit, cutoff_ratio=cutoff_ratio,
        aggregation_threshold=aggregation_threshold, aggregation=not no_aggregation,
        fuzzy=None if fuzzy is None else fuzzy > 0, fuzzy_distance=fuzzy, raw=raw,
        trees=tuple(tree), include_archived=include_archived,
        list_only=list_ or mode == "list",
        max_tokens=budget(max_tokens, config), explain=explain, tags=tuple(tag), path=path,
        since=since, until=until, offset=offset, sort=sort, semantic=semantic, strict=strict,
        read_budget=config.search.max_tokens)
    meaning = config.semantic.enabled if semantic is None else semantic
    with open_reader(config, semantic=meaning and not raw) as reader:
        searcher = Searcher(reader, config)
        response = searcher.search(list(queries), options)
        if note := one_per_word(list(queries)):
            response.notes.append(note)
        text = render.render_search(response, mode, color=output.use_color(),
                                    analyzer=searcher.analyzer)
    for note in response.notes:
        output.note(note)
    write_output(text)


#: Words that no one searches for alone: arguments that hold one of them are a sentence
#: typed without quotes, not topics
_SENTENCE_WORDS = frozenset({"how", "what", "why", "where", "when", "which", "who", "to",
                             "a", "an", "the", "do", "does", "is", "are", "can", "i", "in",
                             "of", "for", "with", "and", "or", "my", "on"})


def one_per_word(queries: list[str]) -> str | None:
    """A note when the topics look like one query typed without quotes, every argument
    one word and three or more of them, or one of them a word no one searches for alone
    (``ra search how to set a timeout`` searched "how", "to", "set", "a" and "timeout",
    3,848 tokens of five topics, without the timeouts page); None otherwise."""
    if len(queries) < 2 or any(len(q.split()) != 1 for q in queries):
        return None
    if len(queries) < 3 and not _SENTENCE_WORDS.intersection(q.lower() for q in queries):
        return None
    joined = " ".join(queries)
    return (f"searched {len(queries)} topics, one per argument; to search the words "
            f"together, quote them: ra search \"{joined}\"")


def get(
    chunk_id: str = typer.Argument(..., metavar="ID", help="tree:path or tree:path#slug"),
    full_document: bool = typer.Option(False, "--full-document",
                                       help="The whole document the chunk belongs to."),
    json_: bool = typer.Option(False, "--json", help="JSON output."),
    links: bool = typer.Option(False, "--links", help="Also the chunks it links to."),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", "--budget", min=0, help=(
            "Token budget for the chunk and its links (default [search] max_tokens, 4000; "
            "0: none): a larger chunk comes as its own text and its sections' ids.")),
    from_line: int | None = typer.Option(
        None, "--from-line", min=1, metavar="LINE", help=(
            "Read on from this line of the chunk's file: a chunk larger than the budget, "
            "a page at a time (the answer says the line to read on from).")),
) -> None:
    from ra.query.get import get_chunk

    config = load()
    with open_reader(config) as reader:
        found = get_chunk(reader, config, chunk_id, full_document=full_document,
                          links=links, max_tokens=budget(max_tokens, config),
                          from_line=from_line)
    write_output(render.dumps(found.to_dict()) + "\n" if json_ else render.render_chunk(found))
