"""Snippets, highlighting and matching lines: exact strings, conformance, properties."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import conformance
from ra.analysis import Analyzer
from ra.query.snippets import (
    highlight,
    match_spans,
    matcher,
    matching_lines,
    merge_ranges,
    snippet,
    strip_markdown,
)

PLAIN = Analyzer("none")  # terms are the lowercased words: expectations stay readable
ENGLISH = Analyzer("english")


@pytest.mark.parametrize("case", conformance("merge_ranges")["cases"],
                         ids=lambda c: c["source"].split("::")[-1])
def test_merge_ranges_conformance(case):
    expected = [tuple(r) for r in case["expected"]]
    assert merge_ranges(case["a"], case["b"]) == expected


def test_merge_ranges_overlapping_and_unsorted():
    assert merge_ranges([(10, 15), (0, 5)], [(20, 25), (3, 8)]) == [(0, 8), (10, 15), (20, 25)]
    assert merge_ranges([(0, 10)], [(2, 3)]) == [(0, 10)]


def test_strip_markdown():
    text = ("# Title\n\nSome **bold** and _em_ text with [a link](http://x.y) and `code`.\n\n"
            "```python\nx = 1\n```\n> quoted\n- item one\n1. first\n"
            "![img](a.png) snake_case stays ## not a heading")
    assert strip_markdown(text) == (
        "Title Some bold and em text with a link and code. x = 1 quoted item one first "
        "img snake_case stays ## not a heading")


def test_snippet_short_text_whole_with_stemmed_match():
    assert snippet("Installing packages is easy.", {"instal"}, ENGLISH) == (
        "**Installing** packages is easy.")


def test_snippet_picks_the_window_with_most_distinct_terms():
    text = "alpha " + "filler " * 20 + "beta gamma alpha " + "filler " * 20
    assert snippet(text, {"alpha", "beta"}, PLAIN, width=40) == (
        "…filler filler **beta** gamma **alpha** filler…")


def test_snippet_distinct_terms_beat_repetition():
    text = "alpha alpha alpha " + "filler " * 20 + "alpha beta " + "filler " * 20
    out = snippet(text, {"alpha", "beta"}, PLAIN, width=30)
    assert "**alpha** **beta**" in out and out.startswith("…")


def test_snippet_cuts_at_word_boundaries_with_ellipses():
    text = "one two three four five six seven eight nine ten"
    assert snippet(text, {"zzz"}, PLAIN, width=20) == "one two three four…"
    assert snippet(text, {"ten"}, PLAIN, width=20) == "…seven eight nine **ten**"
    assert snippet(text, {"one"}, PLAIN, width=20) == "**one** two three four…"
    assert snippet(text, {"five"}, PLAIN, width=20) == "…three four **five** six…"


def test_snippet_strips_markdown_before_matching():
    text = "## Setup\n\nRun `pip install ra` then see [the docs](https://example.com/install)."
    assert snippet(text, {"instal"}, ENGLISH) == (
        "Setup Run pip **install** ra then see the docs.")


def test_snippet_custom_mark_and_predicate():
    ansi = ("\x1b[1m", "\x1b[0m")
    assert snippet("Error handling", lambda w: w.startswith("err"), PLAIN, mark=ansi) == (
        "\x1b[1mError\x1b[0m handling")


def test_snippet_cjk_bigrams_marked_and_cut_anywhere():
    assert snippet("東京で日本語の検索を試す", {"検索"}, PLAIN, width=6) == "…語の**検索**を試…"
    assert snippet("日本語", {"日本", "本語"}, PLAIN) == "**日本語**"


def test_words_too_long_to_index_never_match():
    long = "x" * 45
    assert snippet(f"{long} short", {long, "short"}, PLAIN) == f"{long} **short**"


def test_snippet_of_empty_text():
    assert snippet("", {"x"}, PLAIN) == ""


def test_matcher_from_terms_and_from_predicate():
    key = matcher({"instal"}, ENGLISH)
    assert (key("installing"), key("packages")) == ("instal", None)
    assert matcher(lambda w: len(w) > 3)("word") == "word"


def test_match_spans_positions():
    assert match_spans("Foo, bar_foo.", matcher({"foo"}, PLAIN)) == [(0, 3, "foo"), (9, 12, "foo")]


def test_highlight_keeps_text_and_marks_matches():
    assert highlight("Error: handling errors", {"error", "handl"}, ENGLISH) == (
        "**Error**: **handling** **errors**")


def test_matching_lines_numbers_from_one():
    text = "# Errors\n\nnothing here\nan error occurred\n"
    assert matching_lines(text, {"error"}, ENGLISH) == [(1, "# Errors"), (4, "an error occurred")]
    assert matching_lines(text, lambda w: False) == []


def test_snippet_is_fast_on_a_large_chunk():
    text = ("lorem ipsum dolor sit amet " * 2000 + "needle ") * 4  # ~200 KB
    start = time.perf_counter()
    out = snippet(text, {"needl"}, ENGLISH)
    assert time.perf_counter() - start < 1.0
    assert "**needle**" in out


_MARKS = re.compile(r"\*\*|…")


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x", "**", "#", "\n"]),
                max_size=120),
       st.integers(40, 200))
def test_snippet_stays_within_width_and_keeps_text(words, width):
    text = " ".join(words)
    out = snippet(text, {"alpha", "beta"}, PLAIN, width=width)
    bare = _MARKS.sub("", out)
    assert len(bare) <= width
    assert bare in strip_markdown(text)
    assert out.count("**") % 2 == 0
