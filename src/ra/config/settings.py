"""Configuration: find the ``.ra.toml`` files, merge them into one frozen Config.

Three phases, each a small pure step, so every rule below is testable on its own:

1. **Discover** (:func:`discover_config_files`): walk up from the working directory
   collecting ``.ra.toml`` files, nearest first; stop after a file that says
   ``root = true``; otherwise append ``~/.ra.toml`` (the global file, lowest precedence).
2. **Parse** (:func:`parse_config_text`, in :mod:`ra.config.toml`): TOML → a validated
   *raw* dict per file. Errors name file, key and line; unknown keys are warnings.
3. **Merge** (:func:`load_config_files`): scalars per key, nearest file wins; trees by name,
   the nearest definition wins wholesale (and is global only if it comes from
   ``~/.ra.toml``); ``[[include]]`` patterns add to a tree's include list, parent's first;
   context rules concatenate, nearest file first, and a ``[context.patterns]`` glob shadows
   the same glob further up. Tree paths expand ``~`` and resolve against the declaring
   file's folder; a tree whose folder is missing is kept with a warning, so one bad path
   does not break unrelated commands.

The result, :class:`Config`, is loaded once and passed down; nothing reads configuration
behind its back. It also knows what shapes the index (:meth:`Config.index_fingerprint`),
which context rules apply to a file (:meth:`Config.match_rules`), and how to print
itself as TOML (:meth:`Config.to_toml`).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ra.config import toml
from ra.config.globs import dot_names, glob_set
from ra.config.semantic import SemanticSettings
from ra.config.toml import ConfigWarning, format_key, parse_config_file, parse_config_text

__all__ = [
    "CONFIG_NAME", "DEFAULT_INCLUDE", "DEPENDENCIES", "NOT_NOTES", "TESTS", "Config",
    "is_tests",
    "ConfigWarning",
    "ContextRule", "ContextSettings", "DaemonSettings", "FieldBoosts", "MatchedRules",
    "McpSettings", "SearchSettings", "Settings", "Tree", "discover_config_files", "effective_trees",
    "expand_tilde",
    "global_config_path", "is_global_config", "is_root_config", "load_config", "load_config_files",
    "parse_config_file", "parse_config_text", "resolve_path",
]

CONFIG_NAME = ".ra.toml"

#: Folders of dependencies: a tree that takes the markdown in them indexes third-party
#: READMEs and CHANGELOGs, not notes (``ra check`` warns; ``ra init`` excludes them).
DEPENDENCIES = frozenset({"node_modules", "bower_components", "site-packages", "vendor"})
#: ... and of build output, environments and test data: ``ra init`` does not count the
#: markdown in any of these, and excludes those of them under the tree it names that hold
#: some (a markdown parser's tests keep pages to parse in ``fixtures/``; uv's
#: ``test-data/`` holds requirements files, ``.txt``, that searches for a package gave).
NOT_NOTES = DEPENDENCIES | {"venv", "__pycache__", "target", "build", "dist", "_build",
                            "fixtures", "__fixtures__", "testdata", "test-data", "test_data",
                            "__snapshots__"}
#: Folders of tests: ``ra init`` does not count their markdown when it chooses the folder
#: of the notes (Jekyll's ``test/source/_posts`` holds 96 pages to build, its ``docs/``
#: 207 pages of documentation; Zola's ``test_site/`` and ``test_site_i18n/`` 73 beside
#: ``docs/``' 180), but a tree that holds them indexes them. Also a name these begin or end
#: with a ``_`` or ``-`` beside (``test_site``, ``e2e-tests``; ``is_tests``).
TESTS = frozenset({"test", "tests", "spec", "specs", "__tests__"})
_TEST_NAME = re.compile(r"(?:tests?|specs?)[_-].*|.*[_-](?:tests?|specs?)", re.I)


def is_tests(name: str) -> bool:
    """Whether a folder named ``name`` holds tests (``TESTS``)."""
    return name in TESTS or _TEST_NAME.fullmatch(name) is not None
#: markdown (``ra.text.MARKDOWN_SUFFIXES``: R Markdown is spelled .Rmd and .rmd) and text
DEFAULT_INCLUDE = ("**/*.md", "**/*.markdown", "**/*.mdx", "**/*.mdoc", "**/*.qmd", "**/*.Rmd",
                   "**/*.rmd", "**/*.mdc", "**/*.txt")
#: What ``DEFAULT_INCLUDE`` was in earlier releases: an index built then, with the default
#: patterns, was rebuilt because ra changed, not because its configuration did.
EARLIER_DEFAULT_INCLUDES = (("**/*.md", "**/*.markdown", "**/*.mdx", "**/*.qmd", "**/*.Rmd",
                             "**/*.rmd", "**/*.txt"),
                            ("**/*.md", "**/*.markdown", "**/*.mdx", "**/*.mdoc", "**/*.qmd",
                             "**/*.Rmd", "**/*.rmd", "**/*.txt"))


# --- the configuration objects ----------------------------------------------------------

@dataclass(frozen=True)
class Tree:
    """A named folder of documents; ``matches`` decides which files in it are indexed."""

    name: str
    path: Path
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    is_global: bool = False
    source: Path | None = None  # the .ra.toml that declared it

    def matches(self, rel: str) -> bool:
        """True for a tree-relative POSIX path matching an include and no exclude."""
        return self.included()(rel) and not glob_set(self.exclude).matches(rel)

    def included(self) -> Callable[[str], bool]:
        """Whether a tree-relative path matches an include pattern. The default patterns
        take an extension in any case (``README.MD`` is markdown: `ra init` counted it, and
        it was left out of the index); they are ``**/*.ext``, so ignoring case changes
        nothing else. Patterns written by hand match as written."""
        include = tuple(self.include)
        if not dot_names(include):
            return glob_set(include, ignore_case=include == DEFAULT_INCLUDE).matches
        # a path through a name starting with "." is matched by the patterns that spell
        # such names out only: ``**/*.md`` beside ``.github/instructions/**`` does not take
        # ``.github/ISSUE_TEMPLATE/bug.md``
        spelled = tuple(p for p in include if dot_names((p,)))
        plain, dotted = glob_set(include).matches, glob_set(spelled).matches
        return lambda rel: (dotted if rel[:1] == "." or "/." in rel else plain)(rel)

    @property
    def dot_names(self) -> frozenset[str]:
        """Names starting with "." that the walks of this tree enter or take: those an
        include pattern spells out (``.cursor/rules/**``); the walks skip the others."""
        return dot_names(tuple(self.include))

    def hidden(self, rel: str) -> bool:
        """Whether a tree-relative path passes through a name starting with "." that no
        include pattern spells out: the walks never reach it."""
        dots = self.dot_names
        return any(p[:1] == "." and p not in dots for p in rel.split("/"))


@dataclass(frozen=True)
class Settings:
    """``[settings]``; ``index_dir`` is resolved against the file that set it."""

    default_limit: int = 5
    local_boost: float = 1.5
    chunk_at_headings: bool = True
    max_chunk_size: int = 50000
    index_dir: Path | None = None


@dataclass(frozen=True)
class FieldBoosts:
    """``[search.boosts]``: BM25F field weights. ``title`` was 3.0 (DESIGN.md); 2.0 is
    no worse on any known-item set and better on some (rust-book typo MRR@10 .931 →
    .944, tldr hand-written clean .914 → .931, tldr-300 unchanged) and on SciFact train
    (nDCG@10 .6895 → .6927), measured 2026-11-22 with k1 and b unchanged."""

    title: float = 2.0
    tags: float = 2.5
    path: float = 2.0
    body: float = 1.0


@dataclass(frozen=True)
class SearchSettings:
    """``[search]``; ``limit`` None means ``settings.default_limit``."""

    fuzzy: bool = True
    fuzzy_distance: int = 1
    stemmer: str = "english"
    limit: int | None = None
    candidate_limit: int = 100
    cutoff_ratio: float = 0.5
    aggregation_threshold: float = 0.75  # 0.5 before: see the commit that changed it
    k1: float = 1.2
    b: float = 0.75
    fuzzy_weight: float = 0.5  # a fuzzy expansion's weight relative to an exact match
    long_query_words: int = 6  # from this many words a query is ranked, not filtered
    fill: bool = True  # too few chunks hold every word: those holding most follow
    coordination: float = 1.0  # ranked and partial answers: score × share matched ** this
    feedback: bool = False  # long queries: add the words of the best chunks (RM3)
    proximity: float = 0.0  # weight of the bonus for query words close together; 0: off
    #: the token budget of ``ra search``, ``ra context``, ``ra likethis`` and ``ra get`` when
    #: ``--max-tokens`` is not given (0: none), as ``[mcp] max_tokens`` is the MCP tools':
    #: agents call the CLI too, and a style guide of one file (35,000 tokens) came whole
    max_tokens: int = 4000
    boosts: FieldBoosts = field(default_factory=FieldBoosts)


@dataclass(frozen=True)
class McpSettings:
    """``[mcp]``: what the MCP tools do when an agent does not say. ``max_tokens`` is the
    token budget of ``search``, ``context`` and ``get``: an agent asking
    for one result must not receive a 30 KB document it did not expect (results that do
    not fit come as snippets or ids, and the answer says so). 4000 tokens hold five
    sections of a typical knowledge base in full."""

    max_tokens: int = 4000


@dataclass(frozen=True)
class DaemonSettings:
    """``[daemon]``: ``autostart`` lets ``ra search``, ``context``, ``get`` and ``ls``
    start a ``ra daemon`` in the background when none runs (``ra.cli.daemon_client``);
    the call that starts it answers in its own process as before; it exits after
    ``idle_minutes`` without a request."""

    autostart: bool = True
    idle_minutes: float = 15.0


@dataclass(frozen=True)
class ContextRule:
    """``[[context.rules]]``: for files matching any ``match`` glob, adjust ``ra context``."""

    match: tuple[str, ...]
    trees: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    include: tuple[str, ...] = ()  # "tree:path" ids always added to the results
    search: tuple[tuple[str, object], ...] = ()  # [search] overrides, as (key, value)
    source: Path | None = None

    def matches(self, rel_path: str) -> bool:
        return glob_set(self.match).matches(rel_path)


@dataclass(frozen=True)
class ContextSettings:
    """``[context]``: term extraction for ``ra context``, plus the merged rules."""

    limit: int = 10
    terms: int = 15
    min_term_frequency: int = 2
    min_word_length: int = 4
    max_word_length: int = 30
    sample_size: int = 50000
    rules: tuple[ContextRule, ...] = ()


@dataclass(frozen=True)
class MatchedRules:
    """The rules matching one file, merged: terms and includes concatenate (deduplicated),
    tree restrictions intersect, and the first rule to set a search override wins.

    An empty ``trees`` means no restriction. As in the original implementation, two
    restrictions with no tree in common also leave ``trees`` empty, so every tree is
    searched; ``tree_conflict`` records that it happened, for ``--explain``.
    """

    terms: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    search: tuple[tuple[str, object], ...] = ()
    tree_conflict: bool = False

    @classmethod
    def from_rule(cls, rule: ContextRule) -> MatchedRules:
        return cls(rule.terms, rule.trees, rule.include, rule.search)

    def merge(self, other: MatchedRules) -> MatchedRules:
        trees = effective_trees(self.trees, other.trees)
        clash = bool(self.trees and other.trees and not trees)
        search = dict(self.search)
        for key, value in other.search:
            search.setdefault(key, value)
        return MatchedRules(
            _dedup((*self.terms, *other.terms)), trees, _dedup((*self.include, *other.include)),
            tuple(search.items()), self.tree_conflict or other.tree_conflict or clash)

    @property
    def search_overrides(self) -> dict[str, object]:
        return dict(self.search)


def effective_trees(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """Intersect two tree restrictions, where empty means unrestricted (see MatchedRules);
    also combines the rules' restriction with the trees a user names explicitly."""
    if not first or not second:
        return tuple(first or second)
    return tuple(name for name in first if name in second)


@dataclass(frozen=True)
class Config:
    """The effective configuration: every file merged, validated and resolved."""

    files: tuple[Path, ...] = ()  # nearest first, the global file last
    root: Path | None = None  # folder of the nearest .ra.toml (home for the global only)
    settings: Settings = field(default_factory=Settings)
    search: SearchSettings = field(default_factory=SearchSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    semantic: SemanticSettings = field(default_factory=SemanticSettings)
    trees: tuple[Tree, ...] = ()  # sorted by name
    warnings: tuple[ConfigWarning, ...] = ()
    global_file: Path | None = None  # ~/.ra.toml, when it is one of the files

    @property
    def index_dir(self) -> Path | None:
        """``[settings] index_dir``, else ``.ra/index`` beside the nearest config file."""
        if self.settings.index_dir is not None:
            return self.settings.index_dir
        return None if self.root is None else self.root / ".ra" / "index"

    def tree(self, name: str) -> Tree | None:
        return next((t for t in self.trees if t.name == name), None)

    def require_trees(self, names: Iterable[str]) -> tuple[str, ...]:
        """``names`` when each is a configured tree; else a NotFoundError naming the trees
        there are (every surface asks here: a search of a tree that does not exist must
        not answer "no results")."""
        from difflib import get_close_matches

        from ra.errors import NotFoundError

        names = tuple(names)
        known = [t.name for t in self.trees]
        for name in names:
            if name not in known:
                raise NotFoundError(
                    f"no tree named {name!r}; trees: {', '.join(known) or '(none configured)'}",
                    suggestions=get_close_matches(name, known, n=3))
        return names

    def index_fingerprint(self) -> dict:
        """Everything in the configuration that shapes the index; a change forces a rebuild."""
        trees = [{"name": t.name, "path": str(t.path), "include": list(t.include),
                  "exclude": list(t.exclude), "is_global": t.is_global} for t in self.trees]
        return {"stemmer": self.search.stemmer,
                "chunk_at_headings": self.settings.chunk_at_headings, "trees": trees}

    def config_hash(self) -> str:
        """sha256 (hex) of the fingerprint; the index manifest adds the schema version."""
        text = json.dumps(self.index_fingerprint(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def earlier_config_hashes(self) -> list[str]:
        """``config_hash`` as earlier releases computed it for this configuration: its
        trees that take the default ``include`` took that release's default."""
        out = []
        for earlier in EARLIER_DEFAULT_INCLUDES:
            trees = tuple(replace(t, include=earlier) if t.include == DEFAULT_INCLUDE else t
                          for t in self.trees)
            if trees != self.trees:
                out.append(replace(self, trees=trees).config_hash())
        return out

    def match_rules(self, rel_path: str) -> MatchedRules:
        """The context rules matching a project-relative POSIX path, merged in rule order."""
        matched = MatchedRules()
        for rule in self.context.rules:
            if rule.matches(rel_path):
                matched = matched.merge(MatchedRules.from_rule(rule))
        return matched

    def to_dict(self) -> dict:
        """The effective configuration as plain data, in the shape of a ``.ra.toml``."""
        context = {k: v for k, v in asdict(self.context).items() if k != "rules"}
        context["rules"] = [_rule_dict(rule) for rule in self.context.rules]
        trees = {t.name: {"path": str(t.path), "include": list(t.include),
                          "exclude": list(t.exclude)} for t in self.trees}
        return _plain({"settings": asdict(self.settings), "search": asdict(self.search),
                       "context": context, "mcp": asdict(self.mcp),
                       "daemon": asdict(self.daemon),
                       "semantic": asdict(self.semantic), "tree": trees})

    def to_toml(self) -> str:
        """The effective configuration as TOML text (what ``ra config`` prints)."""
        if self.files:
            notes = ["Effective ra configuration, merged from (nearest first):"]
            notes += [f"  {f}{'  (global)' if f == self.global_file else ''}"
                      for f in self.files]
        else:
            notes = ["No .ra.toml found: built-in defaults."]
        return toml.dumps(self.to_dict(), comments=notes)


def _rule_dict(rule: ContextRule) -> dict:
    data = {"match": list(rule.match), "trees": list(rule.trees), "terms": list(rule.terms),
            "include": list(rule.include), "search": dict(rule.search)}
    return {k: v for k, v in data.items() if v}


def _plain(value: object) -> object:
    """Paths to strings, tuples to lists, None dropped: data that TOML and JSON can hold."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def _dedup(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# --- discovery ------------------------------------------------------------------------------

def _home(home: Path | None) -> Path:
    return Path.home() if home is None else Path(home)


def global_config_path(home: Path | None = None) -> Path:
    """``~/.ra.toml``, read from HOME at call time."""
    return _home(home) / CONFIG_NAME


def is_global_config(path: Path, home: Path | None = None) -> bool:
    return Path(path).resolve() == global_config_path(home).resolve()


def is_root_config(path: Path) -> bool:
    """True if ``path`` is a readable config file saying ``root = true``."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return data.get("root") is True


def discover_config_files(cwd: Path, home: Path | None = None) -> list[Path]:
    """Config files in precedence order: nearest first, ``~/.ra.toml`` last (unless a file
    with ``root = true`` ended the walk). A directory named ``.ra.toml`` is skipped."""
    start = Path(cwd).resolve()
    found: list[Path] = []
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            found.append(candidate)
            if is_root_config(candidate):
                return found
    glob = global_config_path(home)
    if glob.is_file() and not any(is_global_config(f, home) for f in found):
        found.append(glob)
    return found


# --- merging --------------------------------------------------------------------------------

def expand_tilde(path: str, home: Path | None = None) -> str:
    """``~`` and ``~/...`` become the home folder; anything else is left alone."""
    if path == "~" or path.startswith("~/"):
        return str(_home(home)) + path[1:]
    return path


def resolve_path(raw: str, base: Path, home: Path | None = None) -> Path:
    """An absolute, canonical path: ``~`` expanded, relative paths taken from ``base``."""
    path = Path(expand_tilde(raw, home))
    return (path if path.is_absolute() else Path(base) / path).resolve()


def load_config(cwd: Path | None = None, home: Path | None = None) -> Config:
    """Discover, parse and merge the configuration seen from ``cwd``."""
    cwd = Path.cwd() if cwd is None else Path(cwd)
    return load_config_files(discover_config_files(cwd, home), home=home)


def load_config_files(files: Iterable[Path], *, home: Path | None = None) -> Config:
    """Merge the given files, in precedence order (nearest first)."""
    parsed = [(Path(f).absolute(), parse_config_file(f)) for f in files]
    warnings = [w for _, raw in parsed for w in raw["warnings"]]
    trees = _merged_trees(parsed, home, warnings)
    paths = tuple(path for path, _ in parsed)
    if paths and not trees:
        warnings.append(ConfigWarning(paths[0], None, "no trees configured: add a "
                                      "[tree.NAME] table with a path; nothing is indexed"))
    warnings += _overlaps(trees)
    return Config(files=paths, root=_config_root(paths, home),
                  settings=_merged_settings(parsed, home), search=_merged_search(parsed),
                  context=_merged_context(parsed), mcp=_merged_mcp(parsed),
                  daemon=DaemonSettings(**_merged_table(parsed, "daemon")),
                  semantic=SemanticSettings(**_merged_table(parsed, "semantic")), trees=trees,
                  warnings=tuple(warnings),
                  global_file=next((p for p in paths if is_global_config(p, home)), None))


_Parsed = Sequence[tuple[Path, dict]]


def _config_root(paths: Sequence[Path], home: Path | None) -> Path | None:
    local = [path for path in paths if not is_global_config(path, home)]
    return (local or paths)[0].parent if paths else None


def _merged_settings(parsed: _Parsed, home: Path | None) -> Settings:
    values: dict = {}
    for path, raw in reversed(parsed):  # farthest first, so nearer files overwrite
        section = dict(raw.get("settings", {}))
        if "index_dir" in section:
            section["index_dir"] = resolve_path(section["index_dir"], path.parent, home)
        values.update(section)
    return Settings(**values)


def _merged_search(parsed: _Parsed) -> SearchSettings:
    values: dict = {}
    boosts: dict = {}
    for _, raw in reversed(parsed):
        section = raw.get("search", {})
        boosts.update(section.get("boosts", {}))
        values.update({k: v for k, v in section.items() if k != "boosts"})
    return SearchSettings(**values, boosts=FieldBoosts(**boosts))


def _merged_mcp(parsed: _Parsed) -> McpSettings:
    return McpSettings(**_merged_table(parsed, "mcp"))


def _merged_table(parsed: _Parsed, name: str) -> dict:
    """A table of scalars merged key by key, the nearest file winning."""
    values: dict = {}
    for _, raw in reversed(parsed):
        values.update(raw.get(name, {}))
    return values


def _merged_context(parsed: _Parsed) -> ContextSettings:
    values: dict = {}
    for _, raw in reversed(parsed):
        section = raw.get("context", {})
        values.update({k: v for k, v in section.items() if k not in ("rules", "patterns")})
    return ContextSettings(**values, rules=_merged_rules(parsed))


def _merged_rules(parsed: _Parsed) -> tuple[ContextRule, ...]:
    """Nearest file's rules first; a ``[context.patterns]`` glob hides the same glob
    further up (the older format's "child patterns take precedence")."""
    rules: list[ContextRule] = []
    seen: set[str] = set()
    for path, raw in parsed:
        context = raw.get("context", {})
        for rule in context.get("rules", ()):
            rules.append(ContextRule(
                tuple(rule["match"]), tuple(rule["trees"]), tuple(rule["terms"]),
                tuple(rule["include"]), tuple(rule["search"].items()), path))
        for glob, terms in context.get("patterns", {}).items():
            if glob not in seen:
                seen.add(glob)
                rules.append(ContextRule((glob,), terms=tuple(terms), source=path))
    return tuple(rules)


def _merged_trees(parsed: _Parsed, home: Path | None,
                  warnings: list[ConfigWarning]) -> tuple[Tree, ...]:
    chosen: dict[str, tuple[Path, dict]] = {}
    for path, raw in parsed:
        for name, entry in raw.get("tree", {}).items():
            chosen.setdefault(name, (path, entry))
    extra = _extra_includes(parsed, chosen, warnings)
    trees = [_tree(name, source, entry, extra.get(name, []), home, warnings)
             for name, (source, entry) in chosen.items()]
    return tuple(sorted(trees, key=lambda t: t.name))


#: Files a tree may hold, relative to its folder: what ``_overlaps`` tries both trees on.
_PROBES = ("x.md", "x.markdown", "x.mdx", "x.mdoc", "x.qmd", "x.Rmd", "x.mdc", "x.txt",
           "sub/x.md")


def _overlaps(trees: Sequence[Tree]) -> list[ConfigWarning]:
    """A warning for each two trees whose folders nest (or are one folder) and whose
    patterns both select the same kind of file there: every such file would be indexed
    twice, under two ids. Decided on typical file names, without walking the folders
    (this runs on every command); ``README.md`` beside a ``docs`` tree is no overlap, nor
    is a hidden folder the outer tree's walks skip (``.claude/skills``, which ``ra init``
    makes a tree of its own beside a tree of the whole project)."""
    out = []
    for outer in trees:
        for inner in trees:
            if inner is outer or not inner.path.is_relative_to(outer.path):
                continue
            if inner.path == outer.path and inner.name < outer.name:
                continue  # one folder: said once
            prefix = inner.path.relative_to(outer.path).as_posix()
            if prefix != "." and outer.hidden(prefix):
                continue
            under = [p for p in _PROBES if inner.matches(p)
                     and outer.matches(p if prefix == "." else f"{prefix}/{p}")]
            if under:
                out.append(ConfigWarning(inner.source, format_key(("tree", inner.name)),
                           f"overlaps tree {outer.name!r} ({inner.path} is inside "
                           f"{outer.path}): files both select, such as {under[0]!r}, are "
                           "indexed twice; narrow one with include or exclude"))
    return out


def _extra_includes(parsed: _Parsed, trees: dict,
                    warnings: list[ConfigWarning]) -> dict[str, list[str]]:
    """``[[include]]`` patterns per tree, parent files first and children after."""
    extra: dict[str, list[str]] = {}
    for path, raw in reversed(parsed):
        for i, item in enumerate(raw.get("include", ())):
            if item["tree"] in trees:
                extra.setdefault(item["tree"], []).extend(item["pattern"])
            else:
                warnings.append(ConfigWarning(path, format_key(("include", i, "tree")),
                                              f"no tree named {item['tree']!r}; ignored"))
    return extra


def _tree(name: str, source: Path, entry: dict, extra: list[str], home: Path | None,
          warnings: list[ConfigWarning]) -> Tree:
    root = resolve_path(entry["path"], source.parent, home)
    own = entry["include"]
    include = DEFAULT_INCLUDE if own is None and not extra else _dedup([*(own or ()), *extra])
    tree = Tree(name, root, include, tuple(entry["exclude"] or ()),
                is_global_config(source, home), source)
    key = format_key(("tree", name, "path"))
    if not root.is_dir():
        problem = "is not a folder" if root.exists() else "does not exist"
        warnings.append(ConfigWarning(source, key, f"{root} {problem}; the tree has no files"))
    if not include:
        warnings.append(ConfigWarning(source, format_key(("tree", name, "include")),
                                      "empty include list; the tree has no files"))
    return tree
