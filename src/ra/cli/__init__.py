"""The command line: the ``ra`` console script (``entry``, which forwards reading commands
to a running daemon through ``daemon_client``) and the typer app (``app``), one module per
command group (``*_cmd``); ``common`` loads configuration and opens the index for a
command, ``output`` prints (colour on a terminal only, status on stderr).

A surface: each command parses its arguments, calls the library and renders
(``ra.query.render``), holding no search logic. May import every layer below and
``ra.serve.mcp`` (to start ``ra mcp``); it never imports the daemon, which runs the CLI.
"""
