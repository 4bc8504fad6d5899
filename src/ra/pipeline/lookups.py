"""Where a term or a word is in the global tables, kept by a process between updates.

An incremental update changes the rows of a few hundred terms and surface words in the
global tables (``ra.pipeline.postings.updated_terms``, ``updated_words``) and numbers the
postings of the files it indexes (``postings_of``). Finding those rows with Arrow's set
lookups hashes the whole column every time: 48,000 terms and 54,000 words on cpp-docs,
about 60 ms of CPU in a one-file update whose file has 89 postings. Here a table's
lookup is built once (a dict ``term → term_id``; the words column as a sorted list,
bisected) and kept with the table; the update derives the next table's lookup from it
and the change, so the next update finds its rows in time proportional to its change.

A lookup is kept by the identity of the table it describes, and the table with it (so
that the identity cannot be reused): tables never change, and a lookup is made only
from its own table or derived together with it. Only the last few are kept
(``KEPT``): the tables of the newest generation and those an update made from them,
which the next update reads again (``ra.pipeline.partitions.read_table``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from itertools import pairwise

import pyarrow as pa

#: Lookups kept at once: the term and word tables of the generation an update read, of
#: the one it wrote, and of a rehearsal (``ra.pipeline.update.rehearse``).
KEPT = 8

_KEPT: OrderedDict[tuple[int, str], tuple[pa.Table, object]] = OrderedDict()
_LOCK = threading.Lock()  # an update and a rehearsal may run on two threads


def term_ids(terms: pa.Table) -> dict[str, int]:
    """``term → term_id`` of a terms table (``ra.store.artifacts.TERMS``). Do not change
    it: it is kept for the table."""
    found = _get(terms, "terms")
    if found is None:
        found = dict(zip(terms["term"].to_pylist(), terms["term_id"].to_pylist(),
                         strict=True))
        keep(terms, "terms", found)
    return found


def word_list(words: pa.Table) -> list[str]:
    """The ``word`` column of a words table (``ra.store.artifacts.WORDS``), which is
    sorted by word, as a list. Do not change it: it is kept for the table. ValueError when
    the words are not in order (bisecting would then miss some)."""
    found = _get(words, "words")
    if found is None:
        found = words["word"].to_pylist()
        if any(a >= b for a, b in pairwise(found)):
            raise ValueError("the words table is not sorted by word")
        keep(words, "words", found)
    return found


def keep(table: pa.Table, kind: str, lookup) -> None:
    """Keep ``lookup`` (what ``term_ids`` or ``word_list`` would give for ``table``)."""
    with _LOCK:
        _KEPT[(id(table), kind)] = (table, lookup)
        _KEPT.move_to_end((id(table), kind))
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)


def carry(table: pa.Table, same: pa.Table) -> None:
    """What is kept for ``table`` holds for ``same`` too: a table of the same rows (the
    one written, with its metadata: ``ra.pipeline.partitions.write_table``)."""
    with _LOCK:
        found = [(kind, entry[1]) for (key, kind), entry in _KEPT.items()
                 if key == id(table)]
    for kind, lookup in found:
        keep(same, kind, lookup)


def forget() -> None:
    """Drop every lookup kept (a full build starts a new lineage of tables)."""
    with _LOCK:
        _KEPT.clear()


def _get(table: pa.Table, kind: str):
    with _LOCK:
        entry = _KEPT.get((id(table), kind))  # its table is held: the id is its own
        if entry is None:
            return None
        _KEPT.move_to_end((id(table), kind))
        return entry[1]
