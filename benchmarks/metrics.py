"""Retrieval metrics computed the way trec_eval does (``-c``: every judged query counts).

nDCG@k uses binary gains with the log2(rank + 1) discount; the ideal ranking places all
relevant documents first. Recall@k is relevant retrieved in the top k over all relevant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def reciprocal_rank(ranked: Sequence[str], wanted: str, k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if doc == wanted:
            return 1.0 / (i + 1)
    return 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
