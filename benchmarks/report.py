"""Tables and run metadata shared by the benchmark modules.

Every measurement ends as a ``Table``: the same object prints to the terminal and goes
into the Markdown report, and its rows are plain values, so the JSON report is just
``asdict``. Ratios are always ra ÷ peer, computed from numbers of the same run.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ATTRIBUTION = (
    "Corpora: tldr-pages (© the tldr-pages team and contributors, CC BY 4.0), "
    "The Rust Programming Language (© The Rust Project Developers, MIT OR Apache-2.0), "
    "Microsoft C++ docs (© Microsoft Corporation, CC BY 4.0). Unmodified extracts; "
    "sources, commits and licenses in `shared/corpora/LICENSES.md`. "
    "SciFact (Wadden et al., 2020; CC BY-NC 2.0) is used for evaluation only: "
    "no claim or abstract text appears here."
)


@dataclass
class Table:
    """One measurement: a title, column names, rows, and an optional note."""

    title: str
    columns: list[str]
    rows: list[list] = field(default_factory=list)
    note: str = ""

    def markdown(self) -> str:
        lines = [f"### {self.title}", "",
                 "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in self.rows]
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines) + "\n"


def fmt(value) -> str:
    """A cell: floats to four significant places, None as a dash, pipes escaped."""
    if value is None:
        return "–"
    if isinstance(value, float):
        if value == 0:
            return "0"
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def ratio(ra: float | None, peer: float | None) -> float | None:
    """ra ÷ peer, or None when either is missing or the peer's is zero."""
    if ra is None or not peer:
        return None
    return round(ra / peer, 2)


def machine() -> dict:
    """What the numbers were measured on (load matters on a shared machine)."""
    from importlib import metadata

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    import sqlite3

    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "commit": _git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "versions": {n: version(n) for n in ("ra", "duckdb", "pyarrow", "tantivy", "bm25s",
                                               "PyStemmer", "numpy")}
        | {"sqlite": sqlite3.sqlite_version},
    }


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=Path(__file__).parent, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def markdown_report(title: str, meta: dict, sections: list[tuple[str, list[Table]]]) -> str:
    """The whole run as Markdown: metadata, then each section's tables."""
    v = meta["versions"]
    head = [f"# {title}", "",
            f"- date: {meta['date']}, commit {meta['commit']}, command `{meta['command']}`",
            f"- machine: {meta['cpus']} CPUs, load average {meta['load_avg']} at start, "
            f"Python {meta['python']} on {meta['platform']}",
            "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
            f"- wall time of the run: {meta.get('seconds', 0):.0f} s", "",
            ATTRIBUTION, ""]
    body = []
    for name, tables in sections:
        body += [f"## {name}", ""] + [t.markdown() for t in tables]
    return "\n".join(head + body)


def progress(message: str) -> None:
    """A progress line on stderr (the tables go to stdout)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
