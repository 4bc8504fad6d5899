"""Text: what a document says and how its words are read, as pure functions.

- ``document``, ``headings``: a markdown file → its hierarchical chunk tree (titles,
  breadcrumbs, slugs, byte spans); ``markup``: dialect syntax read for its text;
  ``links``: each chunk's outgoing links; ``ids``: chunk ids, formatted and parsed.
- ``analysis``, ``stopwords``, ``_marks``: the analyzer (split, lowercase, stem, CJK
  bigrams) that indexing and querying share; ``tokens``: cl100k token counts.

No I/O beyond reading the packaged BPE file. May import: ``ra.config.settings``, ``ra.errors``.
"""
