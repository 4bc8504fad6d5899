"""Hybrid retrieval, optional: meaning as well as words (``pip install 'ra[semantic]'``).

Keyword search (BM25F, ``ra.query``) stays the default path and never imports this
package's heavy parts; everything here is imported only when ``[semantic] enabled`` is
set and only where it is needed:

- ``settings``: the ``[semantic]`` table (no imports beyond the standard library);
- ``embedders``: one small interface (``Embedder``) with two real backends,
  sentence-transformers (torch) and fastembed (ONNX), loaded offline;
- ``texts``: what a chunk's vector stands for (its breadcrumb and own text) and the
  content hash that lets a vector outlive the generation that embedded it;
- ``vectors``: the ``vectors/`` artifact, one row per chunk, partitioned like the
  chunks and carried from generation to generation by content hash;
- ``cache`` and ``embed``: embedding the chunks that have no vector yet, in batches
  that survive a killed process, then publishing a generation that holds them;
- ``scoring`` and ``fusion``: the DuckDB query that scores vectors beside BM25F, and
  the normalised convex combination (or reciprocal rank fusion) of the two lists;
- ``background``: the daemon's and MCP server's embedding thread.
"""
