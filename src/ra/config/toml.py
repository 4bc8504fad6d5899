"""The configuration file format: TOML in (validated), TOML out, and where a key is.

:func:`parse_config_text` turns one ``.ra.toml`` into its *raw* form: only what the file
says, every value checked and normalised. Broken TOML or a value of the wrong type is a
:class:`~ra.errors.ConfigError` naming file, key and line; an unknown key is a
:class:`ConfigWarning`. The older forms of the format (``[trees] NAME = "path"``,
``[[include]] tree/pattern``, ``[context.patterns]``) are read here too; what the files
mean together (discovery, merging, path resolution) is :mod:`ra.config.settings`'s business.

The standard library reads TOML but neither writes it nor says where a value came from,
and ra needs both: ``ra config`` prints the effective configuration (:func:`dumps`, for the
subset a configuration holds), and an error names the line of the offending key
(:func:`find_key_line`, a best effort over the text that follows table headers and
understands arrays of tables such as ``[[context.rules]]``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ra.config.globs import GlobError, compile_glob
from ra.config.languages import normalize_language
from ra.errors import ConfigError

__all__ = ["ConfigWarning", "dumps", "find_key_line", "format_key", "parse_config_file",
           "parse_config_text"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_HEADER = re.compile(r"\s*(\[\[?)\s*(.*?)\s*\]\]?\s*(?:#.*)?$")
_KEY_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([^."\'\s]+)')
_ASSIGN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*[=.]')

KeyPath = Sequence[str | int]


@dataclass(frozen=True)
class ConfigWarning:
    """Something in a configuration file that ra ignores or cannot use, but survives."""

    file: Path | None
    key: str | None
    message: str

    def __str__(self) -> str:
        key = f" [{self.key}]" if self.key else ""
        return f"{self.file or 'configuration'}{key}: {self.message}"


# --- parsing and validation -------------------------------------------------------------

class _Invalid(Exception):
    """A value failed its check; the parser adds file, key and line."""


_Check = Callable[[object], object]  # returns the normalised value or raises _Invalid

_TYPE_NAMES = {bool: "boolean", int: "integer", float: "float", str: "string",
               list: "array", dict: "table"}


def _describe(value: object) -> str:
    name = _TYPE_NAMES.get(type(value), type(value).__name__)
    shown = json.dumps(value) if isinstance(value, str) else repr(value)
    return f"{name} {shown}" if len(shown) <= 40 else name


def _bounds(what: str, lo: float, hi: float | None) -> str:
    return f"{what} from {lo} to {hi}" if hi is not None else f"{what} of at least {lo}"


def _integer(lo: int, hi: int | None = None) -> _Check:
    def check(value: object) -> int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or value < lo or (hi is not None and value > hi):
            raise _Invalid(f"expected an {_bounds('integer', lo, hi)}, got {_describe(value)}")
        return value
    return check


def _number(lo: float, hi: float | None = None) -> _Check:
    def check(value: object) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not (lo <= value <= (hi if hi is not None else float("inf"))):
            raise _Invalid(f"expected a {_bounds('number', lo, hi)}, got {_describe(value)}")
        return float(value)
    return check


def _of_type(kind: type, label: str) -> _Check:
    def check(value: object) -> object:
        if not isinstance(value, kind):
            raise _Invalid(f"expected {label}, got {_describe(value)}")
        return value
    return check


_boolean = _of_type(bool, "true or false")
_string = _of_type(str, "a string")


def _strings(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"expected an array of strings, got {_describe(value)}")
    return list(value)


def _string_or_strings(value: object) -> list[str]:
    return [value] if isinstance(value, str) else _strings(value)


def _glob(value: object) -> str:
    try:
        compile_glob(_string(value))
    except GlobError as exc:
        raise _Invalid(str(exc)) from None
    return value


def _glob_list(value: object) -> list[str]:
    return [_glob(pattern) for pattern in _strings(value)]


def _glob_or_list(value: object) -> list[str]:
    return [_glob(value)] if isinstance(value, str) else _glob_list(value)


def _stemmer(value: object) -> str:
    try:
        return normalize_language(_string(value))
    except ValueError as exc:
        raise _Invalid(str(exc)) from None


def tree_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a tree's (its ids would not parse), or None. The
    configuration refuses such a name, so that every id an index holds can be asked for."""
    if not name or ":" in name:
        return "a tree name must be non-empty and cannot contain ':' (ids are tree:path)"
    if any(c in name for c in "/\\#") or name != name.strip():
        return ("a tree name cannot contain '/', '\\' or '#', nor begin or end with a "
                "space (ids are tree:path#slug)")
    return None


def _tree_name(value: object) -> str:
    if problem := tree_name_problem(str(value)):
        raise _Invalid(problem)
    return value


_SETTINGS = {"default_limit": _integer(1), "local_boost": _number(0),
             "chunk_at_headings": _boolean, "max_chunk_size": _integer(1), "index_dir": _string}
_QUERY_SEARCH = {"fuzzy": _boolean, "fuzzy_distance": _integer(0, 2), "limit": _integer(1),
                 "candidate_limit": _integer(1), "aggregation_pool_size": _integer(1),
                 "max_candidates": _integer(1), "cutoff_ratio": _number(0, 1),
                 "aggregation_threshold": _number(0, 1), "k1": _number(0), "b": _number(0, 1),
                 "fuzzy_weight": _number(0, 1), "long_query_words": _integer(1),
                 "coordination": _number(0), "feedback": _boolean, "fill": _boolean,
                 "proximity": _number(0)}
_BOOSTS = {name: _number(0) for name in ("title", "tags", "path", "body")}
_SEARCH = {**_QUERY_SEARCH, "stemmer": _stemmer, "boosts": _BOOSTS, "max_tokens": _integer(0)}
_CONTEXT = {name: _integer(1) for name in ("limit", "terms", "min_term_frequency",
                                           "min_word_length", "max_word_length", "sample_size")}
_TREE = {"path": _string, "include": _glob_list, "exclude": _glob_list}
_MCP = {"max_tokens": _integer(1)}
_DAEMON = {"autostart": _boolean, "idle_minutes": _number(1)}


def _choice(options: Sequence[str], factory: bool = False) -> _Check:
    def check(value: object) -> str:
        text = _string(value)
        if text not in options and not (factory and ":" in text):
            also = " or package.module:factory" if factory else ""
            raise _Invalid(f"expected one of {', '.join(options)}{also}, got "
                           f"{_describe(value)}")
        return text
    return check


def _semantic_schema() -> dict:
    from ra.config.semantic import BACKENDS, FUSIONS

    return {"enabled": _boolean, "model": _string, "backend": _choice(BACKENDS, True),
            "weight": _number(0, 1), "fusion": _choice(FUSIONS), "rrf_k": _integer(1),
            "allow_download": _boolean, "batch_size": _integer(1)}


_SEMANTIC = _semantic_schema()
# A rule's search overrides are query-time settings: the stemmer shapes the whole index.
_RULE = {"match": _glob_or_list, "trees": _strings, "terms": _strings, "include": _strings,
         "search": _QUERY_SEARCH}
_INCLUDE = {"tree": _string, "pattern": _glob_or_list}
_ALIASES = {"aggregation_pool_size": "candidate_limit", "max_candidates": "candidate_limit"}


@dataclass
class _Source:
    """One file being parsed: turns a failed check into an error naming file, key, line."""

    path: Path
    text: str
    warnings: list[ConfigWarning] = field(default_factory=list)

    def load(self) -> dict:
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            message, line = _split_toml_error(str(exc), self.text)
            raise ConfigError(f"invalid TOML: {message}", file=str(self.path),
                              line=line) from None

    def error(self, path: Sequence[str | int], message: str) -> ConfigError:
        return ConfigError(message, file=str(self.path), key=format_key(path),
                           line=find_key_line(self.text, path))

    def warn(self, path: Sequence[str | int], message: str) -> None:
        self.warnings.append(ConfigWarning(self.path, format_key(path), message))

    def check(self, path: Sequence[str | int], value: object, check: _Check) -> object:
        try:
            return check(value)
        except _Invalid as exc:
            raise self.error(path, str(exc)) from None


def _split_toml_error(message: str, text: str) -> tuple[str, int | None]:
    """tomllib says "Invalid value (at line 3, column 9)"; split off the line."""
    found = re.search(r"\s*\(at line (\d+), column \d+\)", message)
    if found:
        return message[:found.start()], int(found.group(1))
    if "(at end of document)" in message:
        return message.replace(" (at end of document)", ""), text.count("\n") + 1
    return message, None


def parse_config_file(path: Path) -> dict:
    """Read and parse one file; an unreadable file is a ConfigError too."""
    path = Path(path).absolute()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    return parse_config_text(text, path)


def parse_config_text(text: str, source: Path) -> dict:
    """Validate one file's TOML into its raw form: only what the file says, normalised.

    Keys: ``root``; ``settings``, ``search`` (with ``boosts``), ``mcp``, ``daemon``,
    ``semantic``, ``context``
    (scalars plus ``rules`` and ``patterns``) when the file has those tables; ``tree``
    (name → path, include, exclude, None when absent) from ``[tree.NAME]`` and
    ``[trees]``; ``include`` (``[[include]]`` entries: tree, pattern list); ``warnings``,
    always.
    """
    src = _Source(Path(source), text)
    raw: dict = {"warnings": src.warnings}
    for key, value in src.load().items():
        section = _SECTIONS.get(key)
        if section is None:
            src.warn((key,), _unknown(key, _SECTIONS))
        else:
            section(src, value, raw)
    return raw


def _table(src: _Source, value: object, path: Sequence[str | int]) -> dict:
    if not isinstance(value, dict):
        raise src.error(path, f"expected a table, got {_describe(value)}")
    return value


def _table_array(src: _Source, value: object, path: Sequence[str | int]) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise src.error(path, f"expected an array of tables ([[{format_key(path)}]])")
    return value


def _parse_table(src: _Source, value: object, path: tuple, schema: dict) -> dict:
    """Check every key of a table against ``schema``; sub-schemas are nested tables."""
    out: dict = {}
    for key, item in _table(src, value, path).items():
        check = schema.get(key)
        if check is None:
            src.warn((*path, key), _unknown(key, schema))
        elif isinstance(check, dict):
            out[key] = _parse_table(src, item, (*path, key), check)
        else:
            out[key] = src.check((*path, key), item, check)
    for alias in [k for k in out if k in _ALIASES]:
        canonical = _ALIASES[alias]
        if canonical in out:
            src.warn((*path, alias), f"ignored: {canonical} is set too")
            del out[alias]
        else:
            out[canonical] = out.pop(alias)
    return out


def _unknown(key: str, known: Mapping[str, object]) -> str:
    """The warning for an unknown key, with the known key it was probably meant to be."""
    from difflib import get_close_matches

    near = get_close_matches(key.lower(), list(known), n=1, cutoff=0.6)
    return "unknown key; ignored" + (f" (did you mean {near[0]!r}?)" if near else "")


def _required(src: _Source, table: dict, path: tuple, *keys: str) -> None:
    for key in keys:
        if key not in table:
            raise src.error(path, f"missing required key {key!r}")


def _section_root(src: _Source, value: object, raw: dict) -> None:
    raw["root"] = src.check(("root",), value, _boolean)


def _section_settings(src: _Source, value: object, raw: dict) -> None:
    raw["settings"] = _parse_table(src, value, ("settings",), _SETTINGS)


def _section_search(src: _Source, value: object, raw: dict) -> None:
    raw["search"] = _parse_table(src, value, ("search",), _SEARCH)


def _section_mcp(src: _Source, value: object, raw: dict) -> None:
    raw["mcp"] = _parse_table(src, value, ("mcp",), _MCP)


def _section_daemon(src: _Source, value: object, raw: dict) -> None:
    raw["daemon"] = _parse_table(src, value, ("daemon",), _DAEMON)


def _section_semantic(src: _Source, value: object, raw: dict) -> None:
    raw["semantic"] = _parse_table(src, value, ("semantic",), _SEMANTIC)


def _section_context(src: _Source, value: object, raw: dict) -> None:
    table = dict(_table(src, value, ("context",)))
    rules = _table_array(src, table.pop("rules", []), ("context", "rules"))
    patterns = _table(src, table.pop("patterns", {}), ("context", "patterns"))
    context = _parse_table(src, table, ("context",), _CONTEXT)
    context["rules"] = [_rule(src, rule, ("context", "rules", i)) for i, rule in enumerate(rules)]
    context["patterns"] = _patterns(src, patterns)
    raw["context"] = context


def _patterns(src: _Source, table: dict) -> dict[str, list[str]]:
    """The older form: ``[context.patterns] "GLOB" = ["term", ...]``."""
    out = {}
    for glob, terms in table.items():
        path = ("context", "patterns", glob)
        out[src.check(path, glob, _glob)] = src.check(path, terms, _string_or_strings)
    return out


def _rule(src: _Source, value: object, path: tuple) -> dict:
    rule = _parse_table(src, value, path, _RULE)
    _required(src, rule, path, "match")
    return {"match": rule["match"], "trees": rule.get("trees", []),
            "terms": rule.get("terms", []), "include": rule.get("include", []),
            "search": rule.get("search", {})}


def _section_tree(src: _Source, value: object, raw: dict) -> None:
    for name, entry in _table(src, value, ("tree",)).items():
        src.check(("tree", name), name, _tree_name)
        tree = _parse_table(src, entry, ("tree", name), _TREE)
        _required(src, tree, ("tree", name), "path")
        _add_tree(src, raw, ("tree", name), {
            "path": tree["path"], "include": tree.get("include"), "exclude": tree.get("exclude")})


def _section_trees(src: _Source, value: object, raw: dict) -> None:
    """The older form: ``[trees] NAME = "path"``."""
    for name, tree_path in _table(src, value, ("trees",)).items():
        src.check(("trees", name), name, _tree_name)
        if isinstance(tree_path, dict):  # [trees.docs] path = "…": the newer form, misspelt
            raise src.error(("trees", name), f"a tree's table is [tree.{name}] (singular); "
                            f'[trees] takes {name} = "path"')
        path = src.check(("trees", name), tree_path, _string)
        _add_tree(src, raw, ("trees", name), {"path": path, "include": None, "exclude": None})


def _add_tree(src: _Source, raw: dict, path: tuple, entry: dict) -> None:
    trees = raw.setdefault("tree", {})
    if path[-1] in trees:
        raise src.error(path, f"tree {path[-1]!r} is defined twice in this file")
    trees[path[-1]] = entry


def _section_include(src: _Source, value: object, raw: dict) -> None:
    """The older form: ``[[include]] tree = "NAME", pattern = "GLOB"``."""
    for i, item in enumerate(_table_array(src, value, ("include",))):
        entry = _parse_table(src, item, ("include", i), _INCLUDE)
        _required(src, entry, ("include", i), "tree", "pattern")
        raw.setdefault("include", []).append(entry)


_SECTIONS: dict[str, Callable[[_Source, object, dict], None]] = {
    "root": _section_root, "settings": _section_settings, "search": _section_search,
    "context": _section_context, "mcp": _section_mcp, "daemon": _section_daemon,
    "semantic": _section_semantic,
    "tree": _section_tree,
    "trees": _section_trees,
    "include": _section_include,
}


# --- writing ------------------------------------------------------------------------------

def dumps(doc: Mapping[str, object], comments: Sequence[str] = ()) -> str:
    """TOML text for ``doc``; ``comments`` become ``#`` lines at the top."""
    lines = [f"# {c}" if c else "#" for c in comments]
    lines += _table_lines((), doc, header=None)
    return "\n".join(lines).strip("\n") + "\n"


def _table_lines(path: tuple[str, ...], table: Mapping[str, object],
                 header: str | None) -> list[str]:
    scalars = [(k, v) for k, v in table.items() if not _is_table(v) and not _is_table_array(v)]
    lines: list[str] = []
    if header is not None and (scalars or not table or header.startswith("[[")):
        lines += ["", header]
    lines += [f"{format_key([k])} = {_value(v)}" for k, v in scalars]
    for key, value in table.items():
        sub = (*path, key)
        if _is_table(value):
            lines += _table_lines(sub, value, f"[{format_key(sub)}]")
        elif _is_table_array(value):
            for item in value:
                lines += _table_lines(sub, item, f"[[{format_key(sub)}]]")
    return lines


def _is_table(value: object) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: object) -> bool:
    return (isinstance(value, list | tuple) and bool(value)
            and all(isinstance(v, Mapping) for v in value))


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _toml_number(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml_number(value: int | float) -> str:
    if isinstance(value, int) or value == value and abs(value) != float("inf"):
        return repr(value)
    return "nan" if value != value else ("inf" if value > 0 else "-inf")


def _toml_string(text: str) -> str:
    # JSON's escapes are all valid in a TOML basic string; TOML also forbids a raw DEL.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def format_key(path: KeyPath) -> str:
    """A dotted key for messages and headers: ``context.rules[1].match``, quoted parts."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if _BARE_KEY.fullmatch(part) else _toml_string(part)
            out += f".{text}" if out else text
    return out


# --- locating -------------------------------------------------------------------------------

def find_key_line(text: str, path: KeyPath) -> int | None:
    """The 1-based line where the key at ``path`` is set, or its table's header; else None.

    Integers in ``path`` index arrays of tables: ``("context", "rules", 1, "terms")`` is
    ``terms`` inside the second ``[[context.rules]]``.
    """
    *table, key = path
    header_line = None
    for number, current, line in _walk(text):
        if current == tuple(path):
            header_line = header_line or number
        if current == tuple(table) and _assigned_key(line) == key:
            return number
    if header_line is not None:
        return header_line
    return next((n for n, _, line in _walk(text) if _assigned_key(line) == key), None)


def _walk(text: str) -> Iterator[tuple[int, tuple, str]]:
    """(line number, current table path, line) for every line of ``text``."""
    current: tuple = ()
    counts: dict[tuple, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _HEADER.match(line)
        if match and not set("=,") & set(match.group(2)):
            current = _header_path(match.group(2), counts, array=match.group(1) == "[[")
        yield number, current, line


def _header_path(name: str, counts: dict[tuple, int], array: bool) -> tuple:
    """A header's table path, with the index of the current element of enclosing arrays."""
    parts = [next(g for g in m.groups() if g is not None) for m in _KEY_PART.finditer(name)]
    path: tuple = ()
    for i, part in enumerate(parts):
        names = (*path, part)
        path = names
        last = i == len(parts) - 1
        if last and array:
            counts[names] = counts.get(names, -1) + 1
        if names in counts:
            path = (*names, counts[names])
    return path


def _assigned_key(line: str) -> str | None:
    match = _ASSIGN.match(line)
    if match is None:
        return None
    return next(g for g in match.groups() if g is not None)
