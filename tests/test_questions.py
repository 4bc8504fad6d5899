"""A question's frame (``how to``, ``what is a``, ``how do I``) adds score but is neither
required nor counted by coordination: the page on a thing rarely asks about it. On
FastAPI's docs "how to add CORS" kept only the middleware page, which says "how", "to",
"add" and "CORS"; the CORS tutorial never says "how".

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import pytest

from conftest import doc_ids, kb_searcher
from ra.query.search import Searcher, SearchOptions

DOCS = {
    "cors.md": "# CORS\n\nAdd CORS to allow requests from other origins, with the CORS "
               "middleware.\n",
    "middleware.md": "# Middleware\n\nHow middleware works: it wraps each request. To add "
                     "CORS, see the CORS page.\n",
    "lambda.md": "# Lambdas\n\nA lambda is an anonymous function object.\n",
    "faq.md": "# FAQ\n\nWhat is a closure? What is a capture? See the lambda page.\n",
    "canbus.md": "# CAN bus\n\nThe CAN bus links the controllers of a car.\n",
    "rc.md": "# Rc\n\nRc counts references: where a Box has one owner, an Rc has many.\n",
    "contents.md": "# Contents\n\nSmart pointers: Box vs Rc.\n",
    "fonts.md": "# Changing the fonts\n\n## Additional fonts\n\nUse an extra style sheet to "
                "add the corresponding font face for a custom font.\n",
    "logo.md": "# Logo\n\nAdd a custom logo; the font of the header is set apart.\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "questions", DOCS) as searcher:
        yield searcher


def ids(searcher: Searcher, query: str) -> list[str]:
    return doc_ids(searcher, query, aggregation=False)


def test_the_page_on_the_thing_is_found_though_it_never_asks(searcher):
    assert "kb:cors.md" in ids(searcher, "how to add CORS")
    assert "kb:lambda.md" in ids(searcher, "what is a lambda")


def test_the_frame_adds_score_only(searcher):
    explain = searcher.search(["how to add CORS"], SearchOptions(explain=True)
                              ).queries[0].explain
    shown = [(c["text"], c["score_only"]) for c in explain["clauses"]]
    assert shown == [("how", True), ("to", True), ("add", False), ("CORS", False)]


def test_what_s_opens_a_question_s_frame(searcher):
    """"what's a lambda" is "what is a lambda": "what" adds score only."""
    explain = searcher.search(["what's a lambda"], SearchOptions(explain=True)
                              ).queries[0].explain
    assert [c["text"] for c in explain["clauses"] if not c["score_only"]] == ["lambda"]
    assert "kb:lambda.md" in ids(searcher, "what’s a lambda")


def test_is_there_and_are_there_any_are_a_frame(searcher):
    """"is there a CORS middleware" needs "CORS" and "middleware", not "there", which the
    middleware page does not say."""
    for query in ("is there a CORS middleware", "are there any CORS middleware"):
        explain = searcher.search([query], SearchOptions(explain=True)).queries[0].explain
        assert [c["text"] for c in explain["clauses"] if not c["score_only"]] == [
            "CORS", "middleware"], query
        assert "kb:cors.md" in ids(searcher, query)


def test_a_typed_operator_or_a_question_of_frame_words_only_is_as_written(searcher):
    for query in ("how to AND add CORS", "what is a"):
        explain = searcher.search([query], SearchOptions(explain=True)).queries[0].explain
        assert not any(c["score_only"] for c in explain["clauses"]), query
    assert "kb:cors.md" not in ids(searcher, "how to AND add CORS")


def test_only_a_question_has_a_frame(searcher):
    """"can bus" starts with a question word and is no question; its words stay required
    once the frame is gone: "can" adds score, "bus" is required."""
    assert ids(searcher, "can bus")[:1] == ["kb:canbus.md"]
    explain = searcher.search(["a lambda"], SearchOptions(explain=True)).queries[0].explain
    assert not any(c["score_only"] for c in explain["clauses"])


@pytest.mark.parametrize("query", ["Box vs Rc", "Box vs. Rc", "Box versus Rc"])
def test_the_words_of_a_comparison_add_score_only(searcher, query):
    """On the Rust book "Box vs Rc" kept the table of contents alone, its one "vs"."""
    assert "kb:rc.md" in ids(searcher, query)
    explain = searcher.search([query], SearchOptions(explain=True)).queries[0].explain
    assert [c["score_only"] for c in explain["clauses"]] == [False, True, False]
    assert ids(searcher, "Box AND vs AND Rc") == ["kb:contents.md"]  # typed: as written


def test_articles_add_score_only_in_a_filtered_query(searcher):
    """On Material for MkDocs' docs "how do I add a custom font" required "a", and the
    section on custom fonts says "an" and "the": it was not found."""
    assert ids(searcher, "add an custom font")[:1] == ["kb:fonts.md"]
    explain = searcher.search(["how do I add a custom font"], SearchOptions(explain=True)
                              ).queries[0].explain
    assert [(c["text"], c["score_only"]) for c in explain["clauses"]][3:] == [
        ("add", False), ("a", True), ("custom", False), ("font", False)]
    assert "kb:fonts.md" in ids(searcher, "how do I add a custom font")


def test_possessive_pronouns_add_score_only_in_a_filtered_query(searcher):
    """GOV.UK's developer docs: "scale my app horizontally" required "my", no chunk held
    every word, and the whole page came instead of its section "What you can scale"."""
    assert ids(searcher, "add my custom font")[:1] == ["kb:fonts.md"]
    explain = searcher.search(["add our custom font"], SearchOptions(explain=True)
                              ).queries[0].explain
    assert [(c["text"], c["score_only"]) for c in explain["clauses"]] == [
        ("add", False), ("our", True), ("custom", False), ("font", False)]


def test_an_article_stays_required_where_fewer_than_two_words_are_left(searcher):
    for query in ("a lambda", "the CAN", "a AND lambda"):
        explain = searcher.search([query], SearchOptions(explain=True)).queries[0].explain
        assert not any(c["score_only"] for c in explain["clauses"]), query
