"""A second, independent oracle for ra's scores: rank-bm25 on a single field.

``tests/test_bm25f.py`` checks ra's BM25F against a reference written for it. This one
asks a library nobody here wrote: with every field weight but the body's set to 0 (and no
local boost), BM25F is plain BM25 over the body, which is what ``rank_bm25.BM25Okapi``
computes. Its idf is the ATIRE one with a floor; ra uses Lucene's non-negative idf
(``ln(1 + (N − df + 0.5) / (df + 0.5))``, DESIGN "Scoring and ranking"), so the oracle's
``_calc_idf`` is replaced by that formula and everything else (term frequency,
saturation, length normalisation against the average document length) is rank-bm25's.

The corpus is written here, one chunk per file, file names (which become the title and
path fields, weighted 0) sharing no word with the bodies; bodies are tokenised with ra's
analyzer, as ra's index does. Every chunk rank-bm25 scores above zero must be a result
with the same score, within the quantization step of ra's impacts (``ra.pipeline.
impacts``: these queries are plain, so ra scores them from its impacts), and no other.
"""

from __future__ import annotations

import math

import pytest
from rank_bm25 import BM25Okapi

from conftest import searcher_over
from ra.pipeline.impacts import SCALE
from ra.query.search import SearchOptions
from ra.text.analysis import Analyzer

K1, B = 1.2, 0.75
BODIES = [
    "The lighthouse keeper climbs the spiral stairs every evening to light the lamp.",
    "A lamp of oil, a lamp of gas, and finally an electric lamp lit the harbour.",
    "Fishing boats return to the harbour when the fog rolls in from the sea.",
    "The keeper's logbook records storms, fog and every ship that passed the rocks.",
    "Gulls nest on the rocks below the lighthouse and shriek at dawn.",
    "An automated beacon replaced the keeper; the stairs are now climbed by tourists.",
    "Storms wrecked three ships on these rocks before the lighthouse was built.",
    "The harbour master keeps a second logbook of tides, cargo and harbour fees.",
    "Tourists photograph the lighthouse, the gulls, and the sea at sunset.",
    "Oil for the lamp was carried up the stairs in heavy brass cans, twice a night.",
    "Fog horns sound when visibility drops; ships answer with their own horns.",
    "Cargo ships anchor outside the harbour until the tide is high enough to enter.",
]
QUERIES = ["lighthouse", "lamp", "harbour OR fog", "keeper OR logbook OR stairs",
           "ships OR rocks OR storms", "tide OR cargo OR tourists OR gulls",
           "lamp OR oil OR harbour OR lighthouse OR keeper"]


class LuceneIdfBM25(BM25Okapi):
    """rank-bm25's Okapi BM25 with Lucene's idf (ra's), the rest unchanged."""

    def _calc_idf(self, nd: dict) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


@pytest.fixture(scope="module")
def single_field(tmp_path_factory):
    root = tmp_path_factory.mktemp("oracle")
    home = tmp_path_factory.mktemp("oracle-home")
    (root / "docs").mkdir()
    for i, body in enumerate(BODIES):
        (root / "docs" / f"d{i:02}.md").write_text(body + "\n")
    (root / ".ra.toml").write_text(
        '[settings]\nlocal_boost = 1.0\nchunk_at_headings = false\n\n'
        f'[search]\nk1 = {K1}\nb = {B}\n\n'
        '[search.boosts]\ntitle = 0.0\ntags = 0.0\npath = 0.0\nbody = 1.0\n\n'
        '[tree.docs]\npath = "./docs"\n')
    with searcher_over(root, home) as searcher:
        yield searcher


@pytest.mark.parametrize("query", QUERIES)
def test_single_field_scores_equal_rank_bm25(single_field, query):
    analyzer = Analyzer("english")
    oracle = LuceneIdfBM25([analyzer.terms(b) for b in BODIES], k1=K1, b=B)
    words = sorted({t for w in query.split(" OR ") for t in analyzer.terms(w)})
    want = {f"docs:d{i:02}.md": s for i, s in enumerate(oracle.get_scores(words)) if s > 0}
    options = SearchOptions(fuzzy=False, aggregation=False, cutoff_ratio=0.0, limit=100)
    topic = single_field.search([query], options).queries[0]
    got = {r.id: r.score for r in topic.results}
    assert want and set(got) == set(want)
    # ra scores plain queries from impacts quantized to 16 bits (ra.pipeline.impacts):
    # each word's share is off by at most half a step, idf · (k1 + 1) / (2 · 65535)
    step = sum(oracle.idf[w] for w in words) * (K1 + 1) / (2 * SCALE)
    for doc, score in want.items():
        assert got[doc] == pytest.approx(score, rel=1e-9, abs=step), doc
