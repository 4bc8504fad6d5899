"""The index as the query layer sees it: always current, open, and kept warm.

- ``freshness``: compare the files on disk with the manifest and update the index
  (incrementally, through ``ra.pipeline``) before a reading command answers;
- ``reader``: ``IndexReader``, DuckDB views over one generation (or, long-lived, its
  tables in memory), with ``relations`` (the SQL of its views, search relations and
  lookups), ``integrity`` (its files checked at open), ``chunkstore`` (chunk metadata
  and text by ord),
  ``vocabulary`` (the surface words for typo expansion) and ``links`` (the resolved
  ``links`` view); ``successor``: carry a long-lived reader over to an incremental update;
- ``warm`` and ``watch``: long-lived readers (daemon, MCP server) that learn of changes
  from the operating system; ``status``: what ``ra status`` and ``ra check`` report.

May import: ``ra.pipeline``, ``ra.store``, ``ra.text``, ``ra.config``, ``ra.errors``;
never the query layer or the surfaces above it (the query layer hands the reader any SQL
it wants materialised).
"""
