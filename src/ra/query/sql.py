"""``ra sql``: read-only DuckDB over the current generation.

The views are those of ``IndexReader`` (``files``, ``chunks``, ``terms``, ``postings``,
``words``, ``lengths``, ``analyzed``, ``surface``, ``links``), each the whole artifact
across partitions (``links`` with each target resolved to a chunk id). Only statements
that read are run: DuckDB classifies each statement before anything executes, and
anything but SELECT (WITH, DESCRIBE, SHOW), EXPLAIN or PRAGMA is refused — so
``CREATE``, ``INSERT``, ``COPY … TO`` or ``ATTACH`` cannot touch the index or write files.

And they read the index and nothing else: the statements run on a connection of their own
whose views are made first, after which DuckDB's external access is switched off with
only the generation's folder allowed (``allowed_directories``), and the configuration is
locked so that no statement can switch it back on. ``read_csv('/etc/passwd')``, ``glob``,
``ATTACH``, ``INSTALL`` and the like fail with a permission error, which is said plainly.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from ra.errors import QueryError

#: Views documented for users, with the artifact each one reads.
VIEWS = ("files", "chunks", "terms", "postings", "words", "lengths", "analyzed", "surface",
         "links")
READING = {"SELECT", "EXPLAIN", "PRAGMA"}


@dataclass
class SqlResult:
    columns: list[str]
    rows: list[tuple]

    def records(self) -> list[dict]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]


def check_read_only(con, text: str) -> None:
    """Refuse anything but reading statements (before any of them runs)."""
    import duckdb

    try:
        statements = con.extract_statements(text)
    except duckdb.Error as exc:
        raise QueryError(f"SQL syntax error: {exc}", syntax=True) from None
    if not statements:
        raise QueryError("no SQL statement given", hint='e.g. ra sql "select count(*) '
                         'from chunks"')
    for st in statements:
        kind = st.type.name
        if kind not in READING:
            raise QueryError(f"ra sql is read-only: {kind} statements are refused; the "
                             "index was not touched", syntax=False,
                             hint="use SELECT over the views: " + ", ".join(VIEWS))


def run_sql(reader, text: str) -> SqlResult:
    """Run read-only ``text`` against the views of ``reader``'s generation; the last
    statement's rows."""
    import duckdb

    with sandboxed(reader.generation) as con:
        check_read_only(con, text)
        try:
            cursor = con.execute(text)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchall() if cursor.description else []
        except duckdb.PermissionException as exc:
            raise QueryError(f"ra sql reads the index and nothing else: {_first_line(exc)}",
                             syntax=False, hint="query the views: " + ", ".join(VIEWS)
                             ) from None
        except duckdb.Error as exc:
            raise QueryError(f"SQL error: {exc}", syntax=False) from None
    return SqlResult(columns, rows)


def sandboxed(generation):
    """A DuckDB connection with the views over ``generation`` that can read nothing else
    (its configuration locked)."""
    import duckdb

    from ra.index.relations import create_views

    con = duckdb.connect(config={"threads": 2})
    try:
        con.execute("SET enable_progress_bar = false")
        create_views(con, generation)
        con.execute("SET allowed_directories = ?", [[str(generation.path) + "/"]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _first_line(exc: Exception) -> str:
    return str(exc).split("\n", 1)[0].removeprefix("Permission Error: ")


def schema_text() -> str:
    """Every view with its columns, types and descriptions."""
    from ra.store.artifacts import describe

    out = []
    for view in VIEWS:
        out.append(f"{view}")
        for name, type_, doc in describe(view):
            out.append(f"  {name:<14} {type_:<16} {doc}")
        out.append("")
    return "\n".join(out)


def as_table(result: SqlResult, max_width: int = 60) -> str:
    """An aligned text table, long text shortened with …; ids and paths (a column named
    ``id``, ``path`` or ``…_id``, or a value without a space) whole: shortened, an id
    could not be copied into ``ra get``, nor a path opened."""
    whole = [c == "id" or c == "path" or c.endswith("_id") for c in result.columns]

    def cell(v, keep: bool) -> str:
        text = "NULL" if v is None else str(v).replace("\n", "\\n")
        if len(text) <= max_width or keep or not any(c.isspace() for c in text):
            return text
        return text[:max_width - 1] + "…"

    cells = [[cell(v, keep) for v, keep in zip(row, whole, strict=True)]
             for row in result.rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells])
              for i, c in enumerate(result.columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(result.columns, widths, strict=True))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join([line.rstrip(), rule, *(b.rstrip() for b in body)]) + "\n"


def as_json(result: SqlResult) -> str:
    return json.dumps(result.records(), indent=2, ensure_ascii=False, default=str) + "\n"


def as_csv(result: SqlResult) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(result.columns)
    writer.writerows(result.rows)
    return buf.getvalue()
