"""What ``ra status`` reports and what ``ra check`` verifies, as plain data.

Neither modifies the index: both read the configuration, walk the trees and look at the
current generation's manifest and chunks.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from ra.index.freshness import check_state
from ra.pipeline.discover import discover, excluded_folders, walk_tree
from ra.store import generations


def _counts(config) -> dict[str, tuple[int, int]]:
    """``tree → (documents, chunks)`` from the current generation."""
    if config.index_dir is None:
        return {}
    try:
        gen = generations.open_current(config.index_dir)
    except Exception:  # a damaged index is reported by its state, not here
        return {}
    if gen is None:
        return {}
    try:
        import duckdb

        rows = duckdb.execute(
            "SELECT tree, count(*) FILTER (WHERE depth = 0), count(*) FROM "
            "read_parquet(?) GROUP BY tree", [gen.scan("chunks")]).fetchall()
        return {t: (d, c) for t, d, c in rows}
    finally:
        gen.close()


def collect_status(config) -> dict:
    """Config files, trees with counts, and the index's location, size and state."""
    counts = _counts(config)
    trees = [{
        "name": t.name, "path": str(t.path), "scope": "global" if t.is_global else "local",
        "exists": Path(t.path).is_dir(), "include": list(t.include),
        "exclude": list(t.exclude), "documents": counts.get(t.name, (0, 0))[0],
        "chunks": counts.get(t.name, (0, 0))[1],
    } for t in config.trees]
    index = {"path": str(config.index_dir) if config.index_dir else None,
             "state": check_state(config).describe()}
    if config.index_dir is not None and config.index_dir.is_dir():
        if problem := generations.unwritable(config.index_dir):
            index["problem"] = problem
        else:
            with generations.writer_lock(config.index_dir, wait=False) as free:
                if not free:
                    index["updating"] = generations.lock_holder(config.index_dir)
        name = generations.current_name(config.index_dir)
        if name and (config.index_dir / name).is_dir():
            manifest = generations.read_manifest(config.index_dir / name)
            index.update(generation=name, built_at=manifest.get("built_at"),
                         size_bytes=generations.folder_size(config.index_dir / name),
                         counts=manifest.get("counts"))
            if config.semantic.enabled:
                from ra.store.vector_state import readiness

                model = config.semantic.model_id()
                index["semantic"] = f"{model}: {readiness(manifest, model).describe()}"
    return {"config_files": [str(f) for f in config.files], "trees": trees, "index": index,
            "warnings": [str(w) for w in config.warnings]}


def run_checks(config) -> list[tuple[str, str]]:
    """``(level, message)`` findings; level is ``error``, ``warning`` or ``ok``."""
    findings: list[tuple[str, str]] = [("warning", str(w)) for w in config.warnings]
    if not config.files:
        return [("error", "no .ra.toml found here or above; run `ra init`")]
    for tree in config.trees:
        findings += _check_tree(tree)
    found = discover(config.trees)
    findings += [("warning", p) for p in found.problems()]
    findings += [("warning", w) for w in _dependencies(found.files)]
    findings += [("warning", f"{f.tree}:{f.path}: unreadable ({why}): not indexed")
                 for f, why in _unreadable(found.files)]
    findings += _check_chunks(config)
    findings += _language(config, found.files)
    findings += _translations(found.files)
    findings += _versions(found.files)
    findings += _ignored(config.trees, found.files)
    seen = {message for _, message in findings}
    findings += [("warning", p) for p in _index_problems(config) if p not in seen]
    if config.index_dir is not None and (
            problem := generations.index_dir_problem(config.index_dir)):
        return [*findings, ("error", problem)]
    state = check_state(config)
    level = "ok" if state.state == "current" else "warning"
    if config.index_dir is not None and (refused := generations.unwritable(config.index_dir)):
        # a current index on a read-only disk (an image, a shared mount) answers
        findings.append(("warning", f"{refused}: searches are answered while no file "
                                    "changes") if level == "ok" else
                        ("error", f"{refused}: it cannot be brought up to date"))
    findings.append((level, f"index: {state.describe()}"))
    return findings


def _dependencies(files) -> list[str]:
    """A warning for each tree and dependency folder (``node_modules``, ``vendor``, …) of
    which the tree indexes files: third-party READMEs and CHANGELOGs, not notes, that
    crowd the notes out of results (a tree at the top of a JavaScript project)."""
    from ra.config.settings import DEPENDENCIES

    counts: Counter[tuple[str, str]] = Counter()
    for f in files:
        parts = f.path.split("/")[:-1]
        name = next((p for p in parts if p in DEPENDENCIES), None)
        if name:
            counts[(f.tree, name)] += 1
    return [f"tree {tree}: {n:,} {'files' if n != 1 else 'file'} under {name}/ (dependencies, "
            f"not notes) {'are' if n != 1 else 'is'} indexed; "
            f'exclude = ["**/{name}/**"] leaves {"them" if n != 1 else "it"} out'
            for (tree, name), n in sorted(counts.items())]


#: Stemmers that serve a language as well as its own: Porter's for English, and Danish
#: and Norwegian, whose common words are mostly the same (``ra.text.languages``)
_SAME = {"porter": "english", "norwegian": "danish"}


def _language(config, files) -> list[tuple[str, str]]:
    """A note when the notes read as another language than the stemmer's (``ra init``
    sets it from their language; a configuration written before, or by hand, may not)."""
    from ra.pipeline.discover import language_of
    from ra.text import is_markdown

    stemmer = config.search.stemmer
    if stemmer == "none":
        return []
    language = language_of(f.abspath for f in files if is_markdown(f.path))
    if language is None or _SAME.get(language, language) == _SAME.get(stemmer, stemmer):
        return []
    return [("ok", f"the notes read as {language.capitalize()} and [search] stemmer is "
                   f'"{stemmer}": stemmer = "{language}" would match their words\' forms')]


def _translations(files) -> list[tuple[str, str]]:
    """A note for each tree that indexes a site's translations with its pages
    (``ra.text.languages.translations``: ``ra init`` excludes them; a configuration
    written before, or by hand, may not), with the ``exclude`` that leaves them out."""
    from ra.text import is_markdown
    from ra.text.languages import said, translations

    return _alongside(_by_tree(f for f in files if is_markdown(f.path)), translations,
                      lambda patterns: f"translations of its pages ({said(patterns)})")


def _versions(files) -> list[tuple[str, str]]:
    """A note for each tree that indexes older versions of its docs with them
    (``ra.pipeline.discover.older_versions``: ``ra init`` excludes them), with the
    ``exclude`` that leaves them out."""
    from ra.pipeline.discover import older_versions

    return _alongside(_by_tree(files), older_versions, lambda patterns: (
        f"older versions of its pages ({', '.join(p.removesuffix('**') for p in patterns)})"))


def _alongside(by_tree: dict[str, list[str]], find, what) -> list[tuple[str, str]]:
    """A note for each tree whose paths ``find`` says hold copies of its pages
    (``(exclude pattern, files)``), indexed with them; ``what(patterns)`` names them."""
    out = []
    for tree, paths in sorted(by_tree.items()):
        if found := find(paths):
            patterns = [p for p, _ in found]
            out.append(_excludable(tree, sum(n for _, n in found), f"in {what(patterns)}",
                                   "with them", patterns))
    return out


def _by_tree(files) -> dict[str, list[str]]:
    """The tree-relative paths of ``files``, by tree."""
    held: dict[str, list[str]] = {}
    for f in files:
        held.setdefault(f.tree, []).append(f.path)
    return held


def _ignored(trees, files) -> list[tuple[str, str]]:
    """A note for each tree that indexes files git ignores (generated, not written:
    ``*.egg-info/SOURCES.txt``, a site's build output; ``ra init`` excludes them), with
    the ``exclude`` that leaves them out. Asked of git once per tree with files."""
    from ra.pipeline.discover import git_ignored

    held = _by_tree(files)
    out = []
    for tree in trees:
        if tree.name not in held or not (entries := git_ignored(tree.path)):
            continue
        patterns, n = [], 0
        for entry in entries:
            folder = entry.endswith("/")
            hit = sum(1 for p in held[tree.name]
                      if (p.startswith(entry) if folder else p == entry))
            if hit:
                n += hit
                patterns.append(f"{entry}**" if folder else entry)
        if n:
            out.append(_excludable(tree.name, n, "git ignores (generated, not written)", "",
                                   patterns))
    return out


def _excludable(tree: str, n: int, what: str, beside: str, patterns: list[str]
                ) -> tuple[str, str]:
    """A note that ``n`` files of ``tree`` (``what`` they are) are indexed (``beside``
    its pages), with the ``exclude`` of ``patterns`` that leaves them out."""
    many = n != 1
    return ("ok", f"tree {tree}: {n:,} {'files' if many else 'file'} {what} "
                  f"{'are' if many else 'is'} indexed{' ' + beside if beside else ''}; "
                  f"exclude = [{', '.join(json.dumps(p) for p in patterns)}] leaves "
                  f"{'them' if many else 'it'} out")


def _unreadable(files) -> list[tuple]:
    """``(file, why)`` of selected files that cannot be opened (no permission, gone):
    the index leaves them out, and their old content with them."""
    out = []
    for f in files:
        try:
            with open(f.abspath, "rb"):
                pass
        except OSError as exc:
            out.append((f, exc.strerror or str(exc)))
    return out


def _check_tree(tree) -> list[tuple[str, str]]:
    from ra.config.globs import compile_glob
    from ra.config.settings import DEFAULT_INCLUDE

    if not Path(tree.path).is_dir():
        return [("warning", f"tree {tree.name}: folder {tree.path} does not exist")]
    rels = [rel for rel, _ in walk_tree(Path(tree.path), pruned=excluded_folders(tree.exclude),
                                         dots=tree.dot_names)]
    unused = [p for p in tree.include if not any(compile_glob(p).match(r) for r in rels)]
    if tuple(tree.include) == DEFAULT_INCLUDE:  # defaults: only say when none matched
        return [("warning", f"tree {tree.name}: no markdown or text files "
                 "(.md, .mdx, .txt, …)")] if len(unused) == len(tree.include) else []
    return [("warning", f"tree {tree.name}: include pattern {p!r} matches no file")
            for p in unused]


def _index_problems(config) -> list[str]:
    """What the last build reported about its documents (invalid frontmatter, unclosed
    fences, …), kept in the manifest across incremental updates."""
    with _current(config) as gen:
        return [] if gen is None else [str(p) for p in gen.manifest.get("problems", [])]


@contextmanager
def _current(config):
    """The current generation of the configured index, closed after use; None when
    there is none or it cannot be opened (the other checks say why)."""
    gen = None
    if config.index_dir is not None:
        with contextlib.suppress(Exception):
            gen = generations.open_current(config.index_dir)
    try:
        yield gen
    finally:
        if gen is not None:
            gen.close()


def _check_chunks(config) -> list[tuple[str, str]]:
    with _current(config) as gen:
        if gen is None:
            return []
        import duckdb

        limit = int(config.settings.max_chunk_size)
        rows = duckdb.execute(
            "SELECT id, length(heading) + length(body) AS n FROM read_parquet(?) "
            "WHERE length(heading) + length(body) > ? ORDER BY n DESC",
            [gen.scan("chunks"), limit]).fetchall()
    return [("warning", f"{cid}: {n} characters (over max_chunk_size {limit})")
            for cid, n in rows]
