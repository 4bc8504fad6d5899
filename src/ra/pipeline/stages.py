"""One stage at a time, for ``dvc repro`` (see ``dvc.yaml``).

    python -m ra.pipeline.stages discover|chunk|analyze|postings|publish [--dir DIR]

Each command reads the previous stage's Parquet files from the staging folder (default
``<index_dir>/stages``), calls the same pure stage functions that ``ra update`` uses, and
writes its own output there:

    discover  files.parquet, problems.json
    chunk     chunks.parquet, links.parquet
    analyze   analyzed.parquet, lengths.parquet, surface.parquet
    postings  generation/   (terms, words, and every partition with its postings)
    publish   copies generation/ into a new index generation and swaps ``CURRENT``

``postings`` partitions the staged tables exactly as ``ra update`` does, so both routes
leave identical artifacts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

from ra.config.settings import load_config
from ra.pipeline.analyze import analyze
from ra.pipeline.discover import Discovery, FoundFile, discover
from ra.pipeline.partitions import files_rows, split_by_files, write_table
from ra.pipeline.run import index_settings, publish_with, run_parts, write_generation
from ra.store import generations

STAGES = ("discover", "chunk", "analyze", "postings", "publish")


def _found(staging: Path) -> Discovery:
    rows = pq.read_table(staging / "files.parquet").to_pylist()
    return Discovery(files=[FoundFile(**r) for r in rows])


def stage_discover(config, staging: Path) -> None:
    found = discover(config.trees)
    write_table(files_rows(found.files), staging / "files.parquet")
    binary = [{"tree": f.tree, "path": f.path, "size": f.size, "mtime_ns": f.mtime_ns,
               "ctime_ns": f.ctime_ns} for f in found.binary]
    (staging / "problems.json").write_text(json.dumps(
        {"problems": found.problems(), "binary": binary}, indent=1))


def stage_chunk(config, staging: Path) -> None:
    import pyarrow as pa

    settings = {**index_settings(config), "analyze": False}
    parts, problems = run_parts(_found(staging).files, settings, workers=2)
    write_table(pa.concat_tables([p.chunks for p in parts]), staging / "chunks.parquet")
    write_table(pa.concat_tables([p.links for p in parts]), staging / "links.parquet")
    _add_problems(staging, problems)


def stage_analyze(config, staging: Path) -> None:
    chunks = pq.read_table(staging / "chunks.parquet")
    analyzed, lengths, surface = analyze(chunks, config.search.stemmer)
    write_table(analyzed, staging / "analyzed.parquet")
    write_table(lengths, staging / "lengths.parquet")
    write_table(surface, staging / "surface.parquet")


def stage_postings(config, staging: Path) -> None:
    found = _found(staging)
    info = json.loads((staging / "problems.json").read_text())
    found.binary = [FoundFile(b["tree"], b["path"], "", "text", b["size"], b["mtime_ns"],
                              False, b["ctime_ns"]) for b in info["binary"]]
    tables = [pq.read_table(staging / f"{n}.parquet")
              for n in ("chunks", "analyzed", "lengths", "surface", "links")]
    out = staging / "generation"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    write_generation(out, config, found, split_by_files(found.files, *tables),
                     info["problems"])


def stage_publish(config, staging: Path) -> None:
    def fill(out: Path):
        shutil.copytree(staging / "generation", out, dirs_exist_ok=True)
        from ra.pipeline.run import BuildReport

        return BuildReport()

    with generations.writer_lock(config.index_dir):
        publish_with(config.index_dir, fill)


def _add_problems(staging: Path, problems: list[str]) -> None:
    path = staging / "problems.json"
    info = json.loads(path.read_text())
    info["problems"] += problems
    path.write_text(json.dumps(info, indent=1))


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
