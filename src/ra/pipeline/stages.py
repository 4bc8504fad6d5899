"""One stage at a time, for ``dvc repro`` (see ``dvc.yaml``).

    python -m ra.pipeline.stages discover|chunk|analyze|postings|publish [--dir DIR]

Each command reads the previous stage's Parquet files from the staging folder (default
``<index_dir>/stages``), calls the same pure stage function that ``ra update`` uses, and
writes its own artifact there; ``publish`` copies the staged artifacts into a new
generation and swaps the ``CURRENT`` pointer, exactly as ``ra update`` does, so both
routes leave identical artifacts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ra import generations
from ra.config import load_config
from ra.pipeline.analyze import analyze
from ra.pipeline.discover import Discovery, FoundFile, discover
from ra.pipeline.postings import POSTINGS_ROW_GROUP, postings, statistics
from ra.pipeline.run import (
    BuildReport,
    files_table,
    index_settings,
    oversized,
    run_batches,
    write,
    write_manifest,
)

STAGES = ("discover", "chunk", "analyze", "postings", "publish")


def _found(staging: Path) -> Discovery:
    rows = pq.read_table(staging / "files.parquet").to_pylist()
    return Discovery(files=[FoundFile(**r) for r in rows])


def stage_discover(config, staging: Path) -> None:
    found = discover(config.trees)
    write(files_table(found), staging / "files.parquet")
    (staging / "problems.json").write_text(json.dumps(found.problems(), indent=1))


def stage_chunk(config, staging: Path) -> None:
    settings = {**index_settings(config), "analyze": False}
    batch = run_batches(_found(staging).files, settings, workers=2)
    write(batch.chunks, staging / "chunks.parquet", row_group=8192)


def stage_analyze(config, staging: Path) -> None:
    chunks = pq.read_table(staging / "chunks.parquet")
    analyzed, lengths, words = analyze(chunks, config.search.stemmer)
    write(analyzed, staging / "analyzed.parquet", row_group=POSTINGS_ROW_GROUP * 8)
    write(lengths, staging / "lengths.parquet")
    write(words, staging / "surface.parquet")


def stage_postings(config, staging: Path) -> None:
    analyzed = pq.read_table(staging / "analyzed.parquet")
    terms, post, words = postings(analyzed, pq.read_table(staging / "surface.parquet"))
    write(terms, staging / "terms.parquet")
    write(post, staging / "postings.parquet", row_group=POSTINGS_ROW_GROUP)
    write(words, staging / "words.parquet")


def stage_publish(config, staging: Path) -> None:
    start = time.perf_counter()
    found = _found(staging)
    chunks = pq.read_table(staging / "chunks.parquet")
    report = BuildReport(files=len(found.files), chunks=chunks.num_rows,
                         terms=pq.read_metadata(staging / "terms.parquet").num_rows,
                         postings=pq.read_metadata(staging / "postings.parquet").num_rows,
                         problems=json.loads((staging / "problems.json").read_text()),
                         oversized=oversized(chunks, config.settings.max_chunk_size))
    lengths: pa.Table = pq.read_table(staging / "lengths.parquet")
    with generations.writer_lock(config.index_dir):
        out = generations.new_build_dir(config.index_dir)
        for name in ("files", "chunks", "analyzed", "lengths", "words", "terms", "postings"):
            shutil.copyfile(staging / f"{name}.parquet", out / f"{name}.parquet")
        report.seconds = time.perf_counter() - start
        write_manifest(out, config, report, found, statistics(lengths))
        generations.publish(config.index_dir, out)
        generations.collect_garbage(config.index_dir)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m ra.pipeline.stages")
    parser.add_argument("stage", choices=STAGES)
    parser.add_argument("--dir", type=Path, help="staging folder (default INDEX_DIR/stages)")
    args = parser.parse_args(argv)
    config = load_config(Path.cwd())
    staging = args.dir or config.index_dir / "stages"
    staging.mkdir(parents=True, exist_ok=True)
    globals()[f"stage_{args.stage}"](config, staging)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
