"""Long-lived surfaces: the MCP server and the daemon that answers the CLI warm.

- ``mcp``: the MCP server (stdio, streamable HTTP, SSE) with its four read-only tools;
  ``mcp_schemas``: the structured output each tool declares; ``worker``: the thread that
  runs the tools' bodies; ``stdio``: stdin and stdout on the event loop;
- ``daemon``: ``ra daemon``, which runs the very CLI commands (``ra.cli.app``) with the
  index kept open, for clients that reach it through ``ra.cli.daemon_client``.

A surface: it parses, calls the library and renders (``ra.query.render``), holding no
search logic. May import every layer below (``ra.query``, ``ra.index``, ...) and, for the
daemon, the CLI it runs; the CLI imports ``mcp`` only to start it.
"""
