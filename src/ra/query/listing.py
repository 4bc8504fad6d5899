"""Listings behind ``ra ls``: trees from the configuration, documents and chunks from
the index. Rows are plain dicts so the CLI prints them as text or JSON."""

from __future__ import annotations

from pathlib import Path


def list_trees(config) -> list[dict]:
    return [{"name": t.name, "path": str(t.path),
             "scope": "global" if t.is_global else "local", "exists": Path(t.path).is_dir(),
             "include": list(t.include), "exclude": list(t.exclude)} for t in config.trees]


def _where(trees: tuple[str, ...]) -> tuple[str, list]:
    if not trees:
        return "", []
    return f" AND tree IN ({', '.join('?' * len(trees))})", list(trees)


def list_docs(reader, trees: tuple[str, ...] = ()) -> list[dict]:
    where, params = _where(trees)
    rows = reader.query(
        "SELECT d.id, d.tree, d.path, d.doc_title, d.tags, d.status, d.descendants + 1, "
        "d.tokens, d.mtime_ns FROM chunks d WHERE d.depth = 0" + where.replace("tree", "d.tree")
        + " ORDER BY d.tree, d.path", params)
    keys = ("id", "tree", "path", "title", "tags", "status", "chunks", "tokens", "mtime_ns")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def list_chunks(reader, trees: tuple[str, ...] = ()) -> list[dict]:
    where, params = _where(trees)
    rows = reader.query(
        "SELECT id, tree, path, title, depth, parent_id, breadcrumb, tokens, chars FROM "
        "chunks WHERE true" + where + " ORDER BY ord", params)
    keys = ("id", "tree", "path", "title", "depth", "parent_id", "breadcrumb", "tokens",
            "chars")
    return [dict(zip(keys, r, strict=True)) for r in rows]
