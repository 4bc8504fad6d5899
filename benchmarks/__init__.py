"""Benchmarks for ra (``make bench``, ``python -m benchmarks [quality|speed|all] [--quick]``):
ranking quality, speed and memory, side by side with peer engines (``benchmarks.peers``).

Not part of ``make test``: these read the corpora and evaluation data in ``../shared``
and take minutes. Each module can also be run alone, e.g. ``python -m benchmarks.scifact``.
Results go to ``benchmarks/results/`` (JSON git-ignored, Markdown committed by hand).
"""
