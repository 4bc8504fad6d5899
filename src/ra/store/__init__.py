"""The index on disk: what a generation holds and how it is published.

- ``layout``: names shared by the writer and the readers (schema version, fields,
  artifact folders and partitions), free of heavy imports so ``ra search`` starts fast;
- ``artifacts``: the Parquet schemas, one place, a description per column;
- ``generations``: atomic publication of a generation, the writer lock, reader pins,
  manifests and fingerprints, cleanup of unused generations.

Below the pipeline (which writes through it) and the index readers (which read through
it). May import: ``ra.config``, ``ra.text``, ``ra.errors``.
"""
