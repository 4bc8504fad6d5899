"""``ra sql``: read-only SQL over the current index."""

from __future__ import annotations

import typer

from ra.cli.common import load, open_reader, write_output

HELP = """Run read-only SQL (DuckDB) over the index.

Views: files, chunks, terms, postings, words, lengths, analyzed, surface, links
(`ra sql --schema` lists their columns). Statements that write are refused, and so
is reading anything but the index (other files, other databases, extensions).

Examples:

  ra sql "select count(*) from chunks"

  ra sql "select path, tokens from chunks where depth = 0 order by tokens desc limit 5"

  ra sql --json "select term, df from terms order by df desc limit 10"
"""


def register(app: typer.Typer) -> None:
    app.command("sql", help=HELP)(sql)


def sql(
    query: str | None = typer.Argument(None, help="One or more SQL statements."),
    json_: bool = typer.Option(False, "--json", help="An array of row objects."),
    csv_: bool = typer.Option(False, "--csv", help="CSV with a header row."),
    schema: bool = typer.Option(False, "--schema", help="List the views and columns."),
) -> None:
    from ra.query.sql import as_csv, as_json, as_table, run_sql, schema_text

    if schema:
        write_output(schema_text())
        return
    if not query:
        raise typer.BadParameter("give a SQL statement, or --schema", param_hint="QUERY")
    config = load()
    with open_reader(config) as reader:
        result = run_sql(reader, query)
    write_output(as_json(result) if json_ else as_csv(result) if csv_ else as_table(result))
