"""Configuration: the ``.ra.toml`` files found from the working directory, read, validated
and merged into one frozen ``Config`` that is passed down (no hidden globals).

- ``settings``: discovery, merge, path resolution and the frozen ``Config`` with its
  defaults; ``toml``: one file's TOML in (validated: errors name file, key and line) and
  out (``ra config``); ``globs``: include/exclude patterns; ``languages``: the stemmer
  names a configuration may give.

The bottom layer beside ``ra.errors``: it may import nothing else of ra.
"""
