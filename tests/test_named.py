"""A page named for the query (``ra.query.named``): "templates" finds "Templates (C++)"
before "Class templates", whose sections say "templates" more often; "smart pointers"
finds ``ch15-00-smart-pointers.md``.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import doc_ids, kb_folder, kb_searcher, short_and_held
from ra.query import named
from ra.query.search import Searcher, SearchOptions
from ra.text.analysis import analyzer_for

_SECTION = ("\n\n## {0}\n\nClass templates: templates of classes. A {1} of class templates "
            "uses templates, and templates with {1} arguments.\n")
DOCS = {
    "templates-cpp.md": "# Templates (C++)\n\nTemplates, the basis for generic "
                        "programming: templates, code written once for many types.\n",
    "class-templates.md": "# Class templates\n\nMembers of class templates."
                          + "".join(_SECTION.format(f"Part {n}", w) for n, w in enumerate(
                              ("member",))),
    "vector-class.md": "# vector Class\n\nA sequence container: a vector of elements.\n",
    "vector-functions.md": "# <vector> functions\n\nFunctions of the vector header: swap "
                           "two vector objects, compare a vector with a vector, erase from "
                           "a vector.\n",
    "ch15-00-smart-pointers.md": "# Smart Pointers\n\nA pointer is an address. Smart "
                                 "pointers act like a pointer and hold metadata.\n",
    "ch15-02-deref.md": "# Smart pointers and Deref\n\nSmart pointers like references: "
                        "smart pointers implement Deref, so smart pointers work where pointers do; "
                        "smart pointers and pointers alike, smart pointers of pointers; smart "
                        "pointers.\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "named", DOCS) as searcher:
        yield searcher


def first(searcher: Searcher, query: str) -> str:
    return doc_ids(searcher, query)[0]


@pytest.mark.parametrize("query, page", [
    ("templates", "kb:templates-cpp.md"),  # its title, without "(C++)"
    ("templtes", "kb:templates-cpp.md"),  # a typo: the fuzzy alternative is the name
    ("what are templates", "kb:templates-cpp.md"),  # a question's frame is no word of it
    ("smart pointers", "kb:ch15-00-smart-pointers.md"),  # its title ("and Deref" is more)
    ("vector", "kb:vector-class.md"),  # "vector Class": the one thing the page documents
])
def test_the_page_named_for_the_query_comes_first(searcher, query, page, monkeypatch):
    assert first(searcher, query) == page
    monkeypatch.setattr(named, "BOOST", 0.0)  # without the boost, another page is first
    assert first(searcher, query) != page


def test_a_compound_is_named_by_its_parts(tmp_path_factory, monkeypatch):
    """"Get-Item" is the words "get" and "item" ("get" is a function word only alone)."""
    docs = {"get-item.md": "# Get-Item\n\nReads what is at a location.\n",
            "items.md": "# Get-Item and Set-Item\n\nUse Get-Item to read it; Get-Item "
                        "again for the next one, Get-Item for one more, then Set-Item.\n"}
    with kb_searcher(tmp_path_factory, "named-compound", docs) as searcher:
        assert first(searcher, "Get-Item") == "kb:get-item.md"
        monkeypatch.setattr(named, "BOOST", 0.0)
        assert first(searcher, "Get-Item") == "kb:items.md"


def test_a_compound_of_more_parts_than_a_name_has_words_is_one_word(tmp_path_factory):
    """cargo's config key ``net.git-fetch-with-cli`` (five parts, more than ``MAX_WORDS``)
    names its section: the page on Git authentication, two of whose sections say the key,
    came first."""
    key = "net.git-fetch-with-cli"
    docs = {"config.md": f"# Configuration\n\n## {key}\n\nUse the git command line "
                         "to fetch.\n",
            "git-authentication.md": "# Git Authentication\n\nHow to fetch with git.\n\n"
                                     f"## HTTPS\n\nSet {key} to fetch with git over the "
                                     f"CLI.\n\n## SSH\n\nWith {key}, git fetches over "
                                     "SSH with the CLI.\n"}
    with kb_searcher(tmp_path_factory, "named-key", docs) as searcher:
        results = searcher.search([key], SearchOptions()).queries[0].results
        assert results[0].id == "kb:config.md#netgit-fetch-with-cli"
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(named, "BOOST", 0.0)
            results = searcher.search([key], SearchOptions()).queries[0].results
            assert results[0].id.startswith("kb:git-authentication.md")


def test_a_longer_query_or_another_name_is_left_alone(searcher, monkeypatch):
    """Words more or fewer than the name's, a NOT, a field: no boost, the same order."""
    for query in ("class templates", "templates generic programming", "templates -member",
                  "title:templates"):
        boosted = doc_ids(searcher, query)
        monkeypatch.setattr(named, "BOOST", 0.0)
        assert doc_ids(searcher, query) == boosted, query
        monkeypatch.undo()


def test_raw_scores_are_bm25f_alone(searcher, monkeypatch):
    opts = SearchOptions(raw=True, limit=20, cutoff_ratio=0.0)
    boosted = [(r.id, r.score) for r in searcher.search(["templates"], opts).queries[0].results]
    monkeypatch.setattr(named, "BOOST", 0.0)
    plain = [(r.id, r.score) for r in searcher.search(["templates"], opts).queries[0].results]
    assert boosted == plain


def test_warm_and_one_shot_readers_agree(tmp_path_factory):
    root, home = kb_folder(tmp_path_factory, "named-readers", DOCS)
    with short_and_held(root, home) as (short, held, config):
        for query in ("templates", "smart pointers", "vector", "templtes"):
            got = [[r.id for r in Searcher(reader, config).search(
                [query], SearchOptions(limit=20, cutoff_ratio=0.0)).queries[0].results]
                for reader in (short, held)]
            assert got[0] == got[1], query


def _meta(title: str, path: str = "x.md", depth: int = 1, only_heading: bool = False):
    """A chunk's metadata: a page (depth 0), its one top heading, or a section."""
    return SimpleNamespace(title=title, path=path, depth=depth, doc_id=f"kb:{path}",
                           parent_id=None if depth == 0 else f"kb:{path}" if only_heading
                           else f"kb:{path}#parent", sibling_count=1 if only_heading else 3)


@pytest.mark.parametrize("title, path, depth, name", [
    ("Templates (C++)", "templates-cpp.md", 1, {"templat"}),
    ("vector Class", "vector-class.md", 1, {"vector"}),
    ("Inline Functions (C++)", "x.md", 1, {"inlin", "function"}),  # a plural is no kind
    ("ch15-03-drop", "ch15-03-drop.md", 0, {"drop"}),  # a chapter's numbers leave
    ("Overview", "guide/setup/index.md", 0, {"setup"}),  # an index file: its folder
    ("References and Borrowing", "x.md", 1, {"refer", "borrow"}),  # "and" is no word
    ("Appendix B", "appendix-02-operators.md", 0, {"oper"}),  # numbering leaves
    ("Calling", "build/x64-calling-convention.md", 0, {"x64", "call", "convent"}),  # a word
    ("is_pointer Class", "x.md", 1, {"is", "pointer"}),  # "is" is part of a word here
    ("Steps", "Tax/ODO%2D1.md", 0, {"odo", "1"}),  # an Azure DevOps page's name, decoded
    # a path's last name: axum's section of this title came 2nd for "middleware::from_fn",
    # after one that writes middleware::from_fn_with_state again and again
    ("axum::middleware::from_fn", "x.md", 1, {"from", "fn"}),
])
def test_names(title, path, depth, name):
    assert frozenset(name) in named.names(_meta(title, path, depth), analyzer_for("english"))


def test_a_page_s_one_top_heading_is_named_as_the_page():
    """The Rust book's pages hold one `##` heading each, which a search finds rather
    than the page: ``ch15-03-drop.md``'s "Running Code on Cleanup with the Drop Trait"."""
    title, path = "Running Code on Cleanup with the Drop Trait", "src/ch15-03-drop.md"
    drop = frozenset({"drop"})
    assert drop in named.names(_meta(title, path, 2, only_heading=True), analyzer_for("english"))
    assert drop not in named.names(_meta(title, path, 2), analyzer_for("english"))


def test_a_header_s_operators_are_not_named_for_the_header():
    assert named.names(_meta("<string_view> operators"), analyzer_for("english")) == (
        frozenset({"string", "view", "oper"}),)


@pytest.mark.parametrize("words, name, expected", [
    ([{"templat"}], {"templat"}, True),
    ([{"templat", "templet"}], {"templat"}, True),  # a fuzzy alternative
    ([{"smart"}, {"pointer"}], {"pointer", "smart"}, True),
    ([{"templat"}], {"class", "templat"}, False),  # the name has more
    ([{"smart"}, {"pointer"}], {"pointer"}, False),  # the query has more
    ([{"a", "b"}, {"a", "c"}], {"a", "d"}, False),  # a name's term that matches no word
])
def test_is_named(words, name, expected):
    assert named.is_named(tuple(map(frozenset, words)), frozenset(name)) is expected


def test_explain_names_the_results_it_boosted(searcher):
    from ra.query.render import render_explain

    explain = searcher.search(["templates"], SearchOptions(explain=True)).queries[0].explain
    assert explain["named_for_query"] == {"factor": 1 + named.BOOST,
                                          "results": ["kb:templates-cpp.md#templates-c"]}
    assert "named for the query (score × 1.4): kb:templates-cpp.md#templates-c" in (
        render_explain(explain))
    plain = searcher.search(["templates generic"], SearchOptions(explain=True)).queries[0]
    assert "named_for_query" not in plain.explain


def test_the_boost_reorders_what_the_elbow_kept_and_keeps_it_all():
    """Boosted before the elbow, a first result at 10 × 1.4 put the second (6) under half
    of it, and "const generics" on the Rust RFCs gave one result of three."""
    from ra.query.rank import Candidate, rank_with_stats

    cands = [Candidate(i, i, None, score, 1, 0) for i, score in
             (("kb:a.md", 10.0), ("kb:b.md", 6.0), ("kb:c.md", 1.0))]

    def boost_a(results):
        return sorted((r._replace(score=r.score * 1.4) if r.id == "kb:a.md" else r
                       for r in results), key=lambda r: (-r.score, r.id))

    ranked, stats = rank_with_stats(cands, threshold=0.5, cutoff_ratio=0.5, limit=None,
                                    lookup=None, reweigh=boost_a)
    assert [r.id for r in ranked] == ["kb:a.md", "kb:b.md"]  # c is under the elbow
    assert ranked[0].score == pytest.approx(14.0)


def test_a_word_the_index_has_names_pages_by_itself_not_its_neighbours():
    from ra.query.plan import Alt

    drop = (Alt("drop", 1, 40), Alt("prop", 2, 12, weight=0.5, distance=1))
    assert named._meant(drop) == {"drop"}  # a page titled "Prop" is not named "drop"
    fried = (Alt("fri", 3, 1), Alt("friend", 4, 192, weight=0.5, distance=1))
    assert named._meant(fried) == {"fri", "friend"}  # a typo that is a rare word too
    typo = (Alt("freind", None, 0), Alt("friend", 4, 192, weight=0.5, distance=1))
    assert named._meant(typo) == {"friend"}


def test_the_words_of_a_query_are_its_words_and_compounds_parts_not_an_or():
    from ra.query.plan import Abbreviated, AllOf, AnyOf, Parts, Ref

    compound = AnyOf((Ref(3), Parts((Ref(0), Ref(1)))))  # Get-ChildItem, or getchilditem
    assert named._word_clauses(compound) == [(0, True), (1, True)]
    assert named._word_clauses(AnyOf((Ref(0), Ref(1)))) is None  # "a OR b"
    defined = AllOf((Abbreviated((Ref(0), Ref(2))), Abbreviated((Ref(1), Ref(2)))))
    assert named._word_clauses(defined) == [(0, False), (1, False)]  # not "(GATs)"


def test_a_page_too_large_gives_the_section_headed_for_a_longer_query(tmp_path_factory):
    """opensource.guide: "finding a project to contribute to" (five words, too many for
    a name) matched its how-to page, larger than the budget, which came as another part;
    its section of that title is the part given (no result is re-weighed)."""
    intro = "Contributing to a project takes time. " * 40
    docs = {"how-to-contribute.md": (
        "# How to contribute\n\n" + intro + "\n\n## What it means to contribute\n\n"
        "Finding a project, contribute to a project: finding is contributing.\n\n"
        "## Finding a project to contribute to\n\n" + "Look around you first. " * 20
        + "Then pick one you use.\n\n## Orienting yourself\n\n" + intro + "\n")}
    with kb_searcher(tmp_path_factory, "named-heads", docs) as searcher:
        query = "finding a project to contribute to"
        whole = searcher.search([query], SearchOptions()).queries[0].results
        assert whole[0].id.endswith("#how-to-contribute") and whole[0].tokens > 400
        cut = searcher.search([query], SearchOptions(max_tokens=400)).queries[0].results
        assert cut[0].id == "kb:how-to-contribute.md#finding-a-project-to-contribute-to"
        assert cut[0].score == whole[0].score
