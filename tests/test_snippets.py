"""Snippets, highlighting and matching lines: exact strings, conformance, properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import conformance
from ra.query.snippets import (
    FIRST_LETTER_KEPT,
    SCAN_CHARS,
    TermKey,
    _blocks,
    highlight,
    match_spans,
    matcher,
    matching_lines,
    merge_ranges,
    snippet,
    snippet_of,
    strip_markdown,
)
from ra.text.analysis import Analyzer
from ra.text.markup import plain_held, plain_text, reader_line, set_code_aside, strip_syntax

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


def test_snippet_of_a_large_chunk_finds_a_late_match():
    # ~220 KB, read in blocks: the only match sits far beyond the first block (its speed
    # is measured by benchmarks/latency.py, not asserted here)
    text = "lorem ipsum dolor sit amet " * 8000 + "the needle is here " + "tail " * 50
    out = snippet(text, {"needl"}, ENGLISH)
    assert "the **needle** is here" in out
    assert out.startswith("…") and out.endswith("…")  # a window around it, not the start


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


@pytest.mark.parametrize("cut, end", [(snippet, "\n"), (snippet_of, " ")])
def test_a_long_text_is_snippeted_from_its_first_block_with_every_term(cut, end):
    """Beyond ``SCAN_CHARS`` the first block holding every term wins, else the first
    holding most of them (the first with any match had won: the post-mortems' 45,000-
    character section showed an AWS paragraph for "roblox 73 hour outage consul"); a
    match deep in the text is still found when no earlier block has one. Markdown
    (``snippet``) or the line stored for it (``snippet_of``); blocks end between words."""
    filler = f"lorem ipsum dolor sit amet{end}" * (SCAN_CHARS // 27 + 10)
    sparse_then_dense = f"alpha is here{end}{filler}alpha beta gamma alpha beta{end}"
    out = cut(sparse_then_dense, {"alpha", "beta"}, PLAIN)
    assert out.startswith("…") and "**alpha** **beta**" in out
    first_of_equals = f"alpha is here{end}{filler}alpha again{end}"
    out = cut(first_of_equals, {"alpha", "beta"}, PLAIN)
    assert out.startswith("**alpha** is here") and out.endswith("…")
    both_first = f"alpha and beta{end}{filler}alpha beta gamma alpha beta{end}"
    assert cut(both_first, {"alpha", "beta"}, PLAIN).startswith("**alpha** and **beta**")
    deep = f"{filler}the beta word{end}{filler}"
    out = cut(deep, {"beta"}, PLAIN, width=40)
    assert out.startswith("…") and "**beta**" in out and out.endswith("…")
    assert cut(filler, {"zzz"}, PLAIN, width=20) == "lorem ipsum dolor…"
    assert cut("", {"zzz"}, PLAIN) == ""


@given(st.lists(st.sampled_from(["ab", "c", " ", "  ", "x" * 7]), max_size=300),
       st.integers(1, 40))
def test_blocks_cover_the_text_and_end_after_a_space(parts, size):
    text = "".join(parts)
    blocks = list(_blocks(text, size))
    assert "".join(text[a:b] for a, b in blocks) == text
    assert all(b - a <= size for a, b in blocks)
    for a, b in blocks[:-1]:
        assert text[b - 1] == " " or " " not in text[a:b]


_WORDS = ["Foo", "foo", "bar_foo", "foobar", "ÄRGER", "ärger", "İstanbul", "東京都", "x" * 41,
          "foo9", "9foo", "_foo_", "a*foo*b", "[foo](x)"]


@given(st.lists(st.sampled_from(_WORDS + [" ", ", ", "\n", "-", "'"]), max_size=60))
def test_match_spans_equal_a_word_by_word_scan(parts):
    """Distinct words looked up once and found with ``str.find`` give exactly the spans of
    the plain loop over every word the analyser's pattern finds."""
    from ra.query.snippets import _WORD, _pieces

    text = "".join(parts)
    for key in (matcher({"foo", "ärger", "東京", "istanbul"}, PLAIN), matcher(lambda w: True)):
        want = [(m.start() + a, m.start() + b, k) for m in _WORD.finditer(text)
                for a, b, p in _pieces(m.group()) if (k := key(p))]
        assert match_spans(text, key) == want


@pytest.mark.parametrize("language", sorted(FIRST_LETTER_KEPT))
@given(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789"), min_size=1,
               max_size=39))
def test_listed_stemmers_keep_an_ascii_words_first_letter(language, word):
    """What ``TermKey.spans`` relies on: a term begins as every word stemming to it does."""
    term = Analyzer(language).stem(word)
    assert term == "" or term[0] == word[0]


_ASCII_WORDS = ["Install", "installing", "installs", "INSTALLED", "installer", "Fooing",
                "foo", "_foo", "foo_bar", "x" * 41, "i" * 39, "ikea", "2019", "a2b",
                "generously", "dying", "die", "Skies", "sky", "remote", "Remotely", "es"]


@pytest.mark.parametrize("language", sorted(FIRST_LETTER_KEPT))
@given(st.lists(st.sampled_from(_ASCII_WORDS + [" ", ", ", "\n", "-", "'", "*", "9", "’",
                                               "—", "\xa0", "“", "├─"]),
                max_size=60),
       st.sets(st.sampled_from([w.lower() for w in _ASCII_WORDS] + ["instal", "die", "fo"]),
               max_size=4))
def test_term_key_spans_equal_the_scan_of_every_word(language, parts, words):
    """The regex over first letters finds exactly the matches the scan of every word does
    (the text's words are ASCII, so each word is one piece; curly quotes, dashes and box
    drawing beyond ASCII are no word characters)."""
    from ra.query.snippets import _WORD

    analyzer = Analyzer(language)
    key = matcher({analyzer.stem(w) for w in words}, analyzer)
    assert isinstance(key, TermKey)
    text = "".join(parts)
    want = [(m.start(), m.end(), k) for m in _WORD.finditer(text)
            if len(m.group()) < 40 and (k := key(m.group().lower()))]
    assert key.spans(text) == want == match_spans(text, key)


@given(st.lists(st.lists(st.sampled_from(_ASCII_WORDS + [" ", "\n", "-", "**", "`", "’"]),
                         max_size=30).map("".join), max_size=6),
       st.sets(st.sampled_from([w.lower() for w in _ASCII_WORDS]), min_size=1, max_size=4))
def test_one_key_for_many_texts_snippets_each_as_a_key_of_its_own(texts, words):
    """A search makes one ``TermKey`` for the snippets of all its results; what it
    remembers of one text's words changes nothing in the next one's snippet."""
    terms = {PLAIN.stem(w) for w in words}
    shared = matcher(terms, PLAIN)
    for text in texts:
        assert snippet(text, shared, PLAIN) == snippet(text, terms, PLAIN)
        assert match_spans(text, shared) == match_spans(text, matcher(terms, PLAIN))


def test_term_key_scans_every_word_where_it_cannot_use_first_letters():
    assert matcher({"foo"}, Analyzer("dutch")).spans("foo") is None
    assert matcher({"foo"}, PLAIN).spans("foo é") is None
    assert matcher({"foo"}, PLAIN).spans("foo’s Ж") is None
    assert matcher({"foo"}, PLAIN).spans("Foo’s “foo”") == [(0, 3, "foo"), (7, 10, "foo")]
    assert match_spans("Foo é foo", matcher({"foo"}, PLAIN)) == [(0, 3, "foo"), (6, 9, "foo")]


_LINE_START = [(re.compile(r"^[ \t]*(?:```|~~~).*$", re.M), ""),
               (re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.M), ""),
               (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M), ""),
               (re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+", re.M), ""),
               (re.compile(r"!?\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])"), r"\1"),
               (re.compile(r"\*+|~~|`+|(?<![^\W_])_+|_+(?![^\W_])"), ""),
               (re.compile(r"\s+"), " ")]


@given(st.lists(st.sampled_from(["# ", "## h", "```", "~~~py", "> ", "- ", "1. ", "* ", "\n",
                                 " ", "\t", "word", "_", "__", "a_b", "**", "`", "~~", "[t](u)",
                                 "![i](p)", "[r][1]", "\u00a0", "é"]), max_size=80))
def test_strip_markdown_equals_the_line_anchored_patterns(parts):
    """The newline-anchored patterns (faster) strip exactly what ``^`` in multiline mode
    did."""
    text = "".join(parts)
    want = text
    for pattern, replacement in _LINE_START:
        want = pattern.sub(replacement, want)
    assert strip_syntax(text) == want.strip()


def test_a_snippet_quotes_text_not_the_markup_around_its_match():
    filler = "plain words here. " * 300
    text = (f"{filler}\n<!-- md:flag needle -->\n!!! note \"Heads up\"\n"
            "    The [needle](https://x.org/needle) is here.\n\n## Heading { #anchor }\n"
            f"{filler}")
    got = snippet(text, {"needle"}, PLAIN)
    assert "**needle**" in got and got.startswith("…") and got.endswith("…")
    for markup in ("<!--", "!!!", "https", "{ #", "]("):
        assert markup not in got, got


def test_matches_only_in_markup_near_there_fall_back_to_the_whole_block():
    text = ("<!-- needle -->\n" + "intro words. " * 60 + "\nA needle in the text.\n")
    got = snippet(text, {"needle"}, PLAIN)
    assert "A **needle** in the" in got and "<!--" not in got


def test_a_text_without_matches_opens_with_its_text():
    text = "<!-- a long comment -->\n" * 30 + "Opening words of the text."
    assert snippet(text, {"absent"}, PLAIN) == "Opening words of the text."


# --- snippets of the text a reader sees, stored when indexed (chunks.plain) ---------------


def test_a_chunks_reader_line_is_its_headings_title_and_its_bodys_text():
    body = plain_text("Run `pip install ra`, see [the docs](https://x.org/i).\n\n"
                      "- **one**\n- two\n\n```sh\nra search\n```\n")
    assert reader_line("Setup", body) == (
        "Setup Run pip install ra, see the docs. one two ra search")
    assert reader_line(None, body).startswith("Run pip install ra")  # a document's node
    assert reader_line(None, "a  text\n\n file *as* it is", markdown=False) == (
        "a text file *as* it is")


def test_a_reader_line_reads_backslash_escapes_and_keeps_code_as_written():
    """GitBook writes "NT hash \\(or AES key\\)": the page shows "(", and so does the
    line now; an escaped bracket is no link; code is as written, its ``*``, ``_`` and
    backslashes no syntax ("const char*", "__declspec", "s/\\./,/" lost them)."""
    text = ("NT hash \\(or AES key\\) of my\\_var and \\*args, see \\[1\\](note).\n\n"
            "Call `__declspec(dllexport)` on `const char* p` with `s/\\./,/`:\n\n"
            "```py\ndef f(*args, **kwargs): pass\n```\n")
    assert strip_markdown(text) == (
        "NT hash (or AES key) of my_var and *args, see [1](note). Call "
        "__declspec(dllexport) on const char* p with s/\\./,/: def f(*args, **kwargs): pass")
    prepared, codes = set_code_aside(text)  # as the chunk stage stores it
    assert reader_line("Tickets \\(AES\\)", plain_held(prepared), codes=codes).startswith(
        "Tickets (AES) NT hash (or AES key)")


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "x", "**", "`", "\n", "- ", "# ",
                                 "[a](b)", "é", "xalpha"]), max_size=80),
       st.integers(40, 200))
def test_a_snippet_of_the_stored_text_quotes_it_around_a_match(words, width):
    """A snippet of a stored line is a piece of that line, within ``width``, whole words
    at its ends, with a match marked wherever the line holds one."""
    line = reader_line(None, plain_text(" ".join(words)))
    out = snippet_of(line, {"alpha", "beta"}, PLAIN, width=width)
    bare = _MARKS.sub("", out)
    assert len(bare) <= width and bare in line and out.count("**") % 2 == 0
    at = line.find(bare) if bare else 0
    assert at == 0 or not (line[at - 1].isalnum() and line[at].isalnum())
    if re.search(r"(?<!\w)(?:alpha|beta)(?!\w)", line):
        assert "**" in out


def test_a_window_filled_by_its_matches_is_narrowed_rather_than_cut_a_word():
    """The window centred on a cluster nearly as wide as itself began inside
    "explicit" ("…it hash_multiset(…"): it now begins at a word."""
    text = ("hash_multiset(); explicit hash_multiset(key_compare^ pred); "
            "hash_multiset(key_compare^ pred, hasher^ hashfn); hash_multiset(hash_multiset"
            "<Key>% right); hash_multiset(hash_multiset<Key>^ right); template<typename "
            "InIter> hash_multiset(InIter first, InIter last);")
    out = snippet_of(text, {"hash", "multiset"}, PLAIN)
    bare = _MARKS.sub("", out)
    start = text.index(bare)
    assert start == 0 or not text[start - 1].isalnum(), out


def test_a_typo_s_expansion_counts_as_its_word_and_the_word_as_typed_wins():
    """"deletion protection warning" on Terraform's Google provider: "project", an
    expansion of "protection" 17 times as common, counted as a word of its own, and the
    windows crowded with it won over the one that says "protection"."""
    from ra.query.snippets import matcher

    text = ("The project field names the project and the project of a deletion warning "
            "log. " + "Filler words here. " * 12 + "Set deletion protection to avoid the "
            "warning.")
    key = matcher({"project", "protection", "warning", "deletion"}, PLAIN,
                  {"project": "protection"})
    out = snippet_of(text, key, PLAIN, width=80)
    assert "**protection**" in out and "**deletion**" in out
    without = snippet_of(text, {"project", "protection", "warning", "deletion"}, PLAIN,
                         width=80)
    assert "**project**" in without and "**protection**" not in without  # as before
