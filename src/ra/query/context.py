"""Context: find the knowledge an agent needs for the files it is about to edit.

``ra.query.signals.extract_signals`` reads each file and ranks its terms (path, rules,
content, IDF); this module searches with them.

``context_search`` turns the selected terms of all files into one weighted OR query
(``word^boost OR …``; a term several files select gets the sum of their boosts, which by
the linearity of the score sums the files' scores for every chunk). The query is an AST
planned by the ordinary planner with fuzzy matching off, so the text ``--explain`` shows
scores the same under ``ra search --raw``. The plan is scored directly rather than through
``Searcher.search``, because context needs what search options cannot say: the input
files' own chunks excluded inside the SQL (else they would outrank everything and the
elbow would cut the rest), and files whose rules restrict them to different trees (one
query per tree selection, scores summed per chunk). An OR of words, the usual plan, is
scored by ``ra.query.disjunction`` (``bm25f_sql``'s scores bit for bit, at about half the
cost); a plan with a phrase (a rule term of several words) by ``bm25f_sql``. Either way
the metadata of the candidates' ancestors arrives with them. Ranking is
``ra.query.rank``'s, as for search, with a lookup that never aggregates into an excluded
chunk; results, snippets and token packing are ``Searcher``'s. Documents named by a
rule's ``include`` are prepended, then those whose front matter says the files are
theirs (agent rule files: a Cursor rule's ``globs``, Claude Code's ``paths``, Copilot's
``applyTo``; ``chunks.applies_to``), then the agent instruction files of the folders
above them (``AGENTS.md``, ``CLAUDE.md``: ``_instructing``).

``likethis`` does the same for an indexed chunk (its markdown as the "file"), excluding the
chunk, its ancestors and its descendants.
"""

from __future__ import annotations

import re
import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ra.config.settings import MatchedRules
from ra.errors import RaError
from ra.index.reader import ChunkMeta
from ra.query import ast
from ra.query import rank as ranking
from ra.query.bm25f import bm25f_sql
from ra.query.budget import estimate_entry
from ra.query.search import (
    RELEASE_NOTES,
    Contents,
    Result,
    Searcher,
    SearchOptions,
    SearchResponse,
    Topic,
    filters_of,
    release_notes,
)
from ra.query.signals import (
    ContextError,
    ContextTerm,
    FileSignals,
    UnreadableFile,
    content_words,
    extract_signals,
    query_node,
    rank_signals,
    tally,
)

_OVERRIDES = ("limit", "candidate_limit", "cutoff_ratio", "aggregation_threshold")


@dataclass(frozen=True)
class ContextOptions(SearchOptions):
    """Search options plus ``terms``: how many terms each file's query keeps."""

    terms: int | None = None
    semantic: bool | None = False  # a file's terms are no question: words alone



@dataclass
class ContextResponse(SearchResponse):
    """A ``SearchResponse`` plus the warnings about skipped files and includes."""

    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = super().to_dict()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def context_search(reader, config, files: list[str | Path],
                   options: SearchOptions = ContextOptions()) -> ContextResponse:
    """Chunks relevant to ``files``, as one topic; rule includes first."""
    t0 = time.perf_counter()
    config.require_trees(options.trees)
    searcher = Searcher(reader, config)
    signals, warnings = [], []
    for f in files:
        try:
            signals.append(extract_signals(f, config, reader, trees=tuple(options.trees),
                                           max_terms=getattr(options, "terms", None),
                                           analyzer=searcher.analyzer))
        except UnreadableFile as exc:
            warnings.append(str(exc))
    if not signals:
        raise ContextError("nothing to analyse: " + ("; ".join(warnings) or "no files given"))
    inputs = {s.doc_id for s in signals if s.doc_id}
    includes = [i for s in signals for i in s.rules.include if i.split("#")[0] not in inputs]
    includes += _applying(reader, signals, options.trees, warnings)
    includes += _instructing(reader, config, signals, options.trees)
    elsewhere = _input_chunks(reader, _elsewhere(reader, signals))
    return _search(searcher, signals, options, _input_chunks(reader, sorted(inputs)),
                   list(dict.fromkeys(includes)), warnings, t0, elsewhere)


def _elsewhere(reader, signals: list[FileSignals]) -> list[str]:
    """Ids of the documents whose front matter names files, none of them these: a rule
    for other files (``k8s/**/*.yaml``) is no convention for this one, whatever words it
    shares with it. On a Next.js and FastAPI project with awesome-copilot's rules, the
    Kubernetes manifests' rule came for ``Cart.tsx``, four of nine results for
    ``package.json`` were the Go rule's sections, five of ``nextjs.mdc``'s for
    ``cmd/server/main.go``; an agent takes them for the file's conventions."""
    docs, _ = reader.memo("applying", lambda: _rule_documents(reader))
    return sorted(doc_id for doc_id, tree, globs in docs if globs and not any(
        (not s.trees or tree in s.trees) and pattern.fullmatch(s.path)
        for pattern, _ in globs for s in signals))


#: Documents that say which files they are about (``chunks.applies_to``: the globs of
#: agent rule files' front matter, ``ra.text.document.APPLIES_TO``)
_APPLYING_SQL = ("SELECT id, tree, applies_to FROM chunks WHERE depth = 0 AND applies_to "
                 "IS NOT NULL AND coalesce(status, '') <> 'archived' ORDER BY tree, path")


#: Paths of three shapes: a glob that matches each of them names no file in particular
#: (``**``, ``**/*``: a rule for every file, which the agent's tool loads anyway)
_ANY_FILE = ("x", "a/b/c.d", ".h/i.j")
_WILDCARDS = re.compile(r"[*?\[\]{},/\\!^-]")
#: A group of alternatives with none inside it (``{md,js,mjs}``)
_BRACES = re.compile(r"\{([^{}]*)\}")


def specificity(glob: str) -> int:
    """How much of a path ``glob`` pins down: its characters that are no wildcard, a group
    of alternatives counting as its shortest. Counted whole, ``**/*.{md,js,mjs,…,hpp}``
    (44) came before ``**/*.agent.md`` (9), and for ``agents/my-reviewer.agent.md``
    awesome-copilot's rule on agent files was 10th of 17 matching rules."""
    while (shorter := _BRACES.sub(lambda m: min(m[1].split(","), key=len), glob)) != glob:
        glob = shorter
    return len(_WILDCARDS.sub("", glob))


def _applying(reader, signals: list[FileSignals], trees, warnings: list[str]) -> list[str]:
    """Ids of the documents whose front matter names one of the files as theirs (a Cursor
    rule's ``globs``, Claude Code's ``paths``, Copilot's ``applyTo``), matched against
    the file's project-relative path as a context rule's ``match`` is; within the trees
    the call, or the file's rules, search. A glob that matches any file names none; the
    most specific match comes first (``specificity``: ``**/for_*/**/*.cs`` before
    ``**/*.cs``), then tree and path order. The
    documents and their globs are read and compiled once per generation (about 10 ms
    over the 113,000 chunks of cpp-docs)."""
    docs, problems = reader.memo("applying", lambda: _rule_documents(reader))
    warnings += problems
    inputs = {s.doc_id for s in signals}
    found = []
    for n, (doc_id, tree, globs) in enumerate(docs):
        if (trees and tree not in trees) or doc_id in inputs:
            continue
        best = max((specific for pattern, specific in globs
                    if any((not s.trees or tree in s.trees) and pattern.fullmatch(s.path)
                           for s in signals)), default=-1)
        if best >= 0:
            found.append((-best, n, doc_id))
    return [doc_id for _, _, doc_id in sorted(found)]


#: The files coding agents read for the folder they are in and those below it
#: (agents.md's ``AGENTS.md``, Claude Code's ``CLAUDE.md``, Gemini CLI's ``GEMINI.md``)
INSTRUCTIONS = ("AGENTS.md", "AGENT.md", "CLAUDE.md", "GEMINI.md")
_INSTRUCTIONS_SQL = (
    "SELECT id, tree, path FROM chunks WHERE depth = 0 AND coalesce(status, '') <> "
    "'archived' AND regexp_extract(path, '[^/]*$') IN ("
    + ", ".join(f"'{name}'" for name in INSTRUCTIONS) + ") ORDER BY tree, path")


def _instructing(reader, config, signals: list[FileSignals], trees) -> list[str]:
    """Ids of the agent instruction files (``INSTRUCTIONS``) in a folder above one of the
    files, below the project root, nearest first: an agent reads the one of a package when
    it works there (``packages/jest-snapshot/CLAUDE.md`` for
    ``packages/jest-snapshot/src/State.ts``), and the root's at every start, as it loads a
    rule for every file (``_applying``)."""
    if config.root is None:
        return []
    root = Path(config.root).resolve()
    places = {t.name: Path(t.path).resolve() for t in config.trees}
    files = [Path(s.file).resolve() for s in signals]
    inputs = {s.doc_id for s in signals}
    found = []
    for doc_id, tree, path in reader.memo("instructing", lambda: reader.query(_INSTRUCTIONS_SQL)):
        if (trees and tree not in trees) or doc_id in inputs or tree not in places:
            continue
        folder = (places[tree] / path).parent
        if folder != root and folder.is_relative_to(root) and any(
                f.is_relative_to(folder) for f in files):
            found.append((-len(folder.parts), doc_id))
    return [doc_id for _, doc_id in sorted(found)]


def _rule_documents(reader) -> tuple[list[tuple[str, str, list]], list[str]]:
    """``(id, tree, [(compiled glob, how specific)])`` of each document whose front matter
    names files (globs that match any file left out), and a warning per invalid glob."""
    from ra.config.globs import GlobError, compile_glob

    docs, problems = [], []
    for doc_id, tree, globs in reader.query(_APPLYING_SQL):
        compiled = []
        for glob in globs:
            try:
                pattern = compile_glob(glob)
            except GlobError as exc:
                problems.append(f"{doc_id}: frontmatter {exc.problem} in glob {glob!r}; "
                                "skipped")
                continue
            if not all(pattern.fullmatch(p) for p in _ANY_FILE):
                compiled.append((pattern, specificity(glob)))
        docs.append((doc_id, tree, compiled))
    return docs, problems


def likethis(reader, config, target: str | Path,
             options: SearchOptions = ContextOptions()) -> ContextResponse:
    """Chunks similar to an indexed chunk (by id) or to a file (as ``context_search``)."""
    if Path(target).is_file():
        return context_search(reader, config, [target], options)
    from ra.query.get import get_chunk
    from ra.text.analysis import analyzer_for

    t0 = time.perf_counter()
    chunk = get_chunk(reader, config, str(target))
    ctx, analyzer = config.context, analyzer_for(config.search.stemmer)
    text = chunk.content.encode("utf-8")[:ctx.sample_size].decode("utf-8", "ignore")
    words = content_words(text, markdown=True, min_length=ctx.min_word_length,
                          max_length=ctx.max_word_length)
    terms = tally([], words, analyzer, ctx.min_term_frequency)
    signals = FileSignals(chunk.id, chunk.path, "markdown", chunk.id, MatchedRules(),
                          tuple(options.trees), terms)
    rank_signals(signals, reader, analyzer, getattr(options, "terms", None) or ctx.terms)
    if not signals.selected:
        raise ContextError(f"nothing to search for: no word of {chunk.id} is distinctive "
                           "enough (see `ra inspect ctx` for how words are chosen)")
    return _search(Searcher(reader, config), [signals], options, _related(reader, chunk.id),
                   [], [], t0)


def _input_chunks(reader, doc_ids: list[str]) -> set[str]:
    """Ids of every chunk of the given documents."""
    if not doc_ids:
        return set()
    marks = ", ".join("?" * len(doc_ids))
    return {r[0] for r in reader.query(f"SELECT id FROM meta WHERE doc_id IN ({marks})",
                                       doc_ids)}


def _related(reader, chunk_id: str) -> set[str]:
    """A chunk, its descendants and its ancestors."""
    meta = reader.meta(chunk_id)
    out = {r[0] for r in reader.query("SELECT id FROM meta WHERE ord BETWEEN ? AND ?",
                                      [meta.ord, meta.ord + meta.descendants])}
    while meta is not None and meta.parent_id:
        out.add(meta.parent_id)
        meta = reader.meta(meta.parent_id)
    return out


def _options(options: SearchOptions, signals: list[FileSignals], config
             ) -> tuple[SearchOptions, dict[str, object]]:
    """Per-call options, then the first rule override of each setting, then the
    configuration; also returns the overrides (``k1``/``b`` change the BM25F weights)."""
    overrides: dict[str, object] = {}
    for s in signals:
        for key, value in s.rules.search:
            key = "candidate_limit" if key in ("aggregation_pool_size", "max_candidates") \
                else key
            overrides.setdefault(key, value)
    changes = {k: overrides[k] for k in _OVERRIDES
               if k in overrides and getattr(options, k) is None}
    o = replace(options, **changes)
    o = o if o.limit is not None else replace(o, limit=config.context.limit)
    return replace(o, candidate_limit=o.candidate_limit or config.search.candidate_limit,
                   cutoff_ratio=config.search.cutoff_ratio if o.cutoff_ratio is None
                   else o.cutoff_ratio,
                   aggregation_threshold=config.search.aggregation_threshold
                   if o.aggregation_threshold is None else o.aggregation_threshold), overrides


def _said(signals: list[FileSignals]) -> str:
    """What the text says was searched: the files' words, not the query made of them
    (``CLAUDE.md`` holding only ``@AGENTS.md`` said "no results for 'claude^1'")."""
    words = sorted({t.word for s in signals for t in s.selected})
    files = ", ".join(s.file for s in signals)
    shown = ", ".join(words[:8]) + (", …" if len(words) > 8 else "")
    return f"the words of {files} ({shown})" if words else f"the words of {files}"


@dataclass
class _Group:
    """Files searching the same trees: one query."""

    trees: tuple[str, ...]
    node: ast.Node
    plan: object = None
    sql: object = None


def _search(searcher: Searcher, signals: list[FileSignals], options: SearchOptions,
            exclude: set[str], includes: list[str], warnings: list[str],
            t0: float, elsewhere: AbstractSet[str] = frozenset()) -> ContextResponse:
    """One topic for ``signals``: ``includes`` first, then the chunks their words find but
    those of ``exclude`` (the files' own) and ``elsewhere`` (rules for other files)."""
    reader = searcher.reader
    warnings = warnings + [w for s in signals for w in s.warnings]
    o, overrides = _options(options, signals, searcher.config)
    groups = _groups(signals)
    if not groups and not includes:  # the warnings say why (a file not written yet)
        names = ", ".join(s.file for s in signals)
        said = "".join(f"; {w}" for w in warnings)
        raise ContextError(f"nothing to search for: no word of {names} occurs in the index"
                           f"{said} (see `ra inspect ctx FILE` for the words considered)")
    t_signals = time.perf_counter()
    left_out = exclude | elsewhere
    merged, total = _score(searcher, groups, o, overrides, left_out)
    t_sql = time.perf_counter()
    notes_below = not o.raw and not any(release_notes(s.path) for s in signals)
    names = frozenset(n for s in signals if s.kind != "markdown" and (n := _name(s.path)))
    ranked, stats = _rank(searcher, merged, o, left_out, notes_below, names)
    texts = Contents(reader)
    ranked, copies, near = searcher._without_copies(ranked, o.limit, texts)
    ranked = ranked if o.limit is None else ranked[:o.limit]
    stats = replace(stats, final=len(ranked))
    # the files' words, stopwords left out already (``ra.query.signals``): all are marked
    terms = sorted({t for g in groups for t in g.plan.terms()})
    results = _without(searcher._results(ranked, terms, o, copies, near, texts=texts),
                       includes, reader)
    results = _included(searcher, includes, terms, warnings, results,
                        None if o.list_only else o.max_tokens) + results
    t_fetch = time.perf_counter()
    query = _query_text(groups)
    topic = Topic(query, "all" if results else "none", total, results, terms=terms,
                  said=_said(signals))
    if o.explain and not groups:  # the includes alone: no word of the files to search for
        topic.explain = {"query": query, "files": [s.to_dict() for s in signals],
                         "included": includes, "excluded": sorted(exclude),
                         "note": "no search: no word of the files is in the index; the "
                                 "documents that name them only"}
    elif o.explain:
        topic.explain = _explain(groups, signals, stats, includes, exclude, query, {
            "signals": t_signals - t0, "sql": t_sql - t_signals, "rank+fetch":
            t_fetch - t_sql})
    # the warnings are read with the answer (a line each after it): the budget holds them
    said = estimate_entry("".join(f"warning: {w}\n" for w in warnings)) if warnings else 0
    if o.max_tokens is None or not said:
        used = searcher._pack([topic], o)
    else:
        used = searcher._pack([topic], replace(o, max_tokens=max(o.max_tokens - said, 0)))
        used += said
    return ContextResponse([topic], used, o.max_tokens, o.list_only, warnings=warnings)


def _score(searcher: Searcher, groups: list[_Group], o: SearchOptions, overrides: dict,
           exclude: set[str]) -> tuple[list[tuple[float, tuple]], int]:
    """Plan and run each group's query; ``(score, row)`` per chunk with the groups' scores
    summed, best first; and how many chunks matched (in the widest group). The metadata
    of every chunk's ancestors arrives with it (for ranking)."""
    from ra.query.plan import PlanOptions, plan_query

    reader = searcher.reader
    weights = replace(searcher.weights(), **{k: overrides[k] for k in ("k1", "b")
                                             if k in overrides})
    rows: dict[int, list] = {}
    total = 0
    for g in groups:
        g.plan = plan_query(g.node, reader, searcher.analyzer, PlanOptions(fuzzy=False))
        filters = replace(filters_of(o), trees=g.trees, exclude_ids=tuple(sorted(exclude)))
        found = _run(reader, g, weights, filters, o.candidate_limit)
        reader.remember_lineage([ChunkMeta(*row[5:]) for row in found])
        for row in found:
            if row[0] is not None:  # else an ancestor row
                rows.setdefault(row[5], [0.0, row])[0] += row[0]
                total = max(total, row[3])
    merged = sorted(((score, row) for score, row in rows.values()),
                    key=lambda x: (-x[0], x[1][6]))
    return merged, total


def _run(reader, g: _Group, weights, filters, limit: int) -> list[tuple]:
    """``bm25f_sql``'s rows with ancestors for ``g.plan``: from ``ra.query.disjunction``
    (same scores, less work) when the plan is an OR of words, as it is unless a rule term
    has several words (a phrase)."""
    from ra.query import disjunction

    if disjunction.applies(g.plan):
        rows, g.sql = disjunction.score(reader, g.plan, weights, filters, limit)
        return rows
    g.sql = bm25f_sql(g.plan, reader.stats.chunks, reader.stats.avg_length, weights, filters,
                      limit, ancestors=True)
    return reader.query(g.sql.text, g.sql.params)


def _groups(signals: list[FileSignals]) -> list[_Group]:
    by_trees: dict[tuple[str, ...], list[ContextTerm]] = {}
    for s in signals:
        by_trees.setdefault(tuple(sorted(s.trees)), []).extend(s.selected)
    return [_Group(trees, node) for trees, terms in by_trees.items()
            if (node := query_node(terms)) is not None]


def _query_text(groups: list[_Group]) -> str:
    texts = [ast.to_query_string(g.node) for g in groups]
    return texts[0] if len(texts) == 1 else " OR ".join(f"({t})" for t in texts)


def _name(path: str) -> str | None:
    """What names a file for ``FILE_NAMED``: its name to the first ``.``, lowercase,
    without ``-`` and ``_`` (``cargo_fetch.rs`` and ``cargo-fetch.md`` are one name);
    None for a name that says where a file is, not what it is about (``GENERIC_NAMES``)."""
    stem = PurePosixPath(path).name.split(".")[0].lower()
    key = stem.replace("-", "").replace("_", "")
    return None if not key or stem.strip("_") in GENERIC_NAMES else key


#: How much more a chunk of a document named as a file given to context (a source file,
#: not a page: another page of its name is a version, a translation) scores: the
#: documentation of a rule, a command or a module is kept in a file named for it
#: (eslint's ``lib/rules/no-unused-vars.js`` and ``docs/src/rules/no-unused-vars.md``,
#: cargo's ``src/ops/cargo_fetch.rs`` and ``commands/cargo-fetch.md``, pydantic's
#: ``fields.py`` and ``concepts/fields.md``), and the file's content words found the
#: pages on writing rules, on the resolver, before it (docs/ranking.md)
FILE_NAMED = 3.0
#: File names that say where a file is, not what it is about: a folder's page, a
#: package's entry point, test set-up
GENERIC_NAMES = frozenset("index mod main lib init readme conftest setup".split())


def _rank(searcher: Searcher, merged: list, o: SearchOptions, blocked: set[str],
          notes_below: bool = False, names: AbstractSet[str] = frozenset()):
    """The search pipeline's ranking over summed scores; aggregation never climbs into a
    blocked chunk (an ancestor of the chunk ``likethis`` started from). ``notes_below``:
    release notes score ``RELEASE_NOTES`` times theirs, as in a search that does not ask
    about releases (a changelog names a file's functions in its entries, and they came
    among the first for a source file: uv's ``crates/uv-resolver/src/lock/mod.rs`` had
    two of its changelog's entries fourth and fifth). ``names``: the source files' names
    (``_name``); a document so named scores ``FILE_NAMED`` times its score."""
    reader = searcher.reader
    metas = [ChunkMeta(*row[5:]) for _, row in merged]
    reader.remember(metas)
    reader.ancestors(metas)
    cands = [Searcher._candidate(m, score * RELEASE_NOTES if notes_below
                                 and release_notes(m.path) else score)
             for m, (score, _) in zip(metas, merged, strict=True)]
    if names:  # a document named as a file given
        cands = [c._replace(score=c.score * FILE_NAMED) if _name(m.path) in names else c
                 for c, m in zip(cands, metas, strict=True)]

    def lookup(chunk_id: str):
        meta = None if chunk_id in blocked else reader.meta(chunk_id)
        return None if meta is None else Searcher._candidate(meta, 0.0)

    return ranking.rank_with_stats(cands, threshold=o.aggregation_threshold,
                                   cutoff_ratio=o.cutoff_ratio, limit=None,
                                   lookup=lookup, aggregation=o.aggregation,
                                   max_tokens=o.parts_budget)


def _overlaps(a, b) -> bool:
    return a.ord <= b.ord + b.descendants and b.ord <= a.ord + a.descendants


def _without(results: list[Result], includes: list[str], reader) -> list[Result]:
    """Search results that do not overlap an included document (it is shown already)."""
    metas = [m for m in (reader.meta(i) for i in includes) if m is not None]
    return [r for r in results if not any(_overlaps(r, m) for m in metas)]


def _included(searcher: Searcher, includes: list[str], terms: list[str], warnings: list[str],
              results: list[Result], max_tokens: int | None = None) -> list[Result]:
    """Results for a rule's ``include`` ids, scored as the best result so they lead. A
    document word for word another's comes once, naming the others as copies, as a
    search's results do: a skill kept in ``.claude/skills``, ``.agents/skills`` and
    ``.github/skills`` alike (generated, or copied for each agent) came three times. One
    larger than ``INCLUDE_SHARE`` of the budget comes as its sections that hold most of
    the files' words (``_parts``)."""
    if not includes:
        return []
    from ra.query.get import get_chunk
    from ra.query.snippets import snippet_of

    top = max((r.score for r in results), default=1.0)
    out: dict[str, tuple[list[Result], list[str]]] = {}  # by content: the first, its copies
    for chunk_id in includes:
        try:
            chunk = get_chunk(searcher.reader, searcher.config, chunk_id)
        except RaError:
            warnings.append(f"context rule include {chunk_id!r} is not in the index; skipped")
            continue
        if (first := out.get(chunk.content)) is not None:
            first[1].append(chunk.id)
            continue
        meta = searcher.reader.meta(chunk.id)
        if max_tokens is not None and chunk.tokens > INCLUDE_SHARE * max_tokens and (
                parts := _parts(searcher, meta, terms, INCLUDE_SHARE * max_tokens, top)):
            out[chunk.content] = (parts, [])
            continue
        _, plain = searcher.reader.texts([(meta.ord, meta.descendants)])[meta.ord]
        out[chunk.content] = ([Result(
            chunk.id, chunk.tree, chunk.path, chunk.title, chunk.breadcrumb, top,
            snippet_of(plain, set(terms), searcher.analyzer), chunk.content,
            chunk.tokens, line=meta.line, ord=meta.ord, descendants=meta.descendants)], [])
    return [replace(r, copies=tuple(copies)) if copies and i == 0 else r
            for rs, copies in out.values() for i, r in enumerate(rs)]


#: The share of the token budget an included rule may take whole: one larger comes as
#: its sections that hold the files' words
INCLUDE_SHARE = 0.5


def _parts(searcher: Searcher, meta: ChunkMeta, terms: list[str], room: float,
           score: float) -> list[Result]:
    """The sections of the included document ``meta`` (those without subsections) that
    hold the most of ``terms``, the earlier first on equal counts, while they fit in
    ``room`` tokens, in the document's order; none when none holds one. A rule larger
    than the budget came as a snippet of 70 tokens (awesome-copilot's Docker rule, 7,500
    tokens, the one rule for a Dockerfile), one that nearly fitted took all of it (its
    Copilot SDK rule, 3,998 of 4,000 tokens for a route handler: eleven results not
    shown)."""
    from ra.query.snippets import match_spans, matcher, snippet_of

    reader = searcher.reader
    found = reader.lineage(list(range(meta.ord + 1, meta.ord + meta.descendants + 1)))
    leaves = [m for o, m in sorted(found.items()) if o > meta.ord and m.descendants == 0
              and m.doc_id == meta.doc_id]
    if not leaves or not terms:
        return []
    texts = reader.texts([(m.ord, 0) for m in leaves])
    key = matcher(set(terms), searcher.analyzer)
    held = {m.ord: len({k for _, _, k in match_spans(texts.get(m.ord, ("", ""))[1], key)})
            for m in leaves}
    picked, used = [], 0
    for m in sorted(leaves, key=lambda m: (-held[m.ord], m.ord)):
        if held[m.ord] and used + m.tokens <= room:
            picked.append(m)
            used += m.tokens
    return [Result(m.id, m.tree, m.path, m.title, m.breadcrumb, score,
                   snippet_of(texts[m.ord][1], key), texts[m.ord][0], m.tokens,
                   line=m.line, ord=m.ord, descendants=0)
            for m in sorted(picked, key=lambda m: m.ord)]


def _explain(groups: list[_Group], signals: list[FileSignals], stats, includes: list[str],
             exclude: set[str], query: str, timings: dict) -> dict:
    """``--explain``: each file's signals, then the query as ``ra search --explain`` shows
    one (clauses, SQL of the first tree group, pipeline, timings)."""
    from ra.store.layout import FIELDS

    g = groups[0]
    clauses = [{"clause": c.index, "kind": c.kind, "text": c.text,
                "fields": [FIELDS[f] for f in c.fields], "boost": c.boost, "negated": False,
                "terms": [{"term": a.term, "df": a.df, "in_index": a.term_id is not None,
                           "distance": a.distance, "weight": a.weight} for a in c.alts]}
               for c in g.plan.clauses]
    out = {"query": query, "files": [s.to_dict() for s in signals], "included": includes,
           "excluded": sorted(exclude), "parsed": ast.to_query_string(g.node),
           "clauses": clauses, "sql": g.sql.text, "params": g.sql.params,
           "pipeline": {"candidates": stats.candidates, "aggregated": stats.aggregated,
                        "after_elbow": stats.elbow, "final": stats.final},
           "timings_ms": {k: round(v * 1000, 3) for k, v in timings.items()}}
    if len(groups) > 1:
        out["groups"] = [{"trees": list(x.trees), "query": ast.to_query_string(x.node),
                          "sql": x.sql.text, "params": x.sql.params} for x in groups]
    return out
