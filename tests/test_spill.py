"""A full build writes each partition as it arrives and holds only what the rest of the
build needs (``ra.pipeline.run.Spill``); the generation must be the one a build holding
every partition whole writes (``write_generation`` over complete partitions, as
``ra.pipeline.stages`` runs it).

The knowledge base is 24 chapters of the Rust book (``../shared/corpora``, MIT/Apache-2.0,
see its LICENSES.md), in partitions of 4 files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ra.config.settings import load_config
from ra.pipeline import run
from ra.pipeline.discover import discover
from ra.pipeline.postings import terms_of
from ra.store import generations

BOOK = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "rust-book" / "src"


def _project(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    for path in sorted(BOOK.glob("ch*.md"))[:24]:
        shutil.copy(path, root / "docs" / path.name)
    (root / ".ra.toml").write_text('[tree.book]\npath = "docs"\n\n'
                                   "[settings]\nmax_chunk_size = 4000\n")
    return root


def _whole(out: Path, config, *, progress=None, workers=None):
    """``build_into`` as it was: every partition held whole until the end."""
    found = discover(config.trees)
    parts, problems = run.run_parts(found.files, run.index_settings(config), 1)
    return run.write_generation(out, config, found, parts, found.problems() + problems)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_spilling_build_writes_the_generation_of_a_build_holding_everything(
        tmp_path, monkeypatch, workers):
    """On two cores the workers also count each partition's terms and write its
    postings (``run.write_postings``) while the main process writes the chunk store."""
    monkeypatch.setattr(run, "PART_FILES", 4)
    config = load_config(_project(tmp_path / "kb"))
    made = tmp_path / "postings-made-by"  # the pid of each partition's postings
    monkeypatch.setattr(run, "postings_of", _recorded(run.postings_of, made))
    report = run.build(config, workers=workers)
    pids = made.read_text().split()
    assert len(pids) == 6 and (str(os.getpid()) not in pids) == (workers > 1)
    a = tmp_path / "spilled"
    shutil.copytree(generations.open_current(config.index_dir).path, a)
    with monkeypatch.context() as m:
        m.setattr(run, "build_into", _whole)
        whole = run.build(config)
    b = generations.open_current(config.index_dir).path
    assert report.oversized and report.oversized == whole.oversized
    assert (report.chunks, report.terms, report.postings) == (
        whole.chunks, whole.terms, whole.postings)
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert len(files) > 6 * 7 and files == sorted(p.relative_to(b) for p in b.rglob("*.parquet"))
    # and nothing else: the files the workers left their partitions in are gone
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    for name in files:
        assert pq.read_table(a / name).equals(pq.read_table(b / name)), name
    # the terms summed from each partition's counts are those of all the analysed rows
    analyzed = pa.concat_tables(pq.read_table(f) for f in sorted((a / "analyzed").iterdir()))
    assert pq.read_table(a / "terms.parquet").equals(terms_of(analyzed))
    # hot_store's metadata and texts are read back from the chunks files: the same batches
    assert _batches(a / "hot_store.arrow") == _batches(b / "hot_store.arrow")
    ma, mb = (json.loads((g / "manifest.json").read_text()) for g in (a, b))
    for key in ("counts", "stats", "partitions", "next_ord", "problems", "compact",
                "fingerprint"):
        assert ma[key] == mb[key], key


def _recorded(postings_of, made: Path):
    """``postings_of`` that appends the pid of the process it runs in to ``made``."""
    def recorded(*args):
        with made.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return postings_of(*args)
    return recorded


def _batches(path: Path) -> list[list[dict]]:
    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_file(source)
        return [reader.get_batch(i).to_pylist() for i in range(reader.num_record_batches)]


def test_a_partition_is_made_with_the_cyclic_collector_paused(tmp_path, monkeypatch):
    """Reference counts free what a partition makes; the cyclic collector, which walked
    every live object again and again, is off while a partition is made and on again
    after it, also when the partition fails (and stays off if it was off)."""
    import gc

    seen = []

    def process(files, settings):
        seen.append(gc.isenabled())
        if files == ["bad"]:
            raise ValueError("unreadable")
        return run.Part.empty(-1), []

    monkeypatch.setattr(run, "process_files", process)
    assert gc.isenabled()
    run._process((["a"], {}))
    with pytest.raises(ValueError):
        run._process((["bad"], {}))
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        run._process((["a"], {}))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_partition_a_worker_ships_comes_back_whole_and_the_build_keeps_little_of_it(
        tmp_path):
    """A pool's worker writes its partition to a file (``run.ship``), the main process
    reads it back and removes the file (``run.unship``). The ords ``Spill`` keeps of it
    are copied (``run.own_column``): a column read so shares its table's buffer, and
    the ords kept of each partition held all their chunks' texts (a build's peak went
    from 330 to 670 MB on cpp-docs)."""
    import gc

    config = load_config(_project(tmp_path / "kb"))
    files = discover(config.trees).files[:8]
    part, _ = run._process((files, run.index_settings(config)))
    base = pa.total_allocated_bytes()
    back = run.unship(run.ship(part, tmp_path / "part.arrow"))
    assert not (tmp_path / "part.arrow").exists()
    for name in run.SHIPPED:
        assert getattr(back, name).equals(getattr(part, name)), name
    chunk_bytes = back.chunks.nbytes
    assert chunk_bytes > 100_000
    kept, shared = run.own_column(back.chunks, "ord"), back.chunks.select(["ord"])
    assert kept.equals(shared) and kept.schema == shared.schema
    del back
    gc.collect()
    assert pa.total_allocated_bytes() - base > chunk_bytes  # the select holds them all
    del shared
    gc.collect()
    assert pa.total_allocated_bytes() - base < 4 * kept.num_rows + 1024
    assert run.own_column(run.Part.empty(0).chunks, "ord").num_rows == 0


def test_only_the_analysed_rows_and_surface_words_are_dictionary_encoded(tmp_path):
    """Dictionaries of numbers and unique texts cost a build more than they saved, in
    time and bytes (``ra.pipeline.partitions.DICTIONARY``); the analysed rows' terms and
    the surface words repeat, and keep theirs."""
    from ra.pipeline.partitions import DICTIONARY

    config = load_config(_project(tmp_path / "kb"))
    run.build(config)
    gen = generations.open_current(config.index_dir).path

    def encoded(path: Path) -> bool:
        meta = pq.ParquetFile(path).metadata
        return any("DICTIONARY" in enc for g in range(meta.num_row_groups)
                   for c in range(meta.num_columns)
                   for enc in meta.row_group(g).column(c).encodings)

    files = sorted(gen.rglob("*.parquet"))
    assert len(files) > 10
    for path in files:
        name = path.parent.name if path.parent != gen else path.stem
        assert encoded(path) == (name in DICTIONARY), path.relative_to(gen)
