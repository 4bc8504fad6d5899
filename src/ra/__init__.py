"""ra — a research assistant for AI agents.

ra indexes markdown knowledge bases into staged Parquet artifacts and answers keyword
queries with BM25F scored in DuckDB. The package is laid out by concern: ``config``
(configuration), ``analysis`` (tokenizer and stemmer), ``artifacts`` (schemas and index
generations), ``pipeline`` (the indexing stages), ``query`` (parsing, scoring, ranking),
``cli`` and ``server`` (thin surfaces over the library).
"""

__version__ = "0.1.0"
