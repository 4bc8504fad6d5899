"""Incremental update: a new generation that differs from the last only where files did.

Given the previous generation and the files that were added, modified or removed (found
by the freshness check's stat walk, which is reused here: nothing is walked again, and
only the changed files are opened, to sniff for binary content and to be indexed):

1. each partition holding a modified or removed file is read, and that file's rows are
   dropped from every per-file table (its chunks by ``ord``);
2. modified and added files are chunked and analysed alone, their chunks numbered from
   the manifest's ``next_ord``; modified files return to their partition, added files go
   to the last partition until it is full, then to new ones;
3. the global term table is adjusted by exactly the dropped and the new rows (df, cf),
   the surface vocabulary likewise, and the length sums behind the BM25F averages;
4. a rewritten partition keeps the postings of its kept chunks and adds those of the new
   ones; every other partition is hard-linked.

The result scores exactly like a full build of the same files: every statistic is a sum
over rows, and the update subtracts and adds rows, never estimates. Term ids of untouched
partitions stay valid because existing terms keep their ids. The work is one partition,
the global term and word tables, and the per-file record (``fingerprints.json``).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ra.pipeline import typed
from ra.pipeline.compact import carry_compact
from ra.pipeline.discover import Discovery, FoundFile, Scan, found_file
from ra.pipeline.lookups import term_ids, word_list
from ra.pipeline.partitions import (
    PART_FILES,
    Part,
    Writer,
    link_parts,
    read_part,
    read_table,
    write_globals,
    write_part,
)
from ra.pipeline.postings import (
    POSTINGS_ORDER,
    field_chunks,
    indexed_chunks,
    length_sums,
    postings_of,
    statistics,
    updated_terms,
    updated_words,
)
from ra.pipeline.run import BuildReport, finish_manifest, index_settings, oversized, process_files
from ra.store import generations


@dataclass(frozen=True)
class Delta:
    """What an incremental update changed in its base, for a long-lived reader of the
    base carried over to it in the same process (``ra.index.successor``): found here
    while the tables are in memory, it spares the successor the queries that would find
    it again in the files (about 25 ms of a one-file edit on cpp-docs), and the reading
    back of the new chunks."""

    base: str  # the folder name of the generation it follows
    gone: tuple[int, ...]  # ords of the chunks removed (a changed file's old chunks)
    term_ids: tuple[int, ...]  # of the terms whose df changed: their old and new ids
    terms: tuple[tuple[str, int, int], ...]  # (term, term_id, df) of those still present
    words: tuple[str, ...]  # surface words of the files removed and indexed
    present: tuple[tuple[str, int], ...]  # (word, term_id) of those still present
    chunks: pa.Table  # the new chunk rows (whole documents, numbered from the base's next_ord)


#: The delta of the newest generation this process wrote by an update, by generation id.
_DELTAS: dict[str, Delta] = {}


def take_delta(generation: Path, base: str) -> Delta | None:
    """The delta of ``generation`` from ``base`` when this process made it (once)."""
    key = generations.generation_id(generation)
    delta = _DELTAS.get(key)
    return _DELTAS.pop(key) if delta is not None and delta.base == base else None


def _delta(base: str, gone: pa.ChunkedArray, old_terms: pa.Table, terms: pa.Table,
           words: pa.Table, analyzed: tuple[pa.Table, pa.Table],
           surface: tuple[pa.Table, pa.Table], chunks: pa.Table) -> Delta:
    """``analyzed`` and ``surface``: the rows that left and those that came. Their terms
    and words are looked up where the update kept them (``ra.pipeline.lookups``)."""
    import numpy as np

    def distinct(tables: tuple[pa.Table, pa.Table], name: str) -> list[str]:
        return sorted(pc.unique(pa.chunked_array(
            [c for t in tables for c in t[name].cast(pa.string()).chunks], pa.string())
        ).to_pylist())

    changed, surface_words = distinct(analyzed, "term"), distinct(surface, "word")
    before, now = term_ids(old_terms), term_ids(terms)
    present_terms = sorted((now[t], t) for t in changed if t in now)
    df = terms["df"].to_numpy()[np.searchsorted(terms["term_id"].to_numpy(),
                                                [i for i, _ in present_terms])]
    listed, word_term = word_list(words), words["term_id"].to_numpy()
    at = [bisect_left(listed, w) for w in surface_words]
    return Delta(
        base, tuple(gone.to_pylist()),
        tuple(sorted({*(before[t] for t in changed if t in before),
                      *(i for i, _ in present_terms)})),
        tuple((t, i, int(d)) for (i, t), d in zip(present_terms, df, strict=True)),
        tuple(surface_words),
        tuple((w, int(word_term[a])) for w, a in zip(surface_words, at, strict=True)
              if a < len(listed) and listed[a] == w),
        chunks)


@dataclass
class Changes:
    """What an update needs to know about the files now, relative to the previous
    generation."""

    record: generations.FileRecord  # the previous generation's files
    files: dict[str, tuple[int, int, int]]  # text files to index now: key → fingerprint
    binary: dict[str, tuple[int, int, int]]  # binary files now (skipped, with fingerprints)
    fresh: list[FoundFile]  # added or modified text files, to (re)index, by key
    gone: list[str]  # files of ``prev`` whose rows leave: modified, removed, now binary
    skipped: list[tuple[str, str, str]]  # discovery problems now: (tree, path, why)
    digest: str  # fingerprint digest of files and binary files together (the scan's)
    counts: dict[str, int] = field(default_factory=dict)  # added, modified, removed


def changes_since(record: generations.FileRecord, trees, scan: Scan, added: list[str],
                  modified: list[str], removed: list[str]) -> Changes:
    """The ``Changes`` of ``scan`` (every selected file now) relative to the generation
    whose files ``record`` lists: only the added and modified files are opened, to sniff
    them for binary content; a file that was binary and did not change is still binary."""
    by_name = {t.name: t for t in trees}
    found = Discovery()
    for key in sorted(added + modified):
        tree, rel = key.split(":", 1)
        found_file(found, by_name[tree], rel, scan.files[key])
    changed = set(added) | set(modified)
    binary = {k: scan.files[k] for k in record.binary if k in scan.files and k not in changed}
    binary.update((f"{f.tree}:{f.path}", f.fingerprint) for f in found.binary)
    files = {k: fp for k, fp in scan.files.items() if k not in binary} if binary else scan.files
    skipped = [(*k.split(":", 1), "binary file skipped") for k in binary]
    return Changes(record, files, binary, found.files,
                   gone=[k for k in sorted(modified + removed) if k in record.files],
                   skipped=sorted(scan.unreadable + skipped), digest=scan.digest(),
                   counts={"added": len(added), "modified": len(modified),
                           "removed": len(removed)})


def _keys(table: pa.Table) -> pa.Array:
    return pc.binary_join_element_wise(table["tree"], table["path"], typed.string(":"))


def _without(part: Part, gone: list[str]) -> tuple[Part, Part]:
    """``(kept, dropped)`` rows of a partition, dropping the files in ``gone``; the kept
    rows keep their postings."""
    gone_keys = pa.array(gone, pa.string())
    drop_files = pc.is_in(_keys(part.files), value_set=gone_keys)
    drop_chunks = pc.is_in(_keys(part.chunks), value_set=gone_keys)
    drop_surface = pc.is_in(_keys(part.surface), value_set=gone_keys)
    ords = part.chunks["ord"].filter(drop_chunks)
    drop_an = pc.is_in(part.analyzed["ord"], value_set=ords)
    drop_len = pc.is_in(part.lengths["ord"], value_set=ords)
    drop_post = pc.is_in(part.postings["ord"], value_set=ords)
    drop_links = pc.is_in(_keys(part.links), value_set=gone_keys)

    def split(table: pa.Table, mask) -> tuple[pa.Table, pa.Table]:
        return table.filter(pc.invert(mask)), table.filter(mask)

    pieces = [split(part.files, drop_files), split(part.chunks, drop_chunks),
              split(part.analyzed, drop_an), split(part.lengths, drop_len),
              split(part.surface, drop_surface), split(part.postings, drop_post),
              split(part.links, drop_links)]  # in the order of PARTITIONED
    return (Part(part.id, *(k for k, _ in pieces)), Part(part.id, *(d for _, d in pieces)))


def _concat(a: Part, b: Part) -> Part:
    """The rows of both (postings left to the caller)."""
    both = {n: pa.concat_tables([getattr(a, n), getattr(b, n)])
            for n in ("files", "chunks", "analyzed", "lengths", "surface", "links")}
    return Part(a.id, **both)


def _placement(partition: dict[str, int], new: list[str]) -> dict[str, int]:
    """Partition of each file key: existing files keep theirs, ``new`` ones fill the last
    partition and then open new ones."""
    where = dict(partition)
    sizes = Counter(partition.values())
    tail = max(sizes, default=0)
    for key in new:
        if sizes.get(tail, 0) >= PART_FILES:
            tail += 1
        where[key] = tail
        sizes[tail] = sizes.get(tail, 0) + 1
    return where


def update_into(out: Path, prev: Path, config, changes: Changes) -> BuildReport:
    """Write into ``out`` the generation that follows ``prev`` after ``changes``."""
    start = time.perf_counter()
    manifest = generations.read_manifest(prev)
    fresh_keys = [f"{f.tree}:{f.path}" for f in changes.fresh]
    where = _placement(changes.record.partition,
                       [k for k in fresh_keys if k not in changes.record.files])
    touched = sorted({where[k] for k in changes.gone + fresh_keys})
    new, problems = process_files(changes.fresh, index_settings(config), manifest["next_ord"])
    t_proc = time.perf_counter()

    kept_parts, dropped, added_rows = [], [], []
    for pid in touched:
        old = read_part(prev, pid) if pid in manifest["partitions"] else Part.empty(pid)
        kept, gone = _without(old, [k for k in changes.gone if where[k] == pid])
        dropped.append(gone)
        mine = _rows_for(new, [k for k in fresh_keys if where[k] == pid])
        added_rows.append(mine)
        part = _concat(kept, mine)
        part.postings = kept.postings  # the new rows' postings follow once ids are known
        kept_parts.append(part)
    t_read = time.perf_counter()

    old_terms = read_table(prev / "terms.parquet")
    analyzed = _cat(dropped, "analyzed"), _cat(added_rows, "analyzed")
    surface = _cat(dropped, "surface"), _cat(added_rows, "surface")
    terms = updated_terms(old_terms, *analyzed)
    words = updated_words(read_table(prev / "words.parquet"), *surface, terms)
    _DELTAS.clear()
    _DELTAS[generations.generation_id(out)] = _delta(
        prev.name, _cat(dropped, "chunks")["ord"], old_terms, terms, words, analyzed, surface,
        new.chunks)
    t_terms = time.perf_counter()
    with Writer() as writer:  # the global tables are written while the postings are made
        write_globals(out, terms, words, keep=True, writer=writer)
        ids, placed = _write_parts(out, prev, where, changes.gone + fresh_keys, kept_parts,
                                   added_rows, terms, writer)
        compact = carry_compact(prev, out, manifest.get("compact"), touched)
    report = _report(manifest, changes, terms, new, dropped, added_rows,
                     _problems(manifest, changes, problems), config)
    report.stage_seconds = {"chunk+analyze": t_proc - start, "read": t_read - t_proc,
                            "terms": t_terms - t_read, "write": time.perf_counter() - t_terms}
    report.seconds = time.perf_counter() - start
    finish_manifest(out, config, report, changes.files, changes.binary, ids, placed,
                    _stats(manifest, dropped, added_rows),
                    next_ord=manifest["next_ord"] + new.chunks.num_rows,
                    update={"kind": "incremental", "base": prev.name, **changes.counts,
                            "partitions": touched},
                    digest=changes.digest, compact=compact)
    return report


def rehearse(prev: Path) -> None:
    """Do once what an update of generation ``prev`` does first: read a partition and the
    global tables, filter them, write a partition (into a folder removed at once).

    A process pays for its first Parquet read and write with pyarrow about 250 ms of
    set-up on top of the work (cpp-docs: the first partition read 307 ms, the next ones
    60-70 ms); a long-lived process (``ra.index.warm``) rehearses while idle, so that the first
    edit is indexed about as fast as the next ones. The global tables read are kept for
    that edit (``ra.pipeline.partitions.read_table``)."""
    import tempfile

    manifest = generations.read_manifest(prev)
    if not manifest.get("partitions"):
        return
    part = read_part(prev, min(manifest["partitions"]))
    kept, gone = _without(part, part.keys()[:1])
    # the file's rows leave and come back: the same tables, by the same operations
    terms = updated_terms(read_table(prev / "terms.parquet", keep=True), gone.analyzed,
                          gone.analyzed)
    words = updated_words(read_table(prev / "words.parquet", keep=True), gone.surface,
                          gone.surface, terms)
    kept.postings = _postings_with(kept, gone.analyzed, terms)
    with tempfile.TemporaryDirectory(prefix="ra-rehearsal-") as tmp:
        write_part(Path(tmp), kept)
        write_globals(Path(tmp), terms, words)


def _postings_with(part: Part, analyzed: pa.Table, terms: pa.Table) -> pa.Table:
    """The postings of ``part`` plus those of the new rows ``analyzed``, in term order."""
    both = pa.concat_tables([part.postings, postings_of(analyzed, terms, looked_up=True)])
    return both.sort_by(POSTINGS_ORDER)


def _rows_for(new: Part, keys: list[str]) -> Part:
    """The rows of ``new`` that belong to the files ``keys``."""
    keys = pa.array(keys, pa.string())
    chunks = new.chunks.filter(pc.is_in(_keys(new.chunks), value_set=keys))
    ords = chunks["ord"]
    return Part(-1, new.files.filter(pc.is_in(_keys(new.files), value_set=keys)), chunks,
                new.analyzed.filter(pc.is_in(new.analyzed["ord"], value_set=ords)),
                new.lengths.filter(pc.is_in(new.lengths["ord"], value_set=ords)),
                new.surface.filter(pc.is_in(_keys(new.surface), value_set=keys)),
                links=new.links.filter(pc.is_in(_keys(new.links), value_set=keys)))


def _cat(parts: list[Part], name: str) -> pa.Table:
    tables = [getattr(p, name) for p in parts]
    return pa.concat_tables(tables) if tables else getattr(Part.empty(0), name)


def _write_parts(out: Path, prev: Path, where: dict[str, int], changed: list[str],
                 rewritten: list[Part], added: list[Part], terms: pa.Table,
                 writer: Writer) -> tuple[list[int], dict[str, int]]:
    """Write the rewritten partitions (empty ones disappear), link the rest; returns every
    partition of the new generation and the one holding each of its files. ``where``:
    the partition of every file before and of every new one, ``changed``: the files
    whose rows left or came (only rewritten partitions hold them)."""
    placed = dict(where)
    for key in changed:
        placed.pop(key, None)
    again = {p.id for p in rewritten}
    kept = sorted(set(placed.values()) - again)
    link_parts(prev, out, kept)
    for part, mine in zip(rewritten, added, strict=True):
        if not part.files.num_rows:
            continue
        part.postings = _postings_with(part, mine.analyzed, terms)
        write_part(out, part, keep=True, writer=writer)
        placed.update((key, part.id) for key in part.keys())
        kept.append(part.id)
    if not kept:
        write_part(out, Part.empty(0), writer=writer)  # keep every artifact folder readable
        kept.append(0)
    return sorted(kept), placed


def _problems(manifest: dict, changes: Changes, new: list[str]) -> list[str]:
    """The problems a full build would report: discovery's now, those of the files
    indexed now, and those found before about unchanged files (decoding, frontmatter)."""
    before = manifest.get("problems", [])
    if before:  # most often none: no set of every file
        fresh = {f"{f.tree}:{f.path}" for f in changes.fresh}
        unchanged = {k for k in changes.files if k not in fresh}
        before = [p for p in before if _problem_key(p, unchanged)]
    found = Discovery(skipped=changes.skipped).problems()
    return sorted(found + before + new)


def _problem_key(problem: str, keys: set[str]) -> str | None:
    """The file key among ``keys`` that ``problem`` (``tree:path: what``) is about."""
    at = problem.find(": ")
    while at != -1:
        if problem[:at] in keys:
            return problem[:at]
        at = problem.find(": ", at + 1)
    return None


def _report(manifest: dict, changes: Changes, terms: pa.Table, new: Part,
            dropped: list[Part], added: list[Part], problems: list[str],
            config) -> BuildReport:
    n_chunks = (manifest["counts"]["chunks"] - sum(p.chunks.num_rows for p in dropped)
                + sum(p.chunks.num_rows for p in added))
    counts = manifest["counts"]
    postings = (counts["postings"] - sum(p.analyzed.num_rows for p in dropped)
                + sum(p.analyzed.num_rows for p in added))
    return BuildReport(
        files=len(changes.files), chunks=n_chunks, terms=terms.num_rows, postings=postings,
        problems=problems, oversized=oversized(new.chunks, config.settings.max_chunk_size),
        kind="incremental", changed=len(changes.fresh))


def _stats(manifest: dict, dropped: list[Part], added: list[Part]) -> dict:
    """Indexed chunks, length sums and chunks per field, adjusted by exactly the rows
    removed and added."""
    sums = dict(manifest["stats"]["length_sums"])
    present = dict(manifest["stats"]["field_chunks"])
    n = manifest["stats"]["chunks"]
    for sign, parts in ((-1, dropped), (1, added)):
        for part in parts:
            for totals, of in ((sums, length_sums), (present, field_chunks)):
                for field_, value in of(part.lengths).items():
                    totals[field_] = totals.get(field_, 0) + sign * value
            n += sign * indexed_chunks(part.lengths)
    return statistics(n, sums, present)
