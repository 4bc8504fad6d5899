"""Results as text, in one place: what ``ra search``/``ra get`` print and what the MCP
server's tools answer with, so the two surfaces cannot drift apart.

Results are rendered in one of four shapes: ``full`` (a ``─── id ───`` line, the
breadcrumb and the chunk's markdown), ``list`` (id, title and a snippet), ``matches``
(matching lines with line numbers) and ``json`` (``SearchResponse.to_dict``). Colour is
the caller's decision (``ra.cli.output.use_color``: a terminal, no ``NO_COLOR``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Set as AbstractSet

from ra.text.ids import slugify
from ra.text.tokens import RULE

MODES = ("full", "list", "matches", "json")


def style(text: str, code: str, color: bool) -> str:
    """``text`` in an ANSI style when ``color``."""
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def marks(color: bool) -> tuple[str, str]:
    """How matches are marked in snippets and lines."""
    return ("\x1b[1;33m", "\x1b[0m") if color else ("**", "**")


def dumps(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


# --- search results ----------------------------------------------------------------------

def render_search(response, mode: str, *, color: bool = False, analyzer=None,
                  budget_option: str = "--max-tokens") -> str:
    """Text of a ``SearchResponse`` in ``mode``; ``budget_option`` is what the reader
    sets the token budget with (the MCP tools say ``max_tokens``)."""
    if mode == "json":
        return dumps(response.to_dict()) + "\n"
    many = len(response.queries) > 1
    out: list[str] = []
    for topic in response.queries:
        some = next((i for i, r in enumerate(topic.results) if r.partial), None)
        holds = "holds" if topic.total_matches == 1 else "hold"
        if many:
            out.append(style(f"## {topic.query}", "1", color) + (
                f"  ({len(topic.results)} of {topic.total_matches} matches)" if some is None
                else f"  ({len(topic.results)} shown; {topic.total_matches} {holds} every "
                "word)"))
        if topic.note:
            out.append(f"(note: {topic.note})")
        if topic.match in MATCH_LINES:
            out.append(MATCH_LINES[topic.match])
        if not topic.results:
            out.append(_nothing_shown(topic, response.max_tokens))
        titled = Counter(r.title for r in topic.results)
        for i, r in enumerate(topic.results):
            if i == some:  # first on the page: those holding every word are not on it
                elsewhere = ", not on this page" if i == 0 else ""
                if topic.outranked:  # cut below the partial answers (the note says why)
                    every = i == 0 and topic.outranked >= topic.total_matches
                    cut = "" if every else f" {topic.outranked}"  # ("refund policy": 1 of 2)
                    elsewhere = f",{cut} not shown (see the note)"
                out.append(f"(only {plural(topic.total_matches, 'chunk')} {holds} every "
                           f"word{elsewhere}; the results below hold some of them)")
            out.append(_render_result(r, mode, color, analyzer, set(topic.terms),
                                      titled[r.title] > 1))
        if topic.explain is not None:
            out.append(render_explain(topic.explain))
    if response.max_tokens is not None:
        out.append(_budget_line(response, budget_option))
    return "\n".join(out).rstrip("\n") + "\n"


#: The line before the results when no chunk holds every word, by how they matched
MATCH_LINES = {
    "partial": "(no chunk matches every word; showing the chunks that match most)",
    "semantic": "(no chunk holds these words; showing the chunks closest in meaning)"}
#: What the line closing a budgeted answer (``_budget_line``) costs at most, in cl100k_base
#: tokens: "[99999 of 99999 tokens]", and, when the budget cut something, that line
#: saying what it cut and how to read more (``tests/test_budget.py`` counts both)
BUDGET_LINE, CUT_LINE = 9, 56


def lines_around(topics, empty: AbstractSet[int] = frozenset(),
                 gone: AbstractSet[int] = frozenset()) -> list[str]:
    """The lines ``render_search`` prints around the topics' results, each at its longest
    (counts of five digits): a heading per topic when there are several, the notes on
    how a query was read and matched, the line before the results holding only some of
    the words, "no results", a result shown under an earlier topic, and for the topics
    numbered in ``empty`` (whose results the budget leaves out) the line saying none
    fits; not for the results in ``gone`` (by ``id``), left out. A token budget keeps
    room for them (``ra.query.search.Searcher._pack``)."""
    many, lines = len(topics) > 1, []
    for i, t in enumerate(topics):
        if i in empty:
            lines.append(f"99999 chunks match {t.query!r}, but none fits in 9999999 tokens: "
                         "the smallest needs 99999 tokens as its id and title")
        if many:
            lines.append(f"## {t.query}  (99999 shown; 99999 hold every word)")
        if t.note:
            lines.append(f"(note: {t.note})")
        if t.match in MATCH_LINES:
            lines.append(MATCH_LINES[t.match])
        if any(r.partial for r in t.results):
            lines.append("(only 99999 chunks hold every word, 99999 not shown (see the "
                         "note); the results below hold some of them)")
        if not t.results:
            lines.append(f"no results for {t.said or repr(t.query)}")
        lines += [f"{_header(r, False)}\n(shown above under {r.seen_in!r})"
                  for r in t.results if r.seen_in is not None and id(r) not in gone]
    return lines


def _nothing_shown(topic, budget: int | None) -> str:
    said = topic.said or repr(topic.query)
    if not topic.omitted:
        return f"no results for {said}"
    return (f"{plural(topic.total_matches, 'chunk')} match {said}, but none fits "
            f"in {budget} tokens: the smallest needs {topic.needs} tokens as its id and "
            "title")


def _budget_line(response, option: str) -> str:
    """``[used of budget tokens]``, and what the budget cut when it cut anything."""
    line = f"[{response.tokens_used} of {response.max_tokens} tokens"
    if not response.truncated:
        return line + "]"
    shown = [r for t in response.queries for r in t.results if r.seen_in is None]
    snippets, refs = sum(r.tier == "list" for r in shown), sum(r.tier == "ref" for r in shown)
    omitted = sum(t.omitted for t in response.queries)
    cut = [f"{plural(snippets, 'result')} as "
           f"{'a snippet' if snippets == 1 else 'snippets'}"] if snippets else []
    cut += [f"{plural(refs, 'result')} as id and title"] if refs else []
    if omitted:
        needs = min(t.needs for t in response.queries if t.needs is not None)
        cut.append(f"{omitted} not shown (the smallest needs {needs} tokens)")
    return (f"{line}; cut to fit: {', '.join(cut)}; raise {option} for more, or read "
            "one by id with get]")


def _header(r, color: bool) -> str:
    return style(f"{RULE} {r.id} {RULE}", "36", color)


def _render_result(r, mode: str, color: bool, analyzer, terms, repeated: bool = False
                   ) -> str:
    """One result; ``repeated``: another of the topic's has its title ("Fixed Fields", 40
    sections of each OpenAPI version): its entry says what it is under."""
    if r.seen_in is not None:
        return f"{_header(r, color)}\n(shown above under {r.seen_in!r})\n"
    title = entry_title(r, repeated)
    if r.tier == "ref":
        return f"{r.id}  {style(title, '1', color)}"
    if mode == "list" or r.tier == "list":
        return f"{r.id}  {style(title, '1', color)}\n    {r.snippet}\n{copies_lines(r, '    ')}"
    if mode == "matches":
        return _render_matches(r, color, analyzer, terms)
    return (f"{_header(r, color)}\n{r.breadcrumb}\n{copies_lines(r)}\n"
            f"{(r.content or '').rstrip()}\n")


def entry_title(r, repeated: bool) -> str:
    """The title a list entry or a reference prints for ``r``: its parent's title too
    when ``repeated`` (another result of its topic has its title) or numbered
    (``_numbered``)."""
    return _under(r) if repeated or _numbered(r) else r.title


def _numbered(r) -> bool:
    """Whether ``r``'s page has other sections of its title before it, its id the title's
    slug numbered for them (``#bug-fixes-20``: a changelog's "Bug Fixes" of each release,
    listed bare, said which release they were of in neither the title nor the id)."""
    slug, base = r.id.partition("#")[2], slugify(r.title or "")
    return slug.startswith(base + "-") and slug[len(base) + 1:].isdigit()


def _under(r) -> str:
    """``r``'s title after its parent's, as its breadcrumb has them: "Server Variable
    Object › Fixed Fields"."""
    crumbs = (r.breadcrumb or "").split(" › ")
    return " › ".join(crumbs[-2:]) if len(crumbs) > 1 and crumbs[-1] == r.title else r.title


def copies_lines(r, indent: str = "") -> str:
    """The lines naming the results that have ``r``'s text word for word, or nearly (a
    result's token cost counts them: ``ra.query.search.Result``)."""
    return ((f"{indent}(the same text at {', '.join(r.copies)})\n" if r.copies else "")
            + (f"{indent}(nearly the same text at {', '.join(r.near_copies)})\n"
               if getattr(r, "near_copies", ()) else ""))


def _render_matches(r, color: bool, analyzer, terms) -> str:
    from ra.query.snippets import highlight, matching_lines

    lines = [f"{_header(r, color)}"]
    first = getattr(r, "line", 1) or 1
    for number, line in matching_lines(r.content or "", terms, analyzer):
        lines.append(f"{first + number - 1:>5}: {highlight(line, terms, analyzer, marks(color))}")
    return "\n".join(lines) + "\n"


#: How to read on from a line, said to a reader of the CLI and to an agent over MCP
READ_ON_CLI = "`ra get {id} --from-line {line}`"
READ_ON_MCP = "`get` with from_line {line}"
#: ... and how to read a section by its id
_READ_ONE = {READ_ON_CLI: "`ra get ID` reads one", READ_ON_MCP: "`get` reads one by its id"}


def render_chunk(chunk, option: str = "--max-tokens", read_on: str = READ_ON_CLI) -> str:
    """Text of ``ra get``'s ``Chunk``: the chunk, then the chunks its links reach.
    ``option``: what the budget is called where the reader gives it; ``read_on``: how
    it reads on from a line (``READ_ON_CLI``, ``READ_ON_MCP``)."""
    out = [f"{RULE} {chunk.id} {RULE}\n{chunk.breadcrumb}\n\n{chunk.content.rstrip()}\n"]
    if chunk.cut is not None:
        out.append(cut_note(chunk, option, read_on))
    elif chunk.lines is not None:
        out.append(f"[{_lines_note(chunk, read_on)}]\n")
    if chunk.links is None:
        return "\n".join(out).rstrip("\n") + "\n"
    reached = len(chunk.linked) + chunk.linked_omitted
    out.append(f"\n{plural(len(chunk.links), 'link')} out of {chunk.id}, "
               f"reaching {plural(reached, 'indexed chunk')}"
               + (":" if chunk.linked else "."))
    for c in chunk.linked:
        out.append(f"\n{RULE} {c.id} {RULE}\n{c.breadcrumb}\n\n{c.content.rstrip()}\n"
                   if c.tier == "full" else f"{c.id}  {c.title}")
    if chunk.linked_omitted or any(c.tier != "full" for c in chunk.linked):
        out.append(f"[{_budget_note(chunk, option, read_on)}]")
    return "\n".join(out).rstrip("\n") + "\n"


def _lines_note(chunk, read_on: str) -> str:
    """Which lines of its file a chunk read from a line, or cut, holds, and how to read
    on (``ra.query.get.Lines``)."""
    lines = chunk.lines
    said = (f"lines {lines.first}–{lines.last} of {chunk.path} above "
            f"({chunk.id} is lines {lines.start}–{lines.end})")
    if lines.next is None:
        return said + ": its end"
    return said + "; " + read_on.format(id=chunk.id, line=lines.next) + " reads on"


def cut_note(chunk, option: str, read_on: str = READ_ON_CLI) -> str:
    """What ``ra get`` says of a chunk cut to its budget (``ra.query.get.Cut``)."""
    cut = chunk.cut
    given = ([("the start of its own text" if cut.own_cut else "its own text") + " above"]
             if chunk.content.strip() else [])
    if cut.own_cut and chunk.lines is not None:
        given = [_lines_note(chunk, read_on)]
    if cut.sections:
        given.append(f"its sections below; {_READ_ONE[read_on]}")
    lines = [f"[{cut.tokens} tokens, more than {option} {chunk.max_tokens}: "
             + ("; " if chunk.lines else ", ").join(given or ["nothing fits"]) + "]"]
    top = min((s.depth for s in cut.sections), default=0)  # an outline, from its left
    lines += [f"{'  ' * (s.depth - top)}{s.id}  {s.title}" for s in cut.sections]
    if cut.more:
        onward = (f"; {read_on.format(id=chunk.id, line=cut.more_line)} reads on from the "
                  "first" if cut.more_line is not None else "")
        lines.append(f"[{plural(cut.more, 'more section')} not shown{onward}]")
    return "\n".join(lines) + "\n"


def _budget_note(chunk, option: str = "--max-tokens", read_on: str = READ_ON_CLI) -> str:
    listed = sum(c.tier != "full" for c in chunk.linked)
    parts = [f"{listed} given as id and title"] if listed else []
    if chunk.linked_omitted:
        parts.append(f"{chunk.linked_omitted} more not shown")
    return (f"within {chunk.max_tokens} tokens: " + ", ".join(parts)
            + f"; {_READ_ONE[read_on]}, {option} allows more")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def render_explain(explain: dict) -> str:
    """The ``--explain`` report as text."""
    from ra.query.ast import to_query_string  # noqa: F401 (keeps import cost lazy)

    lines = ["", "explain:", f"  parsed: {explain.get('parsed', '')}"]
    if explain.get("ranked"):
        lines.append("  ranked: a long query; a chunk need not hold every word")
    for c in explain.get("clauses", []):
        neg = ("NOT " if c["negated"] else "feedback " if c.get("feedback")
               else "score-only " if c.get("score_only") else "")
        terms = ", ".join(
            f"{t['term']}(df={t['df']}" + (f", d={t['distance']}, w={t['weight']:.2f}"
                                          if t["distance"] else "")
            + ("" if t["in_index"] else ", not indexed") + ")" for t in c["terms"])
        lines.append(f"  clause {c['clause']}: {neg}{c['kind']} {c['text']!r} "
                     f"fields={','.join(c['fields'])} boost={c['boost']:g} → {terms}")
    if explain.get("filters"):
        lines.append("  filters: " + json.dumps(explain["filters"], ensure_ascii=False))
    if note := explain.get("note"):
        lines.append(f"  {note}")
    if (p := explain.get("pipeline")) is not None:
        lines.append(f"  pipeline: {p.get('candidates')} candidates → {p.get('aggregated')} "
                     f"after aggregation → {p.get('after_elbow')} after elbow → "
                     f"{p.get('final')} shown"
                     + (f" ({p['outranked']} cut below the partial answers)"
                        if p.get("outranked") else "")
                     + (f", then {p['filled']} holding some of the words" if p.get("filled")
                        else ""))
    if named := explain.get("named_for_query"):
        lines.append(f"  named for the query (score × {named['factor']:g}): "
                     + ", ".join(named["results"]))
    if t := explain.get("timings_ms"):
        lines.append("  timings (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
    if "sql" in explain:
        lines.append("  sql:")
        lines += ["    " + ln for ln in explain["sql"].splitlines()]
        lines.append("  params: " + json.dumps(explain.get("params", {}), ensure_ascii=False))
    if "semantic" in explain:
        lines += _semantic_explain(explain["semantic"])
    return "\n".join(lines)


def _semantic_explain(sem: dict) -> list[str]:
    """The semantic side of ``--explain``: model, fusion, its SQL and both scores."""
    t = sem.get("timings_ms", {})
    lines = [f"  semantic: {sem['model']}, {sem['fusion']} fusion, weight {sem['weight']:g}, "
             f"{sem['candidates']} candidates for {sem['query_text']!r} (embed "
             f"{t.get('embed', 0):.2f} ms, sql {t.get('sql', 0):.2f} ms)",
             "  scores (keyword = BM25F, semantic = cosine, fused):"]
    for s in sem.get("scores", []):
        kw = "-" if s["keyword"] is None else f"{s['keyword']:.4f}"
        sim = "-" if s["semantic"] is None else f"{s['semantic']:.4f}"
        lines.append(f"    {s['id']}: keyword {kw}, semantic {sim}, fused {s['fused']:.4f}")
    lines.append("  semantic sql:")
    lines += ["    " + ln for ln in sem.get("sql", "").splitlines()]
    return lines
