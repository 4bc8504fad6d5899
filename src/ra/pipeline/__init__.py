"""The indexing pipeline: discover → chunk → analyze → postings, then publish.

Each stage is a pure function over Arrow tables (``discover``, ``chunk``, ``links``,
``analyze``, ``postings``) with thin runners that read and write Parquet: ``run`` builds a
whole generation (``workers``: the process pool, which dies with its writer), ``update``
an incremental one from the changed files, ``partitions`` writes and reuses per-file
partitions, ``compact`` and ``impacts`` write what readers load fast (the latter each
term's quantized BM25F weight per chunk, whose SQL readers also use), and ``stages`` runs
one stage at a time for ``dvc repro``. ``inspect`` shows
how one file is chunked without touching the index.

May import: ``ra.store``, ``ra.text``, ``ra.config``, ``ra.errors``; never the index
readers, the query layer or the surfaces.
"""
