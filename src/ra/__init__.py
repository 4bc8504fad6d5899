"""ra — a research assistant for AI agents.

ra indexes markdown knowledge bases into staged Parquet artifacts and answers keyword
queries with BM25F scored in DuckDB. The packages are layers, and imports point down:

    cli, serve     surfaces: the command line, the MCP server and the daemon
    agents         AGENTS.md generation (a command's library)
    query          the query language, BM25F SQL, ranking, budgets, rendering
    index          freshness, readers of a generation, warm readers, watching
    pipeline       the indexing stages and their runners
    store          the index on disk: schemas, layout, generations
    text           documents, headings, markup, links, analysis, tokens
    config         .ra.toml discovery, validation, merge -> frozen Config
    errors         the error family

``tests/test_architecture.py`` reads every module's imports and fails on a cycle or an
import of a layer above.
"""

__version__ = "0.1.0"
