"""Answering queries: the query language, scoring and ranking, results and their text.

- the language: ``lexer``, ``parser`` and the ``ast`` they produce; ``plan`` analyses
  words and expands typos (``fuzzy``) into clauses of term ids;
- scoring: ``bm25f`` builds the BM25F SQL (pure, golden-tested) that DuckDB runs over an
  ``ra.index.reader``; ``disjunction`` scores an OR of exact words in two passes;
- ranking and answers: ``rank`` (aggregation, cutoff), ``budget`` (token packing),
  ``snippets``, ``search`` (the ``Searcher`` every surface uses), ``context`` and
  ``signals`` (``ra context``), ``get`` (a chunk by id, with its links);
- ``render``: results as text for both surfaces; ``sql`` and ``listing``: ``ra sql`` and
  ``ra ls`` over the index.

May import: ``ra.index``, ``ra.pipeline`` (``signals`` reads files as discover does),
``ra.store``, ``ra.text``, ``ra.config``, ``ra.errors``; never the surfaces.
"""
