"""Benchmarks for ra (``make bench``): ranking quality, speed and memory.

Not part of ``make test``: these read the corpora and evaluation data in ``../shared``
and take minutes. Each module can also be run alone, e.g. ``python -m benchmarks.scifact``.
"""
