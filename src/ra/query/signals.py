"""Context signals: which words of a file an agent is about to edit say what it is about.

``extract_signals`` reads one file and ranks its terms, in five steps:

1. sample: the first ``sample_size`` bytes; a binary file (NUL byte) is skipped with a
   warning (``UnreadableFile``); a file that does not exist yet or is empty (one an agent
   is about to write) has its path and rules alone, with a warning;
2. path: components of the project-relative path, split at ``_ - .`` and camelCase (a
   camelCase name is also kept whole: docs write ``editLink``), lowercased, noise
   (``src``, ``tests``, extensions…) and stopwords dropped; a file-name word weighs 4, a
   directory word 3 (the original implementation's weights);
3. rules: ``config.match_rules(path)`` injects terms (query boost 2), restricts trees
   (intersected with ``--tree``), names documents to include first, overrides search
   settings;
4. content: the words of the sample (``ra.text.analysis.split_words``), minus stopwords
   (``ra.text.stopwords.for_file``), pure numbers, and words shorter than ``min_word_length``
   or longer than ``max_word_length``; in markdown a word in an h1 counts 3, h2–h3 2,
   h4–h6 1.5, body 1. Words are stemmed with the index's analyzer so they meet index terms;
   a term whose weighted frequency in the content is below ``min_term_frequency`` is
   dropped unless the path names it;
5. rank: score = weighted frequency × IDF, IDF = ln(1 + (N − df + 0.5) / (df + 0.5)) from
   the index, over the selected trees only when trees are restricted (one DuckDB query over
   postings ⋈ meta); terms absent there are dropped; the top ``terms`` are selected. Each
   is boosted by 1 + ln(tf) relative to the strongest selected term: BM25F applies the IDF
   again when the query runs, so boosting by the score, as Lucene's MoreLikeThis does,
   would count it twice. On six small Rust programs against the Rust book (each with the
   chapter a reader would pick) the log-tf boost ranked that chapter higher: MRR 0.83,
   against 0.72 for score boosts.

``ra.query.context`` searches with what this module finds.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath

from ra.config.settings import MatchedRules, effective_trees
from ra.errors import RaError
from ra.query import ast
from ra.query.bm25f import idf
from ra.text import is_markdown
from ra.text.analysis import split_words
from ra.text.stopwords import STOPWORDS, for_file, is_stopword

FILENAME_WEIGHT, DIRECTORY_WEIGHT, RULE_BOOST = 4.0, 3.0, 2.0
HEADING = {1: ("md:h1", 3.0), 2: ("md:h2-h3", 2.0), 3: ("md:h2-h3", 2.0),
           4: ("md:h4-h6", 1.5), 5: ("md:h4-h6", 1.5), 6: ("md:h4-h6", 1.5)}
#: Path words that say nothing of a file: folders every project has, extensions, and the
#: names of a folder's page (``README.md``, ``index.md``: "readme" found the notes on
#: writing READMEs for a new note ``docs/3000/README.md`` of a zettelkasten)
NOISE = frozenset("src lib bin test tests docs doc rs py js ts jsx tsx mjs go md markdown "
                  "txt html htm css json yaml yml toml xml c h cc cpp hpp cxx java kt rb "
                  "php cs swift sh readme index".split())
EXPLAIN_EXTRA_TERMS = 10  # runners-up shown by --explain after the selected terms
_PATH_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_]+")


class ContextError(RaError):
    """Nothing in the given files can be analysed or found in the index."""


class UnreadableFile(ContextError):
    """A file that is missing, binary or empty (skipped with a warning)."""


class MissingFile(UnreadableFile):
    """A file that does not exist (yet): an agent about to create it."""



# --- words ---------------------------------------------------------------------------------

@dataclass
class WeightedWord:
    """A surface word with its strongest source (``path:filename``, ``md:h1``, ``body``…),
    that source's weight, its number of occurrences and its weighted frequency ``tf``."""

    word: str
    source: str
    weight: float
    frequency: int = 1
    tf: float = 0.0

    def add(self, source: str, weight: float, count: int = 1) -> None:
        self.frequency += count
        self.tf += weight * count
        if weight > self.weight:
            self.source, self.weight = source, weight


def _collect(out: dict[str, WeightedWord], word: str, source: str, weight: float,
             count: int = 1) -> None:
    """Add ``count`` occurrences of ``word`` (weights are multiples of 0.5, so ``tf`` is
    exact whatever the order of the additions)."""
    if word in out:
        out[word].add(source, weight, count)
    else:
        out[word] = WeightedWord(word, source, weight, count, weight * count)


def _wordlike(word: str, min_length: int, max_length: int | None) -> bool:
    return (len(word) >= min_length and not word.isdigit()
            and (max_length is None or len(word) <= max_length))


def tokenize(text: str, min_length: int = 1, max_length: int | None = None) -> list[str]:
    """Lowercased words of ``text`` (the index's splitting), length-filtered, no numbers."""
    return [w for w in split_words(text) if _wordlike(w, min_length, max_length)]


def _path_words(component: str) -> list[str]:
    """The words of a path component, split at ``_ - .`` and camelCase; a camelCase
    name is also one word (``EditLink`` → edit, link, editlink): docs write the name
    as code, ``editLink``, which the analyzer reads as one word."""
    out = []
    for part in re.split(r"[\W_]+", component):
        words = [w.lower() for w in _PATH_WORD.findall(part)]
        out += [*words, part.lower()] if len(words) > 1 and part.isalpha() else words
    return out


def path_terms(path: str, *, min_length: int = 4,
               stopwords: frozenset[str] = STOPWORDS) -> list[WeightedWord]:
    """Words of a relative path: file-name words weigh 4, directory words 3; noise
    components and extensions, stopwords, short words and numbers are dropped (a
    zettelkasten's ``docs/3000/README.md`` searched "3000": "$3000", "localhost:3000")."""
    parts = [p for p in PurePosixPath(path).parts if p not in ("/", ".", "..")]
    out: dict[str, WeightedWord] = {}
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        name = PurePosixPath(part).stem if last and PurePosixPath(part).suffix else part
        source, weight = ("path:filename", FILENAME_WEIGHT) if last else (
            "path:dir", DIRECTORY_WEIGHT)
        for word in _path_words(name):
            if (len(word) >= min_length and word not in NOISE and word.isalnum()
                    and not word.isdigit() and not is_stopword(word, stopwords)):
                _collect(out, word, source, weight)
    return list(out.values())


def markdown_pieces(text: str) -> list[tuple[str, str, float]]:
    """``(text, source, weight)``: each heading by level, then the body without them;
    YAML frontmatter is dropped first."""
    from ra.text.document import parse_frontmatter
    from ra.text.headings import extract_headings

    _, body, _ = parse_frontmatter(text)
    raw, pos, rest, pieces = body.encode("utf-8"), 0, [], []
    for h in extract_headings(body):
        rest.append(raw[pos:h.start])
        pos = h.end
        pieces.append((h.text, *HEADING[h.level]))
    rest.append(raw[pos:])
    pieces.append((b"\n".join(rest).decode("utf-8", "replace"), "body", 1.0))
    return pieces


#: An address's scheme and host in a source file's comments and strings
#: (``https://typer.tiangolo.com``, a license header's ``http://www.apache.org``): their
#: words ("https", "tiangolo", "apache") say where something is, not what the file is
#: about, and were among the terms of typer's ``params.py``. The path stays: eslint's
#: rules link their page, ``…/docs/latest/rules/global-require``, the rule's name
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/\"'`<>)\]]*")


def content_words(text: str, *, markdown: bool, min_length: int = 3,
                  max_length: int | None = None,
                  stopwords: frozenset[str] = STOPWORDS) -> list[WeightedWord]:
    """The analysable words of a file's text with their weighted frequencies, in order of
    first occurrence. Each piece is split once and counted; only its distinct words are
    filtered (a source file repeats its words: the 2,016 lines of C++ of the context
    benchmark hold 7,290 words, 203 distinct)."""
    pieces = markdown_pieces(text) if markdown else [(_URL.sub(" ", text), "body", 1.0)]
    out: dict[str, WeightedWord] = {}
    for piece, source, weight in pieces:
        for word, count in Counter(split_words(piece)).items():
            if _wordlike(word, min_length, max_length) and not is_stopword(word, stopwords):
                _collect(out, word, source, weight, count)
    return list(out.values())


def sample_content(file: str | Path, sample_size: int) -> str:
    """The first ``sample_size`` bytes of a text file, decoded as for indexing
    (``ra.pipeline.discover.decode_text``: invalid bytes replaced). Binary means a NUL
    byte among the first ``SNIFF_BYTES`` and no UTF-16 or UTF-32 byte-order mark, as for
    indexing."""
    from ra.pipeline.discover import SNIFF_BYTES, decode_text, looks_binary

    path = Path(file)
    if not path.exists():
        raise MissingFile(f"{file}: no such file; skipped")
    if path.is_dir():
        raise UnreadableFile(f"{file}: a folder; skipped (give its files: "
                             f"{str(file).rstrip('/')}/*)")
    if not path.is_file():
        raise UnreadableFile(f"{file}: not a file; skipped")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max(sample_size, SNIFF_BYTES))
    except OSError as exc:
        raise UnreadableFile(f"{file}: cannot be read ({exc.strerror}); skipped") from None
    if looks_binary(raw):
        raise UnreadableFile(f"{file}: binary file; skipped")
    return decode_text(raw[:sample_size])[0]


# --- terms ---------------------------------------------------------------------------------

@dataclass
class ContextTerm:
    """An index term chosen (or considered) for a file's query."""

    term: str  # the index term (a stem; for a multi-word rule term, stems joined by spaces)
    word: str  # the surface word used in the query text
    source: str  # path | rule | content | path+content: where it was found
    origin: str  # finer: path:filename, path:dir, rule, md:h1, md:h2-h3, md:h4-h6, body
    frequency: int  # occurrences in the path and content
    tf: float  # weighted frequency
    df: int | None = None  # chunks holding it (in the selected trees)
    idf: float | None = None
    score: float = 0.0  # tf × idf
    boost: float = 0.0  # its boost in the query; 0 when not selected

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("tf", "idf", "score", "boost"):
            out[key] = None if out[key] is None else round(out[key], 4)
        out["selected"] = self.boost > 0
        return out


@dataclass
class _Tally:
    term: str
    words: Counter = field(default_factory=Counter)
    frequency: int = 0
    tf: float = 0.0
    content_tf: float = 0.0
    kinds: set[str] = field(default_factory=set)  # path, content
    origin: tuple[float, str] = (0.0, "")

    def add(self, w: WeightedWord, kind: str) -> None:
        self.words[w.word] += w.frequency
        self.frequency += w.frequency
        self.tf += w.tf
        self.content_tf += w.tf if kind == "content" else 0.0
        self.kinds.add(kind)
        self.origin = max(self.origin, (w.weight, w.source))

    def to_term(self) -> ContextTerm:
        source = "+".join(k for k in ("path", "content") if k in self.kinds)
        word = min(self.words, key=lambda w: (-self.words[w], w))
        return ContextTerm(self.term, word, source, self.origin[1], self.frequency, self.tf)


def tally(path_words: list[WeightedWord], words: list[WeightedWord], analyzer,
          min_term_frequency: float) -> list[ContextTerm]:
    """Stem and merge path and content words into terms; rare content-only terms drop."""
    groups = (("path", path_words), ("content", words))
    stems = dict(zip((w.word for _, ws in groups for w in ws),
                     analyzer.stem_all([w.word for _, ws in groups for w in ws]), strict=True))
    tallies: dict[str, _Tally] = {}
    for kind, ws in groups:
        for w in ws:
            tallies.setdefault(stems[w.word], _Tally(stems[w.word])).add(w, kind)
    return [t.to_term() for t in tallies.values()
            if "path" in t.kinds or t.content_tf >= min_term_frequency]


class Vocabulary:
    """Document frequencies for ranking terms: of the whole index, or of some trees."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self._trees: tuple[str, ...] | None = None
        self._n: dict[tuple[str, ...], int] = {}

    def all_trees(self) -> tuple[str, ...]:
        if self._trees is None:
            self._trees = tuple(r[0] for r in self.reader.query(
                "SELECT DISTINCT tree FROM meta ORDER BY 1"))
        return self._trees

    def lookup(self, terms: list[str], trees: tuple[str, ...]
               ) -> tuple[dict[str, int], int]:
        """``(term → df, N)`` for the terms present in ``trees`` (all when empty)."""
        found = self.reader.lookup_terms(terms)
        if not trees or set(self.all_trees()) <= set(trees):
            return {t: df for t, (_, df) in found.items()}, self.reader.stats.chunks
        marks = ", ".join("?" * len(trees))
        if trees not in self._n:  # N counts indexed chunks, as the index's statistics do
            self._n[trees] = self.reader.query(
                "SELECT count(*) FROM meta m JOIN field_lengths l ON l.ord = m.ord WHERE "
                f"m.tree IN ({marks}) AND l.len_title + l.len_tags + l.len_path + l.len_body "
                "> 0", list(trees))[0][0]
        if not found:
            return {}, self._n[trees]
        ids = {term_id: t for t, (term_id, _) in found.items()}
        rows = self.reader.query(
            "SELECT p.term_id, count(DISTINCT p.ord) FROM postings p JOIN meta m ON "
            f"m.ord = p.ord WHERE p.term_id IN ({', '.join('?' * len(ids))}) AND m.tree "
            f"IN ({marks}) GROUP BY p.term_id", [*ids, *trees])
        return {ids[i]: df for i, df in rows if df > 0}, self._n[trees]


def rank_terms(terms: list[ContextTerm], dfs: dict[str, int], n: int,
               limit: int) -> list[ContextTerm]:
    """Terms present in the index (``dfs``, of ``n`` chunks), best first; the top ``limit``
    get a boost."""
    ranked = [replace(t, df=dfs[t.term], idf=idf(n, dfs[t.term]),
                      score=t.tf * idf(n, dfs[t.term])) for t in terms if t.term in dfs]
    return _select(ranked, limit)


def _select(terms: list[ContextTerm], limit: int) -> list[ContextTerm]:
    """Sort by score; boost the top ``limit`` by log-tf relative to the strongest."""
    terms.sort(key=lambda t: (-t.score, t.term))
    top = terms[:limit]
    strongest = max((_log_tf(t.tf) for t in top), default=1.0)
    for t in top:
        t.boost = max(round(_log_tf(t.tf) / strongest, 3), 0.001)
    return terms


def _log_tf(tf: float) -> float:
    """Sublinear term frequency, 1 + ln(tf) (Manning et al., IR book, §6.4.1)."""
    return 1.0 + math.log(max(tf, 1.0))


def rule_stems(texts: tuple[str, ...], analyzer) -> dict[str, str]:
    """Surface word → term of every word of the rule terms ``texts``."""
    words = [w for text in texts for w in split_words(text)]
    return dict(zip(words, analyzer.stem_all(words), strict=True))


def rule_terms(texts: tuple[str, ...], analyzer, dfs: dict[str, int], n: int
               ) -> list[ContextTerm]:
    """A rule's terms that the index holds (every word of a multi-word term), boost 2."""
    words = {text: split_words(text) for text in texts}
    stems = rule_stems(texts, analyzer)
    out = []
    for ws in words.values():
        if ws and all(stems[w] in dfs for w in ws):
            df = min(dfs[stems[w]] for w in ws)
            out.append(ContextTerm(" ".join(stems[w] for w in ws), " ".join(ws), "rule",
                                   "rule", 1, RULE_BOOST, df, idf(n, df),
                                   RULE_BOOST * idf(n, df), RULE_BOOST))
    return out


# --- files ---------------------------------------------------------------------------------

@dataclass
class FileSignals:
    """Everything ``ra context`` derives from one file (``ra inspect ctx`` shows it)."""

    file: str  # as given
    path: str  # what rules and path terms see: relative to the project root if inside it
    kind: str  # markdown | text
    doc_id: str | None  # tree:path when the file is itself in a tree
    rules: MatchedRules
    trees: tuple[str, ...]  # where its query searches (empty: everywhere)
    terms: list[ContextTerm]  # path and content terms, ranked (by tf without an index)
    rule_terms: list[ContextTerm] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def selected(self) -> list[ContextTerm]:
        return [t for t in self.terms if t.boost > 0] + self.rule_terms

    @property
    def query(self) -> str:
        return ast.to_query_string(query_node(self.selected))

    def to_dict(self, extra: int = EXPLAIN_EXTRA_TERMS) -> dict:
        shown = sum(t.boost > 0 for t in self.terms) + extra
        return {"file": self.file, "path": self.path, "kind": self.kind,
                "indexed_as": self.doc_id, "trees": list(self.trees),
                "rules": {"terms": list(self.rules.terms), "trees": list(self.rules.trees),
                          "include": list(self.rules.include),
                          "search": dict(self.rules.search),
                          "tree_conflict": self.rules.tree_conflict},
                "terms": [t.to_dict() for t in self.rule_terms + self.terms[:shown]],
                "candidates": len(self.terms), "query": self.query,
                "warnings": list(self.warnings)}


def project_path(file: Path, config) -> str:
    """The path of ``file`` relative to the project root, else to the working directory,
    else its folder and name (so a file elsewhere adds no ``home``/``user`` words)."""
    path = Path(os.path.abspath(file))
    for base in (config.root, Path.cwd()):
        for a, b in ((path, base), (path.resolve(), base and Path(base).resolve())):
            if b is not None and a.is_relative_to(b):
                return a.relative_to(b).as_posix()
    return PurePosixPath(*path.parts[-2:]).as_posix()


def indexed_as(file: Path, config) -> tuple[str, str] | None:
    """``(tree, tree-relative path)`` when ``file`` lies inside a configured tree."""
    path = Path(file).resolve()
    for tree in config.trees:
        root = Path(tree.path).resolve()
        if path.is_relative_to(root):
            return tree.name, path.relative_to(root).as_posix()
    return None


def _trees_for(rules: MatchedRules, wanted: tuple[str, ...], warnings: list[str],
               file: str) -> tuple[str, ...]:
    trees = effective_trees(rules.trees, wanted)
    if rules.trees and wanted and not trees:
        warnings.append(f"{file}: its context rules search trees {', '.join(rules.trees)}, "
                        "which --tree leaves out; searching the --tree trees")
        return tuple(wanted)
    return trees


#: A file of tests, by its folder or its name: ``tests/``, ``spec/``, ``__tests__/``,
#: ``test_orders.py``, ``orders_test.go``, ``Orders.test.tsx``, ``orders.spec.js``,
#: ``orders_spec.rb``, ``OrdersTest.java``, ``OrdersTests.cs``
_TEST_FOLDER = re.compile(r"(?:^|/)(?:tests?|spec|specs|__tests__|testing)/", re.I)
_TEST_NAME = re.compile(r"(?:^|/)(?:test_[^/]+|[^/]+(?:_test|_spec|[.-]test|[.-]spec)"
                        r"\.[^/]+|[^/]*[a-z0-9](?:Test|Tests|Spec)\.[^/.]+)$")


def kind_terms(path: str) -> list[WeightedWord]:
    """What kind of file ``path`` is, as a word: a file of tests is about testing
    ("test", weighed as a folder's word), which its path alone does not say, since a
    path's ``test`` and ``tests`` are noise (every project has them: ``NOISE``). Editing
    ``tests/test_orders.py`` (``unittest.mock``, ``assert_called_once``) against
    Microsoft's engineering playbook gave its observability recipes and Git's basics; its
    unit-testing and mocking pages are what an agent writing that file needs."""
    if _TEST_FOLDER.search(path) or _TEST_NAME.search(path):
        return [WeightedWord("test", "path:kind", DIRECTORY_WEIGHT, 1, DIRECTORY_WEIGHT)]
    return []


def extract_signals(file: str | Path, config, reader=None, *, trees: tuple[str, ...] = (),
                    max_terms: int | None = None, analyzer=None) -> FileSignals:
    """Path, rule and content signals of one file, ranked against ``reader``'s index (or
    by weighted frequency alone without a reader). Raises ``UnreadableFile``."""
    from ra.text.analysis import analyzer_for

    ctx = config.context
    try:
        text = sample_content(file, ctx.sample_size)
        new = None if text.strip() else "empty"
    except MissingFile:  # a file about to be written: its path and rules say what it is
        text, new = "", "no such file yet"
    analyzer = analyzer or analyzer_for(config.search.stemmer)
    path = project_path(Path(file), config)
    rules, warnings = config.match_rules(path), []
    if new:
        warnings.append(f"{file}: {new}: its path alone")
    chosen = _trees_for(rules, tuple(trees), warnings, str(file))
    stop = for_file(path)
    words = content_words(text, markdown=is_markdown(path), min_length=ctx.min_word_length,
                          max_length=ctx.max_word_length, stopwords=stop)
    # its language's keywords are noise in its text, not in its name: go-task's
    # ``taskfile/ast/defer.go`` is about ``defer``, and lost the word (``for_file``)
    terms = tally(path_terms(path, min_length=ctx.min_word_length, stopwords=STOPWORDS)
                  + kind_terms(path), words, analyzer, ctx.min_term_frequency)
    located = indexed_as(Path(file), config)
    signals = FileSignals(str(file), path, "markdown" if is_markdown(path) else "text",
                          located and f"{located[0]}:{located[1]}", rules, chosen, terms,
                          warnings=warnings)
    return rank_signals(signals, reader, analyzer, max_terms or ctx.terms)


def rank_signals(signals: FileSignals, reader, analyzer, max_terms: int) -> FileSignals:
    if reader is None:  # no index: rank by weighted frequency, keep every rule term
        signals.terms = _select([replace(t, score=t.tf) for t in signals.terms], max_terms)
        signals.rule_terms = [ContextTerm(" ".join(analyzer.stem_all(split_words(x))),
                                          " ".join(split_words(x)), "rule", "rule", 1,
                                          RULE_BOOST, score=RULE_BOOST, boost=RULE_BOOST)
                              for x in signals.rules.terms if split_words(x)]
        return signals
    rules = signals.rules.terms
    wanted = [t.term for t in signals.terms] + sorted(set(rule_stems(rules, analyzer).values()))
    dfs, n = Vocabulary(reader).lookup(wanted, signals.trees)  # one query for both
    signals.terms = rank_terms(signals.terms, dfs, n, max_terms)
    signals.rule_terms = rule_terms(rules, analyzer, dfs, n)
    return signals


def query_node(terms: list[ContextTerm]) -> ast.Node | None:
    """``word^boost OR …`` over ``terms``; a term selected more than once gets the sum."""
    boosts: dict[str, float] = {}
    nodes: dict[str, ast.Node] = {}
    for t in terms:
        words = tuple(t.word.split())
        nodes.setdefault(t.term, ast.Term(words[0]) if len(words) == 1 else ast.Phrase(words))
        boosts[t.term] = boosts.get(t.term, 0.0) + t.boost
    order = sorted(boosts, key=lambda k: (-boosts[k], k))
    return ast.or_([ast.Boost(nodes[k], round(boosts[k], 3)) for k in order]) if order else None
