"""Benchmarks for ra (``make bench``, ``python -m benchmarks [quality|speed|all] [--quick]``):
ranking quality, speed and memory, side by side with peer engines (``benchmarks.peers``).

Not part of ``make test``: these read the corpora and evaluation data in ``../shared``
and take minutes. Each module can also be run alone, e.g. ``python -m benchmarks.scifact``.
Results go to ``benchmarks/results/`` (JSON git-ignored, Markdown committed by hand).
"""

from ra.cli.entry import system_allocator

# Before pyarrow is imported (this package's modules import it): every benchmark, and
# every child process it starts, runs ra as the ra command, its daemon and its MCP server
# do, on the system allocator (ra.cli.entry.system_allocator).
system_allocator()
