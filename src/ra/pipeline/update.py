"""Incremental update: a new generation that differs from the last only where files did.

Given the previous generation and the files that were added, modified or removed:

1. each partition holding a modified or removed file is read, and that file's rows are
   dropped from every per-file table (its chunks by ``ord``);
2. modified and added files are chunked and analysed alone, their chunks numbered from
   the manifest's ``next_ord``; modified files return to their partition, added files go
   to the last partition until it is full, then to new ones;
3. the global term table is adjusted by exactly the dropped and the new rows (df, cf),
   the surface vocabulary likewise, and the length sums behind the BM25F averages;
4. the rewritten partitions get new postings; every other partition is hard-linked.

The result scores exactly like a full build of the same files: every statistic is a sum
over rows, and the update subtracts and adds rows, never estimates. Term ids of untouched
partitions stay valid because existing terms keep their ids.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ra.pipeline.discover import Discovery, FoundFile
from ra.pipeline.partitions import PART_FILES, Part, link_part, read_part, write_globals, write_part
from ra.pipeline.postings import length_sums, postings_of, statistics, updated_terms, updated_words
from ra.pipeline.run import BuildReport, finish_manifest, index_settings, oversized, process_files


def _keys(table: pa.Table) -> pa.Array:
    return pc.binary_join_element_wise(table["tree"], table["path"], ":")


def _without(part: Part, gone: set[str]) -> tuple[Part, Part]:
    """``(kept, dropped)`` rows of a partition, dropping the files in ``gone``."""
    gone_keys = pa.array(sorted(gone), pa.string())
    drop_files = pc.is_in(_keys(part.files), value_set=gone_keys)
    drop_chunks = pc.is_in(_keys(part.chunks), value_set=gone_keys)
    drop_surface = pc.is_in(_keys(part.surface), value_set=gone_keys)
    ords = part.chunks["ord"].filter(drop_chunks)
    drop_an = pc.is_in(part.analyzed["ord"], value_set=ords)
    drop_len = pc.is_in(part.lengths["ord"], value_set=ords)

    def split(table: pa.Table, mask) -> tuple[pa.Table, pa.Table]:
        return table.filter(pc.invert(mask)), table.filter(mask)

    pieces = [split(part.files, drop_files), split(part.chunks, drop_chunks),
              split(part.analyzed, drop_an), split(part.lengths, drop_len),
              split(part.surface, drop_surface)]
    return (Part(part.id, *(k for k, _ in pieces)), Part(part.id, *(d for _, d in pieces)))


def _concat(a: Part, b: Part) -> Part:
    return Part(a.id, *(pa.concat_tables([getattr(a, n), getattr(b, n)])
                        for n in ("files", "chunks", "analyzed", "lengths", "surface")))


def _placement(manifest: dict, added: list[str]) -> dict[str, int]:
    """Partition of each file key: existing files keep theirs, new ones fill the last
    partition and then open new ones."""
    where = {k: int(pid) for pid, keys in manifest["partitions"].items() for k in keys}
    sizes = {int(pid): len(keys) for pid, keys in manifest["partitions"].items()}
    tail = max(sizes, default=0)
    for key in added:
        if sizes.get(tail, 0) >= PART_FILES:
            tail += 1
        where[key] = tail
        sizes[tail] = sizes.get(tail, 0) + 1
    return where


def update_into(out: Path, prev: Path, manifest: dict, config, found: Discovery,
                added: list[str], modified: list[str], removed: list[str]) -> BuildReport:
    """Write into ``out`` the generation that follows ``prev`` after these changes."""
    start = time.perf_counter()
    where = _placement(manifest, added)
    touched = sorted({where[k] for k in added + modified + removed})
    current = {f"{f.tree}:{f.path}": f for f in found.files}
    fresh = [current[k] for k in sorted(added + modified)]
    new, problems = process_files(fresh, index_settings(config), manifest["next_ord"])
    t_proc = time.perf_counter()

    old_parts = {int(p) for p in manifest["partitions"]}
    kept_parts, dropped, added_rows = [], [], []
    for pid in touched:
        old = read_part(prev, pid) if pid in old_parts else Part.empty(pid)
        kept, gone = _without(old, set(modified + removed))
        dropped.append(gone)
        mine = _rows_for(new, [f for f in fresh if where[f"{f.tree}:{f.path}"] == pid])
        added_rows.append(mine)
        kept_parts.append(_concat(kept, mine))

    terms = updated_terms(pq.read_table(prev / "terms.parquet"),
                          _cat(dropped, "analyzed"), _cat(added_rows, "analyzed"))
    words = updated_words(pq.read_table(prev / "words.parquet"), _cat(dropped, "surface"),
                          _cat(added_rows, "surface"), terms)
    t_terms = time.perf_counter()
    partitions = _write_parts(out, prev, manifest, kept_parts, terms)
    write_globals(out, terms, words)
    report = _report(manifest, found, terms, new, dropped, added_rows, problems, config,
                     fresh)
    report.stage_seconds = {"chunk+analyze": t_proc - start, "terms": t_terms - t_proc,
                            "write": time.perf_counter() - t_terms}
    report.seconds = time.perf_counter() - start
    stats = _stats(manifest, dropped, added_rows)
    finish_manifest(out, config, report, found, partitions, stats,
                    next_ord=manifest["next_ord"] + new.chunks.num_rows,
                    update={"kind": "incremental", "added": len(added),
                            "modified": len(modified), "removed": len(removed),
                            "partitions": touched})
    return report


def _rows_for(new: Part, files: list[FoundFile]) -> Part:
    """The rows of ``new`` that belong to ``files``."""
    keys = pa.array([f"{f.tree}:{f.path}" for f in files], pa.string())
    chunks = new.chunks.filter(pc.is_in(_keys(new.chunks), value_set=keys))
    ords = chunks["ord"]
    return Part(-1, new.files.filter(pc.is_in(_keys(new.files), value_set=keys)), chunks,
                new.analyzed.filter(pc.is_in(new.analyzed["ord"], value_set=ords)),
                new.lengths.filter(pc.is_in(new.lengths["ord"], value_set=ords)),
                new.surface.filter(pc.is_in(_keys(new.surface), value_set=keys)))


def _cat(parts: list[Part], name: str) -> pa.Table:
    tables = [getattr(p, name) for p in parts]
    return pa.concat_tables(tables) if tables else getattr(Part.empty(0), name)


def _write_parts(out: Path, prev: Path, manifest: dict, rewritten: list[Part],
                 terms: pa.Table) -> dict[int, list[str]]:
    """Write the rewritten partitions (empty ones disappear), link the rest; returns the
    file keys of every partition of the new generation."""
    again = {p.id for p in rewritten}
    partitions = {int(pid): keys for pid, keys in manifest["partitions"].items()
                  if int(pid) not in again}
    for pid in sorted(partitions):
        link_part(prev, out, pid)
    live = [p for p in rewritten if p.files.num_rows]
    if not live and not partitions:
        live = [Part.empty(0)]  # keep every artifact folder readable
    for part in live:
        part.postings = postings_of(part.analyzed, terms)
        write_part(out, part)
        partitions[part.id] = part.keys()
    return partitions


def _report(manifest: dict, found: Discovery, terms: pa.Table,
            new: Part, dropped: list[Part], added: list[Part], problems: list[str],
            config, fresh: list) -> BuildReport:
    n_chunks = (manifest["stats"]["chunks"] - sum(p.chunks.num_rows for p in dropped)
                + sum(p.chunks.num_rows for p in added))
    counts = manifest["counts"]
    postings = (counts["postings"] - sum(p.analyzed.num_rows for p in dropped)
                + sum(p.analyzed.num_rows for p in added))
    return BuildReport(
        files=len(found.files), chunks=n_chunks, terms=terms.num_rows, postings=postings,
        problems=found.problems() + problems,
        oversized=oversized(new.chunks, config.settings.max_chunk_size),
        kind="incremental", changed=len(fresh))


def _stats(manifest: dict, dropped: list[Part], added: list[Part]) -> dict:
    """Chunk count and length sums, adjusted by exactly the rows removed and added."""
    sums = dict(manifest["stats"]["length_sums"])
    for sign, parts in ((-1, dropped), (1, added)):
        for part in parts:
            for field, value in length_sums(part.lengths).items():
                sums[field] = sums.get(field, 0) + sign * value
    n = (manifest["stats"]["chunks"] - sum(p.chunks.num_rows for p in dropped)
         + sum(p.chunks.num_rows for p in added))
    return statistics(n, sums)
