"""Full index build of a corpus: wall time per stage, peak memory, artifact sizes.

Runs the build in a fresh child process so its peak RSS (``ru_maxrss`` of the process and
of its worker children) is the build's alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from ra.cli.entry import system_allocator
system_allocator()  # as the ra command does, before pyarrow is imported
from ra.config.settings import load_config
from ra.pipeline.run import build
folder = Path(sys.argv[1])
t = time.perf_counter()
report = build(load_config(folder))
wall = time.perf_counter() - t
gen = folder / ".ra" / "index" / report.generation
sizes = {p.name: p.stat().st_size for p in sorted(gen.iterdir()) if p.is_file()}
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"wall_s": round(wall, 2), "stages_s": {k: round(v, 2) for k, v in
      report.stage_seconds.items()}, "files": report.files, "chunks": report.chunks,
      "terms": report.terms, "postings": report.postings, "peak_rss_mb": round(peak / 1024),
      "artifact_bytes": sizes}))
"""


def build_corpus(corpus: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / ".ra.toml").write_text(f'[tree.corpus]\npath = "{corpus}"\n')
        out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], check=True,
                             capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    from benchmarks.scifact import SHARED

    name = sys.argv[1] if len(sys.argv) > 1 else "cpp-docs"
    print(json.dumps(build_corpus(SHARED / "corpora" / name), indent=1))
