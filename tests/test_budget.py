"""Two-tier token packing: exact packings, and the budget is never exceeded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra.query.budget import Cost, Packing, estimate_tokens, list_entry_tokens, pack


def tiers(packing: Packing) -> list[tuple[str, str, int]]:
    return [(p.item.id, p.tier, p.tokens) for p in packing.items]


RESULTS = [Cost("a", 50, 10), Cost("b", 40, 10), Cost("c", 30, 25), Cost("d", 5, 3)]


def test_no_budget_means_everything_in_full():
    packing = pack(RESULTS, None)
    assert tiers(packing) == [("a", "full", 50), ("b", "full", 40), ("c", "full", 30),
                              ("d", "full", 5)]
    assert (packing.tokens_used, packing.budget, packing.skipped) == (125, None, [])


def test_full_then_list_then_skip_then_a_later_small_one_fits():
    packing = pack(RESULTS, 70)
    # a: 50 full (20 left); b: 40 too big, list 10 (10 left); c: 30 and 25 too big,
    # skipped; d: 5 full (5 left).
    assert tiers(packing) == [("a", "full", 50), ("b", "list", 10), ("d", "full", 5)]
    assert packing.tokens_used == 65
    assert [c.id for c in packing.skipped] == ["c"]


def test_exact_fit_goes_in_full():
    assert tiers(pack([Cost("a", 50, 10)], 50)) == [("a", "full", 50)]


def test_zero_budget_packs_nothing_but_free_entries():
    packing = pack([Cost("a", 1, 1), Cost("b", 0, 0)], 0)
    assert tiers(packing) == [("b", "full", 0)]
    assert packing.tokens_used == 0


def test_first_result_too_big_becomes_a_list_entry():
    packing = pack([Cost("big", 5000, 40), Cost("small", 100, 20)], 200)
    assert tiers(packing) == [("big", "list", 40), ("small", "full", 100)]


def test_negative_budget_is_refused():
    with pytest.raises(ValueError, match="negative"):
        pack(RESULTS, -1)


def test_estimate_and_list_entry_cost():
    assert estimate_tokens("") == 1
    assert estimate_tokens("x" * 40) == 11
    # "id  title\n    snip\n", as a list entry is printed, is 19 characters
    assert list_entry_tokens("id", "title", "snip") == 6
    assert list_entry_tokens("id", "title", "snip", count=len) == 19


@pytest.mark.parametrize("text", [
    "docs:docs/mfc/reference/cwnd-class.md#setwindowpos  CWnd::SetWindowPos",
    "…v1.push_back( 1 ); v1.push_back( 3 ); v2.push_back( 2 );…",
    "kb:notes/2024-05-01-é-ü.md#日本語の見出し  日本語の見出し",
    "Interacts with the Docker daemon to build images from a Dockerfile.",
])
def test_an_entry_is_estimated_at_no_fewer_tokens_than_cl100k_base_counts(text):
    """Ids, paths and code are dense in tokens: four characters a token gave 12 for the
    first (cl100k_base: 17) and 15 for the second (27)."""
    from ra.query.budget import estimate_entry
    from ra.text.tokens import count_tokens

    assert estimate_entry(text) >= count_tokens(text)


costs = st.lists(st.builds(Cost, st.text(max_size=3), st.integers(0, 500), st.integers(0, 60)),
                 max_size=30)


@given(costs, st.integers(0, 2000))
def test_budget_is_never_exceeded(items, budget):
    packing = pack(items, budget)
    assert packing.tokens_used <= budget
    assert packing.tokens_used == sum(p.tokens for p in packing.items)
    for p in packing.items:
        assert p.tokens == (p.item.tokens if p.tier == "full" else p.item.list_tokens)
    assert len(packing.items) + len(packing.skipped) == len(items)


@given(costs, st.integers(0, 2000))
def test_packing_is_greedy_in_rank_order(items, budget):
    packing = pack(items, budget)
    placed = iter(packing.items)
    skipped = iter(packing.skipped)
    left = budget
    for item in items:  # replay: each decision was the richest tier that fit then
        if item.tokens <= left:
            p = next(placed)
            assert (p.item, p.tier) == (item, "full")
            left -= item.tokens
        elif item.list_tokens <= left:
            p = next(placed)
            assert (p.item, p.tier) == (item, "list")
            left -= item.list_tokens
        else:
            assert next(skipped) == item


def test_the_closing_budget_line_costs_no_more_than_is_kept_for_it():
    """The answer keeps ``BUDGET_LINE`` tokens for "[… of … tokens]" and ``CUT_LINE`` for
    the line saying what the budget cut, at their longest (five-digit counts, the MCP
    tools' longer name for the budget)."""
    from types import SimpleNamespace

    from ra.query.render import BUDGET_LINE, CUT_LINE, _budget_line
    from ra.text.tokens import count_tokens

    def response(truncated: bool):
        shown = [SimpleNamespace(seen_in=None, tier=tier) for tier in ["list"] * 999
                 + ["ref"] * 999] if truncated else []
        topic = SimpleNamespace(results=shown, omitted=999, needs=99999)
        return SimpleNamespace(tokens_used=99999, max_tokens=99999, truncated=truncated,
                               queries=[topic])

    assert count_tokens(_budget_line(response(False), "the max_tokens argument")) <= BUDGET_LINE
    cut = _budget_line(response(True), "the max_tokens argument")
    assert "cut to fit: 999 results as snippets, 999 results as id and title" in cut
    assert count_tokens(cut) <= CUT_LINE
