"""Search behaviour through the library API (``Searcher.search``) on a small corpus.

What an agent relies on: topics grouped and deduplicated, partial answers when no chunk
has every word, the token budget, tree filters, negation, phrases and proximity,
prefixes, boosts, typo tolerance only for longer words, archived notes hidden, no result
nested in another, and syntax errors that say where they are.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

import ra.config.settings
import ra.index.freshness
from ra.errors import QueryError
from ra.query.search import Searcher, SearchOptions

DOCS = {
    "kb/concurrency.md": """\
---
tags: [rust, threads]
---
# Concurrency

Notes on running code at the same time.

## Threads

Spawn threads with a closure. Join every handle before exit.

## Mutex locks

A mutex guards shared state: one thread at a time holds the lock. A panic while holding
it leads to lock poisoning.

## Channels

Channels send values between threads; the receiver blocks until a message arrives.
""",
    "kb/gardening.md": """\
# Gardening

## Tomatoes

Tomatoes need sun, deep watering and a stake.

## Compost

Compost turns kitchen scraps into soil. Turn the compost pile weekly.
""",
    "kb/phrases.md": """\
# Word order

## Adjacent

The quick brown fox jumps over the fence.

## Reversed

The brown, quick cat.

## Two apart

A quick and sleepy brown bear.

## Three apart

A quick one, two, three, brown owl.
""",
    "kb/plumbing.md": """\
# Plumbing

## Hydrants

A fire hydrant is painted red.

## Pumps

Hydraulic pumps move water uphill.
""",
    "kb/cluster.md": """\
# Cluster notes

## Orchestration

Kubernetes schedules containers onto nodes.

## Configuration

Manifests are written in yaml and applied with kubectl. Helm charts are installed
with one command.
""",
    "kb/animals.md": """\
# Marmot

Marmot burrows, marmot colonies, marmot whistles, and a wombat once.

## Burrows

Marmot families dig long burrows.
""",
    "kb/wombat.md": """\
# Australian fauna

## Night walks

We saw a wombat near the creek at dusk.
""",
    "kb/old.md": """\
---
status: archived
---
# Airships

The zeppelin era ended in 1937.
""",
    "kb/long.md": "# Long essay\n\n" + "The sunflower essay goes on and on. " * 300 + "\n",
    "kb/short.md": "# Sunflower\n\nA sunflower seed.\n",
    "other/locks.md": """\
# Locks elsewhere

A mutex in another tree: database row locks.
""",
}


@dataclass
class Env:
    searcher: Searcher
    reader: object


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Env:
    root = tmp_path_factory.mktemp("search")
    home = tmp_path_factory.mktemp("search-home")
    for rel, text in DOCS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / ".ra.toml").write_text('[tree.kb]\npath = "./kb"\n\n[tree.other]\npath = "./other"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    yield Env(Searcher(reader, config), reader)
    reader.close()


def search(env: Env, *topics: str, **options):
    options.setdefault("limit", 20)
    return env.searcher.search(list(topics), SearchOptions(**options))


def ids(env: Env, query: str, **options) -> list[str]:
    return [r.id for r in search(env, query, **options).queries[0].results]


# --- topics -----------------------------------------------------------------------------

def test_each_topic_is_answered_on_its_own_in_order(env):
    resp = search(env, "mutex", "tomatoes")
    assert [t.query for t in resp.queries] == ["mutex", "tomatoes"]
    assert resp.queries[1].results[0].id == "kb:gardening.md#tomatoes"
    assert all("tomato" not in r.id for r in resp.queries[0].results)


def test_a_chunk_shown_under_an_earlier_topic_is_referenced_not_repeated(env):
    resp = search(env, "mutex", "lock poisoning")
    first, second = resp.queries
    mutex = "kb:concurrency.md#mutex-locks"
    assert mutex in [r.id for r in first.results]
    again = next(r for r in second.results if r.id == mutex)
    assert again.seen_in == "mutex"
    assert again.content is None and "content" not in again.to_dict()
    shown = next(r for r in first.results if r.id == mutex)
    assert shown.seen_in is None and "poisoning" in shown.content


def test_a_section_shown_inside_an_earlier_aggregated_result_is_not_repeated(env):
    first, second = search(env, "threads", "mutex poisoning").queries
    shown = first.results[0]
    assert "lock poisoning" in shown.content
    again = next(r for r in second.results if r.id == "kb:concurrency.md#mutex-locks")
    assert again.seen_in == "threads"


def test_a_repeated_topic_is_all_references(env):
    resp = search(env, "tomatoes", "tomatoes")
    assert resp.queries[1].results
    assert all(r.seen_in == "tomatoes" for r in resp.queries[1].results)


# --- partial answers --------------------------------------------------------------------

def test_no_chunk_with_every_word_gives_a_partial_answer_ranked_by_score(env):
    topic = search(env, "mutex tomatoes").queries[0]
    assert topic.match == "partial"
    found = [r.id for r in topic.results]
    assert "kb:gardening.md#tomatoes" in found and "kb:concurrency.md#mutex-locks" in found
    scores = [r.score for r in topic.results]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_a_partial_answer_puts_chunks_with_more_of_the_words_first(env):
    """``mutex poisoning tomatoes``: the mutex section has two of the three words and comes
    first; a chunk with one of them may follow, scored lower."""
    topic = search(env, "mutex poisoning tomatoes", aggregation=False,
                   cutoff_ratio=0.0).queries[0]
    assert topic.match == "partial"
    found = [r.id for r in topic.results]
    assert found[0] == "kb:concurrency.md#mutex-locks"
    assert "kb:gardening.md#tomatoes" in found


def test_a_partial_answer_respects_negation(env):
    topic = search(env, "mutex tomatoes -poisoning", aggregation=False,
                   cutoff_ratio=0.0).queries[0]
    assert topic.match == "partial"
    found = [r.id for r in topic.results]
    assert "kb:gardening.md#tomatoes" in found
    assert "kb:concurrency.md#mutex-locks" not in found


def test_a_path_to_a_file_that_finds_nothing_says_how_to_find_its_notes(env):
    """vite's ``packages/vite/src/node/server/middlewares/proxy.ts`` found nothing (every
    part of the path in one chunk) and said only that."""
    topic = search(env, "packages/app/src/server/middlewares/proxy.ts").queries[0]
    assert topic.results == [] and "give its path to context" in topic.note
    assert search(env, "xylophone").queries[0].note is None  # not a path
    assert search(env, "mutex/threads").queries[0].note is None or "context" not in (
        search(env, "mutex/threads").queries[0].note)  # no file's name


def test_a_complete_answer_says_all_and_nothing_says_none(env):
    assert search(env, "mutex").queries[0].match == "all"
    nothing = search(env, "xylophone").queries[0]
    assert (nothing.match, nothing.results) == ("none", [])


# --- token budget -----------------------------------------------------------------------

@pytest.mark.parametrize("budget", [0, 5, 20, 60, 200, 5000])
def test_packing_never_exceeds_the_budget(env, budget):
    resp = search(env, "sunflower", "compost", "mutex", max_tokens=budget)
    used = sum(r.tokens for t in resp.queries for r in t.results if r.seen_in is None)
    assert used <= resp.tokens_used <= budget  # the lines around the results count too
    assert resp.to_dict()["max_tokens"] == budget


def _api_page(n: int) -> str:
    members = "\n\n".join(
        f"## CWidgetCtrl{n}::Set_Item_{k}\n\n```cpp\nBOOL SetItem_{k}(int nItem, "
        f"LPCTSTR lpszText = nullptr, UINT_PTR* pData = NULL); // push_back({k}, {n})\n"
        f"```\n\nSets item {k} of the widget control (push back, `m_hWnd->{k}`)."
        for k in range(6))
    return f"# CWidgetCtrl{n} class\n\nThe widget control class number {n}.\n\n{members}\n"


@pytest.fixture(scope="module")
def api(tmp_path_factory) -> Searcher:
    yield from one_tree(tmp_path_factory, "api", {
        f"mfc/reference/cwidget-ctrl-{n}-class/members.md": _api_page(n) for n in range(8)})


#: Two topics' lines alone (a heading each, a line for each result shown under the other
#: topic) come to more than 300 tokens, which a tighter budget cannot keep to.
ANSWERS = [(topics, budget) for topics in (["push back item"],
                                          ["sets item of the widget control and push back"])
           for budget in (150, 300, 700, 1500)] + [
    (["widget SetItem", "nItem pData"], budget) for budget in (700, 1500)]


@pytest.mark.parametrize("mode", ["full", "list"])
@pytest.mark.parametrize(("topics", "budget"), ANSWERS)
def test_the_answer_as_printed_keeps_to_the_budget(api, topics, budget, mode):
    """The budget counts what an agent reads, as cl100k_base counts it: each result's
    rule line and breadcrumb, its list entry as printed, the lines around the results
    and the closing budget line. Counting the chunks' text alone, ten results of the C++
    docs came to 4,157 tokens under 4,000, and to 1,196 under 1,000; ids and code are
    dense in tokens, which a guess of four characters a token missed."""
    from ra.query.render import render_search
    from ra.text.tokens import count_tokens

    resp = api.search(topics, SearchOptions(limit=10, max_tokens=budget,
                                            list_only=mode == "list"))
    assert any(t.results for t in resp.queries)
    printed = render_search(resp, mode)
    assert count_tokens(printed) <= budget
    assert resp.tokens_used <= budget


@pytest.mark.parametrize("mode", ["full", "list"])
@pytest.mark.parametrize("budget", [150, 200, 250, 300, 400, 700, 5000])
def test_topics_sharing_results_keep_to_a_small_budget_and_point_at_what_is_shown(
        api, budget, mode):
    """Two topics whose results are the same chunks: at 150 tokens (the Rust book's
    "error handling" and "panic recoverable errors") the first showed none of its
    results, the second three lines "(shown above under 'error handling')" pointing at
    nothing, and a topic left with nothing to show printed a line the budget had not
    counted (154 tokens printed for 150). A result shown under an earlier topic is
    shown there, and the answer as printed keeps to the budget (from 150 tokens: below,
    the lines saying that nothing fits are more than it)."""
    from ra.query.render import render_search
    from ra.text.tokens import count_tokens

    resp = api.search(["widget SetItem", "SetItem nItem pData"],
                      SearchOptions(limit=10, max_tokens=budget, list_only=mode == "list"))
    first, second = resp.queries
    for r in second.results:
        if r.seen_in is not None:
            assert any(s.ord <= r.ord <= s.ord + s.descendants for s in first.results)
    printed = render_search(resp, mode)
    assert count_tokens(printed) <= budget and resp.tokens_used <= budget
    assert budget < 5000 or all(r.seen_in == "widget SetItem" for r in second.results)


CHANGELOG = "# Changelog\n\n" + "".join(
    f"## Cargo 1.{n} ({2018 + n // 8}-{n % 12 + 1:02d}-{n % 27 + 1:02d})\n\n### Fixed\n\n"
    + (f"- Fixed git fetch of a registry index over the CLI ({n}).\n\n" if n % 3 == 0 else
       f"- Fixed a panic in the resolver ({n}).\n\n")
    + "### Added\n\n- A lint for unused manifest keys.\n\n### Changed\n\n- Faster "
      "builds of workspaces.\n\n### Removed\n\n- The old config format.\n\n"
    for n in range(30, 90))


@pytest.fixture(scope="module")
def changelog(tmp_path_factory) -> Searcher:
    yield from one_tree(tmp_path_factory, "changelog", {"CHANGELOG.md": CHANGELOG})


@pytest.mark.parametrize("budget", [120, 200, 300, 500])
@pytest.mark.parametrize("mode", ["full", "list"])
def test_entries_printed_under_their_release_are_counted_so(changelog, budget, mode):
    """A changelog's sections share their titles ("Fixed", "Added"), so each entry prints
    its release too ("Cargo 1.38 (2019-09-26) › Fixed"): 29 tokens where the budget
    counted the title alone, 16; on cargo's docs a search printed 1,008 tokens for 1,000,
    its budget line saying 984."""
    from ra.query.render import render_search
    from ra.text.tokens import count_tokens

    resp = changelog.search(["git fetch"], SearchOptions(limit=20, max_tokens=budget,
                                                         list_only=mode == "list"))
    printed = render_search(resp, mode)
    assert budget == 120 or "› Fixed" in printed  # (one result alone is no repeat)
    assert count_tokens(printed) <= resp.tokens_used <= budget


def test_a_chunk_s_stored_tokens_count_the_lines_it_is_shown_under(api):
    """``ra get`` prints the chunk under its rule line and breadcrumb, which its stored
    count holds, so the count is that of what is printed (up to a token where the text
    ends)."""
    from ra.query.get import get_chunk
    from ra.query.render import render_chunk
    from ra.text.tokens import count_tokens

    chunk = get_chunk(api.reader, api.config,
                      "kb:mfc/reference/cwidget-ctrl-3-class/members.md#cwidgetctrl3set_item_2")
    assert abs(count_tokens(render_chunk(chunk)) - chunk.tokens) <= 1


def test_a_result_too_big_for_the_budget_falls_back_to_its_list_entry(env):
    full = search(env, "sunflower essay").queries[0].results
    assert full[0].id == "kb:long.md#long-essay" and full[0].tokens > 1000
    topic = search(env, "sunflower essay", max_tokens=200).queries[0]
    top = topic.results[0]
    assert (top.id, top.tier) == ("kb:long.md#long-essay", "list")
    assert 0 < top.tokens <= 200
    assert "content" not in top.to_dict() and top.to_dict()["tier"] == "list"


def test_results_that_fit_stay_in_full(env):
    topic = search(env, "sunflower seed", max_tokens=500).queries[0]
    assert topic.results[0].id == "kb:short.md#sunflower"
    assert topic.results[0].tier == "full" and "seed" in topic.results[0].content


HANDBOOK = """\
---
description: The handbook covers deployment, rollbacks and canary releases.
---
# Handbook

Everything about shipping.

## Deployment

""" + "Deployment runs the pipeline stage after stage and waits for approval. " * 120 + """

## Rollbacks

A rollback restores the previous release in one command: ship rollback.

## Canary releases

A canary release sends a tenth of the traffic to the new version first.
"""


def one_tree(tmp_path_factory, name: str, pages: dict[str, str]):
    """A searcher over ``pages`` (relative path → text) in a tree ``kb`` of its own, with
    an isolated home; closed when the module's tests are done."""
    root = tmp_path_factory.mktemp(name)
    home = tmp_path_factory.mktemp(f"{name}-home")
    for rel, text in pages.items():
        (root / "kb" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "kb" / rel).write_text(text)
    (root / ".ra.toml").write_text('[tree.kb]\npath = "./kb"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    yield Searcher(reader, config)
    reader.close()


@pytest.fixture(scope="module")
def handbook(tmp_path_factory) -> Searcher:
    yield from one_tree(tmp_path_factory, "handbook", {
        "handbook.md": HANDBOOK, "other.md": "# Other\n\nNothing about releases here.\n"})


@pytest.mark.parametrize("query", ["handbook rollback",  # the page claims its section
                                   "how do rollbacks and canary releases work"])  # ranked
def test_a_page_too_large_for_the_budget_is_given_as_the_section_that_matched(handbook,
                                                                               query):
    """The page's title and description match the query, so without a budget the page
    (with its long deployment section) is the result; within 600 tokens it could only be
    a list entry, so the section that matched best stands in its place, in full, with
    the page's score."""
    whole = handbook.search([query], SearchOptions()).queries[0].results[0]
    assert whole.id == "kb:handbook.md" and whole.tokens > 1000
    top = handbook.search([query], SearchOptions(max_tokens=600)).queries[0].results[0]
    assert (top.id, top.tier, top.score) == ("kb:handbook.md#rollbacks", "full", whole.score)
    assert "ship rollback" in top.content and 0 < top.tokens <= 600


@pytest.mark.parametrize("read_budget, listed", [(4000, "kb:handbook.md"),
                                                   (600, "kb:handbook.md#rollbacks"),
                                                   (0, "kb:handbook.md")])  # 0: none
def test_a_list_offers_what_a_get_reads_whatever_the_lists_budget(handbook, read_budget,
                                                                   listed):
    """A list entry costs the same whatever it stands for, and an agent reads it next
    with ``get``'s budget: the part of a large result listed is chosen for that, not for
    the list's budget (on cargo's docs each budget listed another section of the page on
    environment variables)."""
    for budget in (150, 600, 2000):
        topic = handbook.search(["handbook rollback"], SearchOptions(
            list_only=True, max_tokens=budget, read_budget=read_budget)).queries[0]
        assert topic.results[0].id == listed, budget


def test_a_page_that_alone_matches_stays_a_list_entry_within_the_budget(handbook):
    """Only the description holds both words, so no section stands for the page."""
    top = handbook.search(["rollbacks canary"], SearchOptions(max_tokens=600)).queries[0]
    assert [(r.id, r.tier) for r in top.results] == [("kb:handbook.md", "list")]


# --- filters and operators --------------------------------------------------------------

def test_tree_clause_restricts_to_that_tree(env):
    assert set(ids(env, "mutex")) >= {"kb:concurrency.md#mutex-locks",
                                      "other:locks.md#locks-elsewhere"}
    assert ids(env, "tree:other mutex") == ["other:locks.md#locks-elsewhere"]
    assert "other:locks.md#locks-elsewhere" not in ids(env, "tree:kb mutex")


def test_trees_option_restricts_to_those_trees(env):
    assert ids(env, "mutex", trees=("other",)) == ["other:locks.md#locks-elsewhere"]
    assert all(i.startswith("kb:") for i in ids(env, "mutex", trees=("kb",)))
    assert ids(env, "mutex", trees=("kb", "other")) == ids(env, "mutex")


def test_a_tree_only_query_lists_the_tree_or_is_an_error(env):
    try:
        topic = search(env, "tree:other").queries[0]
    except QueryError:
        return
    assert topic.results and all(r.tree == "other" for r in topic.results)


def test_minus_term_excludes_chunks_with_that_word(env):
    assert "kb:concurrency.md#mutex-locks" in ids(env, "mutex")
    assert "kb:concurrency.md#mutex-locks" not in ids(env, "mutex -poisoning")
    assert "kb:concurrency.md#mutex-locks" not in ids(env, "mutex NOT poisoning")
    assert ids(env, "mutex -poisoning") == ["other:locks.md#locks-elsewhere"]


def test_a_negated_word_never_appears_in_returned_content(env):
    results = search(env, "gardening -compost").queries[0].results
    assert results
    for r in results:
        assert "compost" not in r.content.lower(), r.id


@pytest.mark.parametrize("query", ["NOT mutex", "tree:kb NOT mutex", 'NOT "mutex"'])
def test_negating_every_word_is_a_query_error(env, query):
    with pytest.raises(QueryError, match="not negated"):
        search(env, query)


@pytest.mark.parametrize("query, flags", [
    ("-mutex", "-mutex"), ("tree:kb -mutex", "-mutex"),
    ("-mutex -thread", "-mutex and -thread"), ("-mutex NOT zeppelin", "-mutex")])
def test_a_query_of_only_dash_words_searches_for_them(env, query, flags):
    """``-Recurse`` alone would exclude every chunk: it names a flag (``Get-ChildItem
    -Recurse``), and is searched for as written, with a note; in strict mode it is the
    error it was."""
    topic = search(env, query).queries[0]
    quoted = query.replace("-mutex", '"-mutex"').replace("-thread", '"-thread"')
    assert topic.query == query and topic.results
    assert [r.id for r in topic.results] == ids(env, quoted)
    pronoun = "them" if " and " in flags else "it"
    assert topic.note == (f"{flags} alone would exclude every chunk; searched for "
                          f"{pronoun} as written")
    with pytest.raises(QueryError, match="not negated"):
        search(env, query, strict=True)


def test_phrase_requires_adjacency(env):
    assert set(ids(env, "quick brown", aggregation=False)) >= {
        "kb:phrases.md#adjacent", "kb:phrases.md#reversed", "kb:phrases.md#two-apart"}
    assert ids(env, '"quick brown"', aggregation=False) == ["kb:phrases.md#adjacent"]
    assert ids(env, '"brown quick"', aggregation=False) == ["kb:phrases.md#reversed"]


@pytest.mark.parametrize("slop, expected", [
    (0, {"adjacent"}),
    (1, {"adjacent"}),
    (2, {"adjacent", "two-apart", "reversed"}),  # "brown quick": a swap costs 2, as Lucene
    (3, {"adjacent", "two-apart", "three-apart", "reversed"}),
])
def test_proximity_allows_up_to_n_words_between(env, slop, expected):
    found = ids(env, f'"quick brown"~{slop}', aggregation=False, cutoff_ratio=0.0)
    assert {i.split("#")[1] for i in found} == expected


def test_proximity_two_words_apart_needs_slop_two(env):
    """``"a b"~2`` matches ``a x y b``; ``"a b"~1`` does not."""
    two = ids(env, '"quick brown"~2', aggregation=False, cutoff_ratio=0.0)
    one = ids(env, '"quick brown"~1', aggregation=False, cutoff_ratio=0.0)
    assert "kb:phrases.md#two-apart" in two and "kb:phrases.md#two-apart" not in one


def test_prefix_expands_to_every_word_starting_with_it(env):
    assert ids(env, "hydr") == []
    assert set(ids(env, "hydr*", aggregation=False)) == {"kb:plumbing.md#hydrants",
                                                          "kb:plumbing.md#pumps"}


def test_boost_changes_the_order(env):
    def scores(query):
        results = search(env, query, aggregation=False, cutoff_ratio=0.0).queries[0].results
        return {r.id: r.score for r in results}

    plain, boosted = scores("marmot OR wombat"), scores("marmot OR wombat^3")
    assert set(plain) == set(boosted)
    # wombat.md's one section (wombat in its path and one sentence) triples; a page shown
    # for marmot keeps its score unless a wombat section lifts it
    walks, marmot = "kb:wombat.md#night-walks", "kb:animals.md#marmot"
    assert boosted[walks] == pytest.approx(3 * plain[walks])
    assert max(plain, key=plain.get) == marmot
    assert boosted[walks] > plain[marmot]


# --- typos ------------------------------------------------------------------------------

@pytest.mark.parametrize("typo", ["kuberentes", "kubernets", "kubernetess", "kubermetes"])
def test_one_typo_in_a_long_word_still_finds_the_chunk(env, typo):
    assert ids(env, typo)[:1] == ["kb:cluster.md#orchestration"]


@pytest.mark.parametrize("typo", ["ymal", "yml", "yamll"])
def test_typo_in_a_word_of_four_letters_or_fewer_is_not_fuzzed(env, typo):
    """``yamll`` has five letters, so it is expanded and finds ``yaml``; the others not."""
    found = ids(env, typo)
    if len(typo) > 4:
        assert found[:1] == ["kb:cluster.md#configuration"]
    else:
        assert found == []


def test_a_typo_that_changes_the_stem_is_still_found(env):
    """``installde`` stems to ``installd``, two edits from ``instal``; its surface word is
    one transposition from ``installed`` (DESIGN, Query)."""
    assert ids(env, "installde")[:1] == ["kb:cluster.md#configuration"]
    assert ids(env, "helm installde")[:1] == ["kb:cluster.md#configuration"]


@pytest.mark.parametrize(("start", "first"), [("kuber", "kb:cluster.md#orchestration"),
                                               ("manifes", "kb:cluster.md#configuration")])
def test_a_word_the_index_lacks_matches_the_words_that_go_on_from_it(env, start, first):
    """"postgres" on notes that say "PostgreSQL": no chunk holds it, nor a word within one
    edit; the words it starts are its meaning (a typo's weight). Not with fuzzy off, nor
    for a word of four letters ("kube"), nor one the index holds."""
    assert ids(env, start)[:1] == [first]
    assert ids(env, start, fuzzy=False) == []
    assert ids(env, "kube") == []


def test_fuzzy_off_and_raw_match_exactly(env):
    assert ids(env, "kuberentes", fuzzy=False) == []
    assert ids(env, "kuberentes", raw=True) == []


# --- archived notes ---------------------------------------------------------------------

def test_archived_notes_are_hidden_unless_asked_for(env):
    assert ids(env, "zeppelin") == []
    assert search(env, "zeppelin").queries[0].match == "none"
    assert ids(env, "zeppelin", include_archived=True) == ["kb:old.md#airships"]


# --- nesting ----------------------------------------------------------------------------

def _ancestors(env: Env, chunk_id: str) -> set[str]:
    out = set()
    meta = env.reader.meta(chunk_id)
    while meta.parent_id is not None:
        out.add(meta.parent_id)
        meta = env.reader.meta(meta.parent_id)
    return out


@pytest.mark.parametrize("query", ["concurrency", "marmot", "marmot burrows", "quick brown",
                                   "threads OR mutex OR channels", "word order"])
@pytest.mark.parametrize("aggregation", [True, False])
def test_ancestors_and_descendants_are_never_both_results(env, query, aggregation):
    results = ids(env, query, aggregation=aggregation, cutoff_ratio=0.0, limit=100)
    assert results
    for chunk_id in results:
        assert not _ancestors(env, chunk_id) & set(results), chunk_id
    assert len(results) == len(set(results))


def test_matching_most_sections_aggregates_into_the_parent(env):
    topic = search(env, "threads").queries[0]
    top = topic.results[0]
    assert top.id in ("kb:concurrency.md", "kb:concurrency.md#concurrency")
    assert set(top.constituents) >= {"kb:concurrency.md#threads", "kb:concurrency.md#channels"}


# --- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("query, position", [
    ('mutex "unclosed', 6),
    ("(mutex threads", 0),
    ("mutex OR", 8),
    ("mutex^0", 5),
    ("title:", 6),
    ("mu*tex", 2),
    ("nosuchfield:mutex", 0),
])
def test_strict_syntax_errors_are_query_errors_with_a_position(env, query, position):
    with pytest.raises(QueryError) as raised:
        search(env, query, strict=True)
    assert raised.value.position == position
    assert raised.value.query == query
    assert "^" in str(raised.value)


@pytest.mark.parametrize("query, words", [
    ('mutex "unclosed', "mutex unclosed"),
    ("(mutex threads", "mutex threads"),
    ("mutex OR", "mutex"),
    ("mutex^0", "mutex 0"),
    ("mu*tex", "mu tex"),
    # read as the compound nosuchfield-mutex, which no chunk holds: its parts answer
    ("nosuchfield:mutex", "nosuchfield mutex"),
])
def test_invalid_syntax_is_answered_as_its_words_with_a_note(env, query, words):
    topic = search(env, query).queries[0]
    assert topic.note and "not valid query syntax" in topic.note
    assert topic.to_dict()["note"] == topic.note
    plain = search(env, words).queries[0]
    assert plain.note is None and "note" not in plain.to_dict()
    assert [(r.id, r.score) for r in topic.results] == [(r.id, r.score) for r in plain.results]


@pytest.mark.parametrize("query, same_as", [
    ("mutex - threads", "mutex threads"),  # a lone dash is text
    ("mutex --threads", "mutex threads"),  # so is a doubled one (a flag)
    ("threads or mutex", "threads or mutex"),  # lower-case 'or' is a word: no OR
])
def test_dashes_and_lowercase_keywords_are_text(env, query, same_as):
    topic = search(env, query).queries[0]
    assert topic.note is None
    assert ids(env, query) == ids(env, same_as)
    explain = search(env, "threads or mutex", explain=True).queries[0].explain
    assert explain["parsed"] == "threads or mutex" and "or" not in explain["ast"]


def test_a_question_s_frame_may_close_with_do_or_mean(env):
    """"what does temperature do": the Prompt Engineering Guide's settings page says no
    "do", and the four chunks that did (boilerplate code) came alone."""
    def score_only(query: str) -> list[tuple[str, bool]]:
        explain = search(env, query, explain=True).queries[0].explain
        return [(c["text"], c["score_only"]) for c in explain["clauses"]]

    assert score_only("what does mutex do") == [("what", True), ("does", True),
                                                 ("mutex", False), ("do", True)]
    assert score_only("what does mutex mean")[-1] == ("mean", True)
    assert score_only("mutex threads do")[-1] == ("do", False)  # no question: a word
    assert score_only("what do")[-1] == ("do", False)  # nothing but a frame: as typed
    # its frame's words further on frame it too: Basecamp's "how much vacation do we get"
    assert score_only("how much mutex do we lock") == [
        ("how", True), ("much", True), ("mutex", False), ("do", True), ("we", True),
        ("lock", False)]
    assert score_only("how much mutex is locked")[3] == ("is", True)
    assert score_only("mutex we lock") == [("mutex", False), ("we", False),
                                           ("lock", False)]  # no question: words


def test_function_words_are_no_typos_and_or_is_no_word_to_count(env):
    """"is there a bonus or profit sharing" on Basecamp's handbook: "there" matched
    "three", "these", "where" and "here" as typos, and "or" (in 52 of its 94 chunks)
    counted as a word matched, so every section matched and the page came whole, one
    result; now its "Employee Profit Sharing" section."""
    def clauses(query: str) -> dict[str, tuple]:
        explain = search(env, query, explain=True).queries[0].explain
        return {c["text"]: (c["score_only"], [a["term"] for a in c["terms"]])
                for c in explain["clauses"]}

    shown = clauses("is there a quick fox or owl")
    assert shown["there"] == (True, ["there"])  # "three" is in the index, one letter off
    assert shown["or"][0] is True  # it ranks the query, and adds score only
    assert shown["quick"][0] is False and shown["owl"][0] is False
    assert "three" in clauses("threee")["threee"][1]  # a typo of a word still is one


def test_operators_typed_with_words_are_said_not_searched(env):
    """"== vs ===" was searched as "vs" alone, and said nothing of it (You Don't Know JS);
    words of no letter or digit are named in a note, and a query of nothing else in its
    error's hint. Punctuation goes unsaid."""
    topic = search(env, "mutex == threads ===").queries[0]
    assert topic.note == ("not searched: `==`, `===` (no letter or digit: ra searches "
                          "words; the words around an operator find its page)")
    assert ids(env, "mutex == threads ===") == ids(env, "mutex threads")
    assert search(env, "mutex ... threads").queries[0].note is None
    with pytest.raises(QueryError) as error:
        search(env, '== "===" ..<')
    assert error.value.hint.startswith("'==', '===', '..<': no letter or digit")


def test_control_characters_typed_are_said_escaped(env):
    """A query holding control characters (an agent's malformed call: "\x00\x01 rules")
    was told of them raw, into a terminal or an agent's context; they are named as
    escapes, as Python writes them."""
    topic = search(env, "\x01\x1b mutex").queries[0]
    assert topic.note.startswith("not searched: `\\x01\\x1b` (no letter or digit")
    with pytest.raises(QueryError) as error:
        search(env, "\x01\x02")
    assert error.value.hint.startswith("'\\x01\\x02': no letter or digit")


@pytest.mark.parametrize("query", ["$mutex.frobnicate", "mutex-frobnicate", "mutex_frob"])
def test_a_compound_no_chunk_holds_is_answered_by_its_parts(env, query):
    """A compound matches as its joined word, its phrase, or all its parts in one chunk;
    one whose parts no chunk holds together (an API renamed: Svelte's ``$state.frozen``,
    ``class:active``) said "no results", where its parts typed apart find the chunks
    holding most of them. It is answered so, and says so."""
    topic = search(env, query).queries[0]
    assert topic.results and topic.query == query
    assert topic.note.startswith(f"no chunk holds {query!r} as written; these hold its parts")
    assert topic.match == "partial"
    assert [r.id for r in topic.results] == ids(env, query.replace(".", " ").replace(
        "-", " ").replace("_", " ").lstrip("$ "))


def test_a_path_is_not_loosened(env):
    """A file's path that finds nothing says to give it to context (its parts, apart,
    would match nearly every page)."""
    topic = search(env, "src/mutex/frobnicate.rs").queries[0]
    assert topic.results == [] and "context" in topic.note


def test_a_query_with_the_word_or_is_ranked_not_filtered(env):
    """"tomatoes or compost": either will do. Filtered, it kept only chunks that hold
    "or" besides both words: none here. Ranked, both sections come, and a chunk with
    more of the words (and rarer ones) first; the operator OR keeps its meaning."""
    topic = search(env, "tomatoes or compost", aggregation=False, cutoff_ratio=0.0,
                   explain=True).queries[0]
    found = [r.id for r in topic.results]
    assert topic.explain["ranked"] and topic.match == "partial"
    assert {"kb:gardening.md#tomatoes", "kb:gardening.md#compost"} <= set(found)
    assert search(env, "tomatoes compost", explain=True).queries[0].explain["ranked"] is False
    assert search(env, "tomatoes OR compost", explain=True).queries[0].explain["ranked"] is False


def test_a_comparison_is_ranked_not_filtered(env):
    """"tomatoes vs compost" asks about each: filtered, it kept only chunks holding both
    (the System Design Primer: a list of disadvantages and a table of contents, never
    its "Cache-aside" and "Write-through" sections); ranked, both sections come."""
    for query in ("tomatoes vs compost", "tomatoes vs. compost", "tomatoes versus compost"):
        topic = search(env, query, aggregation=False, cutoff_ratio=0.0,
                       explain=True).queries[0]
        assert topic.explain["ranked"], query
        assert {"kb:gardening.md#tomatoes", "kb:gardening.md#compost"} <= {
            r.id for r in topic.results}, query
    assert search(env, "tomatoes vs compost", strict=True,
                  explain=True).queries[0].explain["ranked"]
    assert search(env, "tomatoes AND vs", explain=True).queries[0].explain["ranked"] is False


def test_a_dash_negation_that_took_matches_out_says_so(env):
    """``-word`` may be a flag an agent pasted (``Get-ChildItem -Recurse``): the exclusion
    stands, and the topic says how many chunks matching the rest it took out and how to
    search for the flag instead."""
    topic = search(env, "lock -thread").queries[0]
    rest, quoted = search(env, "lock").queries[0], search(env, 'lock "-thread"').queries[0]
    assert 0 < topic.total_matches < rest.total_matches
    taken = rest.total_matches - topic.total_matches
    chunks = "1 matching chunk" if taken == 1 else f"{taken} matching chunks"
    assert topic.note == (f"-thread excluded {chunks}; "
                          'to search for -thread itself, quote it: "-thread"')
    assert topic.to_dict()["note"] == topic.note
    assert ids(env, "lock -thread") == ids(env, "lock NOT thread")  # still an exclusion
    assert quoted.note is None and quoted.results


@pytest.mark.parametrize("query, rest", [
    ("mutex guards -lock", "mutex guards"),  # every chunk with the rest held the flag
    ("compost -kitchen", "compost"),  # and nothing at all was left
])
def test_a_dash_negation_that_left_no_full_match_says_so(env, query, rest):
    topic, before = search(env, query).queries[0], search(env, rest).queries[0]
    assert before.match == "all" and topic.match != "all"
    flag = query.split()[-1]
    taken = before.total_matches
    chunks = "1 matching chunk" if taken == 1 else f"{taken} matching chunks"
    assert topic.note == (f"{flag} excluded {chunks}; "
                          f'to search for {flag} itself, quote it: "{flag}"')


@pytest.mark.parametrize("query", [
    "lock NOT thread",  # NOT in capitals is meant
    "mutex -zeppelin",  # took nothing out
    'lock -"one thread"',  # a phrase is meant
])
def test_no_flag_note_where_the_negation_is_meant_or_took_nothing(env, query):
    assert search(env, query).queries[0].note is None


# --- copies: one text in several places (a folder per version) -------------------------------

def uncut(searcher: Searcher, query: str, limit: int) -> list:
    """The first ``limit`` results for ``query``, none cut by the elbow."""
    return searcher.search([query], SearchOptions(limit=limit, cutoff_ratio=0)).queries[0].results


RELEASE = """\
# Release

## Signing

Sign the release tarball with the project key before upload.
"""


@pytest.fixture(scope="module")
def versions(tmp_path_factory) -> Searcher:
    yield from one_tree(tmp_path_factory, "versions", {
        "v1/release.md": RELEASE, "v2/release.md": RELEASE,
        "v3/release.md": RELEASE.replace("\n\nSign", "\n\n\nSign"),  # a blank line more
        "v4/release.md": RELEASE.replace("project key", "project's key"),  # nearly
        "v5/release.md": RELEASE.replace("Sign the release tarball with the project key",
                                         "Sign the release tarball on the build farm's "
                                         "hardware token, never a laptop,"),  # other text
        "v4/notes.md": RELEASE.replace("project key", "project's key"),  # another file
        "v1/upload.md": "# Upload\n\nUpload the release after signing it.\n"})


def test_a_text_found_in_several_places_is_given_once_with_its_copies(versions):
    from ra.query.render import render_search

    response = versions.search(["sign release tarball"], SearchOptions(limit=3,
                                                                        cutoff_ratio=0))
    results = response.queries[0].results
    first = results[0]  # the newest version stands for the others (v4: one word other)
    assert first.id == "kb:v4/release.md#signing" and first.copies == ()
    assert first.near_copies == ("kb:v1/release.md#signing", "kb:v2/release.md#signing",
                                 "kb:v3/release.md#signing")
    assert [r.id for r in results[1:]] == ["kb:v4/notes.md#signing",  # another file's
                                           "kb:v5/release.md#signing"]  # another text
    data = response.to_dict()["queries"][0]["results"]
    assert data[0]["near_copies"] == list(first.near_copies) and "copies" not in data[0]
    assert "copies" not in data[1] and "near_copies" not in data[1]
    shown = ("    (nearly the same text at kb:v1/release.md#signing, kb:v2/release.md#signing, "
             "kb:v3/release.md#signing)")
    assert shown in render_search(response, "list")
    assert shown.replace("    ", "") in render_search(response, "full")
    assert response.queries[0].total_matches == 6  # copies still count as matches


def test_the_newest_version_of_a_page_stands_for_its_copies(tmp_path_factory):
    """The MCP specification keeps a folder per version (``2024-11-05/`` …
    ``2026-07-28/``, ``draft/``): "pagination nextCursor" showed the oldest's id, the
    current one among its copies; an agent cites and gets the id it is shown."""
    from ra.query.search import newest_version

    for searcher in one_tree(tmp_path_factory, "dated", {
            "spec/2024-11-05/release.md": RELEASE, "spec/2026-07-28/release.md": RELEASE,
            "spec/2025-06-18/release.md": RELEASE, "spec/draft/release.md": RELEASE}):
        first = uncut(searcher, "sign release tarball", 3)[0]
        assert first.id == "kb:spec/2026-07-28/release.md#signing"
        assert sorted(first.copies + first.near_copies) == [
                                        "kb:spec/2024-11-05/release.md#signing",
                                        "kb:spec/2025-06-18/release.md#signing",
                                        "kb:spec/draft/release.md#signing"]
    assert newest_version(["versions/3.0.4.md", "versions/3.2.0.md", "versions/3.1.1.md"]) == 1
    assert newest_version(["ref/7.4/x.md", "ref/7.10/x.md", "ref/latest/x.md"]) == 2
    assert newest_version(["v/version-2.1/x", "v/version-10.0/x"]) == 1
    assert newest_version(["docs/draft/x", "docs/next/x"]) == 0  # none released: as found
    assert newest_version(["a/x.md", "b/x.md"]) is None  # not versions
    assert newest_version(["v1/a/x.md", "v2/b/x.md"]) is None  # other pages


def test_files_named_for_versions_are_one_page_s_versions(tmp_path_factory):
    """OpenAPI keeps each release of its specification as a file (``versions/3.0.4.md``
    … ``versions/3.2.0.md``): "discriminator mapping" gave the same section of ten of
    them, every result one object's. Sections of one title edited a little between
    releases are the newest's near copies; files named for versions whose sections
    differ (release notes, a page per release) stay apart."""
    spec = ("# OpenAPI Specification\n\n## Discriminator Object\n\nWhen request bodies "
            "or response payloads may be one of a number of different schemas, a "
            "discriminator object gives a hint about the expected schema{}. The mapping "
            "field holds mappings between payload values and schema names.\n")
    notes = "# Release {0}\n\n## Changes\n\nThe {1} now checks every discriminator mapping.\n"
    for searcher in one_tree(tmp_path_factory, "spec-files", {
            "versions/3.0.4.md": spec.format(""),
            "versions/3.1.1.md": spec.format(" of the document"),
            "versions/3.2.0.md": spec.format(" of the whole document, when it is known"),
            "releases/1.2.md": notes.format("1.2", "parser"),
            "releases/1.3.md": notes.format("1.3", "linter")}):
        results = uncut(searcher, "discriminator mapping", 5)
        spec_results = [r for r in results if r.path.startswith("versions/")]
        assert [r.id for r in spec_results] == ["kb:versions/3.2.0.md#discriminator-object"]
        assert sorted(spec_results[0].near_copies + spec_results[0].copies) == [
            "kb:versions/3.0.4.md#discriminator-object",
            "kb:versions/3.1.1.md#discriminator-object"]
        assert sorted(r.id for r in results if r.path.startswith("releases/")) == [
            "kb:releases/1.2.md#changes", "kb:releases/1.3.md#changes"]


def test_the_same_text_scored_otherwise_in_another_folder_is_a_near_copy(tmp_path_factory):
    """A copy whose path scores otherwise (a deeper folder) is not given as the same
    result, but as nearly the same text (compared byte for byte before word for word)."""
    for searcher in one_tree(tmp_path_factory, "deeper", {
            "v1/release.md": RELEASE, "old/attic/v0/release.md": RELEASE}):
        results = uncut(searcher, "sign release tarball", 3)
        assert results[0].id == "kb:v1/release.md#signing"
        assert results[0].near_copies == ("kb:old/attic/v0/release.md#signing",)
        assert results[0].copies == ()


def test_a_copy_made_for_the_site_is_given_once(tmp_path_factory):
    """Jekyll keeps its changelog as ``History.markdown`` and publishes it as
    ``docs/_docs/history.md``, each pull request a link there (``[#5817]({{
    site.repository }}/issues/5817)``, "(#5817)" in the original): the same sections,
    the same words a reader sees, under another file name's case and suffix. Both were
    given, one after the other, for every query a changelog answered."""
    entries = [("Add a tutorial on custom collections", 5946),
               ("Fix the permalink of drafts", 5949), ("Update the Windows guide", 5951)]
    original = "# History\n\n## Documentation\n\n" + "".join(
        f"  * {text} (#{n})\n" for text, n in entries)
    site = "---\ntitle: History\n---\n\n## Documentation\n\n" + "".join(
        f"- {text} ([#{n}]({{{{ site.repository }}}}/issues/{n}))\n" for text, n in entries)
    for searcher in one_tree(tmp_path_factory, "history", {
            "History.markdown": original, "docs/_docs/history.md": site}):
        results = uncut(searcher, "custom collections tutorial", 3)
        assert [r.id for r in results] == ["kb:History.markdown#documentation"]
        # a copy: what a reader sees of them is the same (a near copy when their
        # markdown alone was compared)
        assert results[0].copies == ("kb:docs/_docs/history.md#documentation",)


def test_sections_a_reader_sees_alike_are_copies(tmp_path_factory):
    """cargo's command pages are made from one template, each option under an HTML
    anchor named for its page (``<dt id="option-cargo-bench---target-dir">``): the same
    paragraph of eight pages came first for "CARGO_TARGET_DIR", one after the other,
    scoring alike, their markdown apart by the anchors alone."""
    page = ("# cargo-{0}(1)\n\n## Output Options\n\n<dl>\n<dt class=\"option-term\" "
            "id=\"option-cargo-{0}---target-dir\"><a href=\"#option-cargo-{0}---target-dir\">"
            "<code>--target-dir</code></a></dt>\n<dd><p>Directory for all generated "
            "artifacts. May also be specified with the <code>CARGO_TARGET_DIR</code> "
            "environment variable.</p>\n</dd>\n</dl>\n")
    files = {f"commands/cargo-{c}.md": page.format(c) for c in ("bench", "check", "test")}
    files["reference/config.md"] = ("# Configuration\n\n## build.target-dir\n\nThe path "
                                    "to where all compiler output is placed; the "
                                    "environment variable CARGO_TARGET_DIR sets it too.\n")
    for searcher in one_tree(tmp_path_factory, "template", files):
        results = uncut(searcher, "CARGO_TARGET_DIR", 3)
        commands = [r for r in results if r.path.startswith("commands/")]
        assert len(commands) == 1 and len(commands[0].copies) == 2
        assert "kb:reference/config.md#buildtarget-dir" in {r.id for r in results}


def test_packages_readmes_saying_the_same_are_near_copies(tmp_path_factory):
    """A workspace's packages each have a README titled for its package, and ruff's 31
    crates say the same in theirs: "what counts as a breaking change in ruff versioning
    policy" gave 31 of them first and the versioning policy 33rd. Titled for their
    folders, they are compared as sections of one title are; a package whose README
    says something else stays apart."""
    readme = ("# {0}\n\nThis crate is an internal component of Ruff. The Rust API "
              "exposed here is unstable and will have frequent breaking changes. This "
              "version is a component of Ruff; see the crate versioning policy.\n")
    files = {f"crates/ruff_{n}/README.md": readme.format(f"ruff_{n}")
             for n in ("cache", "db", "index", "graph", "macros", "notebook")}
    files["crates/ruff_wasm/README.md"] = (
        "# Ruff WASM\n\nThe WebAssembly build: its versioning follows the npm package, "
        "a breaking change of the API bumps its major version.\n")
    files["docs/versioning.md"] = (
        "# Versioning\n\nRuff uses a custom versioning scheme: a breaking change to the "
        "rules or the configuration bumps the minor version. See the policy below.\n")
    for searcher in one_tree(tmp_path_factory, "crates", files):
        results = uncut(searcher, "breaking change versioning policy", 5)
        crates = [r for r in results if r.title.startswith("ruff_")]
        assert len(crates) == 1 and len(crates[0].near_copies) == 5
        assert "kb:docs/versioning.md#versioning" in {r.id for r in results}
        assert not any("ruff_wasm" in i for i in crates[0].near_copies)


@pytest.mark.parametrize("limit", [1, 3, None])
def test_a_short_lived_reader_fetches_the_texts_it_compares_at_once(versions, monkeypatch,
                                                                     limit):
    """Comparing copies and showing results reads the texts in one lookup (a query over
    every Parquet partition for a short-lived reader), and gives what a long-lived reader,
    which reads each text from memory, gives."""
    from ra.index.reader import IndexReader

    reader = versions.reader
    assert not reader.resident
    asked = []
    real = reader.texts  # each chunk's markdown and what a reader sees of it
    monkeypatch.setattr(reader, "texts", lambda ords: asked.append(ords) or real(ords))
    for sort in ("score", "path"):
        options = SearchOptions(limit=limit, cutoff_ratio=0, sort=sort)
        asked.clear()
        cold = versions.search(["sign release tarball"], options).to_dict()
        assert len(asked) == 1, asked
        warm_reader = IndexReader.open(versions.config.index_dir, keep_vocabulary=True)
        try:
            warm = Searcher(warm_reader, versions.config).search(["sign release tarball"],
                                                                 options).to_dict()
        finally:
            warm_reader.close()
        assert cold == warm


def test_context_on_a_short_lived_reader_reads_the_texts_once(versions, monkeypatch,
                                                              tmp_path):
    """``ra context`` compares copies and shows its results from one lookup of texts
    too, and answers as a long-lived reader does."""
    from ra.index.reader import IndexReader
    from ra.query.context import context_search

    source = tmp_path / "release_signing.py"
    source.write_text("# Sign the release tarball with the project key before upload.\n"
                      "def sign_release(tarball, key):\n    return sign(tarball, key)\n")
    reader = versions.reader
    asked = []
    real = reader.texts  # each chunk's markdown and what a reader sees of it
    monkeypatch.setattr(reader, "texts", lambda ords: asked.append(ords) or real(ords))
    cold = context_search(reader, versions.config, [source]).to_dict()
    assert len(asked) == 1, asked
    assert cold["queries"][0]["results"][0]["near_copies"]  # the versions were compared
    warm_reader = IndexReader.open(versions.config.index_dir, keep_vocabulary=True)
    try:
        assert context_search(warm_reader, versions.config, [source]).to_dict() == cold
    finally:
        warm_reader.close()


def test_copies_do_not_take_places_within_the_limit(versions):
    results = versions.search(["sign release"], SearchOptions(limit=3, cutoff_ratio=0)
                              ).queries[0].results
    assert [r.id for r in results] == ["kb:v4/release.md#signing", "kb:v5/release.md#signing",
                                       "kb:v4/notes.md#signing"]  # v4: the newest version


def test_an_empty_topic_is_answered_with_nothing(env):
    topic = search(env, "").queries[0]
    assert (topic.match, topic.results) == ("none", [])


def test_json_shape_of_a_response(env):
    data = search(env, "mutex", list_only=True).to_dict()
    assert set(data) == {"queries", "tokens_used", "max_tokens", "truncated"}
    result = data["queries"][0]["results"][0]
    assert {"id", "tree", "path", "title", "breadcrumb", "score", "snippet"} <= set(result)
    assert "content" not in result



def test_a_negated_word_excludes_that_word_only_not_its_typo_neighbours(env):
    """``-pumpz`` must not exclude the chunk about pumps by fuzzy matching (it used to:
    the negated word was expanded like a positive one)."""
    explain = search(env, "water -pumpz", explain=True).queries[0].explain
    negated = [c for c in explain["clauses"] if c["negated"]]
    assert [t["term"] for t in negated[0]["terms"]] == ["pumpz"]
    assert "kb:plumbing.md#pumps" in ids(env, "water -pumpz")


RELEASES = {
    "CHANGELOG.md": "# Changelog\n\n" + "".join(
        f"## 2.{n}.0\n\n- {text}\n\n" for n, text in enumerate([
            "Added sticky navigation tabs", "Fixed sticky tabs on mobile",
            "Sticky tabs follow the theme", "Removed the old search"])),
    "changelog/2024-06-cli.md": "# June 2024 - CLI\n\nThe CLI adds sticky navigation tabs.\n",
    "guide/navigation.md": "# Navigation\n\n## Sticky navigation tabs\n\nWhen the page scrolls, "
                           "the navigation tabs can stay in view: set the feature flag in "
                           "the configuration and the tabs are sticky, on every page of the "
                           "site, on wide screens as on narrow ones.\n",
}


def test_release_notes_rank_below_the_pages_they_announce(tmp_path_factory):
    """A changelog names each feature in a short line, which BM25F favours: on Material
    for MkDocs' and FastAPI's docs changelog sections came before, or right after, the
    page on the feature a query named. They score half unless the query asks about
    releases (a version, "release", "new", "changes", ...); ``--raw`` leaves them be."""
    for searcher in one_tree(tmp_path_factory, "releases", RELEASES):
        def first(query: str, searcher=searcher, **options) -> str:
            return searcher.search([query], SearchOptions(**options)).queries[0].results[0].id

        assert first("sticky navigation tabs") == "kb:guide/navigation.md#sticky-navigation-tabs"
        assert first("sticky tabs") == "kb:guide/navigation.md#sticky-navigation-tabs"
        assert first("sticky tabs", raw=True).startswith("kb:CHANGELOG.md")
        assert first("sticky tabs release").startswith("kb:CHANGELOG.md")
        assert first("sticky tabs 2.2").startswith("kb:CHANGELOG.md")


@pytest.mark.parametrize(("path", "notes"), [
    ("CHANGELOG.md", True), ("docs/release-notes.md", True), ("changelog/index.md", True),
    ("content/docs/changelog/2023-06-new-cli.mdx", True), ("whats-new.md", True),
    ("Release notes/v1.0.0.md", True), ("Release notes/Mobile/v1.4.md", True),  # Obsidian
    ("guide/release process.md", False), ("pages/common/history.md", False),
    ("pages/common/git-changelog.md", False),
    ("guide/navigation.md", False),
    # Prettier's blog: a post per release, named for it, and others that are not
    ("website/blog/2020-03-21-2.0.0.md", True), ("blog/2018-04-09-plugin-php-0.1.md", True),
    ("_posts/2019-05-01-release-1.2.md", True),
    ("docs/blog/vitest-3-2.md", True), ("docs/blog/vitest-3.md", True),  # Vitest
    ("docs/blog/announcing-vite5.md", True),  # Vite
    ("docs/blog/cloudflare-supports-vite.md", False),
    ("website/blog/2023-11-13-curious-ternaries.md", False),
    ("blog/2024-01-12-node-20-support.md", False), ("docs/2.0.0.md", False),
])
def test_release_notes(path, notes):
    from ra.query.search import release_notes

    assert release_notes(path) is notes


@pytest.mark.parametrize(("query", "asks"), [
    ("sticky tabs", False), ("what's new in 9.5", True), ("release notes", True),
    ("changelog", True), ("deprecated options", True), ("Changes?", True),
    ("build scripts rerun-if-changed", False),  # a word's part, not the word (Cargo's book)
    ("new-cli", False), ("python 3", True),
    ("how to pin a python version", False),  # the pages on versions (uv's docs)
])
def test_a_query_asks_about_releases(query, asks):
    from ra.query.search import asks_releases

    assert asks_releases(query) is asks


def test_snippets_mark_the_query_s_words_but_its_function_words(tmp_path_factory):
    """"how to add a middleware to a route" marked every "a" and "to" of its snippets,
    and they pulled the window to where they crowd; they still match and score. A query
    of function words only marks them."""
    page = ("# Middleware\n\nPlugins are a way for a module to add logic to an app, and "
            "a lot more to say about it to a reader who wants it all, and then some to "
            "spare for a day.\n\nTo add route middleware, call the helper.\n")
    for searcher in one_tree(tmp_path_factory, "light", {"middleware.md": page}):
        def snippet(query: str, searcher=searcher) -> str:
            return searcher.search([query], SearchOptions()).queries[0].results[0].snippet

        marked = re.findall(r"\*\*(.+?)\*\*", snippet("how to add a middleware to a route"))
        assert {m.lower() for m in marked} == {"add", "route", "middleware"}
        assert "**to**" in snippet("to a")  # nothing else to mark


def test_a_listed_title_that_repeats_says_what_it_is_under(tmp_path_factory):
    """OpenAPI's specification has some 40 sections titled "Fixed Fields" per version: a
    list of them said "Fixed Fields" again and again. A title two results share comes
    after its parent's, as the breadcrumb has it; a title of its own stays alone."""
    from ra.query.render import render_search

    for searcher in one_tree(tmp_path_factory, "fields", {
            "spec.md": "# Spec\n\n## Server Object\n\n### Fixed Fields\n\nThe url widget.\n\n"
                       "## Tag Object\n\n### Fixed Fields\n\nThe name widget.\n\n"
                       "## Widgets\n\nA widget.\n"}):
        response = searcher.search(["widget"], SearchOptions(list_only=True, cutoff_ratio=0,
                                                             aggregation=False))
        lines = [ln for ln in render_search(response, "list").splitlines()
                 if ln.startswith("kb:")]
        assert sorted(lines) == ["kb:spec.md#fixed-fields  Server Object › Fixed Fields",
                                 "kb:spec.md#fixed-fields-1  Tag Object › Fixed Fields",
                                 "kb:spec.md#widgets  Widgets"]
        # alone in the list, a title its page has before it says so too: a changelog's
        # "Bug Fixes" of each release (Vite's #bug-fixes-20) said which in neither title
        # nor id; a title ending in its own number is no such title
        response = searcher.search(["url"], SearchOptions(list_only=True, cutoff_ratio=0,
                                                          aggregation=False))
        assert "kb:spec.md#fixed-fields  Fixed Fields" in render_search(response, "list")
        response = searcher.search(["name"], SearchOptions(list_only=True, cutoff_ratio=0,
                                                           aggregation=False))
        assert "kb:spec.md#fixed-fields-1  Tag Object › Fixed Fields" in render_search(
            response, "list")
    for searcher in one_tree(tmp_path_factory, "numbered", {
            "notes.md": "# Notes\n\n## Step 1\n\nA.\n\n## Step 1\n\nThe widget.\n"}):
        response = searcher.search(["widget"], SearchOptions(list_only=True, cutoff_ratio=0,
                                                             aggregation=False))
        assert "kb:notes.md#step-1-1  Notes › Step 1" in render_search(response, "list")
