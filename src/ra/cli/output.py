"""Rendering for the command line, in one place.

Results are printed in one of four shapes: ``full`` (a ``─── id ───`` line, the
breadcrumb and the chunk's markdown), ``list`` (id, title and a snippet), ``matches``
(matching lines with line numbers) and ``json`` (``SearchResponse.to_dict``). Colour
appears only when stdout is a terminal and ``NO_COLOR`` is unset; status and warnings go
to stderr so stdout stays parseable.
"""

from __future__ import annotations

import json
import os
import sys

RULE = "───"
MODES = ("full", "list", "matches", "json")


def use_color(stream=None) -> bool:
    """Colour only on a terminal, never with NO_COLOR set."""
    stream = stream or sys.stdout
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def _style(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def marks(color: bool) -> tuple[str, str]:
    """How matches are marked in snippets and lines."""
    return ("\x1b[1;33m", "\x1b[0m") if color else ("**", "**")


def echo(text: str = "", *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")


def warn(message: str) -> None:
    echo(_style("warning: ", "33", use_color(sys.stderr)) + message, err=True)


def note(message: str) -> None:
    echo(message, err=True)


def error(exc: BaseException) -> None:
    """An error message (``ra.errors.message``), the label red on a terminal."""
    from ra.errors import message

    echo(message(exc, _style("error: ", "31", use_color(sys.stderr))), err=True)


def dumps(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


# --- search results ----------------------------------------------------------------------

def render_search(response, mode: str, *, color: bool = False, analyzer=None) -> str:
    """Text of a ``SearchResponse`` in ``mode``."""
    if mode == "json":
        return dumps(response.to_dict())
    many = len(response.queries) > 1
    out: list[str] = []
    for topic in response.queries:
        if many:
            out.append(_style(f"## {topic.query}", "1", color)
                       + f"  ({len(topic.results)} of {topic.total_matches} matches)")
        if topic.note:
            out.append(f"(note: {topic.note})")
        if topic.match == "partial":
            out.append("(no chunk matches every word; showing the chunks that match most)")
        if not topic.results:
            out.append(f"no results for {topic.query!r}")
        for r in topic.results:
            out.append(_render_result(r, mode, color, analyzer, set(topic.terms)))
        if topic.explain is not None:
            out.append(render_explain(topic.explain))
    if response.max_tokens is not None:
        out.append(f"[{response.tokens_used} of {response.max_tokens} tokens]")
    return "\n".join(out).rstrip("\n") + "\n"


def _header(r, color: bool) -> str:
    return _style(f"{RULE} {r.id} {RULE}", "36", color)


def _render_result(r, mode: str, color: bool, analyzer, terms) -> str:
    if r.seen_in is not None:
        return f"{_header(r, color)}\n(shown above under {r.seen_in!r})\n"
    if mode == "list" or r.tier == "list":
        return f"{r.id}  {_style(r.title, '1', color)}\n    {r.snippet}\n"
    if mode == "matches":
        return _render_matches(r, color, analyzer, terms)
    return f"{_header(r, color)}\n{r.breadcrumb}\n\n{(r.content or '').rstrip()}\n"


def _render_matches(r, color: bool, analyzer, terms) -> str:
    from ra.query.snippets import highlight, matching_lines

    lines = [f"{_header(r, color)}"]
    first = getattr(r, "line", 1) or 1
    for number, line in matching_lines(r.content or "", terms, analyzer):
        lines.append(f"{first + number - 1:>5}: {highlight(line, terms, analyzer, marks(color))}")
    return "\n".join(lines) + "\n"


def render_explain(explain: dict) -> str:
    """The ``--explain`` report as text."""
    from ra.query.ast import to_query_string  # noqa: F401 (keeps import cost lazy)

    lines = ["", "explain:", f"  parsed: {explain.get('parsed', '')}"]
    if explain.get("ranked"):
        lines.append("  ranked: a long query; a chunk need not hold every word")
    for c in explain.get("clauses", []):
        neg = "NOT " if c["negated"] else "feedback " if c.get("feedback") else ""
        terms = ", ".join(
            f"{t['term']}(df={t['df']}" + (f", d={t['distance']}, w={t['weight']:.2f}"
                                          if t["distance"] else "")
            + ("" if t["in_index"] else ", not indexed") + ")" for t in c["terms"])
        lines.append(f"  clause {c['clause']}: {neg}{c['kind']} {c['text']!r} "
                     f"fields={','.join(c['fields'])} boost={c['boost']:g} → {terms}")
    if explain.get("filters"):
        lines.append("  filters: " + json.dumps(explain["filters"], ensure_ascii=False))
    p = explain.get("pipeline", {})
    lines.append(f"  pipeline: {p.get('candidates')} candidates → {p.get('aggregated')} after "
                 f"aggregation → {p.get('after_elbow')} after elbow → {p.get('final')} shown")
    t = explain.get("timings_ms", {})
    lines.append("  timings (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
    lines.append("  sql:")
    lines += ["    " + ln for ln in explain.get("sql", "").splitlines()]
    lines.append("  params: " + json.dumps(explain.get("params", {}), ensure_ascii=False))
    return "\n".join(lines)
