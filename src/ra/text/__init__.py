"""Text: what a document says and how its words are read, as pure functions.

- ``document``, ``headings``: a markdown file → its hierarchical chunk tree (titles,
  breadcrumbs, slugs, byte spans); ``markup``: dialect syntax read for its text;
  ``links``: each chunk's outgoing links; ``ids``: chunk ids, formatted and parsed.
- ``analysis``, ``stopwords``, ``_marks``: the analyzer (split, lowercase, stem, CJK
  bigrams) that indexing and querying share; ``tokens``: cl100k token counts.

No I/O beyond reading the packaged BPE file. May import: ``ra.config.settings``, ``ra.errors``.
"""

#: File suffixes read as markdown (compared lowercased; everything else indexed is plain
#: text): CommonMark's, MDX (Docusaurus, Astro), Markdoc's (Stripe, Starlight, Keystatic),
#: Quarto's and R Markdown's documents, which are pandoc markdown with executable code
#: cells, and Cursor's rules (``.cursor/rules/*.mdc``: front matter, then markdown).
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mdoc", ".qmd", ".rmd", ".mdc")


def unescaped(name: str) -> str:
    """A file name with its URL escapes decoded: an Azure DevOps wiki stores the page
    "ODO-1 (SI)" as ``ODO%2D1-(SI).md`` (a title, the words of a path, a page's name)."""
    if "%" not in name:
        return name
    from urllib.parse import unquote

    return unquote(name)


def is_markdown(path: object) -> bool:
    """Whether the file ``path`` (a name or a path) is read as markdown: by its suffix,
    or as one of the ``llms.txt`` files a site publishes for agents (``llms.txt``,
    ``llms-full.txt``, ``llms-medium.txt``: markdown, as the llms.txt proposal has them,
    a ``# Title`` per page in the full ones). Read as plain text, a 1.5 MB
    ``llms-full.txt`` of FastAPI's docs was one chunk of 392,135 tokens."""
    name = str(path).lower()
    if name.endswith(MARKDOWN_SUFFIXES):
        return True
    base = name.rpartition("/")[2]
    return base.startswith("llms") and base.endswith(".txt") and (
        base == "llms.txt" or base[4] in "-_.")
