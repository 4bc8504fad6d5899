"""An abbreviation defined in a query as prose defines one, ``generic associated types
(GATs)`` or ``RBAC (role-based access control)``, is an alternative of the words it
abbreviates: a chunk may say either.

Before, the parenthesised word was one more word to match: the AND of a short query
kept only chunks that say both forms (Rust's GAT RFC never says "GATs"), and a long one
ranked a chunk with one form below chunks with more of the other words. On SciFact train
(107 of 809 claims define one, "sudden infant death syndrome (SIDS)") nDCG@10 0.6932 →
0.6949. The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import pytest

from conftest import doc_ids, kb_folder, kb_searcher, short_and_held
from ra.query.parser import abbreviations
from ra.query.search import Searcher, SearchOptions

DOCS = {
    "long.md": "# Type families\n\nAllow generic associated types on traits, so an "
               "iterator can lend its items.\n",
    "short.md": "# Lending\n\nWith GATs a trait can lend its items.\n",
    "both.md": "# Both\n\nGeneric associated types (GATs) let a trait lend items.\n",
    "apart.md": "# Generic functions\n\nGeneric functions take types as parameters.\n",
    "rbac.md": "# Permissions\n\nRBAC assigns permissions to roles.\n",
    "roles.md": "# Roles\n\nRole-based access control grants each role its permissions.\n",
    "acl.md": "# Lists\n\nAn access list grants each user its permissions.\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "abbreviations", DOCS) as searcher:
        yield searcher


@pytest.mark.parametrize(("query", "found"), [
    ("generic associated types (GATs)", [(("generic", "associated", "types"), "GATs", False)]),
    ("AMP-activated protein kinase (AMPK) activation reduces fibrosis",
     [(("AMP-activated", "protein", "kinase"), "AMPK", False)]),
    ("Depletion of T-helper 17 (Th17) cells", [(("T-helper", "17"), "Th17", False)]),
    ("defective deoxyribonucleic acid (DNA) polymerase I (polI) mice",
     [(("deoxyribonucleic", "acid"), "DNA", False), (("polymerase", "I"), "polI", False)]),
    ("RBAC (role-based access control) for admins",
     [(("role-based", "access", "control"), "RBAC", True)]),
    ("container port throughput(CPT) is",
     [(("container", "port", "throughput"), "CPT", False)]),
    # not abbreviations: no capital or digit, no letter, one letter, no initial to start
    # from, the word itself, negated or a field's words before it, a boolean group
    ("config file (optional)", []),
    ("ten percent (10%) of cancers", []),
    ("alpha (+)- thalassemia", []),
    ("reduces apo(a) clearance", []),
    ("a country's Vaccine Alliance (GAVI) eligibility", []),
    ("Rust (RUST) book", []),
    ("cats -generic associated (GA)", []),
    ("title:guide (TG)", []),
    ("(generic associated types) OR (GATs)", []),
    ('unclosed "quote (GATs', []),
])
def test_abbreviations_are_found_as_prose_defines_them(query, found):
    assert abbreviations(query) == found


def test_a_short_query_finds_either_form_and_both_first(searcher):
    """Filtered by AND, before, no chunk held all four words but both.md."""
    result = searcher.search(["generic associated types (GATs)"],
                             SearchOptions(limit=20, cutoff_ratio=0.0)).queries[0]
    assert result.match == "all"
    found = [r.id.split("#")[0] for r in result.results if not r.partial]
    assert found[0] == "kb:both.md"
    assert set(found) == {"kb:both.md", "kb:long.md", "kb:short.md"}
    # the chunks holding some of the words follow, marked (``[search] fill``)
    assert [r.id.split("#")[0] for r in result.results][:3] == found


def test_the_abbreviation_may_come_first(searcher):
    found = doc_ids(searcher, "RBAC (role-based access control)", complete=True)
    assert set(found) == {"kb:rbac.md", "kb:roles.md"}


def test_a_long_query_ranks_either_form_alike(searcher):
    """Ranked, coordination counts each word met by the abbreviation: a chunk that says
    "GATs" is not ranked below one that says "generic" and "types" apart."""
    found = doc_ids(searcher, "how can a trait lend its items with generic associated "
                              "types (GATs)")
    assert found.index("kb:both.md") < found.index("kb:apart.md")
    assert found.index("kb:short.md") < found.index("kb:apart.md")
    assert found.index("kb:long.md") < found.index("kb:apart.md")


def test_typed_operators_keep_parentheses_as_syntax(searcher):
    assert doc_ids(searcher, "generic AND associated AND types AND (GATs)") == ["kb:both.md"]


def test_warm_and_one_shot_readers_agree(tmp_path_factory):
    root, home = kb_folder(tmp_path_factory, "abbr", DOCS)
    queries = ["generic associated types (GATs)", "RBAC (role-based access control)",
               "how can a trait lend its items with generic associated types (GATs)"]
    with short_and_held(root, home) as (short, held, config):
        one, warm = (Searcher(r, config).search(queries, SearchOptions(limit=20,
                                                                      cutoff_ratio=0.0))
                     for r in (short, held))
    for a, b in zip(one.queries, warm.queries, strict=True):
        assert [r.id for r in a.results] == [r.id for r in b.results]
        assert [r.score for r in a.results] == pytest.approx([r.score for r in b.results],
                                                             rel=1e-3)


def test_coordination_weighs_the_words_not_the_abbreviation(searcher):
    """The abbreviation adds no weight of its own: a chunk that says it matches the words
    it stands for, as much as the chunk that says them."""
    from ra.query.bm25f import group_idf
    from ra.query.parser import parse
    from ra.query.plan import PlanOptions, plan_query

    n = searcher.reader.stats.chunks

    def weights(query: str) -> tuple[int, float]:
        plan = plan_query(parse(query), searcher.reader, searcher.analyzer, PlanOptions(),
                          query, rankable=True)
        return len(plan.counted()), sum(group_idf(plan, g, n) for g in plan.counted())

    typed = weights("lend items with generic associated types (GATs)")
    assert typed == pytest.approx(weights("lend items with generic associated types"))
