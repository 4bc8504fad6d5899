"""A long-lived reader's plain queries, summed in NumPy (``ra.query.impacts.top_rows``),
give the rows DuckDB gives for ``top_sql`` over the same impacts (a short-lived reader's
view over ``hot_impacts``, whose rows the arrays were loaded from).

The corpus is generated here (a fixed seed, a small vocabulary, so that chunks share
words, scores tie and fuzzy expansions find neighbours): a local tree, a global tree
(``~/.ra.toml``, not boosted) and archived documents, so every column ``top_sql`` reads
matters. Queries are drawn by Hypothesis from the vocabulary, with typos, OR and AND;
each is scored both ways on one reader, under several weights, filters and limits.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import short_and_held
from ra.query.bm25f import Filters, Weights, alternative_idf
from ra.query.impacts import bonus_phrases, is_plain, top_rows, top_sql, with_phrases
from ra.query.parser import parse
from ra.query.phrases import PhraseScorer
from ra.query.plan import PlanOptions, plan_query
from ra.query.search import Searcher, SearchOptions
from ra.text.analysis import Analyzer

WORDS = ["cache", "caches", "eviction", "borrow", "borrowed", "lifetime", "thread", "mutex",
         "error", "errors", "handling", "handler", "socket", "signal", "parser", "parsing",
         "token", "tokens", "queue", "worker", "index", "indexes", "search", "schema"]
TYPOS = ["cahce", "evicton", "borow", "lifetme", "mutx", "handlng", "sockets", "parsr"]


def _document(rng: random.Random, n: int, status: str | None) -> str:
    front = f"---\nstatus: {status}\n---\n" if status else ""
    sections = []
    for s in range(rng.randint(1, 3)):
        words = rng.choices(WORDS, k=rng.randint(3, 25))
        sections.append(f"## {rng.choice(WORDS)} {s}\n\n{' '.join(words)}\n")
    return f"{front}# {' '.join(rng.sample(WORDS, 2))} {n}\n\n" + "\n".join(sections)


def _corpus(rng: random.Random, tmp_path_factory, name: str):
    """``(root, home)`` of a knowledge base: a local tree of 60 documents and a global
    one of 20, one in seven archived."""
    home, root = tmp_path_factory.mktemp(f"{name}-home"), tmp_path_factory.mktemp(name)
    for folder, count in ((root / "docs", 60), (home / "notes", 20)):
        folder.mkdir()
        for n in range(count):
            status = "archived" if n % 7 == 3 else None
            (folder / f"{rng.choice(WORDS)}-{n}.md").write_text(_document(rng, n, status))
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    (home / ".ra.toml").write_text(f'[tree.notes]\npath = "{home / "notes"}"\n')
    return root, home


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    rng = random.Random(20261125)
    root, home = _corpus(rng, tmp_path_factory, "arrays")
    with short_and_held(root, home) as (short, held, config):
        assert held.impacts(Weights()) and held.impact_arrays is not None
        assert short.impacts(Weights()) and short.impact_arrays is None
        flags = held.query("SELECT bool_or(is_global), bool_and(is_global), "
                           "bool_or(status = 'archived') FROM meta")[0]
        assert flags == (True, False, True)  # both kinds of tree, and archived chunks
        yield held, short, config


def _both(readers, plan, weights: Weights, filters: Filters, limit: int):
    held, short = readers[:2]
    n = held.stats.chunks
    sql = top_sql(plan, n, weights, filters, limit)
    want = sorted(short.query(sql.text, sql.params), key=lambda r: r[5])
    got = sorted(top_rows(plan, held.impact_arrays, n, weights, filters, limit),
                 key=lambda r: r[5])
    return got, want


def _assert_same(got, want) -> None:
    """The same chunks, ``complete`` and ``total``; scores and ``matched`` equal up to the
    order of the float operations."""
    assert [r[5] for r in got] == [r[5] for r in want]
    for g, w in zip(got, want, strict=True):
        assert g[2:5] == w[2:5]
        assert g[0] == pytest.approx(w[0], rel=1e-12, abs=1e-12)
        assert g[1] == pytest.approx(w[1], rel=1e-12, abs=1e-12)


WEIGHTS = [Weights(), replace(Weights(), coord=1.0), replace(Weights(), coord=2.5),
           replace(Weights(), local_boost=3.0, coord=1.0)]

word = st.sampled_from(WORDS + TYPOS)
query = st.builds(
    lambda words, seps: words[0] + "".join(s + w for s, w in zip(seps, words[1:],
                                                                  strict=False)),
    st.lists(word, min_size=1, max_size=8),
    st.lists(st.sampled_from([" ", " ", " OR ", " AND "]), min_size=8, max_size=8))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=query, fuzzy=st.booleans(), weights=st.sampled_from(WEIGHTS),
       archived=st.booleans(), limit=st.sampled_from([1, 2, 5, 10_000]))
def test_top_rows_are_the_rows_of_top_sql(reader, text, fuzzy, weights, archived, limit):
    held = reader[0]
    plan = plan_query(parse(text), held, Analyzer("english"),
                      PlanOptions(fuzzy=fuzzy, distance=1), text, rankable=True)
    filters = Filters(include_archived=archived)
    assert is_plain(plan, filters)
    _assert_same(*_both(reader, plan, weights, filters, limit))


compound = st.builds(
    lambda words, seps: words[0] + "".join(s + w for s, w in zip(seps, words[1:],
                                                                  strict=False)),
    st.lists(word, min_size=2, max_size=8),
    st.lists(st.sampled_from([" ", "-", "-", "::", " OR "]), min_size=8, max_size=8)
).filter(lambda text: "-" in text or "::" in text)


def _phrase_rows(readers, plan, weights: Weights, filters: Filters, limit: int):
    """``_both`` for a plan with phrases that only add score: ``top_rows`` with the
    phrases scored from positions, and ``top_sql`` then ``with_phrases``."""
    held, short = readers[:2]
    n = held.stats.chunks
    sql = top_sql(plan, n, weights, filters, limit)
    want = sorted(with_phrases(short.query(sql.text, sql.params), plan, limit,
                               PhraseScorer(short, weights)), key=lambda r: r[5])
    got = sorted(top_rows(plan, held.impact_arrays, n, weights, filters, limit,
                          PhraseScorer(held, weights)), key=lambda r: r[5])
    return got, want


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=compound, fuzzy=st.booleans(), weights=st.sampled_from(WEIGHTS),
       archived=st.booleans(), limit=st.sampled_from([1, 2, 5, 10_000]))
def test_compounds_in_two_steps_give_the_same_rows_in_memory_and_in_duckdb(
        reader, text, fuzzy, weights, archived, limit):
    """A compound's phrase, scored from the positions of the chunks it could lift:
    ``top_rows`` over the arrays and ``top_sql`` over the view keep the same chunks with
    the same scores, under every limit (``test_bm25f`` holds both to ``bm25f_sql``)."""
    held = reader[0]
    plan = plan_query(parse(text), held, Analyzer("english"),
                      PlanOptions(fuzzy=fuzzy, distance=1), text, rankable=True)
    filters = Filters(include_archived=archived)
    assert is_plain(plan, filters, phrases=True) and not is_plain(plan, filters)
    _assert_same(*_phrase_rows(reader, plan, weights, filters, limit))


@pytest.mark.parametrize("text", ["cache", "cache eviction", "cache OR socket",
                                  "borrow lifetime thread mutex error handling parser",
                                  "cahce evicton borow lifetme mutx handlng"])
def test_ties_archived_chunks_and_the_limit_are_kept_as_the_sql_keeps_them(reader, text):
    """Every chunk scoring at least the limit-th best (ties included), archived chunks
    only when asked: checked on queries that match many chunks."""
    held = reader[0]
    plan = plan_query(parse(text), held, Analyzer("english"), PlanOptions(), text,
                      rankable=True)
    for archived in (False, True):
        for limit in (1, 3, 10, 10_000):
            got, want = _both(reader, plan, Weights(), Filters(include_archived=archived),
                              limit)
            assert want
            _assert_same(got, want)


@pytest.mark.parametrize(("search", "sort"), [(0, 0), (10**9, 10**9), (8, 32)])
@pytest.mark.parametrize("text", ["cache eviction", "cahce evicton", "cache AND socket",
                                  "borrow lifetime", "cache (socket OR parser)",
                                  "error handling parser", "cache OR socket", "zzzz cache"])
def test_a_filtered_query_scores_the_chunks_holding_every_word(reader, monkeypatch, text,
                                                               search, sort):
    """A filtered plan is scored among the chunks that hold every clause it needs (their
    postings intersected by binary search or by marking, a clause's alternatives united
    by sorting or by marking: each way forced here), else among all candidates (no chunk
    holds them all: the partial ranking needs every one): the rows of ``top_sql``, the
    scratch arrays left clean."""
    import ra.query.impacts as impacts

    monkeypatch.setattr(impacts, "SEARCH_RATIO", search)
    monkeypatch.setattr(impacts, "SORT_RATIO", sort)
    scored = []
    real = impacts._scored
    monkeypatch.setattr(impacts, "_scored", lambda plan, alts, cand, *rest: (
        scored.append(len(cand)), real(plan, alts, cand, *rest))[1])
    held = reader[0]
    for fuzzy in (False, True):
        plan = plan_query(parse(text), held, Analyzer("english"),
                          PlanOptions(fuzzy=fuzzy, distance=1), text, rankable=True)
        for archived in (False, True):
            filters = Filters(include_archived=archived)
            scored.clear()
            got, want = _both(reader, plan, Weights(), filters, 10_000)
            _assert_same(got, want)
            hit, slot = held.impact_arrays.scratch()
            assert not hit.any() and (slot == -1).all()
            if want and want[0][2] and " OR " not in text.replace("(", ""):
                assert scored == [want[0][3]]  # the chunks holding every word, no other
            elif want:
                assert scored[0] >= len(want)


RANKED = ["borrow lifetime thread mutex error handling parser",
          "cache eviction error handling in the worker queue",
          "index schema search token parser signal socket",
          "cahce evicton borow lifetme mutx handlng sockets",
          "cache caches eviction worker worker queue index",
          "cache-eviction error handling in the worker::queue",
          "borrow-lifetime thread mutex errors-handling parser socket"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(word, min_size=6, max_size=12),
       seps=st.lists(st.sampled_from([" "] * 6 + ["-", "::"]), min_size=12, max_size=12),
       fuzzy=st.booleans(), weights=st.sampled_from(WEIGHTS), archived=st.booleans(),
       limit=st.sampled_from([1, 2, 5, 20]))
def test_ranked_queries_skipping_what_cannot_win_give_the_rows_of_top_sql(
        reader, monkeypatch, words, seps, fuzzy, weights, archived, limit):
    """``_pruned`` on Hypothesis-drawn long queries (every corpus size: the threshold
    is set to nothing), typos, repeated words and compounds among them (a compound's
    parts are one group, and its phrase adds score: ``top_sql`` then ``with_phrases``)."""
    import ra.query.impacts as impacts

    monkeypatch.setattr(impacts, "PRUNE_POSTINGS", 0)
    held = reader[0]
    text = words[0] + "".join(s + w for s, w in zip(seps, words[1:], strict=False))
    plan = plan_query(parse(text), held, Analyzer("english"),
                      PlanOptions(fuzzy=fuzzy, distance=1), text, rankable=True)
    filters = Filters(include_archived=archived)
    if is_plain(plan, filters):
        _assert_same(*_both(reader, plan, weights, filters, limit))
    else:
        assert is_plain(plan, filters, phrases=True)
        _assert_same(*_phrase_rows(reader, plan, weights, filters, limit))


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(word, min_size=6, max_size=12),
       seps=st.lists(st.sampled_from([" "] * 6 + ["-", "::"]), min_size=12, max_size=12),
       weights=st.sampled_from(WEIGHTS))
def test_no_chunk_scores_above_the_ceiling_of_the_clauses_it_holds(reader, words, seps,
                                                                  weights):
    """What ``_pruned`` skips by: in every chunk a ranked query matches, its final score,
    its phrases' included, is at most ``_ceiling`` of the clauses the chunk holds."""
    from ra.query.impacts import _ceiling, factor

    held = reader[0]
    arrays = held.impact_arrays
    n = held.stats.chunks
    text = words[0] + "".join(s + w for s, w in zip(seps, words[1:], strict=False))
    plan = plan_query(parse(text), held, Analyzer("english"), PlanOptions(fuzzy=True),
                      text, rankable=True)
    assume(plan.ranked)
    filters = Filters(include_archived=True)
    bonus = [] if is_plain(plan, filters) else bonus_phrases(plan)
    rows = top_rows(plan, arrays, n, weights, filters, 10**6,
                    PhraseScorer(held, weights) if bonus else None)
    holders: dict[int, set[int]] = {}
    most: dict[int, float] = {}
    for c in plan.clauses:
        for a in c.alts if c.kind == "term" else ():
            ords, impacts = arrays.postings(a.term_id) if a.term_id is not None else ((), ())
            if len(ords):
                f = factor(a.weight * c.boost, alternative_idf(n, c, a), weights.k1)
                most[c.index] = max(most.get(c.index, 0.0), f * float(impacts.max()))
                for o in ords.tolist():
                    holders.setdefault(o, set()).add(c.index)
    ceiling = _ceiling(plan, most, arrays, n, weights, bonus)
    for score, *_, o in (r[:6] for r in rows):
        assert score <= ceiling(holders[o])


@pytest.mark.parametrize("text", RANKED)
@pytest.mark.parametrize("weights", WEIGHTS)
def test_a_ranked_query_skips_the_chunks_that_cannot_reach_the_limit(reader, monkeypatch,
                                                                     text, weights):
    """MaxScore over a ranked plan's words (``_pruned``): the chunks holding only words
    whose largest contributions, coordinated, stay under the ``limit``-th best score are
    not scored, and the rows, ``total`` included, are ``top_sql``'s (with a compound's
    phrase: then ``with_phrases``); each query skips chunks under some weights and
    limits (else the test would not test it), and the scratch arrays are left clean."""
    import ra.query.impacts as impacts

    held = reader[0]
    skipped = []
    real = impacts._pruned
    monkeypatch.setattr(impacts, "PRUNE_POSTINGS", 0)  # this corpus is small

    def pruned(plan, alts, *rest):
        out = real(plan, alts, *rest)
        union = {o for alt in alts for o in alt[2].tolist()}
        skipped.append(0 if out is None else len(union) - len(out[0]))
        return out

    monkeypatch.setattr(impacts, "_pruned", pruned)
    plan = plan_query(parse(text), held, Analyzer("english"), PlanOptions(fuzzy=True),
                      text, rankable=True)
    assert plan.ranked
    for archived in (False, True):
        for limit in (1, 3, 10, 10_000):
            filters = Filters(include_archived=archived)
            got, want = (_both if is_plain(plan, filters) else _phrase_rows)(
                reader, plan, weights, filters, limit)
            assert want
            _assert_same(got, want)
            hit, slot = held.impact_arrays.scratch()
            assert not hit.any() and (slot == -1).all()
    assert any(skipped)


def test_a_term_with_no_postings_and_an_empty_answer(reader):
    held = reader[0]
    plan = plan_query(parse("cache"), held, Analyzer("english"), PlanOptions(), "cache")
    clause = plan.clauses[0]
    missing = replace(plan, clauses=[replace(clause, alts=tuple(
        replace(a, term_id=10**6) for a in clause.alts))])
    assert top_rows(missing, held.impact_arrays, held.stats.chunks, Weights(), Filters(),
                    10) == []
    got, want = _both(reader, missing, Weights(), Filters(), 10)
    assert got == want == []
    assert top_rows(plan, held.impact_arrays, held.stats.chunks, Weights(), Filters(), 0) == []


def test_the_scratch_arrays_are_left_as_they_were_found(reader):
    """``top_rows`` marks candidates in by-ord work arrays and must clear them: a query's
    candidates may not leak into the next."""
    held = reader[0]
    arrays = held.impact_arrays
    for text in ("cache", "socket OR parser", "cahce evicton borow lifetme mutx handlng"):
        plan = plan_query(parse(text), held, Analyzer("english"), PlanOptions(), text,
                          rankable=True)
        for archived in (False, True):
            top_rows(plan, arrays, held.stats.chunks, Weights(), Filters(archived), 10)
            hit, slot = arrays.scratch()
            assert not hit.any() and (slot == -1).all()


def test_a_long_lived_searcher_sums_in_memory_and_answers_as_a_short_lived_one(reader):
    held, short, config = reader
    options = SearchOptions(explain=True, limit=20)
    for text in ("cache eviction", "borow OR sockets", "thread mutex error handling "
                 "parser queue worker"):
        mine = Searcher(held, config).search([text], options).queries[0]
        theirs = Searcher(short, config).search([text], options).queries[0]
        assert mine.explain["sql"].startswith("-- in memory:")
        assert not theirs.explain["sql"].startswith("-- in memory:")
        assert [r.id for r in mine.results] == [r.id for r in theirs.results]
        for a, b in zip(mine.results, theirs.results, strict=True):
            assert a.score == pytest.approx(b.score, rel=1e-9)


def test_the_arrays_hold_the_rows_of_hot_impacts(reader):
    held, short, _ = reader
    stored = short.query("SELECT term_id, ord, impact FROM impacts ORDER BY term_id, ord")
    assert len(stored) > 1000 and held.impact_arrays.rows() == stored
    flags = dict(((o, (g, a)) for o, g, a in short.query(
        "SELECT ord, is_global, archived FROM impacts")))
    arrays = held.impact_arrays
    assert {o: (bool(arrays.is_global[o]), bool(arrays.archived[o])) for o in flags} == flags


def test_build_counts_terms_takes_flags_by_ord_and_refuses_rows_out_of_order():
    """``build`` keeps the rows of the chunks the reader holds (as the join with ``meta``
    did), counts each term's rows into slices and refuses rows out of order."""
    import numpy as np

    from ra.index.impact_arrays import build

    def batch(terms, ords, impacts):
        return {"term_id": np.array(terms, np.int32), "ord": np.array(ords, np.int32),
                "impact": np.array(impacts, np.float64)}

    chunks = {"ord": np.array([0, 1, 4, 5]), "is_global": np.array([1, 1, 0, 1], bool),
              "archived": np.array([0, 0, 1, 0], bool)}  # chunks 2 and 3 are not held
    arrays = build([batch([0, 0, 1, 2], [1, 4, 3, 0], [5, 6, 9, 7]), batch([], [], []),
                    batch([3, 3], [4, 7], [8, 9])], terms=5, chunks=chunks,
                   capacity=9)  # more than the rows: impacts a reader computed
    assert arrays.starts.tolist() == [0, 2, 2, 3, 4, 4]
    assert arrays.rows() == [(0, 1, 5.0), (0, 4, 6.0), (2, 0, 7.0), (3, 4, 8.0)]
    assert arrays.archived.tolist() == [False, False, False, False, True, False]
    assert arrays.is_global.tolist() == [True, True, False, False, False, True]
    assert arrays.any_archived and arrays.chunks == 6 and len(arrays.ords) == 4
    assert [a.tolist() for a in arrays.postings(1)] == [[], []]
    assert [a.tolist() for a in arrays.postings(99)] == [[], []]
    for wrong in ([batch([2, 1], [0, 0], [1, 1])], [batch([5], [0], [1])]):
        with pytest.raises(ValueError):
            build(wrong, terms=5, chunks=chunks, capacity=9)
    with pytest.raises(ValueError):  # more rows than counted
        build([batch([0, 1], [0, 1], [1, 1])], terms=5, chunks=chunks, capacity=1)


# --- a reader carried over to an update --------------------------------------------------

@pytest.fixture(scope="module")
def patched(tmp_path_factory):
    """A long-lived reader carried over to an incremental update (``ra.index.successor``),
    which computes the impacts of the terms it is asked about (``TermImpacts``); its
    formula (``bm25f_sql``) is what they must give. The update adds an archived document
    and a global one, archives a third and edits a fourth, so the new chunks' flags
    matter."""
    from ra.index.freshness import refresh_index
    from ra.index.successor import carry_over
    from ra.store import generations

    rng = random.Random(20261126)
    root, home = _corpus(rng, tmp_path_factory, "patched")
    with short_and_held(root, home) as (_, held, config):
        assert held.impacts(Weights())
        docs = sorted((root / "docs").glob("*.md"))
        (root / "docs" / "new-archived.md").write_text(_document(rng, 100, "archived"))
        (home / "notes" / "new-global.md").write_text(_document(rng, 101, None))
        docs[0].write_text(_document(rng, 102, "archived"))
        docs[1].write_text(_document(rng, 103, None))
        assert refresh_index(config).startswith("indexed 4 changed files")
        successor = carry_over(held, generations.open_current(config.index_dir))
        assert successor is not None and successor.patched
        try:
            yield successor
        finally:
            successor.close()


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=query, fuzzy=st.booleans(), weights=st.sampled_from(WEIGHTS),
       archived=st.booleans())
def test_a_carried_over_reader_scores_what_its_formula_scores(patched, text, fuzzy, weights,
                                                               archived):
    """Its impacts, computed term by term under the statistics after the update, give
    ``bm25f_sql``'s rows (every row: the operations differ in order, so a tie at a limit
    could fall either way), global and archived chunks, new and old, included."""
    from ra.index.impact_arrays import TermImpacts
    from ra.query.bm25f import bm25f_sql

    plan = plan_query(parse(text), patched, Analyzer("english"),
                      PlanOptions(fuzzy=fuzzy, distance=1), text, rankable=True)
    filters = Filters(include_archived=archived)
    n = patched.stats.chunks
    assert patched.impacts(weights) and isinstance(patched.impact_arrays, TermImpacts)
    got = sorted(top_rows(plan, patched.impact_arrays, n, weights, filters, 10_000),
                 key=lambda r: r[5])
    exact = bm25f_sql(plan, n, patched.stats.avg_length, weights, filters, 10_000,
                      metadata=False)
    _assert_same(got, sorted(patched.query(exact.text, exact.params), key=lambda r: r[5]))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=compound, weights=st.sampled_from(WEIGHTS), archived=st.booleans())
def test_a_carried_over_reader_finds_a_compounds_phrase_in_old_and_new_files(
        patched, text, weights, archived):
    """After an update, the positions of the rewritten partitions are in their own files,
    the others in the last full build's ``hot_postings`` (``phrase_postings`` reads
    both): the phrase scored in two steps gives ``bm25f_sql``'s rows."""
    from ra.query.bm25f import bm25f_sql

    plan = plan_query(parse(text), patched, Analyzer("english"),
                      PlanOptions(fuzzy=False), text, rankable=True)
    filters = Filters(include_archived=archived)
    n = patched.stats.chunks
    assert patched.impacts(weights)
    got = sorted(top_rows(plan, patched.impact_arrays, n, weights, filters, 10_000,
                          PhraseScorer(patched, weights)), key=lambda r: r[5])
    exact = bm25f_sql(plan, n, patched.stats.avg_length, weights, filters, 10_000,
                      metadata=False)
    _assert_same(got, sorted(patched.query(exact.text, exact.params), key=lambda r: r[5]))


def test_a_carried_over_reader_computes_a_terms_impacts_once(patched):
    """Each term's impacts are computed when a query first needs them, those of one
    query in one go, and held for the next queries (under other weights, afresh)."""
    weights = replace(Weights(), k1=1.5)  # weights no query of this module used
    plan = plan_query(parse("cache eviction OR socket"), patched, Analyzer("english"),
                      PlanOptions(), "cache eviction OR socket")
    assert patched.impacts(weights)
    arrays, asked = patched.impact_arrays, []
    real = arrays._compute
    arrays._compute = lambda ids: asked.append(ids) or real(ids)
    first = top_rows(plan, arrays, patched.stats.chunks, weights, Filters(), 10)
    assert first and top_rows(plan, arrays, patched.stats.chunks, weights, Filters(),
                              10) == first
    assert asked == [sorted({a.term_id for c in plan.clauses for a in c.alts})]
    assert patched.impacts(weights) and patched.impact_arrays is arrays
    assert patched.impacts(Weights()) and patched.impact_arrays is not arrays
    # computing takes the reader's lock, and only it: a query inside ``use()`` (which
    # holds it) and one outside cannot each hold a lock the other waits for
    assert arrays._lock is patched.lock


@pytest.mark.parametrize("text", RANKED)
def test_a_carried_over_reader_skips_what_cannot_win_as_a_loaded_one_does(patched,
                                                                         monkeypatch, text):
    """MaxScore over the impacts a carried-over reader computes term by term
    (``TermImpacts``): the rows of scoring every candidate, to the bit (the same
    arithmetic per chunk), under small limits, archived chunks or not."""
    import ra.query.impacts as impacts

    plan = plan_query(parse(text), patched, Analyzer("english"), PlanOptions(fuzzy=True),
                      text, rankable=True)
    n = patched.stats.chunks
    skipped = []
    real = impacts._pruned
    monkeypatch.setattr(impacts, "_pruned", lambda plan, alts, *rest: (
        out := real(plan, alts, *rest), skipped.append(out is not None))[0])
    scorer = None if is_plain(plan, Filters()) else PhraseScorer(patched, Weights())
    for weights in WEIGHTS:
        assert patched.impacts(weights)
        for archived in (False, True):
            for limit in (1, 3, 10):
                rows = []
                for threshold in (10**12, 0):
                    monkeypatch.setattr(impacts, "PRUNE_POSTINGS", threshold)
                    rows.append(sorted(top_rows(plan, patched.impact_arrays, n, weights,
                                                Filters(include_archived=archived), limit,
                                                scorer), key=lambda r: r[5]))
                assert rows[0] == rows[1] and rows[0]
    assert any(skipped)
