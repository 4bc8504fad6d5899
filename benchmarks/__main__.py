"""``python -m benchmarks [quality|speed|semantic|all] [--quick] [--scale N]``: ra and its
peers.

- quality: SciFact train (nDCG@10, Recall@100) and four known-item sets (MRR@10,
  Success@1, clean and with one typo per query; ``benchmarks.known``), for ra as typed
  and with its words OR'd and for each peer in its best configuration
  (``benchmarks.systems``), every table naming each system's query mode and whether
  its numbers are in-sample; and the same sets within the MCP server's default token
  budget: what ra gives in full (``benchmarks.budget``);
- speed: build time, memory and index size, in-process latency, one-query process time,
  incremental update, start-up (``benchmarks.speed``);
- semantic: keywords alone against keywords fused with meaning (SciFact train, the
  known-item sets), embedding time and memory, warm latency (``benchmarks.semantic``).

``--quick`` uses rust-book only for speed and a SciFact subsample, for a run of a few
minutes. Each measurement prints one table; the run is written to
``benchmarks/results/<what>[-quick].json`` (git-ignored) and ``.md`` (committed when it
is worth keeping).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks import report

RESULTS = Path(__file__).resolve().parent / "results"


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", default="all",
                   choices=("quality", "speed", "semantic", "all"))
    p.add_argument("--quick", action="store_true",
                   help="rust-book only for speed, a SciFact subsample for quality")
    p.add_argument("--scale", type=int, default=1, metavar="N",
                   help="speed: also measure a corpus N times cpp-docs (N-1 copies of it "
                        "and the other corpora; 5 is the five-fold corpus)")
    p.add_argument("--out", type=Path, default=RESULTS, help="where JSON and Markdown go")
    return p.parse_args(argv)


def sections(what: str) -> list[tuple[str, str, object]]:
    """``(section title, key, module)`` of each part to run, in order."""
    from benchmarks import budget, known, scifact, semantic, speed

    parts = []
    if what in ("quality", "all"):
        parts += [("Quality: SciFact", "scifact", scifact),
                  ("Quality: known items", "known", known),
                  ("Quality: within a token budget", "budget", budget)]
    if what in ("semantic", "all"):
        parts.append(("Hybrid retrieval ([semantic])", "semantic", semantic))
    if what in ("speed", "all"):
        parts.append(("Speed and memory", "speed", speed))
    return parts


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    meta = report.machine()
    meta["command"] = "python -m benchmarks " + " ".join(
        [args.what] + ["--quick"] * args.quick + [f"--scale {args.scale}"] * (args.scale > 1))
    start = time.perf_counter()
    results, rendered = {}, []
    for title, key, module in sections(args.what):
        report.progress(f"{title}")
        results[key] = (module.run(quick=args.quick, scale=args.scale) if key == "speed"
                        else module.run(quick=args.quick))
        tables = module.tables(results[key])
        rendered.append((title, tables))
        for table in tables:
            print(table.markdown(), flush=True)
    meta["seconds"] = time.perf_counter() - start
    name = args.what + ("-quick" if args.quick else "") + (
        f"-x{args.scale}" if args.scale > 1 else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps({"meta": meta, **results}, indent=1))
    md = report.markdown_report(f"ra benchmarks: {name}", meta, rendered)
    (args.out / f"{name}.md").write_text(md)
    report.progress(f"wrote {args.out / name}.json and .md ({meta['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
