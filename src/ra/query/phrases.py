"""Phrases scored in a few chunks, from their positions: what ``ra.query.impacts.top_rows``
adds to the chunks a compound's phrase could lift to the best.

A long-lived reader scores the words of a query from its impact arrays; a phrase that
only adds score (``tldr-pages``, ``std::optional``: ``ra.query.impacts.bonus_phrases``)
needs the positions of its words, which no reader holds. The reader reads them for the
chunks asked only (``IndexReader.phrase_positions``: from the compact ``hot_postings``,
sorted by term, a few row groups of one file), and ``scores`` finds the phrase there as
``bm25f_sql``'s ``_phrase_hits`` does and scores it as its ``norm`` and ``per_chunk``
do: the same tf~
(``ra.pipeline.impacts.tf_norm``, to the bit) and the same saturation, in the same order
of operations. Doing that arithmetic in DuckDB cost 18 of 27 ms for 137 chunks of three
phrases (cpp-docs); here it is under a millisecond.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ra.query.bm25f import Sql, Weights, phrase_idf
from ra.query.plan import Clause


def words(clauses: Sequence[Clause]) -> list[int]:
    """The term ids of the words of ``clauses``, sorted."""
    return sorted({a.term_id for c in clauses for a in c.alts if a.term_id is not None})


def scores(clauses: Sequence[Clause], rows, ords: list[int], n_chunks: int,
           avg_length: dict[str, float], weights: Weights) -> list[float]:
    """The score of the phrase clauses ``clauses`` in each chunk of ``ords``, summed in
    clause order (0 where none occurs), from ``rows`` (``IndexReader.phrase_positions``'
    of their ``words`` in those chunks)."""
    from ra.pipeline.impacts import tf_norm

    held: dict[tuple[int, int, int], list[int]] = {}
    lengths: dict[tuple[int, int], int] = {}
    fields_of: dict[int, list[tuple[int, int]]] = defaultdict(list)  # a term's (ord, field)
    for term, o, fld, length, positions in rows:
        held[term, o, fld] = positions
        lengths[o, fld] = length
        fields_of[term].append((o, fld))
    total = dict.fromkeys(ords, 0.0)
    k1 = weights.k1
    for clause in clauses:
        found = {"term_id": [], "ord": [], "field": [], "tf": [], "len": []}
        for o, fld in fields_of.get(clause.alts[0].term_id, ()):  # where its first word is
            if tf := _occurrences(clause, held, o, fld):
                for key, value in zip(found, (clause.index, o, fld, tf, lengths[o, fld]),
                                      strict=True):
                    found[key].append(value)
        if not found["ord"]:
            continue
        _, chunks, tfn = tf_norm(found, avg_length, weights)
        # bm25f_sql's ``weight * idf * tfn * (k1 + 1) / (k1 + tfn)``, in its order
        score = clause.boost * phrase_idf(n_chunks, clause) * tfn * (k1 + 1) / (k1 + tfn)
        for o, value in zip(chunks.tolist(), score.tolist(), strict=True):
            total[o] += value
    return list(total.values())


def _occurrences(clause: Clause, held: dict, o: int, fld: int) -> int:
    """How many times ``clause``'s words occur in order in field ``fld`` of chunk ``o``:
    the positions of its first word with each next word ``i`` places on (within the
    slop), as ``_phrase_hits`` counts them."""
    lists = [held.get((a.term_id, o, fld)) for a in clause.alts]
    if any(p is None for p in lists):
        return 0
    slop = clause.slop
    if slop == 0:
        later = [set(p) for p in lists[1:]]
        return sum(all(x + i in s for i, s in enumerate(later, 1)) for x in lists[0])
    return sum(all(any(abs(y - x - i) <= slop for y in p) for i, p in enumerate(lists[1:], 1))
               for x in lists[0])


class PhraseScorer:
    """``ra.query.impacts.top_rows``' (and ``with_phrases``') ``phrases`` for a reader:
    the bonus phrases' scores in the chunks asked, from their words' positions there
    (``IndexReader.phrase_positions``); it keeps what it asked, for ``--explain``."""

    def __init__(self, reader, weights: Weights) -> None:
        self.reader, self.weights = reader, weights
        self.asked: list[tuple[str, list[int], int]] = []

    def __call__(self, clauses: Sequence[Clause], ords: list[int]) -> list[float]:
        stats = self.reader.stats
        terms = words(clauses)
        rows = self.reader.phrase_positions(terms, ords)
        self.asked.append((", ".join(repr(c.text) for c in clauses), terms, len(ords)))
        return scores(clauses, rows, ords, stats.chunks, stats.avg_length, self.weights)

    def explained(self, sql: Sql) -> Sql:
        """``sql`` (what ``top_rows`` did), then what it asked of the positions."""
        text = sql.text
        for phrase, terms, n in self.asked:
            text += (f";\nthen the phrases {phrase} in the {n} chunks their words' impacts "
                     f"could lift to the best, found in the positions of terms {terms} "
                     "there (ra.query.phrases, IndexReader.phrase_positions)")
        return Sql(text, sql.params)
