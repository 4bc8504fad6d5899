"""Search: topics in, grouped and ranked results out — the library API behind every surface.

For each topic (one CLI argument, one element of the MCP ``queries`` array):

    parse → plan (vocabulary, fuzzy) → one BM25F query in DuckDB (candidates)
          → hierarchical aggregation → elbow cutoff → limit → content and snippets

then all topics are packed together into the token budget, round-robin by rank so a
budget shares fairly between topics: in full, else as a list entry, else as id and
title (``ra.query.budget``); a topic says how many of its results did not fit at all
and what the smallest of them needs, so that a budget too small is never mistaken for
"nothing matched". A chunk already shown under an earlier topic is referenced by id, not
repeated. ``SearchResponse.to_dict`` is the JSON shape of ``ra search --json`` and of
the MCP tool's structured content. A tree that is not configured, named in the options
or by ``tree:`` in a query, is an error that lists the trees (``Config.require_trees``).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

from ra.errors import QueryError
from ra.index.reader import ChunkMeta
from ra.query import rank as ranking
from ra.query.bm25f import Filters, Sql, Weights, bm25f_sql, weights_of
from ra.query.budget import (
    estimate_entry,
    estimate_tokens,
    list_entry_tokens,
    pack,
    ref_entry_tokens,
)
from ra.query.impacts import is_plain, top_rows, top_sql, with_phrases
from ra.query.named import boost_named, heads_of
from ra.query.parser import dash_negations, parse, parse_lenient, typed_operators
from ra.query.phrases import PhraseScorer
from ra.query.plan import Plan, PlanOptions, plan_query, shortened, unsearchable_note
from ra.query.render import (
    BUDGET_LINE,
    CUT_LINE,
    copies_lines,
    entry_title,
    lines_around,
    plural,
)
from ra.query.snippets import matcher, snippet_of
from ra.text.analysis import analyzer_for, split_words


@dataclass(frozen=True)
class SearchOptions:
    """Per-call options; None means "the configured default"."""

    limit: int | None = None
    candidate_limit: int | None = None
    cutoff_ratio: float | None = None
    aggregation_threshold: float | None = None
    aggregation: bool = True
    fuzzy: bool | None = None
    fuzzy_distance: int | None = None
    raw: bool = False
    trees: tuple[str, ...] = ()
    include_archived: bool = False
    list_only: bool = False
    max_tokens: int | None = None
    explain: bool = False
    tags: tuple[str, ...] = ()  # any of these tags (case-insensitive)
    path: str | None = None  # tree-relative path glob
    since: str | None = None  # ISO date or datetime: file modified at or after
    until: str | None = None  # ISO date (that whole day included) or datetime
    offset: int = 0  # skip this many ranked results (paging)
    sort: str = "score"  # score | date | path; ties broken by id
    semantic: bool | None = None  # fuse meaning with words ([semantic]); None: configured
    strict: bool = False  # invalid syntax raises, instead of being read as words
    #: the budget a listed result is read with afterwards (``get``'s default; 0: none),
    #: None when not known: see ``parts_budget``
    read_budget: int | None = None

    @property
    def parts_budget(self) -> int | None:
        """The budget a result too large for it is given as its best part that fits
        (``ra.query.rank.fit_parts``): the answer's, but a list's entries are read later
        with ``read_budget``, whatever the list's own. A list chose its ids for its own
        budget, so each budget offered another: on cargo's docs "CARGO_MANIFEST_DIR
        OUT_DIR environment variables build scripts" listed the section for cargo test
        at 300 tokens, for crates at 1,500, for build scripts at 2,500 (a list entry
        costs some 110 tokens whatever it stands for)."""
        if self.list_only and self.read_budget is not None:
            return self.read_budget or None
        return self.max_tokens


@dataclass
class Result:
    """One ranked chunk."""

    id: str
    tree: str
    path: str
    title: str
    breadcrumb: str
    score: float
    snippet: str = ""
    content: str | None = None
    tokens: int = 0
    tier: str = "full"  # "full" | "list" | "ref" (what the token budget allowed)
    seen_in: str | None = None  # shown under this earlier topic already
    constituents: tuple[str, ...] = ()
    line: int = 1  # line of the file where the content starts
    ord: int = -1  # subtree: ord .. ord + descendants (for containment across topics)
    descendants: int = 0
    copies: tuple[str, ...] = ()  # results with the same text, given once (as this one)
    near_copies: tuple[str, ...] = ()  # the same section nearly word for word (``near_copy``)
    partial: bool = False  # holds only some of the words, after those holding all (fill)
    #: the title its list entry or reference prints (``render.entry_title``); None: its
    #: title. Set before packing (``Searcher._pack``), so that the budget counts it
    label: str | None = None

    @property
    def list_tokens(self) -> int:
        """What this result costs as a list entry (id, title, snippet, copies)."""
        return (list_entry_tokens(self.id, self.label or self.title, self.snippet)
                + self.copies_tokens)

    @property
    def copies_tokens(self) -> int:
        """What the lines naming its copies cost, shown in full or listed."""
        if not self.copies and not self.near_copies:
            return 0
        return estimate_entry(copies_lines(self, "    "))

    @property
    def ref_tokens(self) -> int:
        """What this result costs as a bare reference (id and title)."""
        return ref_entry_tokens(self.id, self.label or self.title)

    def to_dict(self, list_only: bool = False) -> dict:
        out = {"id": self.id, "tree": self.tree, "path": self.path, "title": self.title,
               "breadcrumb": self.breadcrumb, "score": round(self.score, 6),
               "snippet": self.snippet if self.tier != "ref" else "", "tokens": self.tokens}
        if not list_only and self.tier == "full" and self.seen_in is None:
            out["content"] = self.content
        if self.tier != "full":
            out["tier"] = self.tier
        if self.seen_in is not None:
            out["seen_in"] = self.seen_in
        if self.constituents:
            out["aggregated_from"] = list(self.constituents)
        if self.copies:
            out["copies"] = list(self.copies)
        if self.near_copies:
            out["near_copies"] = list(self.near_copies)
        if self.partial:
            out["partial"] = True
        return out


@dataclass
class Topic:
    """The answer to one topic."""

    query: str
    match: str  # "all" | "partial" | "none"
    total_matches: int
    results: list[Result] = field(default_factory=list)
    explain: dict | None = None
    terms: list[str] = field(default_factory=list)  # matched index terms, for highlighting
    omitted: int = 0  # ranked results the token budget left out entirely
    needs: int | None = None  # tokens the smallest of them needs (as id and title)
    note: str | None = None  # how the query was read: not as written (syntax), a -flag
    meaning_note: str | None = None  # why meaning was not used (``ra.query.semantic``)
    outranked: int = 0  # chunks holding every word cut below the partial answers
    said: str | None = None  # how the text names what was searched, when not its query

    def to_dict(self, list_only: bool = False) -> dict:
        out = {"query": self.query, "match": self.match,
               "total_matches": self.total_matches,
               "results": [r.to_dict(list_only) for r in self.results],
               "omitted": self.omitted}
        if self.needs is not None:
            out["smallest_omitted_tokens"] = self.needs
        if self.note is not None:
            out["note"] = self.note
        if self.explain is not None:
            out["explain"] = self.explain
        return out


@dataclass
class SearchResponse:
    """Every topic's answer plus the token accounting."""

    queries: list[Topic]
    tokens_used: int
    max_tokens: int | None
    list_only: bool = False
    status: str | None = None  # what freshness did before answering
    notes: list[str] = field(default_factory=list)  # e.g. semantic search not used: why

    @property
    def truncated(self) -> bool:
        """Whether the token budget shortened or left out any result."""
        return any(t.omitted or any(r.tier != "full" for r in t.results if r.seen_in is None)
                   for t in self.queries)

    def to_dict(self) -> dict:
        out = {"queries": [t.to_dict(self.list_only) for t in self.queries],
               "tokens_used": self.tokens_used, "max_tokens": self.max_tokens,
               "truncated": self.truncated}
        if self.notes:
            out["notes"] = list(self.notes)
        return out


class Searcher:
    """Runs searches against one ``IndexReader`` with one ``Config``."""

    def __init__(self, reader, config) -> None:
        self.reader, self.config = reader, config
        self.analyzer = analyzer_for(config.search.stemmer)

    # --- options -------------------------------------------------------------------------

    def _opt(self, value, default):
        return default if value is None else value

    def weights(self) -> Weights:
        return weights_of(self.config)

    def plan_options(self, o: SearchOptions) -> PlanOptions:
        s = self.config.search
        fuzzy = False if o.raw else self._opt(o.fuzzy, s.fuzzy)
        return PlanOptions(fuzzy=fuzzy, distance=self._opt(o.fuzzy_distance, s.fuzzy_distance),
                           fuzzy_weight=s.fuzzy_weight, long_query_words=s.long_query_words)

    def default_limit(self, o: SearchOptions) -> int:
        configured = self.config.search.limit or self.config.settings.default_limit
        return self._opt(o.limit, configured)

    # --- search --------------------------------------------------------------------------

    def search(self, topics: list[str], options: SearchOptions = SearchOptions()
               ) -> SearchResponse:
        """Answer every topic, dedupe across topics, pack into the token budget."""
        self.config.require_trees(options.trees)
        answered = [self.topic(q, options) for q in topics]
        shown: list[tuple[int, int, str]] = []  # ord ranges already shown, by topic
        for topic in answered:
            mine = []
            for i, r in enumerate(topic.results):
                earlier = next((q for lo, hi, q in shown if lo <= r.ord <= hi), None)
                if earlier is not None:  # the same chunk, or inside one shown before
                    topic.results[i] = replace(r, seen_in=earlier, content=None, tokens=0)
                else:
                    mine.append((r.ord, r.ord + r.descendants, topic.query))
            shown += mine
        used = self._pack(answered, options)
        notes = list(dict.fromkeys(t.meaning_note for t in answered if t.meaning_note))
        return SearchResponse(answered, used, options.max_tokens, options.list_only,
                              notes=notes)

    def _pack(self, topics: list[Topic], options: SearchOptions) -> int:
        """Fit the topics' results in the budget, less what the lines around them cost
        (``render.lines_around``, estimated as list entries are: ``_fit``); the tokens of
        the whole answer."""
        for topic in topics:  # the title an entry prints, as many as it may print
            titled = Counter(r.title for r in topic.results)
            for r in topic.results:
                r.label = entry_title(r, titled[r.title] > 1)
        order = _round_robin([[r for r in t.results if r.seen_in is None] for t in topics])
        for r in order:  # the stored count holds the chunk's text and the lines above it
            r.tokens = (r.tokens + r.copies_tokens if not options.list_only
                        else r.list_tokens)
        budget = options.max_tokens
        packing, reserve, gone = _fit(order, topics, budget)
        kept = {id(p.item): p for p in packing.items}
        left_out = {id(r) for r in packing.skipped} | gone
        for topic in topics:
            omitted = [r for r in topic.results if id(r) in left_out]
            topic.omitted = len(omitted)
            topic.needs = min((r.ref_tokens for r in omitted), default=None)
            topic.results = [self._packed(r, kept) for r in topic.results
                             if (r.seen_in is not None and id(r) not in gone) or id(r) in kept]
        if budget is None or not packing.items:  # nothing shown: the answer says why
            return packing.tokens_used
        return packing.tokens_used + reserve

    @staticmethod
    def _packed(r: Result, kept: dict) -> Result:
        if r.seen_in is not None:
            return r
        p = kept[id(r)]
        r.tier, r.tokens = p.tier, p.tokens
        return r

    def topic(self, query: str, o: SearchOptions) -> Topic:
        """Rank the chunks for one topic; a query whose compounds no chunk holds as
        written is answered with the chunks holding their parts, with a note
        (``_loose``)."""
        topic = self._topic(query, o)
        if (topic.match != "none" or o.strict or _FILE_PATH.fullmatch(query.strip())
                or (loose := _loose(query)) == query):
            return topic
        wider = self._topic(loose, o)
        if wider.match == "none":
            return topic
        wider.query = query
        wider.note = _joined(_joined(topic.note, f"no chunk holds {_compounds(query)} as "
                                     "written; these hold its parts"), wider.note)
        if wider.explain is not None:  # how it was read first, and found nothing
            wider.explain["as_written"] = topic.explain
        return wider

    def _topic(self, query: str, o: SearchOptions) -> Topic:
        """Rank the chunks for one topic, as written."""
        t0 = time.perf_counter()
        node, problem = (parse(query), None) if o.strict else parse_lenient(query)
        note = syntax_note(problem) if problem else None
        typed = query
        if (not o.strict and problem is None and "-" in query
                and (flags := _only_flags(query, node))):
            query, node, note = flags
        t_parse = time.perf_counter()
        rankable = problem is not None or not typed_operators(query)
        if rankable and not o.strict and node is not None and (
                short := shortened(node, self.reader, self.analyzer)):
            node, cut = short
            note = _joined(note, cut)
        plan = plan_query(node, self.reader, self.analyzer, self.plan_options(o), query,
                          rankable) if node is not None else None
        if plan is None:
            return Topic(typed, "none", 0, explain={"ast": None} if o.explain else None,
                         note=note)
        self.config.require_trees([c.tree for c in plan.clauses if c.kind == "tree"])
        if plan.unsearchable:
            note = _joined(note, unsearchable_note(plan.unsearchable))
        t_plan = time.perf_counter()
        pending = self._start_meaning(node, plan, o)
        plan, rows, metas, sql = self._with_feedback(plan, *self._score(plan, o), o)
        rows, metas = self._with_proximity(plan, rows, metas, o)
        t_sql = time.perf_counter()
        side, rows, metas = self._meaning(node, plan, o, rows, metas, pending)
        reweigh = None if o.raw else boost_named(plan, self.analyzer, self.reader.meta)
        named = Named() if o.raw else Named(plan.files, plan.numbers,  # raw: BM25F alone
                                            not asks_releases(typed),
                                            heads_of(plan, self.analyzer, self.reader.meta))
        ranked, stats = self._rank(rows, metas, o, reweigh, named)
        limit = self.default_limit(o)
        some: frozenset[str] = frozenset()
        outranked = 0
        if rankable and not (side is not None and side.used) and self._fills(plan, rows,
                                                                             o, limit):
            ranked, some, outranked = self._filled(plan, rows, ranked, o, reweigh, named)
            if outranked:
                note = _joined(note, _outranked_note(outranked, self._opt(
                    o.cutoff_ratio, self.config.search.cutoff_ratio)))
        texts = Contents(self.reader)
        ranked, copies, near = self._without_copies(
            ranked, o.offset + limit if o.sort == "score" else None, texts)
        ranked = _page(ranked, o, limit, self.reader.meta)
        t_rank = time.perf_counter()
        marked = plan.highlighted(self.analyzer.language)
        results = self._results(ranked, marked, o, copies, near, some, texts=texts,
                                variants=plan.variants())
        t_fetch = time.perf_counter()
        complete = bool(rows[0][2]) if rows else False
        total = int(rows[0][3]) if rows else 0
        if problem is None and "-" in query:
            note = _joined(note, self._flag_note(query, o, rankable, complete, total))
        if not rows:
            note = _joined(note, self._filters_note(plan, o) or _path_note(typed))
        match = "all" if complete else ("partial" if rows else "none")
        if side is not None and side.used and not any(r[1] for r in rows):
            match = "semantic" if rows else "none"  # no chunk has any of the words
        topic = Topic(typed, match, total, results, terms=marked, note=note,
                      meaning_note=side.note if side is not None else None,
                      outranked=outranked)
        if o.explain:
            topic.explain = _explain(node, plan, sql, stats, _filters_shown(o), {
                "parse": t_parse - t0, "plan": t_plan - t_parse, "sql": t_sql - t_plan,
                "rank": t_rank - t_sql, "fetch": t_fetch - t_rank})
            if some:
                topic.explain["pipeline"]["filled"] = len(some)
            if outranked:  # cut below the partial answers (the note says so)
                pipeline = topic.explain["pipeline"]
                pipeline["outranked"] = outranked
                pipeline["final"] = max(pipeline["final"] - outranked, 0)
            if reweigh is not None and reweigh.boosted:
                topic.explain["named_for_query"] = {"factor": reweigh.factor,
                                                    "results": list(reweigh.boosted)}
            if side is not None and side.used:
                from ra.query.semantic import explain_scores

                topic.explain["semantic"] = explain_scores(side, ranked, self.reader.meta)
        return topic

    def _filters_note(self, plan: Plan, o: SearchOptions) -> str | None:
        """What a topic with no results says when its filters kept out chunks that match:
        "no results" read as "ra knows nothing of it" (an agent that gave ``--path`` a
        folder without ``/``'s glob, ``--since`` a day after the last edit)."""
        if not (o.path or o.tags or o.since or o.until):
            return None
        rows = self._score(plan, replace(o, path=None, tags=(), since=None, until=None,
                                         offset=0))[0]
        if not rows:
            return None
        shown = [f"--path {o.path!r}"] if o.path else []
        shown += [f"--tag {t!r}" for t in o.tags]
        shown += [f"--{k} {v}" for k, v in (("since", o.since), ("until", o.until)) if v]
        n = int(rows[0][3])
        return (f"{plural(n, 'chunk')} outside {' '.join(shown)} "
                f"{'matches' if n == 1 else 'match'}: the filters kept none"
                + ("; a path is relative to its tree's folder" if o.path else ""))

    def _flag_note(self, query: str, o: SearchOptions, rankable: bool, complete: bool,
                   total: int) -> str | None:
        """What a topic says when a ``-word`` it excluded may have been a command-line flag:
        how many chunks that match the rest of the query it took out, and how to search
        for the flag instead. None when no ``-word`` took out anything."""
        spans = dash_negations(query)
        if not spans:
            return None
        rest = query
        for start, end in reversed(spans):
            rest = rest[:start] + " " + rest[end:]
        node, problem = parse_lenient(rest)
        if node is None or problem is not None:
            return None
        plan = plan_query(node, self.reader, self.analyzer, self.plan_options(o), rest,
                          rankable)
        rows = self._score(plan, o)[0] if plan is not None else []
        if not rows or complete and not rows[0][2]:
            return None
        # every chunk that matched all the rest held the flag: only partial answers were left
        taken = int(rows[0][3]) - (total if bool(rows[0][2]) == complete else 0)
        if taken <= 0:
            return None
        flags = [query[start:end] for start, end in spans]
        return (f"{' and '.join(flags)} excluded {plural(taken, 'matching chunk')}; "
                f"to search for "
                f"{flags[0]} itself, quote it: \"{flags[0]}\"")

    def _meaning_on(self, o: SearchOptions) -> bool:
        settings = self.config.semantic
        return (settings.enabled if o.semantic is None else o.semantic) and not o.raw

    def _start_meaning(self, node, plan: Plan, o: SearchOptions):
        """With ``[semantic]`` on for this call: the query's vector, started before the
        keyword side is scored so the two overlap (``ra.query.semantic.start``)."""
        if not self._meaning_on(o):
            return None
        from ra.query.semantic import start

        return start(self.reader, self.config.semantic, node, plan, filters_of(o),
                     self._candidates(o))

    def _meaning(self, node, plan: Plan, o: SearchOptions, rows, metas, pending=None):
        """With ``[semantic]`` on for this call: the semantic side of the topic and the
        keyword rows fused with it (``ra.query.semantic``); else ``(None, rows, metas)``."""
        settings = self.config.semantic
        if not self._meaning_on(o):
            return None, rows, metas
        from ra.query.semantic import fused_rows, keyword_bound, semantic_side

        limit = self._candidates(o)
        side = semantic_side(self.reader, settings, node, plan, filters_of(o), limit,
                             o.explain, pending)
        if not side.used:
            return side, rows, metas
        bound = keyword_bound(plan, self.reader.stats.chunks, self.weights())
        rows = fused_rows(rows, side, settings, limit, bound)
        found = self.reader.lineage([r[5] for r in rows])
        return side, rows, [found[r[5]] for r in rows]

    def _candidates(self, o: SearchOptions) -> int:
        """How many chunks a topic's scoring keeps for ranking (and fusion)."""
        return max(self._opt(o.candidate_limit, self.config.search.candidate_limit),
                   o.offset + self.default_limit(o))

    def _score(self, plan: Plan, o: SearchOptions,
               worth: Callable[[list], bool] | None = None):
        """``(rows, metas, sql)``: the best candidates ``(score, matched, complete, total,
        tainted)`` and their metadata, best first, ties by id; the metadata of all their
        ancestors is cached in the reader, for ranking.

        A plain query is scored over the index's impacts (``top_sql``) when they hold for
        the configured weights (``IndexReader.impacts``), any other by ``bm25f_sql``;
        both return ords, whose metadata the reader has or reads in one query (a
        long-lived reader climbs the chunk tree in memory, a short-lived one has
        ``bm25f_sql`` list the ancestors, or asks for them after ``top_sql``). A
        long-lived reader computes ``top_sql``'s rows from its impact arrays in NumPy
        (``top_rows``): DuckDB's fixed cost of a query was most of a warm search. A
        compound's phrase, which only adds score, is added from positions in the chunks
        it could lift to the best (``ra.query.impacts.with_phrases``).
        ``worth``: a test of the scored rows; when it fails, no rows (and no metadata is
        read)."""
        limit = self._candidates(o)
        weights, filters, stats = self.weights(), filters_of(o), self.reader.stats
        resident = self.reader.resident
        plain = is_plain(plan, filters)
        phrases = not plain and is_plain(plan, filters, phrases=True)
        top = (plain or phrases) and self.reader.impacts(weights)
        arrays = self.reader.impact_arrays if top else None
        scorer = PhraseScorer(self.reader, weights) if phrases and top else None
        if arrays is not None:
            found = top_rows(plan, arrays, stats.chunks, weights, filters, limit, scorer)
            sql = Sql(f"-- in memory: {arrays.describe()}, summed per chunk in NumPy "
                      "(ra.query.impacts.top_rows)")
            if o.explain:  # and the SQL of those rows: 50 µs a query to build, for no one
                shown = top_sql(plan, stats.chunks, weights, filters, limit)
                sql = Sql(f"{sql.text}, giving the rows of\n{shown.text}", shown.params)
        elif top:
            sql = top_sql(plan, stats.chunks, weights, filters, limit)
            found = self.reader.query(sql.text, sql.params)
            if scorer is not None:
                found = with_phrases(found, plan, limit, scorer)
        else:
            sql = bm25f_sql(plan, stats.chunks, stats.avg_length, weights, filters, limit,
                            ancestors=not resident, metadata=False,
                            every_tainted=self._meaning_on(o))
            found = self.reader.query(sql.text, sql.params)
        if scorer is not None and o.explain:
            sql = scorer.explained(sql)
        scored = [r for r in found if r[0] is not None]
        if worth is not None and not worth(scored):
            return [], [], sql
        metas = self.reader.lineage([r[5] for r in scored], None if resident or top else
                                    [r[5] for r in found if r[0] is None])
        best = sorted(scored, key=lambda r: (-r[0], metas[r[5]].id))[:limit]
        return [r[:5] + (r[5],) for r in best], [metas[r[5]] for r in best], sql

    def _with_feedback(self, plan: Plan, rows, metas, sql, o: SearchOptions):
        """``(plan, rows, metas, sql)``: for a ranked query when ``[search] feedback`` is
        on, the plan with the expansion terms of its best chunks (``ra.query.feedback``),
        scored again; otherwise what was given."""
        if not (plan.ranked and self.config.search.feedback and not o.raw and rows):
            return plan, rows, metas, sql
        from ra.query.feedback import expand

        wider = expand(plan, self.reader, self.analyzer,
                       [(m.ord, r[0]) for m, r in zip(metas, rows, strict=True)])
        return (plan, rows, metas, sql) if wider is plan else (wider, *self._score(wider, o))

    def _with_proximity(self, plan: Plan, rows, metas, o: SearchOptions):
        """``(rows, metas)``: when ``[search] proximity`` is on, the best candidates
        re-ranked with a bonus for the query's words close together
        (``ra.query.proximity``); otherwise what was given."""
        scale = self.config.search.proximity
        if scale <= 0 or o.raw or not rows:
            return rows, metas
        from ra.query.proximity import rerank

        return rerank(rows, metas, plan, self.reader, self.analyzer, self.weights().k1,
                      scale)

    def _rank(self, rows, metas: list[ChunkMeta], o: SearchOptions, reweigh=None,
              named: Named | None = None):
        """Rank the scored chunks ``rows`` (``metas``: theirs). A chunk of a file the
        query typed, or numbered as it says (``named``), scores the best score more: the
        file ranks first; one of release notes scores ``RELEASE_NOTES`` times its score
        unless the query asks about releases."""
        s = self.config.search
        tainted = sorted(rows[0][4] or ()) if rows else []
        cands = [self._candidate(m, r[0]) for m, r in zip(metas, rows, strict=True)]
        if named is not None and named.notes_below:
            cands = [c._replace(score=c.score * RELEASE_NOTES) if release_notes(m.path) else c
                     for c, m in zip(cands, metas, strict=True)]
        if named is not None and (named.files or named.numbers) and cands:
            best = max(c.score for c in cands)
            levels = [named.level(m.path) for m in metas]
            top = max(levels)  # the closest the chunks come to a typed file
            cands = [c._replace(score=c.score + best) if top and level == top else c
                     for c, level in zip(cands, levels, strict=True)]

        def lookup(chunk_id: str):
            meta = self.reader.meta(chunk_id)
            if meta is None or _holds(tainted, meta.ord, meta.ord + meta.descendants):
                return None  # never aggregate into a chunk holding an excluded word
            return self._candidate(meta, 0.0)

        return ranking.rank_with_stats(
            cands, threshold=self._opt(o.aggregation_threshold, s.aggregation_threshold),
            cutoff_ratio=self._opt(o.cutoff_ratio, s.cutoff_ratio),
            limit=None, lookup=lookup, aggregation=o.aggregation, max_tokens=o.parts_budget,
            reweigh=reweigh, heads=named.heads if named is not None else None)

    def _fills(self, plan: Plan, rows, o: SearchOptions, limit: int) -> bool:
        """Whether a short keyword query's answer is filled up with partial ones: fewer
        chunks than the page asks for hold all its words, so the chunks holding most of
        them may follow (``[search] fill``). A page is never taken as smaller than the
        default one: the partial answers may outrank a weak chunk holding every word, so
        a smaller page that did not fill gave that chunk where a larger one left it out
        (Logseq's docs, "zotero integration setup": a changelog with ``-n 1``, the Zotero
        page with ``-n 2``); the first results of any page are now the same."""
        page = max(limit, self.config.search.limit or self.config.settings.default_limit)
        return (self.config.search.fill and not plan.ranked and len(plan.groups) > 1
                and o.sort == "score" and bool(rows) and bool(rows[0][2])
                and int(rows[0][3]) < o.offset + page)

    def _filled(self, plan: Plan, rows, ranked: list, o: SearchOptions, reweigh,
                named: Named | None = None) -> tuple[list, frozenset[str], int]:
        """``ranked`` (the chunks holding every word) followed by the best chunks holding
        some of them, scored as a long query's (BM25F × coordination) and ranked apart,
        the ids of those, and how many of ``ranked`` were left out: none overlaps a result
        above it (the same chunk, a section of it, a page holding it), and they follow
        only while relevance does not drop (the elbow, across the join too); a chunk
        holding every word that scores less than ``cutoff_ratio`` times the best of them
        is cut, as the elbow cuts (docsify's emoji list, 1,800 shortcodes, held
        "heading", "id" and "custom" and scored 1.1, the page on heading ids 7.1)."""
        if not ranked:
            return ranked, frozenset(), 0
        complete = {r[5] for r in rows}
        ratio = self._opt(o.cutoff_ratio, self.config.search.cutoff_ratio)
        least = ratio * ranked[-1].score  # what the first of them must score
        floor = least / (reweigh.factor if reweigh is not None else 1.0)

        def worth(scored) -> bool:  # could the best of them, aggregated, follow?
            best = max((r[0] for r in scored if r[5] not in complete), default=0.0)
            return best > 0 and ranking.most_aggregated(best) >= floor

        wide, metas_of, _ = self._score(replace(plan, ranked=True), o, worth)
        keep = [i for i, r in enumerate(wide) if r[5] not in complete]
        if not keep:
            return ranked, frozenset(), 0
        more, _ = self._rank([wide[i] for i in keep], [metas_of[i] for i in keep], o,
                             reweigh, named)
        spans = [(m.ord, m.ord + m.descendants)
                 for m in (self.reader.meta(c.id) for c in ranked)]
        added: list = []
        for cand in more:
            meta = self.reader.meta(cand.id)
            low, high = meta.ord, meta.ord + meta.descendants
            if any(a <= high and low <= b for a, b in spans):
                continue
            if cand.score <= 0 or (not added and cand.score < least):
                break
            added.append(cand)
        if added:  # relevance drops before the partial answers do: the elbow cuts those
            bar = ratio * added[0].score  # holding every word that score less than this
            strong = [c for c in ranked if c.score >= bar]
            if cut := [c.score for c in ranked if c.score < bar]:
                # nor does a partial answer follow that scores less than one of those
                # cut: typer's "add_typer nested subcommands name" said the three
                # holding every word (12.4 at most) were not shown, and showed partial
                # answers of 12.1, 11.4 and 10.1
                best_cut = max(cut)
                added = [c for c in added if c.score >= best_cut]
            return strong + added, frozenset(c.id for c in added), len(ranked) - len(strong)
        return ranked + added, frozenset(), 0

    @staticmethod
    def _candidate(meta, score: float) -> ranking.Candidate:
        return ranking.Candidate(meta.id, meta.doc_id, meta.parent_id, score,
                                 meta.sibling_count, meta.depth, meta.tree,
                                 tokens=meta.tokens)

    def _without_copies(self, ranked: list, upto: int | None,
                        texts: Contents) -> tuple[list, dict, dict]:
        """``ranked`` without the results whose text is an earlier one's, word for word (a
        page copied into a folder per version, as the PowerShell docs keep 5.1, 7.4, 7.5
        ...), or nearly (``near_copy``); the ids of each kept result's copies, and of its
        near copies. A copy scores what its original scores, under the same title, so it
        ranks right after it: only such results are compared (their words: a blank line
        more is the same text; or what a reader sees of them: cargo's command pages, made
        from one template, give each option an HTML anchor named for the page,
        ``<dt id="option-cargo-bench---target-dir">``, and "CARGO_TARGET_DIR" gave the
        same paragraph of eight of them first), and only until ``upto`` distinct results
        are found (all of them when None). A near copy is compared with the kept results
        of its title and file name only. ``texts``: the topic's contents, which the
        results reuse."""
        kept, copies, near, alike, words, distinct = [], {}, {}, {}, {}, {}
        sections: dict[tuple[str, str], list] = {}
        cold = not self.reader.resident  # each fetch of texts is a query over Parquet
        compared: list = []

        def content(meta) -> str:
            if cold and not compared:  # every text it may compare, at once
                compared[:] = [meta, *_compared(ranked, [self.reader.meta(c.id)
                                                         for c in ranked], upto)]
                texts.fetch(compared)
            return texts(meta)

        def text(meta) -> str:  # its words: a blank line more is no other text
            if meta.ord not in words:
                words[meta.ord] = " ".join(content(meta).split())
            return words[meta.ord]

        def vocabulary(meta) -> frozenset[str]:  # compared with each kept near title
            if meta.ord not in distinct:  # the words a reader sees, not the markup's
                content(meta)  # a short-lived reader's one lookup of the compared texts
                distinct[meta.ord] = frozenset(split_words(texts.plain(meta)))
            return distinct[meta.ord]

        def same_text(a, b) -> bool:  # as written first: most copies are byte for byte,
            return content(a) == content(b) or text(a) == text(b) or (  # and pages are long
                seen(a) == seen(b) and bool(seen(a)))  # or markup apart (``_without_copies``)

        def seen(meta) -> str:  # what a reader sees of it
            content(meta)  # a short-lived reader's one lookup of the compared texts
            return texts.plain(meta)

        def nearly(a, b) -> bool:  # the same: a text equal byte for byte needs no words
            if content(a) == content(b):  # (a folder copied: versioned docs)
                return bool(content(a)) and not content(a).isspace()
            return near_copy(vocabulary(a), vocabulary(b))

        rest: list = []
        for i, cand in enumerate(ranked):
            if upto is not None and len(kept) >= upto and cand.score != kept[-1].score:
                rest = ranked[i:]
                break
            meta = self.reader.meta(cand.id)
            key = (cand.score, *_family(meta))
            same = alike.setdefault(key, [])
            original = next((m for m in same if same_text(m, meta)), None) if same else None
            if original is not None:
                copies.setdefault(original.id, []).append(cand.id)
                continue
            section = sections.setdefault(_section(meta), [])
            original = next((m for m in section if m.path != meta.path and nearly(m, meta)),
                            None)
            if original is not None:
                near.setdefault(original.id, []).append(cand.id)
                continue
            same.append(meta)
            section.append(meta)
            kept.append(cand)
        kept = [self._newest(c, copies, near) for c in kept]
        return (kept + rest, {k: tuple(v) for k, v in copies.items()},
                {k: tuple(v) for k, v in near.items()})

    def _newest(self, cand, copies: dict[str, list], near: dict[str, list]):
        """``cand``, or the copy that stands for it and its copies when their paths are one
        page's versions (``newest_version``): the newest released, whose id an agent cites
        and gets. The oldest stood for them (its id first in order, or its shorter text
        scoring more): the MCP specification's "pagination nextCursor" showed
        ``2024-11-05/…/pagination.mdx``, with 2026-07-28's among its near copies."""
        same, close = copies.get(cand.id, []), near.get(cand.id, [])
        if not (same or close):
            return cand
        ids = [cand.id, *same, *close]
        pick = newest_version([self.reader.meta(i).path for i in ids])
        if pick is None or ids[pick] == cand.id:
            return cand
        chosen = ids[pick]
        copies.pop(cand.id, None)
        near.pop(cand.id, None)
        if chosen in same:  # word for word: the others are its copies as they were
            copies[chosen] = [cand.id if i == chosen else i for i in same]
            if close:
                near[chosen] = close
        else:  # a near copy: all the others are near copies of it
            near[chosen] = [cand.id, *same, *(i for i in close if i != chosen)]
        meta = self.reader.meta(chosen)
        old = self.reader.meta(cand.id).path
        moved = (i.replace(old, meta.path, 1) for i in cand.constituents)  # its sections
        return self._candidate(meta, cand.score)._replace(  # in the newest, where it has them
            constituents=tuple(i for i in moved if self.reader.meta(i) is not None))

    def _results(self, ranked, marked: list[str], o: SearchOptions,
                 copies: dict[str, tuple[str, ...]] | None = None,
                 near: dict[str, tuple[str, ...]] | None = None,
                 some: AbstractSet[str] = frozenset(), *, texts: Contents,
                 variants: dict[str, str] | None = None) -> list[Result]:
        """The results of ``ranked``, their snippets marking the terms ``marked``
        (``variants``: those that stand for a word typed, ``Plan.variants``)."""
        metas = [self.reader.meta(c.id) for c in ranked]
        texts.fetch(metas)
        texts.fetch_plain(metas)
        terms = matcher(set(marked), self.analyzer, variants)  # one key for every snippet
        out = []
        for cand, meta in zip(ranked, metas, strict=True):
            content = texts(meta)
            out.append(Result(
                meta.id, meta.tree, meta.path, meta.title, meta.breadcrumb, cand.score,
                snippet_of(texts.plain(meta), terms),
                content,
                meta.tokens or estimate_tokens(content),
                constituents=tuple(c for c in cand.constituents if c != meta.id),
                line=meta.line, ord=meta.ord, descendants=meta.descendants,
                copies=copies.get(meta.id, ()) if copies else (),
                near_copies=near.get(meta.id, ()) if near else (),
                partial=meta.id in some))
        return out


SORTS = ("score", "date", "path")

def newest_version(paths: list[str]) -> int | None:
    """The index of the newest of ``paths``, the same page in folders (or files) named for
    versions, which is all they differ in: released versions by their numbers, then
    ``latest``; one not released yet (``draft``, ``next``) only when none is. None when
    the paths differ otherwise."""
    parts = [p.split("/") for p in paths]
    if len({len(p) for p in parts}) != 1:
        return None
    differ = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    if len(differ) != 1:
        return None
    from ra.pipeline.discover import version_key

    keys = [version_key(p[differ[0]]) for p in parts]
    if None in keys:
        return None
    return max(range(len(keys)), key=lambda k: keys[k])


class Contents:
    """The markdown of chunks with their subsections (``IndexReader.contents``), and what a
    reader sees of them as one line (``IndexReader.plains``), fetched for one topic: the
    copies compared and the results shown read each once. A long-lived reader reads the
    lines of the results shown only (at five times cpp-docs, four copies of every page,
    reading those of the copies compared too cost the ranking phase 0.1 ms, p95 6.4 →
    6.8 ms); a short-lived one reads both at once, one query over Parquet."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self.both = not reader.resident
        self.known: dict[int, str] = {}  # by ord
        self.lines: dict[int, str] = {}

    def fetch(self, metas) -> None:
        """Fetch the contents of those of ``metas`` not fetched yet, in one lookup."""
        missing = {m.ord: m.descendants for m in metas if m.ord not in self.known}
        if not missing:
            return
        if self.both:
            found = self.reader.texts(list(missing.items()))
            for o in missing:
                self.known[o], self.lines[o] = found.get(o, ("", ""))
        else:
            found = self.reader.contents(list(missing.items()))
            self.known.update((o, found.get(o, "")) for o in missing)

    def fetch_plain(self, metas) -> None:
        """Fetch what a reader sees of those of ``metas`` not fetched yet, in one lookup."""
        missing = {m.ord: m.descendants for m in metas if m.ord not in self.lines}
        if missing:
            found = self.reader.plains(list(missing.items()))
            self.lines.update((o, found.get(o, "")) for o in missing)

    def __call__(self, meta) -> str:
        self.fetch([meta])
        return self.known[meta.ord]

    def plain(self, meta) -> str:
        """What a reader sees of ``meta``'s chunk and its subsections, as one line."""
        self.fetch_plain([meta])
        return self.lines[meta.ord]


#: What a chunk of release notes scores of its score, for a query that does not ask about
#: releases (``release_notes``, ``asks_releases``): a changelog names every feature in a
#: line, short chunks that BM25F favours, and came before the pages on the features
RELEASE_NOTES = 0.5
_NOTES_NAMES = frozenset({"changelog", "changes", "release-notes", "release_notes",
                          "releasenotes", "releases", "whats-new", "whatsnew"})
_NOTES_FOLDERS = frozenset({"changelog", "changelogs", "releases", "release-notes",
                            "release_notes"})
#: A blog's folders, and a post's name that holds a release's version (after the date
#: that opens it: ``2020-03-21-2.0.0``, ``2018-04-09-plugin-php-0.1``; Vitest's
#: ``vitest-3-2``, a minor's numbers joined by a dash at its end, ``vitest-3``, a name
#: and a major) or announces one (Vite's ``announcing-vite5``)
_BLOG_FOLDERS = frozenset({"blog", "posts", "_posts", "news"})
_RELEASED = re.compile(r"(?:^|[-_])v?\d+(?:\.\d+)+(?:$|[-_])|[-_]v?\d+-\d+$"
                       r"|^[a-z]+-v?\d+$|(?:^|[-_])(?:announcing|released)(?:[-_]|$)")
#: a query with one of these words, or a digit (a version), asks about releases. Not
#: "version": "how to pin a python version" (uv) asks about the pages on versions, and
#: gave two changelog entries among the first three
_RELEASE_WORDS = frozenset({"release", "released", "releases", "changelog", "changes",
                            "changed", "new", "history", "whats", "deprecated",
                            "deprecation", "breaking", "removed", "fixed"})


@lru_cache(maxsize=16384)  # asked of each candidate of every search: 0.39 µs; cached 0.04
def release_notes(path: str) -> bool:
    """Whether the tree-relative ``path`` is a page of release notes: a file named so
    (``CHANGELOG.md``, ``release-notes.md``, ``whats-new.md``) or one in a folder named
    so (``changelog/index.md``, Material for MkDocs; ``changelog/2023-06-new-cli.mdx``,
    shadcn/ui; ``Release notes/v1.0.0.md``, Obsidian's help vault: a space is a dash).
    Not ``history.md``: tldr's page of the ``history`` command. A blog's post named for a
    release is one too (``blog/2020-03-21-2.0.0.md``, ``blog/2018-04-09-plugin-php-0.1.md``:
    Prettier's blog, its release notes, outranked the options they announce).
    """
    parts = path.lower().replace(" ", "-").split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return (name in _NOTES_NAMES or not _NOTES_FOLDERS.isdisjoint(parts[:-1])
            or (not _BLOG_FOLDERS.isdisjoint(parts[:-1]) and bool(_RELEASED.search(name))))


def asks_releases(query: str) -> bool:
    """Whether a query asks about releases: a word of ``_RELEASE_WORDS`` typed on its own
    (not a part of "rerun-if-changed"), or a digit."""
    return any(ch.isdigit() for ch in query) or any(
        w.strip(_EDGES).lower() in _RELEASE_WORDS for w in query.split())


_EDGES = "\"'`.,;:!?()[]{}<>*_"


class Named(NamedTuple):
    """What a query says of pages: the paths of files it typed (``Plan.files``), the
    numbers of numbered pages (``Plan.numbers``), and whether release notes rank below
    the pages they announce (``RELEASE_NOTES``: it does not ask about releases)."""

    files: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    notes_below: bool = False
    #: whether a chunk's heading holds the query's words (``ra.query.named.heads_of``)
    heads: Callable[[ranking.Candidate], bool] | None = None

    def level(self, path: str) -> int:
        """How closely the tree-relative ``path`` is named: ``in_files``, and 2 for a
        page numbered as the query says."""
        return in_files(path, self.files) or 2 * numbered(path, self.numbers)


#: a file's or folder's leading number, without its zeros: ``0243-trait-based-….md``
_NUMBERED = re.compile(r"(?:^|/)0*(\d+)(?=[-_.]|/|$)")


def numbered(path: str, numbers: tuple[str, ...]) -> bool:
    """Whether a file or folder of ``path`` is numbered as one of ``numbers`` (without
    leading zeros) says: the design records of a project name their pages so (Rust's
    RFCs ``text/0243-trait-based-exception-handling.md``, Kubernetes' KEPs
    ``sig-node/1287-in-place-update-pod-resources/README.md``, ``adr/0005-….md``)."""
    return bool(numbers) and any(n in numbers for n in _NUMBERED.findall(path))


def in_files(path: str, files: tuple[str, ...]) -> int:
    """Whether the tree-relative ``path`` is one of the ``files`` a query typed: 2 for the
    same path in any case, or one that ends with it at a folder (``SUMMARY.md`` is
    ``src/SUMMARY.md``); 1 for a path the typed one ends with, as a path typed from the
    project's root does (``docs/concepts/validators.md`` is the tree ``docs``'
    ``concepts/validators.md``, but ``site/README.md`` is not the root's ``README.md``
    where ``site/README.md`` itself is indexed: ranking prefers the closest); 0 else."""
    path = path.lower()
    if any(path == f or path.endswith("/" + f) for f in files):
        return 2
    return int(any(f.endswith("/" + path) for f in files))


def _compared(ranked: list, metas: list, upto: int | None) -> list:
    """Of ``metas`` (those of a topic's ``ranked`` results), the ones whose text
    ``Searcher._without_copies`` may compare, and the first ``upto`` (shown next).

    It compares results sharing a title and number of subsections (copies), or a title
    and file name (near copies), and looks until ``upto`` results are kept (at all of
    them when None); a result that shares neither with an earlier one is kept, so it
    looks no further than the ``upto``-th such result and those scoring as it does. A
    short-lived reader fetches these texts in one query: at five times cpp-docs, four
    copies of every page, a first search asked DuckDB for 13 texts one at a time, 270 ms
    of its 390."""
    from collections import Counter

    families, sections, new, end = set(), set(), 0, len(metas)
    for i, m in enumerate(metas):
        new += _family(m) not in families and _section(m) not in sections
        families.add(_family(m))
        sections.add(_section(m))
        if upto is not None and new >= upto:
            end = i + 1
            while end < len(metas) and ranked[end].score == ranked[i].score:
                end += 1
            break
    looked = metas[:end]
    twice = Counter(map(_family, looked)), Counter(map(_section, looked))
    return [*(looked[:upto] if upto is not None else ()),
            *(m for m in looked if twice[0][_family(m)] > 1 or twice[1][_section(m)] > 1)]


def _family(meta) -> tuple:
    """What a copy shares with its original besides its score: title, subsections."""
    return (meta.title, meta.descendants)


def _outranked_note(n: int, ratio: float) -> str:
    """What a topic says when the chunks holding every word scored too low to show."""
    return (f"{plural(n, 'chunk')} holding every word {'scores' if n == 1 else 'score'} less than "
            f"{ratio:g} times the best of those holding some of them: not shown")


def _section(meta) -> tuple:
    """What a near copy shares with its original: title and file name, in any case and
    with any suffix (Jekyll's ``History.markdown`` and the ``docs/_docs/history.md``
    made of it); files named for versions share theirs (OpenAPI's ``versions/3.1.2.md``
    and ``versions/3.2.0.md``: one specification, a file per release), and titles that
    are their folder's name theirs: a workspace's packages each have a README titled
    for the package, and ruff's 31 crates say the same in theirs ("The Rust API exposed
    here is unstable ... See Ruff's crate versioning policy"): "what counts as a breaking
    change in ruff versioning policy" gave 31 of them first, the policy 33rd."""
    folder, _, name = meta.path.rpartition("/")
    title = meta.title
    if folder and _bare(title) == _bare(folder.rpartition("/")[2]):
        title = FOLDER_NAMED
    return (title, VERSIONED if _versioned(name) else name.rsplit(".", 1)[0].lower())


def _bare(name: str) -> str:
    """``name`` lowercased, its letters and digits only (``ruff_cache``, ``Ruff Cache``)."""
    return "".join(c for c in name.lower() if c.isalnum())


#: The title ``_section`` gives a chunk titled for its file's folder
FOLDER_NAMED = "\0folder"


def _versioned(name: str) -> bool:
    """Whether a file's ``name`` names a version (``ra.pipeline.discover.version_key``),
    looked at only when it starts as one does, a digit or a "v" then a digit somewhere
    (1.2 µs more a candidate otherwise, up to 0.2 ms of a warm search)."""
    if not (name[:1].isdigit() or name[:1] in ("v", "V") and _DIGIT.search(name)):
        return False
    from ra.pipeline.discover import version_key

    return version_key(name) is not None


_DIGIT = re.compile(r"\d")
#: The file name ``_section`` gives every file named for a version
VERSIONED = "\0version"


def _only_flags(query: str, node) -> tuple[str, object, str] | None:
    """``-Recurse``, ``-rf``: a query whose only words are ``-word`` negations excludes
    everything and finds nothing; it names command-line flags. ``(query, node, note)``:
    the query with each such word quoted, which searches for it, its parse, and the note
    that says so. None for any other query (``NOT x`` alone stays the error it is)."""
    from ra.query.ast import positive_words

    def words(node) -> list:
        return [w for w in positive_words(node) if w.field != "tree"]

    spans = dash_negations(query)
    if not spans or words(node):
        return None
    flags = [query[a:b] for a, b in spans]
    for a, b in reversed(spans):
        query = f'{query[:a]}"{query[a:b]}"{query[b:]}'
    try:
        quoted = parse(query)
    except QueryError:
        return None
    if not words(quoted):
        return None
    return query, quoted, (f"{' and '.join(flags)} alone would exclude every chunk; "
                           f"searched for {'them' if len(flags) > 1 else 'it'} as written")


#: The share of their distinct words two sections with one title, in files of one name,
#: hold in common (of the words either holds) from which the later is a near copy of
#: the earlier: a page kept in a folder per version, edited in one of them.
NEAR_COPY = 0.8


def near_copy(x: AbstractSet[str], y: AbstractSet[str]) -> bool:
    """Whether two texts whose distinct lowercased words are ``x`` and ``y`` share
    ``NEAR_COPY`` of them."""
    both = len(x & y)
    return bool(x or y) and both >= NEAR_COPY * (len(x) + len(y) - both)


def _joined(note: str | None, more: str | None) -> str | None:
    return more if note is None else note if more is None else f"{note}; {more}"


def syntax_note(error: QueryError) -> str:
    """What a topic says when its query was read as plain words (``parse_lenient``)."""
    where = f" at character {error.position + 1}" if error.position is not None else ""
    return (f"not valid query syntax ({error.message}{where}); searched for its words "
            "instead (strict mode reports the error)")


def _page(ranked: list, o: SearchOptions, limit: int, meta) -> list:
    """Order the relevant results (``--sort``) and cut the requested page."""
    if o.sort not in SORTS:
        raise QueryError(f"unknown sort {o.sort!r}", syntax=False,
                         hint="sort by " + ", ".join(SORTS))
    if o.sort == "date":
        ranked = sorted(ranked, key=lambda c: (-meta(c.id).mtime_ns, c.id))
    elif o.sort == "path":
        ranked = sorted(ranked, key=lambda c: (c.tree, meta(c.id).path, meta(c.id).ord))
    return ranked[o.offset:o.offset + limit]


def filters_of(o: SearchOptions) -> Filters:
    """The SQL filters of a call's options (dates and globs validated here)."""
    try:
        regex = path_regex(o.path) if o.path else None
    except ValueError as exc:
        raise QueryError(f"bad --path pattern: {exc}", syntax=False) from None
    return Filters(trees=tuple(o.trees), include_archived=o.include_archived,
                   tags=tuple(o.tags), path_regex=regex,
                   since_ns=_date_ns(o.since, "since"), until_ns=_date_ns(o.until, "until"))


#: A glob's characters: a ``--path`` without any names a file or a folder
_GLOB_CHARS = re.compile(r"[*?\[{]")


def path_regex(pattern: str) -> str:
    """The regular expression of a ``--path``: a glob, where a folder (``kubernetes/``,
    or a path with no glob character, ``kubernetes``) is also everything under it.
    "rake" with ``--path kubernetes/`` answered "no results" on GOV.UK's developer docs,
    whose ``kubernetes/`` pages say "rake": an agent passes the folder it means."""
    from ra.config.globs import translate

    pattern = pattern.removeprefix("./")  # the tree's folder: paths are relative to it
    if pattern.endswith("/"):
        return translate(pattern + "**")
    if _GLOB_CHARS.search(pattern):
        return translate(pattern)
    return f"{translate(pattern)}(?:/.*)?"


def _date_ns(text: str | None, which: str) -> int | None:
    """Nanoseconds since the epoch of an ISO date/datetime; ``until`` dates are inclusive.
    Any date Python reads is accepted (``0001-01-01``, ``9999-12-31``): times are held to
    the range of the ``mtime_ns`` column (years 1677 to 2262), which no file leaves."""
    import datetime as dt

    if not text:
        return None
    try:
        if len(text) == 10:
            when = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
            if which == "until":
                when = when + dt.timedelta(days=1) if when.year < dt.MAXYEAR else None
        else:
            when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(f"--{which}: not an ISO date: {text!r}", syntax=False,
                         hint="e.g. 2026-11-21 or 2026-11-21T14:30") from None
    if when is None:  # the day after 9999-12-31: no upper bound
        return INT64[1]
    if when.tzinfo is None:
        try:
            when = when.astimezone()  # local time
        except (OverflowError, ValueError, OSError):  # beyond what the C library maps
            when = when.replace(tzinfo=dt.UTC)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    ns = (when - epoch) // dt.timedelta(microseconds=1) * 1000
    return min(max(ns, INT64[0]), INT64[1])


#: The range of a BIGINT (``mtime_ns``).
INT64 = (-(1 << 63), (1 << 63) - 1)


def _holds(sorted_ords: list[int], low: int, high: int) -> bool:
    """Whether any of ``sorted_ords`` lies in ``low..high``."""
    from bisect import bisect_left

    i = bisect_left(sorted_ords, low)
    return i < len(sorted_ords) and sorted_ords[i] <= high


def _fit(order: list[Result], topics: list[Topic], budget: int | None
         ) -> tuple[object, int, set[int]]:
    """``order`` packed into ``budget`` less the lines around the topics' results
    (``render.lines_around``) and the closing line (longer when it says what was cut):
    the packing, the tokens kept for those lines, and the results (by ``id``) shown
    under an earlier topic whose result holding them the packing left out there.

    Those are left out too ("(shown above under ...)" pointed at nothing: two topics of
    the Rust book at 150 tokens gave none of the first's results and three such lines
    under the second), and a topic left with nothing to show has a line saying so (30
    tokens: "struct methods" beside "structs" at 150 tokens printed 154): packed again
    without the ones and with room for the other, until the packing leaves out no more
    (each round only adds to both)."""
    empty: set[int] = set()
    gone: set[int] = set()
    while True:
        reserve = sum(map(estimate_entry, lines_around(topics, empty, gone))) + BUDGET_LINE
        packing = pack(order, None if budget is None else max(0, budget - reserve))
        if budget is not None and (packing.skipped or any(
                p.tier != "full" for p in packing.items)):  # the line says what it cut
            reserve += CUT_LINE - BUDGET_LINE
            packing = pack(order, max(0, budget - reserve))
        if budget is None:
            return packing, reserve, gone
        kept = {id(p.item) for p in packing.items}
        now = _pointing_nowhere(topics, kept)
        nothing = {i for i, t in enumerate(topics) if t.results and not any(
            id(r) in kept or (r.seen_in is not None and id(r) not in now | gone)
            for r in t.results)}
        if now <= gone and nothing <= empty:
            return packing, reserve, gone
        gone |= now
        empty |= nothing


#: A query that is one path to a file (a folder, a name, a suffix): what an agent about to
#: edit the file types
_FILE_PATH = re.compile(r"\S*/\S*[^\s/]\.[A-Za-z0-9]{1,8}")


#: A compound's separators: ``.``, ``-``, ``:``, ``/``, ``_`` between a word's
#: characters (``$state.frozen``, ``class:active``, ``state_unsafe_mutation``)
_JOINS = re.compile(r"(?<=[^\W_])[-.:/_]+(?=[^\W_])")
_COMPOUND = re.compile(r"[^\s\"()]*[^\W_][-.:/_]+[^\W_][^\s\"()]*")


def _loose(query: str) -> str:
    """``query`` with its compounds' parts apart, as words. A compound matches as its
    joined word, its phrase or all its parts in a chunk, and one whose parts no chunk
    holds together found nothing, where its parts typed apart find the chunks holding
    most of them: on Svelte's docs ``$state.frozen`` (an API renamed ``$state.raw``),
    ``class:active`` and ``$effect.active`` said "no results"."""
    return _JOINS.sub(" ", query)


def _compounds(query: str) -> str:
    """The compounds of ``query``, quoted, for a note."""
    return ", ".join(repr(c) for c in dict.fromkeys(_COMPOUND.findall(query)))


def _path_note(query: str) -> str | None:
    """What a topic that found nothing says when its query is a file's path: the notes
    about a file are found by its path's and its text's words (``context``). Searched as
    words, every part of the path must be in one chunk: vite's
    ``packages/vite/src/node/server/middlewares/proxy.ts`` found nothing, and said so."""
    if not _FILE_PATH.fullmatch(query.strip()):
        return None
    return ("no chunk holds every part of this path; to find the notes about a file, "
            "give its path to context (ra context PATH)")


def _pointing_nowhere(topics: list[Topic], kept: AbstractSet[int]) -> set[int]:
    """The results (by ``id``) shown under an earlier topic whose result holding them the
    packing left out there (``kept``: the ``id``s of the results it kept)."""
    shown: dict[str, list[tuple[int, int]]] = {}  # topic → the ords its results hold
    gone: set[int] = set()
    for topic in topics:
        for r in topic.results:
            if r.seen_in is None:
                if id(r) in kept:
                    shown.setdefault(topic.query, []).append((r.ord, r.ord + r.descendants))
            elif not any(lo <= r.ord <= hi for lo, hi in shown.get(r.seen_in, ())):
                gone.add(id(r))
    return gone


def _round_robin(lists: list[list[Result]]) -> list[Result]:
    out: list[Result] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out += [x[i] for x in lists if i < len(x)]
    return out


def _filters_shown(o: SearchOptions) -> dict:
    """The filters and paging of a call, as ``--explain`` reports them."""
    shown = {"trees": list(o.trees), "tags": list(o.tags), "path": o.path,
             "since": o.since, "until": o.until, "include_archived": o.include_archived,
             "offset": o.offset, "sort": None if o.sort == "score" else o.sort}
    return {k: v for k, v in shown.items() if v not in (None, [], False, 0)}


def _explain(node, plan: Plan, sql, stats, filters: dict, timings: dict) -> dict:
    from ra.query.ast import to_dict, to_query_string
    from ra.store.layout import FIELDS

    optional = plan.score_only()
    clauses = [{
        "clause": c.index, "kind": c.kind, "text": c.text,
        "fields": [FIELDS[f] for f in c.fields], "boost": c.boost,
        "negated": c.index in plan.negative, "slop": c.slop, "tree": c.tree,
        "feedback": c.feedback, "score_only": c.index in optional,
        "terms": [{"term": a.term, "df": a.df, "in_index": a.term_id is not None,
                   "distance": a.distance, "weight": a.weight, "word": a.word}
                  for a in c.alts],
    } for c in plan.clauses]
    return {
        "ast": to_dict(node), "parsed": to_query_string(node), "ranked": plan.ranked,
        "clauses": clauses,
        "filters": filters,
        "sql": sql.text, "params": sql.params,
        "pipeline": {"candidates": stats.candidates, "aggregated": stats.aggregated,
                     "after_elbow": stats.elbow, "final": stats.final},
        "timings_ms": {k: round(v * 1000, 3) for k, v in timings.items()},
    }
