"""``ra inspect doc``: how ra parses and chunks one file, without touching the index."""

from __future__ import annotations

from pathlib import Path

from ra.errors import NotFoundError

OUTSIDE_TREE = "doc"


def locate(file: Path, config) -> tuple[str, str]:
    """``(tree, tree-relative path)`` of ``file``: the first tree that indexes it, else
    the first whose folder holds it (ESLint's ``docs/src/use/…`` was shown in a tree
    ``changelog``, ``.`` with ``include = ["CHANGELOG.md"]``, declared before ``docs``,
    ids that ``ra get`` refused); tree ``doc`` when it is in no tree's folder."""
    path = file.resolve()
    held = [(tree, path.relative_to(root).as_posix()) for tree in config.trees
            if path.is_relative_to(root := Path(tree.path).resolve())]
    for tree, rel in held:
        if tree.matches(rel):
            return tree.name, rel
    if held:
        return held[0][0].name, held[0][1]
    try:
        return OUTSIDE_TREE, path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return OUTSIDE_TREE, path.name


def inspect_document(file: Path, config) -> dict:
    """The parse of ``file`` as the ``ra inspect doc --json`` shape."""
    from ra.pipeline.discover import is_binary, kind_of, read_document
    from ra.text.document import parse_document
    from ra.text.tokens import count_tokens, frame

    if not file.is_file():
        raise NotFoundError(f"no such file: {file}")
    if is_binary(str(file)):
        raise NotFoundError(f"{file} is a binary file; ra indexes text and markdown")
    text, problems = read_document(str(file))
    tree, rel = locate(file, config)
    doc = parse_document(text, tree, rel,
                         chunk_at_headings=config.settings.chunk_at_headings)
    limit = config.settings.max_chunk_size
    chunks = []
    for node in doc.nodes:
        content = doc.content(node)
        entry = {
            "id": node.id, "slug": node.slug, "title": node.title, "depth": node.depth,
            "parent_id": node.parent_id, "breadcrumb": node.breadcrumb,
            "byte_start": node.byte_start, "byte_end": node.byte_end,
            "chars": len(content),
            "tokens": count_tokens(frame(node.id, node.breadcrumb)) + count_tokens(content),
        }
        own = len(node.heading) + len(node.body)
        if own > limit:
            entry["warning"] = f"{own} characters over max_chunk_size {limit}"
        chunks.append(entry)
    return {"file": str(file), "type": kind_of(rel), "title": doc.title,
            "tags": list(doc.tags), "frontmatter": _plain(doc.frontmatter),
            "chunks": chunks, "problems": problems + list(doc.problems)}


def _plain(value):
    """Frontmatter made JSON-safe (dates and other YAML scalars become strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
