"""A short keyword query that fewer chunks than asked for answer in full is filled up with
the chunks holding most of its words (``[search] fill``), after them and marked.

"PEP 723 inline script metadata" on uv's docs found one changelog entry, the only chunk
holding all five words, and stopped there; the scripts guide, which says "inline script
metadata" but not "PEP 723", is the page an agent wants next.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import kb_folder, kb_searcher, short_and_held
from ra.query.render import render_search
from ra.query.search import Searcher, SearchOptions

DOCS = {
    "changelog.md": """\
# Changelog

## 0.5.17

Locking PEP 723 scripts is supported: scripts with inline metadata get a lockfile.
""",
    "scripts.md": """\
# Running scripts

## Declaring script dependencies

The inline script metadata format declares a script's dependencies in the script
itself. Use `uv add --script` to write inline script metadata.
""",
    "cooking.md": """\
# Cooking

Recipes and their ingredients, with no word of packaging.
""",
    "pep.md": """\
# Standards

Which PEP a feature follows is noted beside it.
""",
}
QUERY = "PEP 723 inline script metadata"
OPEN = SearchOptions(limit=5, cutoff_ratio=0.0)


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "fill", DOCS) as s:
        yield s


def topic(searcher, query: str = QUERY, options: SearchOptions = OPEN):
    return searcher.search([query], options).queries[0]


def test_the_chunks_holding_every_word_come_first_then_those_holding_some(searcher):
    t = topic(searcher)
    assert t.match == "all" and t.total_matches == 1
    ids = [r.id for r in t.results]
    assert ids[0] == "kb:changelog.md#0517" and not t.results[0].partial
    assert "kb:scripts.md#declaring-script-dependencies" in ids
    assert all(r.partial for r in t.results[1:])
    assert "kb:cooking.md" not in {i.split("#")[0] for i in ids}  # holds none of the words
    scores = [r.score for r in t.results[1:]]
    assert scores == sorted(scores, reverse=True)


def test_the_output_says_which_results_hold_some_of_the_words(searcher):
    response = searcher.search([QUERY], OPEN)
    data = response.to_dict()["queries"][0]["results"]
    assert "partial" not in data[0] and all(r["partial"] is True for r in data[1:])
    text = render_search(response, "list")
    first, rest = text.split("(only 1 chunk holds every word; the results below hold some "
                             "of them)\n")
    assert "kb:changelog.md#0517" in first and "kb:scripts.md" in rest
    both = render_search(searcher.search([QUERY, "cooking"], OPEN), "list")
    assert f"## {QUERY}  ({len(data)} shown; 1 holds every word)" in both
    # a later page: the chunk holding every word is on the first
    later = render_search(searcher.search([QUERY], replace(OPEN, offset=1)), "list")
    assert "kb:changelog.md#0517" not in later
    assert ("(only 1 chunk holds every word, not on this page; the results below "
            "hold some of them)\n") in later


def test_the_short_and_the_long_lived_reader_fill_alike(tmp_path_factory):
    with short_and_held(*kb_folder(tmp_path_factory, "fill-both", DOCS)) as (short, held,
                                                                             config):
        got = [[(r.id, round(r.score, 3), r.partial) for r in topic(Searcher(reader, config))
                .results] for reader in (short, held)]
    assert got[0] == got[1] and any(p for _, _, p in got[0])


@pytest.mark.parametrize("query, options", [
    ("PEP AND 723 AND inline AND script AND metadata", OPEN),  # operators typed: as asked
    ("PEP 723 inline script metadata", SearchOptions(limit=1, cutoff_ratio=0.0)),  # enough
    # the first chunk holding some of the words scores below 0.99 of the last holding all
    ("PEP 723 inline script metadata", SearchOptions(limit=5, cutoff_ratio=0.99)),
])
def test_no_fill_where_it_was_not_asked_for(searcher, query, options):
    assert [r.partial for r in topic(searcher, query, options).results] == [False]


def test_a_chunk_holding_every_word_that_the_elbow_cut_does_not_come_back(searcher):
    """Two chunks hold "inline" and "metadata"; at a ratio of 0.99 the elbow keeps the
    better one only. The chunks holding one of the words may follow it, if they score
    0.99 of it; the one the elbow cut is not among them."""
    every = {r.id for r in topic(searcher, "inline metadata").results if not r.partial}
    t = topic(searcher, "inline metadata", SearchOptions(limit=5, cutoff_ratio=0.99))
    shown = [r for r in t.results if not r.partial]
    assert t.total_matches == 2 and len(every) == 2 and len(shown) == 1
    assert not every - {shown[0].id} & {r.id for r in t.results}
    assert all(r.score >= 0.99 * shown[0].score for r in t.results[1:2])


def test_the_fill_follows_the_chunks_holding_every_word_that_the_elbow_kept(
        tmp_path_factory):
    """Three chunks hold "inline" and "metadata": the elbow keeps two (a long glossary
    that says each word once scores a ninth of them); the page on "inline" alone scores
    0.4 of the last one kept, above the ratio, and follows it."""
    docs = {**DOCS, "glossary.md": "# Glossary\n\n" + "Words of these pages. " * 90
            + "Inline: written in the file. Metadata: data about data.\n",
            "inline.md": "# Inline\n\nInline: inline, inline and inline.\n"}
    docs.update({f"note{i}.md": f"# Note {i}\n\nA short note.\n" for i in range(20)})
    with kb_searcher(tmp_path_factory, "fill-elbow", docs) as s:
        t = topic(s, "inline metadata", SearchOptions(limit=5, cutoff_ratio=0.3))
    assert t.total_matches == 3
    assert [(r.id, r.partial) for r in t.results] == [
        ("kb:scripts.md#declaring-script-dependencies", False),
        ("kb:changelog.md#0517", False), ("kb:inline.md#inline", True)]


def test_fill_false_turns_it_off(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "fill-off", DOCS, "[search]\nfill = false\n") as s:
        assert [r.id for r in topic(s).results] == ["kb:changelog.md#0517"]


def test_a_chunk_holding_every_word_far_below_the_partial_answers_is_cut(tmp_path_factory):
    """docsify's emoji page lists 1,800 shortcodes (``:arrow_heading_down:``, ``:id:``,
    ``:customs:``): it held "heading", "id" and "customization" and was the one chunk
    holding every word, shown first at a score of 1.1 above the page on heading ids
    (7.1). A chunk holding every word that scores less than ``cutoff_ratio`` times the
    best partial answer is cut, as the elbow cuts, and the topic's note says so."""
    codes = " ".join(f"`:{w}_{i}:`" for i in range(400) for w in ("arrow", "smile", "cat"))
    docs = {"emoji.md": f"# Emoji\n\n{codes} `:arrow_heading_down:` `:id:` `:customs:`\n",
            "helpers.md": "# Helpers\n\n## Heading ids\n\nGive a heading the id you want "
                          "with `:id=my-id` after its title.\n",
            "other.md": "# Other\n\nA page about something else entirely.\n"}
    docs.update({f"note{i}.md": f"# Note {i}\n\nA short note on topic {i}.\n"
                 for i in range(30)})
    with kb_searcher(tmp_path_factory, "fill-cut", docs) as s:
        t = topic(s, "heading id customization", SearchOptions(limit=5))
        kept = topic(s, "heading id customization", SearchOptions(limit=5, cutoff_ratio=0))
        response = s.search(["heading id customization"], SearchOptions(limit=5))
    assert t.match == "all" and t.total_matches == 1
    assert [(r.id, r.partial) for r in t.results] == [("kb:helpers.md#heading-ids", True)]
    assert t.note == ("1 chunk holding every word scores less than 0.5 times the best of "
                      "those holding some of them: not shown")
    assert ("(only 1 chunk holds every word, not shown (see the note); the results below "
            "hold some of them)") in render_search(response, "list")
    assert response.to_dict()["queries"][0]["note"] == t.note  # JSON and MCP too
    assert kept.results[0].id == "kb:emoji.md#emoji" and kept.note is None  # ratio 0
    with kb_searcher(tmp_path_factory, "fill-cut-pages", docs) as s:
        pages = {n: [r.id for r in topic(s, "heading id customization",
                                         SearchOptions(limit=n)).results] for n in (1, 2, 5)}
    # a smaller page than the default is its start: with one result asked for, the one
    # chunk holding every word filled the page, nothing was filled in, and the emoji page
    # came (Logseq's docs, "zotero integration setup": a changelog with -n 1, the Zotero
    # page with -n 2; an agent's `limit` changed what came first)
    assert pages[1] == pages[2][:1] == pages[5][:1] == ["kb:helpers.md#heading-ids"]


def test_no_partial_answer_shown_scores_less_than_a_chunk_holding_every_word_cut(
        tmp_path_factory):
    """typer's "add_typer nested subcommands name": the three chunks holding every word
    (12.4 at most) scored under half the best partial answer (34.4) and were cut, and the
    partial answers of 12.1, 11.4 and 10.1 came after it: the note said chunks holding
    every word were not shown, below results holding fewer of the words. The partial
    answers stop where they score less than one of those cut."""
    docs = {f"nested{n}.md": f"# Page {n}\n\n" + "Nested subcommands here. " * n
            + "Other words. " * (10 + 8 * (8 - n)) for n in (8, 6, 4, 3, 2, 1)}
    docs["complete.md"] = ("# Complete\n\nA long text " + "and more text " * 18
                           + "with a name, nested subcommands.\n")
    docs.update({f"note{i}.md": f"# Note {i}\n\nEvery note has a name.\n" for i in range(20)})
    with kb_searcher(tmp_path_factory, "fill-below-cut", docs) as s:
        t = topic(s, "nested subcommands name", SearchOptions(limit=5))
        scores = {r.id: r.score for r in topic(s, "nested subcommands name", SearchOptions(
            limit=5, cutoff_ratio=0)).results}
    assert t.outranked == 1 and "kb:complete.md#complete" not in {r.id for r in t.results}
    assert all(r.score >= scores["kb:complete.md#complete"] for r in t.results)
    # --explain says so (it said "1 shown" of the chunk holding every word that was cut)
    with kb_searcher(tmp_path_factory, "fill-below-cut-explain", docs) as s:
        explained = topic(s, "nested subcommands name", SearchOptions(limit=5, explain=True))
    pipeline = explained.explain["pipeline"]
    assert (pipeline["final"], pipeline["outranked"]) == (0, 1)
    assert pipeline["filled"] == len(t.results)


def test_the_text_counts_the_chunks_holding_every_word_that_were_cut():
    """Where some chunks holding every word stay and others were cut, the line before the
    partial answers says how many are not shown."""
    from ra.query.search import Result, SearchResponse, Topic

    def result(name: str, score: float, partial: bool) -> Result:
        return Result(f"kb:{name}.md", "kb", f"{name}.md", name, name, score, f"about {name}",
                      partial=partial)

    topic = Topic("q", "all", 2, [result("kept", 12.0, False), result("some", 16.0, True)],
                  note="1 chunk holding every word scores less than 0.5 times the best of "
                       "those holding some of them: not shown", outranked=1)
    text = render_search(SearchResponse([topic], 0, None, list_only=True), "list")
    assert ("(only 2 chunks hold every word, 1 not shown (see the note); the results below "
            "hold some of them)") in text


def test_partial_answers_first_count_only_the_chunks_holding_every_word_that_were_cut():
    """GitHub's site policy, "refund policy": two chunks hold every word, one was cut
    (the note says so) and the line said "only 2 chunks hold every word, not shown"."""
    from ra.query.search import Result, SearchResponse, Topic

    some = Result("kb:refund.md", "kb", "refund.md", "Refunds", "Refunds", 16.0, "refunds",
                  partial=True)
    note = ("1 chunk holding every word scores less than 0.5 times the best of those "
            "holding some of them: not shown")
    for total, line in ((2, "(only 2 chunks hold every word, 1 not shown (see the note)"),
                        (1, "(only 1 chunk holds every word, not shown (see the note)")):
        topic = Topic("q", "all", total, [some], note=note, outranked=1)
        assert line in render_search(SearchResponse([topic], 0, None, list_only=True), "list")
