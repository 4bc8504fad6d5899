"""Pseudo-relevance feedback (``ra.query.feedback``): the words the best chunks share join
a long query as optional clauses weighted below the typed words.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import dataclasses

import pytest

from conftest import kb_searcher
from ra.query import feedback
from ra.query.parser import parse
from ra.query.plan import PlanOptions, plan_query
from ra.query.search import Searcher, SearchOptions
from test_bm25f import _golden

TOPICS = {
    "glaciers": "Glaciers retreat as summers warm; meltwater from the glacier raises the sea "
                "level, and moraines mark where the ice once reached.",
    "icesheets": "Ice sheets lose mass through calving and meltwater; the sea level rises "
                 "as Greenland's ice sheet thins.",
    "moraines": "Moraines are ridges of rock debris that a glacier pushed and left behind "
                "when the ice retreated.",
}
FILLER = ("bread oven flour yeast crust dough", "piano chord scale tempo melody rhythm",
          "harbour ship cargo tide anchor crane", "orbit comet planet telescope lens star",
          "garden compost soil seed spade weed", "engine piston fuel gear clutch brake")
LONG = "why does the sea level rise when summers get warmer"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    docs = {f"{name}.md": f"# {name.title()}\n\n{text}\n" for name, text in TOPICS.items()}
    for i in range(40):  # many chunks, so that the topic words are rare
        words = FILLER[i % len(FILLER)].split()
        docs[f"note{i:02}.md"] = (
            f"# Note {i}\n\n" + " ".join(words[(i + k) % len(words)] for k in range(12)) + "\n")
    with kb_searcher(tmp_path_factory, "feedback", docs, "[search]\nfeedback = true\n\n") as s:
        yield s


def plan_of(kb: Searcher, query: str):
    return plan_query(parse(query), kb.reader, kb.analyzer, PlanOptions(fuzzy=False), query,
                      rankable=True)


def test_expansion_terms_are_untyped_rare_words_weighted_below_typed_ones(kb):
    plan = plan_of(kb, LONG)
    assert plan.ranked
    top = [(kb.reader.meta(f"kb:{n}.md#{n}").ord, s) for n, s in (("glaciers", 3.0),
                                                             ("icesheets", 2.0))]
    wider = feedback.expand(plan, kb.reader, kb.analyzer, top)
    extra = wider.clauses[len(plan.clauses):]
    assert 0 < len(extra) <= feedback.FB_TERMS
    assert extra[0].boost == feedback.FB_WEIGHT
    assert all(c.feedback and 0 < c.boost <= feedback.FB_WEIGHT for c in extra)
    typed = {a.term for c in plan.clauses for a in c.alts}
    words = {c.alts[0].term for c in extra}
    assert not words & typed and not words & {"the", "and", "from", "as"}
    assert {"meltwat", "ice"} <= words  # shared by both chunks, absent from the query
    assert wider.expr == plan.expr and wider.groups == plan.groups
    assert wider.terms() == plan.terms()  # expansions are not highlighted
    assert set(wider.positive) == set(plan.positive) | {c.index for c in extra}


def test_a_long_query_is_expanded_a_short_or_raw_one_is_not(kb):
    def clauses(query: str, **options) -> list[dict]:
        opts = SearchOptions(explain=True, **options)
        return kb.search([query], opts).queries[0].explain["clauses"]

    assert any(c["feedback"] for c in clauses(LONG))
    assert not any(c["feedback"] for c in clauses("sea level"))
    assert not any(c["feedback"] for c in clauses(LONG, raw=True))


def test_feedback_reranks_but_never_adds_a_chunk_without_a_typed_word(kb):
    opts = SearchOptions(limit=50, cutoff_ratio=0.0)
    plain = Searcher(kb.reader, dataclasses.replace(kb.config, search=dataclasses.replace(
        kb.config.search, feedback=False)))
    with_fb = {r.id for r in kb.search([LONG], opts).queries[0].results}
    without = {r.id for r in plain.search([LONG], opts).queries[0].results}
    assert with_fb == without  # moraines.md shares expansion words, no typed one


def test_feedback_sql_matches_golden_file(kb):
    sql = feedback.feedback_sql([3, 5], [0.6, 0.4], 50)
    _golden("feedback", sql)
    assert kb.reader.query(sql.text, sql.params)
