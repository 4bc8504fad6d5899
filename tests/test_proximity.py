"""Term proximity (``ra.query.proximity``): the best candidates re-ranked with a bonus for
the query's words close together, off unless ``[search] proximity`` is above 0.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import searcher_over, short_and_held
from ra.config.settings import SearchSettings, load_config
from ra.errors import ConfigError
from ra.query import proximity
from ra.query.search import Searcher, SearchOptions
from ra.query.snippets import TermKey
from ra.text.analysis import analyzer_for

FILLER = ("bread oven flour yeast crust dough", "piano chord scale tempo melody rhythm",
          "harbour ship cargo tide anchor crane", "orbit comet planet telescope lens star")
# the same words in both: "regulatory cells" together in one, far apart in the other
NEAR = "Regulatory cells limit inflammation in the gut " + "of mice and rats alike " * 3
FAR = "Regulatory limit inflammation in the gut " + "of mice and rats alike " * 3 + "cells"


def _with(searcher: Searcher, weight: float) -> Searcher:
    search = dataclasses.replace(searcher.config.search, proximity=weight)
    return Searcher(searcher.reader, dataclasses.replace(searcher.config, search=search))


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("proximity")
    home = tmp_path_factory.mktemp("proximity-home")
    (root / "kb").mkdir()
    (root / "kb" / "a-far.md").write_text(f"# Study\n\n{FAR}\n")
    (root / "kb" / "b-near.md").write_text(f"# Study\n\n{NEAR}\n")
    for i in range(20):  # other chunks, so that the query words are rare
        words = FILLER[i % len(FILLER)].split()
        (root / "kb" / f"note{i:02}.md").write_text(f"# Note {i}\n\n{' '.join(words)}\n")
    (root / ".ra.toml").write_text('[tree.kb]\npath = "./kb"\n')
    yield root, home


def ranked(searcher: Searcher, query: str) -> list[str]:
    opts = SearchOptions(limit=10, cutoff_ratio=0.0)
    return [r.id for r in searcher.search([query], opts).queries[0].results]


def test_words_adjacent_outrank_the_same_words_far_apart(kb):
    with searcher_over(*kb) as searcher:
        far, near = "kb:a-far.md#study", "kb:b-near.md#study"
        assert ranked(searcher, "regulatory cells")[:2] == [far, near]  # a tie: by id
        assert ranked(_with(searcher, 1.0), "regulatory cells")[:2] == [near, far]


def test_the_setting_is_read_from_the_config_file(tmp_path):
    (tmp_path / ".ra.toml").write_text("[search]\nproximity = 0.5\n")
    assert load_config(cwd=tmp_path).search.proximity == 0.5
    (tmp_path / ".ra.toml").write_text("[search]\nproximity = -1\n")
    with pytest.raises(ConfigError, match="at least 0"):
        load_config(cwd=tmp_path)


def test_off_by_default_and_off_at_zero(kb):
    assert SearchSettings().proximity == 0.0
    with searcher_over(*kb) as searcher:
        assert searcher.config.search.proximity == 0.0
        off = searcher.search(["regulatory cells"], SearchOptions(cutoff_ratio=0.0))
        scores = [r.score for r in off.queries[0].results[:2]]
        assert scores[0] == scores[1]  # the same words: a tie, broken by id


def test_one_shot_and_warm_readers_rank_alike(kb):
    root, home = kb
    with short_and_held(root, home) as (short, held, config):
        config = dataclasses.replace(config, search=dataclasses.replace(
            config.search, proximity=1.0))
        for query in ("regulatory cells", "cells regulatory", "inflammation gut mice",
                      "regulatory cells limit inflammation in the gut of mice"):
            one, warm = Searcher(short, config), Searcher(held, config)
            got = [(r.id, r.score) for r in one.search([query]).queries[0].results]
            assert got == [(r.id, r.score) for r in warm.search([query]).queries[0].results]


def test_positions_count_the_words_between_matches():
    key = TermKey(frozenset({"regulatori", "cell"}), analyzer_for("english"))
    occ = proximity.occurrences("Regulatory T-cells; the cells, regulatory_x cells",
                                key, {"regulatori": 0, "cell": 1})
    # words: Regulatory(0) T(1) cells(2) the(3) cells(4) regulatory(5) x(6) cells(7)
    assert occ == [(0, 0), (2, 1), (4, 1), (5, 0), (7, 1)]


def test_pairs_of_one_word_or_beyond_the_window_add_nothing():
    w = {0: 2.0, 1: 3.0}
    assert proximity.accumulators([(0, 0), (1, 0), (2, 0)], w, 5) == {}
    assert proximity.accumulators([(0, 0), (6, 1)], w, 5) == {}
    assert proximity.accumulators([(0, 1), (1, 0)], w, 5, ordered=True) == {}
    assert proximity.accumulators([(0, 0), (2, 1)], w, 5) == {0: 3.0 / 4, 1: 2.0 / 4}


@given(st.integers(1, 9), st.integers(1, 9), st.floats(0.01, 20), st.floats(0.01, 20))
def test_closer_words_earn_more(d1, d2, w0, w1):
    weight = {0: w0, 1: w1}

    def score(d: int) -> float:
        acc = proximity.accumulators([(0, 0), (d, 1)], weight, 10)
        return proximity.bonus(acc, weight, 1.2)

    assert score(d1) >= 0
    if d1 < d2:
        assert score(d1) > score(d2)
