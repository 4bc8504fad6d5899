"""The fast paths give the same answers as the plain ones.

- A long-lived reader (``keep_vocabulary``: tables and vocabulary in memory, plain
  queries scored over ``impacts``, ancestors and texts from memory) answers every search
  exactly like a short-lived one (views over Parquet), scores included, for every kind of
  query and option.
- The scoring SQL's ancestor rows are exactly the ancestors of its result rows, which are
  the rows of the plain query.
- The typo index hands ``expand`` every word within one edit (property test), and the
  SQL candidate query finds the same expansions as the in-memory index.
- ``ra --help`` imports none of the heavy modules, and ``ra search`` none but DuckDB's.

The corpus is test_search's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ra.config.settings
import ra.index.freshness
from conftest import short_and_held
from ra.index.reader import HELD, IndexReader
from ra.index.vocabulary import SurfaceIndex, TermsById, TermTable, anchors
from ra.query.bm25f import bm25f_sql
from ra.query.fuzzy import closest, expand
from ra.query.parser import parse
from ra.query.plan import plan_query
from ra.query.search import Searcher, SearchOptions, filters_of
from test_search import DOCS

QUERIES = [
    "mutex", "lock poisoning", "mutex -panic", "rust threads", '"shared state"',
    '"lock poisoning"~2', "thraeds", "mutxe lock", "lock*", "tree:kb mutex",
    "title:threads OR tomatoes", "mutex OR tomatoes -rust", "kubernetes mutex",
    "tomatoes^3 OR threads", "body:(lock OR channel)", "zzzz", "NOT mutex threads",
    "zeppelin", "lock OR mutex OR threads", "mutex^2 threads",
]
OPTIONS = [
    SearchOptions(limit=20),
    SearchOptions(fuzzy=False, aggregation=False, cutoff_ratio=0.0, limit=100,
                  candidate_limit=1000),
    SearchOptions(list_only=True, max_tokens=300, explain=False),
    SearchOptions(sort="path", offset=1, limit=3),
    SearchOptions(sort="date", tags=("rust",), include_archived=True),
    SearchOptions(path="**/*.md", trees=("kb",), candidate_limit=2),
    SearchOptions(include_archived=True, candidate_limit=3, limit=50, aggregation=False),
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A short-lived and a long-lived searcher over one index."""
    root = tmp_path_factory.mktemp("reader")
    home = tmp_path_factory.mktemp("reader-home")
    for rel, text in DOCS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / ".ra.toml").write_text('[tree.kb]\npath = "./kb"\n\n[tree.other]\npath = "./other"\n')
    with short_and_held(root, home) as (short, resident, config):
        yield Searcher(short, config), Searcher(resident, config)


def _answers(searcher: Searcher, topics: list[str], options: SearchOptions):
    response = searcher.search(topics, options)
    scores = [[r.score for r in t.results] for t in response.queries]
    return response.to_dict(), scores


@pytest.mark.parametrize("options", OPTIONS, ids=range(len(OPTIONS)))
def test_a_long_lived_reader_answers_exactly_like_a_short_lived_one(pair, options):
    short, resident = pair
    for query in QUERIES:
        assert _answers(resident, [query], options) == _answers(short, [query], options), query
    topics = ["mutex", "lock poisoning", "thraeds"]
    assert _answers(resident, topics, options) == _answers(short, topics, options)


def test_the_long_lived_reader_holds_its_relations_in_memory(pair):
    short, resident = pair
    resident.search(["mutex"], SearchOptions())

    def tables(reader):
        return {r[0] for r in reader.query("SELECT table_name FROM duckdb_tables()")}

    relations = {"meta", "field_lengths", "tf_postings"}
    # field_lengths is held when a query names it (``ra context``'s signals): phrases
    # read each field's length beside their positions (``phrase_postings``)
    for reader in (short.reader, resident.reader):
        reader.query("SELECT count(*) FROM field_lengths")
    assert relations <= tables(resident.reader)
    assert not relations & tables(short.reader)
    # impacts: arrays of the long-lived reader's own (ra.index.impact_arrays), a view
    # over Parquet in the short-lived one; texts: a view over the ChunkStore's Arrow
    # table, which is held once
    assert resident.reader.impact_arrays is not None and short.reader.impact_arrays is None
    assert "impacts" not in tables(resident.reader)
    for relation, reader in ((r, x) for r in ("texts",) for x in (short, resident)):
        plan = reader.reader.query(f"EXPLAIN SELECT * FROM {relation}")[0][1]
        assert ("ARROW_SCAN" in plan) == (reader is resident), (relation, plan)
        assert relation not in tables(reader.reader)
    store = resident.reader._store
    assert resident.reader.query("SELECT count(*) FROM meta")[0][0] == len(store) > 0


def test_held_relations_are_compressed_tables_of_their_own_database(pair):
    """The relations a long-lived reader holds live in an attached in-memory database
    that DuckDB compresses (a temporary table is never compressed: 118 MB against 27 for
    ``meta`` and ``tf_postings`` on cpp-docs), are found by their bare names, and take
    an update's patches (``successor`` deletes and inserts by those names)."""
    _, resident = pair
    with IndexReader.open(resident.config.index_dir) as reader:
        reader.keep_vocabulary = True
        reader.hold("meta", "field_lengths", "tf_postings")
        where = dict(reader.query("SELECT table_name, database_name FROM duckdb_tables()"))
        assert {where[n] for n in ("meta", "field_lengths", "tf_postings")} == {HELD}
        compressions = {c for (c,) in reader.query(
            f"SELECT DISTINCT compression FROM pragma_storage_info('{HELD}.tf_postings')")}
        assert compressions - {"Uncompressed"}, compressions
        before = reader.query("SELECT count(*) FROM meta")[0][0]
        reader.query("DELETE FROM meta WHERE ord = (SELECT min(ord) FROM meta)")
        assert reader.query("SELECT count(*) FROM meta")[0][0] == before - 1


def test_a_long_lived_reader_loads_its_relations_on_first_need(pair):
    """Plain queries are scored from the impact arrays and described from the chunk
    store: ``meta``, ``field_lengths`` and ``tf_postings`` stay views over the files until
    a query needs them (here one excluding a word), and are tables from then on; the
    answers are those of the short-lived reader throughout."""
    short, resident = pair
    reader = IndexReader.open(resident.config.index_dir)
    reader.keep_vocabulary = True
    held = Searcher(reader, resident.config)
    try:
        def tables():
            return {r[0] for r in reader.con.execute(
                "SELECT table_name FROM duckdb_tables()").fetchall()}

        for query in ("mutex", "lock poisoning", "thraeds"):
            assert _answers(held, [query], SearchOptions()) == _answers(short, [query],
                                                                           SearchOptions())
        assert not {"meta", "field_lengths", "tf_postings"} & tables()
        other = "mutex -panic"
        assert _answers(held, [other], SearchOptions()) == _answers(short, [other],
                                                                      SearchOptions())
        assert {"meta", "tf_postings"} <= tables()  # field_lengths: no query named it
        reader.hold("meta")  # held: nothing again
        assert reader.query("SELECT count(*) FROM meta") == short.reader.query(
            "SELECT count(*) FROM meta")
    finally:
        reader.close()


@pytest.mark.parametrize("query", ["mutex", "lock poisoning", "mutex -panic", "thraeds",
                                   '"shared state" OR tomatoes', "kubernetes mutex"])
def test_ancestor_rows_are_the_ancestors_of_the_result_rows(pair, query):
    searcher = pair[0]
    reader = searcher.reader
    plan = plan_query(parse(query), reader, searcher.analyzer,
                      searcher.plan_options(SearchOptions()), query)
    args = (plan, reader.stats.chunks, reader.stats.avg_length, searcher.weights(),
            filters_of(SearchOptions()), 7)
    plain = reader.query(*_bound(bm25f_sql(*args)))
    rows = reader.query(*_bound(bm25f_sql(*args, ancestors=True)))
    assert [r for r in rows if r[0] is not None] == plain
    parents = dict(reader.query("SELECT id, parent_id FROM chunks"))
    want = set()
    for row in plain:
        chunk = parents[row[6]]
        while chunk is not None:
            want.add(chunk)
            chunk = parents[chunk]
    ancestors = [r[6] for r in rows if r[0] is None]
    assert sorted(ancestors) == sorted(want)


def test_the_chunk_tree_in_memory_climbs_like_the_parent_ids(pair):
    """A long-lived reader's ancestors (its ``ChunkStore``, in memory) are the parent
    chains, and it gives the same metadata as a short-lived reader asking DuckDB."""
    short, resident = pair
    assert resident.reader.resident and not short.reader.resident
    rows = short.reader.query("SELECT ord, id, parent_id FROM meta ORDER BY ord")
    ord_of = {cid: o for o, cid, _ in rows}
    parent_of = {cid: parent for _, cid, parent in rows}
    for o, cid, _ in rows:
        chain = []
        while (cid := parent_of[cid]) is not None:
            chain.append(ord_of[cid])
        assert resident.reader._store.ancestors(o) == chain
    ords = [o for o, _, _ in rows if o % 3 == 1]
    assert resident.reader.lineage(ords) == short.reader.lineage(ords)
    every = [o for o, _, _ in rows]
    assert {o: resident.reader._store.meta(o) for o in every} == short.reader.lineage(every)
    assert all(resident.reader.meta(cid) == short.reader.meta(cid) for _, cid, _ in rows)


def test_the_limit_keeps_the_best_rows_and_breaks_ties_by_id(tmp_path):
    """Identical files score identically: every cut through the tied rows keeps the
    smallest ids, exactly what sorting every row by (score desc, id) and cutting does;
    so do the search paths that break ties in Python (both readers)."""
    for i in range(7):
        (tmp_path / "docs" / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / f"d{i % 3}" / f"copy{i}.md").write_text(
            "# Wombats\n\nwombats dig burrows\n\n## Burrows\n\nburrows are deep\n")
    (tmp_path / "docs" / "other.md").write_text("# Burrows\n\nrabbits dig burrows too\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    config = ra.config.settings.load_config(tmp_path)
    reader, _ = ra.index.freshness.open_index(config)
    resident = IndexReader.open(config.index_dir)
    resident.keep_vocabulary = True
    fast = Searcher(resident, config)

    def s_plan(s, query):
        return plan_query(parse(query), s.reader, s.analyzer,
                          s.plan_options(SearchOptions()), query)

    try:
        searcher = Searcher(reader, config)
        for query in ("burrows", "wombats burrows", "dig"):
            plan = plan_query(parse(query), reader, searcher.analyzer,
                              searcher.plan_options(SearchOptions()), query)

            def rows(limit, ancestors=False, plan=plan):
                sql = bm25f_sql(plan, reader.stats.chunks, reader.stats.avg_length,
                                searcher.weights(), filters_of(SearchOptions()), limit,
                                ancestors=ancestors)
                return [r for r in reader.query(*_bound(sql)) if r[0] is not None]

            every = rows(1000)
            assert every == sorted(every, key=lambda r: (-r[0], r[6]))
            assert len({r[0] for r in every}) < len(every)  # there are ties
            for limit in range(len(every) + 1):
                assert rows(limit) == every[:limit] == rows(limit, ancestors=True)
                options = SearchOptions(candidate_limit=limit, limit=max(limit, 1))
                for s in (searcher, fast):  # ords from the SQL, ties broken in Python
                    got, metas, _ = s._score(s_plan(s, query), options)
                    # plain queries: scored from the impacts, within their step of
                    # bm25f_sql's; the same chunks, ties broken by id the same way
                    assert [(r[0], m.id) for r, m in zip(got, metas, strict=True)] == [
                        (pytest.approx(r[0], abs=1e-4), r[6]) for r in every[:max(limit, 1)]]
    finally:
        reader.close()
        resident.close()


def _bound(sql):
    return sql.text, sql.params


# --- typo candidates --------------------------------------------------------------------

WORDS = st.text(alphabet="abcdeéx", min_size=1, max_size=9)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=60, unique=True), WORDS)
def test_the_typo_index_finds_every_word_within_one_edit(vocabulary, word):
    pairs = [(w, i) for i, w in enumerate(vocabulary)]
    index = SurfaceIndex(pairs)
    band = [p for p in pairs if abs(len(p[0]) - len(word)) <= 1]
    band.sort(key=lambda p: len(p[0]))  # the order the index keeps: by length, then given
    assert expand(word, index.near(word, 1), 1) == expand(word, band, 1)
    assert index.near(word, 2) == sorted(
        (p for p in pairs if abs(len(p[0]) - len(word)) <= 2), key=lambda p: len(p[0]))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(WORDS, st.integers(0, 3), max_size=40), st.data())
def test_replacing_words_holds_what_a_vocabulary_read_afresh_holds(before, data):
    """An update's words (``touched``: of the files gone and indexed, known or new) are
    forgotten and those still present held again, with their term ids; most often they
    are all there as they were (an edit that changed no word), which the index sees
    without rebuilding a bucket."""
    touched = data.draw(st.sets(WORDS, max_size=8))
    if before:
        touched |= data.draw(st.sets(st.sampled_from(sorted(before)), max_size=12))
    after = {}
    for w in sorted(touched):  # still there as before, with another id, or gone
        term_id = data.draw(st.sampled_from([before.get(w, 0), 0, 1, None]))
        if term_id is not None:
            after[w] = term_id
    final = {w: i for w, i in before.items() if w not in touched} | after
    index = SurfaceIndex(sorted(before.items()))
    index.replace(touched, sorted(after.items()))
    assert index.by_length == SurfaceIndex(sorted(final.items())).by_length


TERMS = st.dictionaries(st.sampled_from("abcdefghij"), st.integers(1, 9), max_size=8)


@settings(max_examples=300, deadline=None)
@given(TERMS, st.data())
def test_terms_by_id_answers_as_the_dict_it_replaces(dfs, data):
    """``TermsById`` over a long-lived reader's ``term → (id, df)`` answers ``id → (term,
    df)`` as the dict of tuples it replaces, through the patches ``successor`` makes
    (pop a changed term's id from both, then set both) and the reader's cache updates.
    A term has one id, as in an index: no step gives a term a second id (a cached pair
    naming a term another id holds would make popping either id drop the other's term,
    in the reader as in this model)."""
    terms = {t: (i, df) for i, (t, df) in enumerate(sorted(dfs.items()))}
    by_id, plain = TermsById(terms), {i: (t, df) for t, (i, df) in terms.items()}
    for _ in range(data.draw(st.integers(0, 6))):
        step = data.draw(st.sampled_from(["patch", "patch", "cache"]))
        i = data.draw(st.integers(0, 12))
        if step == "patch":  # successor._patch_vocabulary
            old = by_id.pop(i, (None, 0))
            assert old == plain.pop(i, (None, 0))
            if old[0] is not None:
                terms.pop(old[0], None)
            if data.draw(st.booleans()):  # the term is still there, with a new df
                term = old[0] or data.draw(st.sampled_from("klmnop"))
                if term not in terms and term not in named(plain):
                    df = data.draw(st.integers(1, 9))
                    terms[term] = (i, df)
                    by_id[i] = plain[i] = (term, df)
        else:  # term_info's cache of ids the vocabulary does not hold
            pair = (data.draw(st.sampled_from("xyz")), 0)
            if i not in plain and pair[0] not in named(plain):
                by_id.update({i: pair})
                plain[i] = pair
    assert {i: by_id[i] for i in by_id} == plain == dict(by_id) and len(by_id) == len(plain)
    assert all((i in by_id) == (i in plain) and by_id.get(i) == plain.get(i)
               for i in range(-1, 14))
    assert max(by_id, default=-1) == max(plain, default=-1) == by_id.end() - 1


def named(plain: dict) -> set[str]:
    """The terms some id holds."""
    return {term for term, _ in plain.values()}


def _table(plain: dict) -> TermTable:
    held = {t: p for t, p in plain.items() if p is not None}
    table = TermTable(list(held), [i for i, _ in held.values()], [df for _, df in held.values()])
    table.update({t: None for t, p in plain.items() if p is None})
    return table


@settings(max_examples=300, deadline=None)
@given(TERMS, st.data())
def test_a_term_table_reads_and_writes_as_the_dict_of_tuples_it_replaces(dfs, data):
    """``TermTable`` (a dict of ids, an array of dfs by id) against a dict of ``(id, df)``
    tuples, through sets, terms held as None (not in the index), pops and updates, ids
    kept unique to a term as a vocabulary's are; and ``TermsById`` over either agrees."""
    plain = {t: (i, df) for i, (t, df) in enumerate(sorted(dfs.items()))}
    table = _table(plain)
    for _ in range(data.draw(st.integers(0, 10))):
        term = data.draw(st.sampled_from("abcdefghijklmnop"))
        step = data.draw(st.sampled_from(["set", "none", "pop", "update"]))
        taken = {p[0] for t, p in plain.items() if p is not None and t != term}
        free = [i for i in range(24) if i not in taken]
        pair = (data.draw(st.sampled_from(free)), data.draw(st.integers(0, 1 << 40)))
        if step == "set":
            table[term] = plain[term] = pair
        elif step == "none":
            table[term] = plain[term] = None
        elif step == "pop":
            assert table.pop(term, "gone") == plain.pop(term, "gone")
        else:
            table.update({term: pair})
            plain.update({term: pair})
    assert dict(table) == plain and list(table) == list(plain) and len(table) == len(plain)
    for t in "abcdefghijklmnopq":
        assert (t in table) == (t in plain)
        assert table.get(t) == plain.get(t) and table.get(t, "d") == plain.get(t, "d")
    assert dict(table.ids()) == {t: p[0] for t, p in plain.items() if p is not None}
    held = {t: p for t, p in plain.items() if p is not None}
    assert dict(TermsById(_table(held))) == dict(TermsById(held))


def _edited(word: str, edits: list[tuple[str, int, str]]) -> str:
    """``word`` after each ``(kind, position, character)`` edit."""
    for kind, at, ch in edits:
        at %= len(word) + 1
        if kind == "insert":
            word = word[:at] + ch + word[at:]
        elif at < len(word) and kind == "substitute":
            word = word[:at] + ch + word[at + 1:]
        elif at < len(word) and kind == "delete" and len(word) > 1:
            word = word[:at] + word[at + 1:]
        elif at + 1 < len(word):  # transpose
            word = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return word


EDITS = st.lists(st.tuples(st.sampled_from(["insert", "substitute", "delete", "transpose"]),
                           st.integers(0, 9), st.sampled_from("abcdeéx")), min_size=1,
                 max_size=2)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdeéx", min_size=5, max_size=9), st.lists(EDITS, max_size=25),
       st.lists(WORDS, max_size=20), st.integers(0, 3), st.sampled_from([1, 2]),
       st.booleans())
def test_expansions_are_those_of_expand_over_the_candidates(word, edits, others, terms,
                                                            distance, backwards):
    """``SurfaceIndex.within`` reads the anchored ranges in place; the expansions of its
    hits must be what ``expand`` gives over ``near``'s list: the same terms, words (the
    first of equals in vocabulary order) and distances. The vocabulary holds words one or
    two edits from the typed one, anywhere in it, and others; several words may share a
    term. ``words.parquet`` holds them sorted (its buckets are their own sorted views);
    ``backwards``, they are not."""
    vocabulary = sorted({_edited(word, e) for e in edits} | set(others), reverse=backwards)
    pairs = [(w, i % (terms + 1) + 2 * (len(w) % 2)) for i, w in enumerate(vocabulary)]
    index = SurfaceIndex(pairs)
    band = sorted((p for p in pairs if abs(len(p[0]) - len(word)) <= distance),
                  key=lambda p: len(p[0]))  # every candidate, in the index's order
    assert closest(index.within(word, distance)) == expand(
        word, index.near(word, distance), distance) == expand(word, band, distance)


def test_anchors_are_a_third_of_the_word_at_distance_one_only():
    assert anchors("installde", 1) == ("ins", "lde")
    assert anchors("installde", 2) == ("", "")
    assert anchors("ab", 1) == ("", "")


@pytest.mark.parametrize("word", ["thraeds", "mutxe", "poisnoing", "channesl", "tomatoe"])
def test_sql_and_in_memory_typo_candidates_expand_alike(pair, word):
    short, resident = pair
    found = []
    for searcher in (short, resident):
        near = searcher.reader.near_words([word], 1)[word]
        found.append(sorted((e.term_id, e.distance) for e in expand(word, near, 1)))
    assert found[0] == found[1] and found[0]


def test_prefix_terms_are_the_same_from_sql_and_from_memory(pair):
    short, resident = pair
    for prefix in ("lo", "t", "mu", "zz"):
        assert (resident.reader.words_with_prefix(prefix, 3)
                == short.reader.words_with_prefix(prefix, 3))


def test_configured_fuzzy_distance_two_is_the_same_in_memory(pair):
    short, resident = pair
    options = SearchOptions(fuzzy_distance=2, limit=50)
    for query in ("thraeds", "mutxe locks", "chanels"):
        assert _answers(resident, [query], options) == _answers(short, [query], options)


# --- startup ----------------------------------------------------------------------------

HEAVY = {"duckdb", "pyarrow", "mistletoe", "tiktoken", "mcp", "rich", "numpy", "pandas",
         "torch", "sentence_transformers", "transformers", "fastembed", "onnxruntime"}
PROBE = (
    "import contextlib, io, sys\n"
    "from ra.cli.app import main\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
    "    main(sys.argv[1:])\n"
    f"heavy = set({sorted(HEAVY)!r}) & {{m.split('.')[0] for m in sys.modules}}\n"
    "print(' '.join(sorted(heavy | ({'ra.text.markup'} & set(sys.modules)))))\n"
)


def _imports(cwd, *argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    return set(out.split())


def test_help_imports_no_heavy_module(tmp_path):
    assert _imports(tmp_path, "--help") == set()
    assert _imports(tmp_path, "search", "--help") == set()


def test_search_imports_duckdb_only(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nalpha words here\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    subprocess.run([sys.executable, "-c", "from ra.cli.app import main; main(['update'])"],
                   cwd=tmp_path, check=True, capture_output=True)
    # nor the dialects' patterns (15 ms): snippets are cut from the stored lines
    assert _imports(tmp_path, "search", "--list", "alpha") == {"duckdb"}


SERVE_PLAIN = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from ra.config.settings import load_config\n"
    "from ra.index.reader import IndexReader\n"
    "from ra.query.search import Searcher, SearchOptions\n"
    "config = load_config(Path(sys.argv[1]), home=Path(sys.argv[2]))\n"
    "reader = IndexReader.open(config.index_dir, keep_vocabulary=True)\n"
    "searcher = Searcher(reader, config)\n"
    "def ids(q):\n"
    "    return [r.id for r in searcher.search([q], SearchOptions()).queries[0].results]\n"
    "plain = {q: ids(q) for q in sys.argv[3:]}\n"
    "before = [m for m in ('duckdb', 'pyarrow.dataset', 'pyarrow.fs', 'pyarrow.parquet')\n"
    "          if m in sys.modules]\n"
    "negation = ids('mutex -panic')\n"
    "print(json.dumps([plain, before, 'duckdb' in sys.modules, negation]))\n"
)


def test_a_long_lived_reader_serves_plain_queries_without_duckdb(pair, tmp_path):
    """A reader opened long-lived (``keep_vocabulary``, as ``WarmIndex`` opens it) loads
    its vocabulary, chunks and impacts with pyarrow: a process serving plain queries,
    typos included, never imports DuckDB (nor pyarrow's dataset layer, which
    ``pq.read_table`` would bring, nor ``pyarrow.fs``, which ``pq.ParquetFile`` would:
    ``ra.store.parquet``); the first query that needs it connects, and every answer is
    the short-lived reader's."""
    short, _ = pair
    plain = ["mutex", "lock poisoning", "thraeds", "mutxe lock", "rust threads"]
    config = short.config
    out = subprocess.run([sys.executable, "-c", SERVE_PLAIN, str(config.root), str(tmp_path),
                          *plain], check=True, capture_output=True, text=True).stdout
    answers, imported_first, imported_then, negation = json.loads(out)
    assert not imported_first and imported_then

    def ids(q):
        return [r.id for r in short.search([q], SearchOptions()).queries[0].results]

    assert answers == {q: ids(q) for q in plain}
    assert all(answers.values()) and negation == ids("mutex -panic") != []


def test_a_search_with_an_unchanged_index_does_not_reindex(pair):
    short, _ = pair
    config = short.config
    reader, status = ra.index.freshness.open_index(replace(config))
    try:
        assert status is None and reader.generation.path == short.reader.generation.path
    finally:
        reader.close()


def test_a_bucket_out_of_order_is_searched_through_its_sorted_view():
    """A bucket is its own prefix view only when it is sorted (as words.parquet's are);
    here it is not, and a bisection over it as it is would miss the word whose edit is
    in its last third (the suffix view cannot find that one)."""
    index = SurfaceIndex([("abcdex", 1), ("aaaaaa", 2)])
    assert index.within("abcdeq", 1) == [("abcdex", 1.0, 1)]
    assert index.near("abcdeq", 1) == [("abcdex", 1)]


def test_surface_words_are_made_of_their_terms_objects():
    """A word that is its term's text is held as the term's very str, and every word's
    id as its term's very int (``surface_words``); a word of its own keeps its text, and
    a word whose term is not there its id; the sorted views hold positions as arrays."""
    import pyarrow as pa

    from ra.index.vocabulary import surface_words

    big = 10**6  # ids above CPython's cached small ints
    terms = pa.table({"term": ["ab", "abc", "run"],
                      "term_id": pa.array([big + 7, big + 3, big + 5], pa.int32())})
    words = pa.table({"word": ["ab", "abc", "running", "zz", "run"],
                      "term_id": pa.array([big + 7, big + 3, big + 5, big + 9, big + 5],
                                          pa.int32())})
    texts, ids = terms.column("term").to_pylist(), terms.column("term_id").to_pylist()
    got = list(surface_words(words, terms, texts, ids))
    assert got == [("ab", big + 7), ("abc", big + 3), ("running", big + 5),
                   ("zz", big + 9), ("run", big + 5)]
    assert [w for w, _ in got if any(w is t for t in texts)] == ["ab", "abc", "run"]
    assert all(i is ids[2] for _, i in got[2::2])
    index = SurfaceIndex(got)
    assert index.within("abd", 1) == [("ab", 1.0, big + 7), ("abc", 1.0, big + 3)]
    _, order, _, reversed_order = index._views(3)
    assert order == range(2) and type(reversed_order).__name__ == "array"


def test_a_long_lived_readers_words_are_its_terms_objects(pair):
    """As loaded from a real index: the words that are their term's text are the very
    str of the reader's term table, and every word's id the very int."""
    _, resident = pair
    reader = resident.reader
    reader.lookup_terms(["mutex"])  # loads the vocabulary
    words = [(w, i) for bucket in reader._vocab.by_length.values() for w, i in bucket]
    texts = {t: t for t in reader._terms}
    assert words and sum(w in texts for w, _ in words) > len(words) / 2
    assert all(w is texts[w] for w, _ in words if w in texts)
    ids = {i: i for _, (i, _) in ((t, reader._terms[t]) for t in texts)}
    assert all(i is ids[i] for _, i in words if i in ids)
