"""Configuration: the upstream conformance cases, then ra's own rules (DESIGN.md).

Where an upstream case and DESIGN.md disagree, DESIGN.md wins and the test says why:
``_design_expected`` patches those few cases in one place.
"""

from __future__ import annotations

import copy
import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import conformance
from ra.config.settings import (
    DEFAULT_INCLUDE,
    Config,
    ConfigWarning,
    ContextRule,
    ContextSettings,
    MatchedRules,
    Tree,
    discover_config_files,
    effective_trees,
    expand_tilde,
    is_global_config,
    is_root_config,
    load_config,
    load_config_files,
    parse_config_file,
    parse_config_text,
    resolve_path,
)
from ra.config.toml import dumps, find_key_line, format_key
from ra.errors import ConfigError

UPSTREAM_DEFAULT_INCLUDE = ["**/*.md", "**/*.txt"]


def _ids(case: dict) -> str:
    return case["source"].split("::")[-1]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _sub(text: str, root: Path) -> str:
    """Fill the placeholders the conformance cases use: ``<abs X>`` and ``<root>``."""
    while "<abs " in text:
        start = text.index("<abs ")
        end = text.index(">", start)
        name = text[start + 5:end].removesuffix(" canonical")
        text = text[:start] + str(root / name) + text[end + 1:]
    return text.replace("<root>", str(root))


def _expected_path(text: str, root: Path, home: Path) -> Path:
    text = _sub(text.replace("$HOME", str(home)), root).removesuffix(" (canonical)")
    return Path(text).resolve()


# --- config_parse ------------------------------------------------------------------------

PARSE = conformance("config_parse")["cases"]


def _check_section(raw: dict, name: str, expected: dict | None) -> None:
    if expected is None:
        assert name not in raw
        return
    section = raw[name]
    for key, value in expected.items():
        if key == "rules_len":
            assert len(section["rules"]) == value
        elif key == "rules":
            _check_raw_rules(section["rules"], value)
        elif value is None:
            assert key not in section
        else:
            assert section[key] == value, key


def _check_raw_rules(rules: list[dict], expected: list[dict]) -> None:
    assert len(rules) == len(expected)
    for rule, want in zip(rules, expected, strict=True):
        for key, value in want.items():
            assert rule["match" if key == "patterns" else key] == value


def _check_raw_trees(raw: dict, expected: dict | None) -> None:
    if expected is None:
        assert "tree" not in raw
        return
    for name, fields in expected.items():
        for key, value in fields.items():
            assert raw["tree"][name][key] == value


@pytest.mark.parametrize("case", [c for c in PARSE if "toml" in c], ids=_ids)
def test_conformance_config_parse(case, tmp_path):
    source = tmp_path / ".ra.toml"
    expected = case["expected"]
    if "error" in expected:  # ParseToml
        with pytest.raises(ConfigError, match="invalid TOML") as info:
            parse_config_text(case["toml"], source)
        assert info.value.file == str(source) and info.value.line == 1
        return
    raw = parse_config_text(case["toml"], source)
    for name in ("settings", "search", "context"):
        if name in expected:
            _check_section(raw, name, expected[name])
    if "tree" in expected:
        _check_raw_trees(raw, expected["tree"])
    if "tree_count" in expected:
        assert len(raw["tree"]) == expected["tree_count"]
    if "root" in expected:
        assert raw["root"] is expected["root"]
    if expected.get("ok"):
        # Upstream ignores unknown keys silently; DESIGN.md: "An unknown key is a warning
        # naming file and key". The file still loads.
        assert {w.key for w in raw["warnings"]} == {"settings.unknown_field", "unknown_section"}


@pytest.mark.parametrize("case", [c for c in PARSE if "toml" not in c], ids=_ids)
def test_conformance_config_files_and_root_flag(case, tmp_path):
    if "file_content" in case:
        path = _write(tmp_path / ".ra.toml", case["file_content"])
    else:
        path = Path(case["file"])
    if "is_root" in case:
        assert is_root_config(path) is case["is_root"]
    else:  # ReadFile
        with pytest.raises(ConfigError, match="cannot read") as info:
            parse_config_file(path)
        assert info.value.file == str(path)


# --- config_merge ------------------------------------------------------------------------

MERGE = conformance("config_merge")["cases"]


def _design_expected(case: dict) -> dict:
    """The upstream expectation, adjusted where DESIGN.md deliberately differs."""
    expected = copy.deepcopy(case.get("expected", {}))
    if expected.get("error") == "TreePathNotDirectory":
        # DESIGN.md: "A missing tree path is a warning (`ra check`, `ra status`), not a crash
        # of unrelated commands". A file where a folder should be is treated the same way.
        del expected["error"]
        expected["warning_about"] = "docs"
    toml_texts = [f["toml"] for f in case.get("files", ())]
    toml_texts += list(case.get("files_by_location", {}).values())
    if not any("include" in text for text in toml_texts):
        # DESIGN.md indexes `.markdown` files as well, so the default include adds
        # "**/*.markdown" to upstream's ["**/*.md", "**/*.txt"].
        for tree in expected.get("trees", ()):
            if tree.get("include") == UPSTREAM_DEFAULT_INCLUDE:
                tree["include"] = list(DEFAULT_INCLUDE)
    return expected


def _attr(config: Config, dotted: str) -> object:
    value: object = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _load_merge_case(case: dict, root: Path) -> Config:
    for directory in case.get("dirs", ()):
        (root / directory).mkdir(parents=True, exist_ok=True)
    if "files" in case:
        paths = [_write(Path(_sub(f["path"], root)), _sub(f["toml"], root))
                 for f in case["files"]]
        return load_config_files(paths)
    for location, text in case["files_by_location"].items():
        _write(root / location, _sub(text, root))
    return load_config(cwd=Path(_sub(case["cwd"], root)))


def _check_trees(config: Config, expected: list[dict], root: Path) -> None:
    assert len(config.trees) == len(expected)
    for tree, want in zip(config.trees, expected, strict=True):
        for key, value in want.items():
            if key == "path":
                assert tree.path == _expected_path(value, root, Path.home())
            elif key == "path_is_absolute":
                assert tree.path.is_absolute() is value
            elif key in ("include", "exclude"):
                assert list(getattr(tree, key)) == value
            else:
                assert getattr(tree, key) == value


def _check_merged(config: Config, expected: dict, root: Path) -> None:
    for key, value in expected.items():
        if key == "trees":
            _check_trees(config, value, root)
        elif key == "tree_count":
            assert len(config.trees) == value
        elif key == "tree_names":
            assert [t.name for t in config.trees] == value
        elif key == "config_root":
            assert config.root == Path(_sub(value, root))
        elif key == "config_root_is_some":
            assert (config.root is not None) is value
        elif key == "rules":
            got = [{"patterns": list(r.match), "terms": list(r.terms)}
                   for r in config.context.rules]
            assert got == value
        elif key == "warning_about":
            assert any(value in (w.key or "") for w in config.warnings)
            assert config.tree(value) is not None
        else:
            assert _attr(config, key) == value, key


@pytest.mark.parametrize("case", MERGE, ids=_ids)
def test_conformance_config_merge(case, tmp_path):
    root = tmp_path.resolve()
    config = _load_merge_case(case, root)
    _check_merged(config, _design_expected(case), root)
    for path, expected in case.get("pattern_matches", {}).items():
        assert config.trees[0].matches(path) is expected, path


# --- config_discovery --------------------------------------------------------------------

DISCOVERY = conformance("config_discovery")["cases"]


def _rel_dirs(files: list[Path], root: Path) -> list[str]:
    """Folders of the found files under ``root`` ("" for root itself), in order."""
    out = []
    for file in files:
        if file.parent == root or root in file.parents:
            rel = file.parent.relative_to(root).as_posix()
            out.append("" if rel == "." else rel)
    return out


@pytest.mark.parametrize("case", [c for c in DISCOVERY if "cwd" in c], ids=_ids)
def test_conformance_config_discovery(case, tmp_path):
    root = tmp_path.resolve()
    for directory in case.get("configs", ()):
        _write(root / directory / ".ra.toml", "[settings]\ndefault_limit = 5\n")
    for directory in case.get("root_configs", ()):
        _write(root / directory / ".ra.toml", "root = true\n")
    for directory in case.get("configs_as_directories", ()):
        (root / directory / ".ra.toml").mkdir(parents=True)
    cwd = root / case["cwd"]
    cwd.mkdir(parents=True, exist_ok=True)
    found = discover_config_files(cwd)
    if "expected_all" in case:
        assert found == [root / d / ".ra.toml" if d else root / ".ra.toml"
                         for d in case["expected_all"]]
    else:  # files above the temporary folder are not the test's business
        assert _rel_dirs(found, root) == case["expected_local"]


@pytest.mark.parametrize("case", [c for c in DISCOVERY if "is_global" in c], ids=_ids)
def test_conformance_is_global_config(case):
    assert is_global_config(Path(case["path"])) is case["is_global"]


def test_global_config_is_appended_last(tmp_path, isolated_home):
    home_file = _write(isolated_home / ".ra.toml", "")
    local = _write(tmp_path / "project" / ".ra.toml", "")
    found = discover_config_files(tmp_path / "project")
    assert found[0] == local.resolve() and found[-1] == home_file
    assert is_global_config(home_file)


def test_global_config_is_not_appended_after_a_root_config(tmp_path, isolated_home):
    _write(isolated_home / ".ra.toml", "")
    local = _write(tmp_path / ".ra.toml", "root = true\n")
    assert discover_config_files(tmp_path) == [local.resolve()]


def test_global_config_is_not_listed_twice_when_cwd_is_under_home(isolated_home):
    home_file = _write(isolated_home / ".ra.toml", "")
    (isolated_home / "work").mkdir()
    found = discover_config_files(isolated_home / "work")
    assert [f for f in found if is_global_config(f)] == [home_file.resolve()]


# --- tree_path_resolution ----------------------------------------------------------------

RESOLUTION = conformance("tree_path_resolution")["cases"]


@pytest.mark.parametrize("case", [c for c in RESOLUTION if "path" in c], ids=_ids)
def test_conformance_tree_path_resolution(case, tmp_path, isolated_home):
    root = tmp_path.resolve()
    for directory in case.get("dirs", ()):
        (root / directory).mkdir(parents=True)
    if "symlink" in case:
        for link, target in case["symlink"].items():
            (root / target).mkdir()
            (root / link).symlink_to(root / target)
    raw = case["path"].replace("<name>", "notes")
    if raw.startswith("~"):
        (isolated_home / "notes").mkdir()
    base = Path(_sub(case.get("config_dir", "/other"), root))
    expected = _expected_path(case["expected"].replace("<name>", "notes"), root, isolated_home)
    assert resolve_path(_sub(raw, root), base) == expected


@pytest.mark.parametrize("case", [c for c in RESOLUTION if "expand" in c], ids=_ids)
def test_conformance_expand_tilde(case, isolated_home):
    assert expand_tilde(case["expand"]) == case["expected"].replace("$HOME", str(isolated_home))


# --- include_exclude_patterns ------------------------------------------------------------

PATTERNS = conformance("include_exclude_patterns")["cases"]


@pytest.mark.parametrize("case", PATTERNS, ids=_ids)
def test_conformance_include_exclude(case, tmp_path):
    tree = Tree(case.get("tree", "docs"), tmp_path, tuple(case["include"]),
                tuple(case["exclude"]))
    for path, expected in case["matches"].items():
        assert tree.matches(path) is expected, path


def test_unknown_tree_matches_nothing():
    """Upstream: a path in an unknown tree is never indexed; here there is no such Tree."""
    assert Config().tree("nope") is None


# --- context_rules -----------------------------------------------------------------------

RULES = conformance("context_rules")


def _matched(data: dict) -> MatchedRules:
    return MatchedRules(**{k: tuple(v) for k, v in data.items()})


@pytest.mark.parametrize("case", RULES["matched_rules_merge"], ids=_ids)
def test_conformance_matched_rules_merge(case):
    merged = _matched(case["a"]).merge(_matched(case["b"]))
    for key, value in case["expected"].items():
        assert list(getattr(merged, key)) == value


@pytest.mark.parametrize("case", RULES["compute_effective_trees"], ids=_ids)
def test_conformance_compute_effective_trees(case):
    # An empty intersection means "no restriction" (all trees), as upstream does.
    assert list(effective_trees(case["rule_trees"], case["explicit"])) == case["expected"]


def test_conformance_injected_term_boost():
    pytest.skip(f"{RULES['injected_term_boost']['source']}: the boost of injected terms "
                "is a constant of the context query (query/context.py), not configuration")


def _rules_config(rules: list[dict], tmp_path: Path) -> Config:
    """The rules written as TOML and loaded, so each case also exercises the parser."""
    path = _write(tmp_path / ".ra.toml", dumps({"context": {"rules": rules}}))
    return load_config_files([path])


@pytest.mark.parametrize("case", RULES["cases"], ids=_ids)
def test_conformance_context_rules(case, tmp_path):
    if case.get("expected_error"):
        with pytest.raises(ConfigError, match="unclosed character class") as info:
            _rules_config(case["rules"], tmp_path)
        assert info.value.key == "context.rules[0].match" and info.value.line is not None
        return
    matched = _rules_config(case["rules"], tmp_path).match_rules(case.get("path", "main.rs"))
    if "match_terms_expected" in case:
        assert list(matched.terms) == case["match_terms_expected"]
    for key, value in case.get("expected", {}).items():
        if key == "terms_contain":
            assert set(value) <= set(matched.terms)
        else:
            assert list(getattr(matched, key)) == value


def test_rule_search_overrides_first_rule_wins_and_conflicts_are_flagged(tmp_path):
    config = _rules_config([
        {"match": "src/**", "trees": ["docs"], "search": {"limit": 3}},
        {"match": "*.rs", "trees": ["api"], "search": {"limit": 9, "fuzzy": False}},
    ], tmp_path)
    matched = config.match_rules("src/main.rs")
    assert matched.search_overrides == {"limit": 3, "fuzzy": False}
    assert matched.trees == () and matched.tree_conflict
    assert not config.match_rules("src/readme.md").tree_conflict


def test_rule_search_cannot_override_the_stemmer(tmp_path):
    config = _rules_config([{"match": "*", "search": {"stemmer": "german"}}], tmp_path)
    assert config.context.rules[0].search == ()
    assert [w.key for w in config.warnings if w.key] == ["context.rules[0].search.stemmer"]
    assert "no trees configured" in str(config.warnings[-1])  # the config has none


# --- errors name file, key and line --------------------------------------------------------

@pytest.mark.parametrize(("text", "key", "line", "words"), [
    ('[settings]\ndefault_limit = "five"\n', "settings.default_limit", 2, "integer"),
    ("[search]\nfuzzy = true\nfuzzy_distance = 5\n", "search.fuzzy_distance", 3, "from 0 to 2"),
    ('[search]\nstemmer = "klingon"\n', "search.stemmer", 2, "unknown stemmer"),
    ('[tree.docs]\npath = "d"\ninclude = "x"\n', "tree.docs.include", 3, "array of strings"),
    ('[tree.docs]\nexclude = ["a"]\n', "tree.docs", 1, "missing required key 'path'"),
    ('[[context.rules]]\nmatch = "*.rs"\n\n[[context.rules]]\nmatch = "*.py"\nterms = "py"\n',
     "context.rules[1].terms", 6, "array of strings"),
    ('[[context.rules]]\nmatch = "*"\n[context.rules.search]\ncutoff_ratio = 2\n',
     "context.rules[0].search.cutoff_ratio", 4, "from 0 to 1"),
    ("[context.rules]\nmatch = 1\n", "context.rules", 1, "array of tables"),
    ('root = "yes"\n', "root", 1, "true or false"),
    ('[settings]\nlocal_boost = true\n', "settings.local_boost", 2, "number"),
    ('[search.boosts]\ntitle = -1\n', "search.boosts.title", 2, "at least 0"),
    ('[tree."a:b"]\npath = "x"\n', 'tree."a:b"', 1, "cannot contain ':'"),
    # ids of these would not parse: `ra get` refused ids that `ra search` gave
    ('[tree."c#"]\npath = "x"\n', 'tree."c#"', 1, "cannot contain '/', '\\' or '#'"),
    ('[trees]\n"my notes " = "x"\n', 'trees."my notes "', 2, "nor begin or end with"),
    ('[trees]\ndocs = "./d"\n[tree.docs]\npath = "e"\n', "tree.docs", 3, "defined twice"),
    # the newer form with the older section's name: say which is which
    ('[settings]\n\n[trees.docs]\npath = "d"\n', "trees.docs", 3, "[tree.docs] (singular)"),
    ('[[include]]\ntree = "docs"\n', "include[0]", 1, "'pattern'"),
    ('[tree.docs]\npath = "d"\nexclude = ["{a,b"]\n', "tree.docs.exclude", 3, "unclosed"),
])
def test_a_wrong_value_names_file_key_and_line(text, key, line, words, tmp_path):
    path = _write(tmp_path / ".ra.toml", text)
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path)
    error = info.value
    assert (error.file, error.key, error.line) == (str(path.resolve()), key, line)
    assert words in error.message
    assert str(error).startswith(f"{path.resolve()}:{line} [{key}]: ")


def test_broken_toml_names_file_and_line(tmp_path):
    path = _write(tmp_path / ".ra.toml", '[settings]\ndefault_limit = 5\nlocal_boost = \n')
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        load_config(cwd=tmp_path)
    assert info.value.file == str(path.resolve()) and info.value.line == 3
    assert "at line" not in info.value.message


def test_unreadable_utf8_is_a_config_error(tmp_path):
    path = _write(tmp_path / ".ra.toml", "")
    path.write_bytes(b"[settings]\n# \xff\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        parse_config_file(path)


# --- warnings ------------------------------------------------------------------------------

def test_unknown_keys_are_warnings_naming_file_and_key(tmp_path):
    path = _write(tmp_path / ".ra.toml", "[settings]\ndefault_limit = 7\nlimt = 3\n"
                                         "[weird]\nx = 1\n[search.boosts]\nheading = 2.0\n"
                                         '[tree.here]\npath = "."\n')
    config = load_config(cwd=tmp_path)
    assert config.settings.default_limit == 7
    assert [(w.file, w.key) for w in config.warnings] == [
        (path.resolve(), "settings.limt"), (path.resolve(), "weird"),
        (path.resolve(), "search.boosts.heading")]
    assert str(config.warnings[0]) == f"{path.resolve()} [settings.limt]: unknown key; ignored"


def test_a_missing_tree_folder_is_a_warning_and_the_tree_is_kept(tmp_path):
    _write(tmp_path / ".ra.toml", '[tree.gone]\npath = "./nowhere"\n')
    config = load_config(cwd=tmp_path)
    assert config.tree("gone").path == tmp_path.resolve() / "nowhere"
    [warning] = config.warnings
    assert warning.key == "tree.gone.path" and "does not exist" in warning.message


def test_warning_str_without_a_file():
    assert str(ConfigWarning(None, None, "odd")) == "configuration: odd"


# --- merging --------------------------------------------------------------------------------

def test_no_config_gives_defaults(tmp_path):
    config = load_config(cwd=tmp_path)
    assert config.files == () and config.root is None and config.index_dir is None
    assert config.trees == () and config.warnings == ()
    # title 2.0, not DESIGN.md's 3.0: changed on measured evidence (ra.config.settings.FieldBoosts)
    assert config.settings.default_limit == 5 and config.search.boosts.title == 2.0
    assert config.context.terms == 15 and config.search.fuzzy_weight == 0.5


def test_scalars_merge_per_key_including_boosts(tmp_path, isolated_home):
    _write(isolated_home / ".ra.toml", "[search]\nk1 = 2.0\n[search.boosts]\ntitle = 5\n"
                                       "tags = 4\n[context]\nterms = 20\n")
    _write(tmp_path / ".ra.toml", "[search.boosts]\ntitle = 6\n[context]\nlimit = 3\n")
    config = load_config(cwd=tmp_path)
    assert config.search.k1 == 2.0
    assert (config.search.boosts.title, config.search.boosts.tags) == (6.0, 4.0)
    assert (config.context.limit, config.context.terms) == (3, 20)
    assert config.global_file == isolated_home / ".ra.toml"


def test_upstream_aliases_set_candidate_limit(tmp_path):
    _write(tmp_path / ".ra.toml", "[search]\naggregation_pool_size = 40\n")
    assert load_config(cwd=tmp_path).search.candidate_limit == 40
    _write(tmp_path / ".ra.toml", "[search]\nmax_candidates = 30\ncandidate_limit = 50\n"
                                  '[tree.here]\npath = "."\n')
    config = load_config(cwd=tmp_path)
    assert config.search.candidate_limit == 50
    assert [w.key for w in config.warnings] == ["search.max_candidates"]


def test_a_global_tree_redefined_locally_becomes_local(tmp_path, isolated_home):
    (isolated_home / "docs").mkdir()
    (tmp_path / "docs").mkdir()
    _write(isolated_home / ".ra.toml", '[tree.docs]\npath = "~/docs"\n'
                                       '[tree.ref]\npath = "~/docs"\n')
    _write(tmp_path / ".ra.toml", '[tree.docs]\npath = "./docs"\n')
    config = load_config(cwd=tmp_path)
    assert config.tree("docs").is_global is False
    assert config.tree("docs").path == tmp_path.resolve() / "docs"
    assert config.tree("ref").is_global is True
    assert config.tree("ref").path == (isolated_home / "docs").resolve()


def test_tilde_in_tree_paths_is_the_home_folder(tmp_path, isolated_home):
    (isolated_home / "notes" / "rust").mkdir(parents=True)
    _write(tmp_path / ".ra.toml", '[tree.notes]\npath = "~/notes/rust"\n')
    config = load_config(cwd=tmp_path)
    assert config.tree("notes").path == (isolated_home / "notes" / "rust").resolve()
    assert config.warnings == ()


def test_home_can_be_passed_explicitly(tmp_path):
    home = tmp_path / "elsewhere"
    _write(home / ".ra.toml", '[tree.n]\npath = "~/n"\n')
    (tmp_path / "cwd").mkdir()
    config = load_config(cwd=tmp_path / "cwd", home=home)
    assert config.files == (home / ".ra.toml",)
    assert config.tree("n").path == (home / "n").resolve() and config.tree("n").is_global


# --- older forms (seeds 000 and 003) ---------------------------------------------------------

def test_older_trees_and_include_forms(tmp_path, isolated_home):
    for folder in (isolated_home / "docs", tmp_path / "docs"):
        folder.mkdir()
    _write(isolated_home / ".ra.toml", '[trees]\nglobal = "~/docs"\n'
                                       '[[include]]\ntree = "global"\npattern = "**/git/**"\n')
    _write(tmp_path / ".ra.toml", '[trees]\nlocal = "./docs"\n'
                                  '[[include]]\ntree = "global"\npattern = "**/rust/**"\n'
                                  '[[include]]\ntree = "local"\npattern = ["**/*"]\n'
                                  '[[include]]\ntree = "missing"\npattern = "*"\n')
    config = load_config(cwd=tmp_path)
    glob, local = config.tree("global"), config.tree("local")
    # "Include patterns are concatenated (child patterns evaluated after parent)".
    assert glob.include == ("**/git/**", "**/rust/**") and glob.is_global
    assert local.include == ("**/*",) and not local.is_global
    assert glob.matches("x/rust/a.md") and not glob.matches("python/a.md")
    assert [w.key for w in config.warnings] == ["include[2].tree"]


def test_older_include_form_adds_to_an_explicit_include_list(tmp_path):
    (tmp_path / "d").mkdir()
    _write(tmp_path / ".ra.toml", '[tree.d]\npath = "d"\ninclude = ["*.md"]\n'
                                  '[[include]]\ntree = "d"\npattern = "*.rst"\n')
    assert load_config(cwd=tmp_path).tree("d").include == ("*.md", "*.rst")


def test_an_empty_include_list_selects_nothing_and_warns(tmp_path):
    (tmp_path / "d").mkdir()
    _write(tmp_path / ".ra.toml", '[tree.d]\npath = "d"\ninclude = []\n')
    config = load_config(cwd=tmp_path)
    assert config.tree("d").include == () and not config.tree("d").matches("a.md")
    assert [w.key for w in config.warnings] == ["tree.d.include"]


def test_older_context_patterns_become_rules_and_child_globs_win(tmp_path, isolated_home):
    _write(isolated_home / ".ra.toml", '[context.patterns]\n"*.rs" = ["rust"]\n'
                                       '"*.py" = ["python"]\n')
    _write(tmp_path / ".ra.toml", '[context.patterns]\n"*.rs" = ["rust-lang", "cargo"]\n'
                                  '"src/api/**" = "http"\n'
                                  '[[context.rules]]\nmatch = "*.rs"\ntrees = ["docs"]\n')
    config = load_config(cwd=tmp_path)
    assert [(r.match, r.terms) for r in config.context.rules] == [
        (("*.rs",), ()), (("*.rs",), ("rust-lang", "cargo")), (("src/api/**",), ("http",)),
        (("*.py",), ("python",))]
    matched = config.match_rules("src/api/x.rs")
    assert matched.terms == ("rust-lang", "cargo", "http") and matched.trees == ("docs",)


# --- index location and fingerprint -------------------------------------------------------

def test_index_dir_sits_beside_the_nearest_config(tmp_path, isolated_home):
    _write(isolated_home / ".ra.toml", "")
    _write(tmp_path / "p" / ".ra.toml", "")
    (tmp_path / "p" / "sub").mkdir()
    assert load_config(cwd=tmp_path / "p" / "sub").index_dir == (
        tmp_path.resolve() / "p" / ".ra" / "index")
    config = load_config(cwd=tmp_path)  # only the global file
    assert config.root == isolated_home and config.index_dir == isolated_home / ".ra" / "index"


def test_index_dir_setting_resolves_against_its_own_file(tmp_path):
    _write(tmp_path / ".ra.toml", '[settings]\nindex_dir = "artifacts"\n')
    _write(tmp_path / "child" / ".ra.toml", "[settings]\ndefault_limit = 2\n")
    config = load_config(cwd=tmp_path / "child")
    assert config.root == tmp_path.resolve() / "child"
    assert config.index_dir == tmp_path.resolve() / "artifacts"


def _hash(tmp_path: Path, text: str) -> str:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "other").mkdir(exist_ok=True)
    _write(tmp_path / ".ra.toml", text)
    return load_config(cwd=tmp_path).config_hash()


BASE = '[search]\nstemmer = "english"\n[tree.docs]\npath = "docs"\n'


@pytest.mark.parametrize("changed", [
    BASE.replace("english", "german"),
    BASE.replace('"docs"\n', '"other"\n'),
    BASE + 'include = ["**/*.md"]\n',
    BASE + 'exclude = ["drafts/**"]\n',
    BASE + '[tree.more]\npath = "other"\n',
    BASE.replace("tree.docs", "tree.manual"),
    BASE + "[settings]\nchunk_at_headings = false\n",
])
def test_config_hash_changes_with_what_shapes_the_index(changed, tmp_path):
    assert _hash(tmp_path, changed) != _hash(tmp_path, BASE)


@pytest.mark.parametrize("changed", [
    BASE + "[settings]\ndefault_limit = 9\nlocal_boost = 3.0\n",
    BASE + "[search.boosts]\ntitle = 9.0\n[context]\nterms = 3\n",
    BASE.replace("[search]\n", "[search]\nfuzzy = false\ncutoff_ratio = 0.1\n"),
])
def test_config_hash_ignores_query_time_settings(changed, tmp_path):
    assert _hash(tmp_path, changed) == _hash(tmp_path, BASE)


def test_index_fingerprint_lists_trees_with_paths_and_patterns(tmp_path):
    (tmp_path / "docs").mkdir()
    _write(tmp_path / ".ra.toml", BASE)
    fingerprint = load_config(cwd=tmp_path).index_fingerprint()
    assert fingerprint == {"stemmer": "english", "chunk_at_headings": True, "trees": [
        {"name": "docs", "path": str(tmp_path.resolve() / "docs"),
         "include": list(DEFAULT_INCLUDE), "exclude": [], "is_global": False}]}


# --- TOML output ------------------------------------------------------------------------------

FULL = """
[settings]
default_limit = 7
index_dir = "artifacts"

[search]
stemmer = "German"
limit = 4
fuzzy_weight = 0.25

[search.boosts]
body = 1.5

[context]
min_word_length = 3

[[context.rules]]
match = ["*.tsx", "*.jsx"]
terms = ["react", "say \\"hi\\""]
trees = ["docs"]
include = ["docs:a.md"]

[context.rules.search]
limit = 2

[tree.docs]
path = "./docs"
exclude = ["**/drafts/**"]

[tree."odd name"]
path = "./docs"
include = ["{a,b}/*.md"]
"""


def test_to_toml_round_trips_through_tomllib(tmp_path):
    (tmp_path / "docs").mkdir()
    _write(tmp_path / "p" / ".ra.toml", FULL)
    config = load_config(cwd=tmp_path / "p")
    text = config.to_toml()
    assert tomllib.loads(text)["search"]["stemmer"] == "german"
    assert text.startswith("# Effective ra configuration")
    copy = load_config_files([_write(tmp_path / "copy" / ".ra.toml", text)])
    assert copy.settings == config.settings
    assert (copy.search, copy.context.limit) == (config.search, config.context.limit)
    assert [r.search for r in copy.context.rules] == [r.search for r in config.context.rules]
    assert [(t.name, t.path, t.include, t.exclude) for t in copy.trees] == [
        (t.name, t.path, t.include, t.exclude) for t in config.trees]
    assert copy.config_hash() == config.config_hash()


def test_to_toml_of_the_defaults_is_valid(tmp_path):
    text = load_config(cwd=tmp_path).to_toml()
    assert text.startswith("# No .ra.toml found")
    assert tomllib.loads(text)["settings"]["default_limit"] == 5


_KEYS = st.text(min_size=1, max_size=8)
_SCALARS = (st.text(max_size=12) | st.integers() | st.booleans()
            | st.floats(allow_nan=False) | st.lists(st.text(max_size=5), max_size=3))


@given(st.dictionaries(_KEYS, _SCALARS | st.dictionaries(_KEYS, _SCALARS, max_size=3),
                       max_size=5))
def test_dumps_round_trips_arbitrary_keys_and_values(doc):
    assert tomllib.loads(dumps(doc)) == doc


# --- locating keys --------------------------------------------------------------------------

def test_find_key_line_follows_tables_and_arrays_of_tables():
    text = ('limit = 1\n[search]\nlimit = 2\n[[context.rules]]\nlimit = 3\n'
            '[[context.rules]]\n"limit" = 4\n[context.rules.search]\n  limit = 5 # x\n')
    assert find_key_line(text, ["limit"]) == 1
    assert find_key_line(text, ["search", "limit"]) == 3
    assert find_key_line(text, ["context", "rules", 0, "limit"]) == 5
    assert find_key_line(text, ["context", "rules", 1, "limit"]) == 7
    assert find_key_line(text, ["context", "rules", 1, "search", "limit"]) == 9
    assert find_key_line(text, ["context", "rules", 1]) == 6
    assert find_key_line(text, ["nowhere", "to_be_found"]) is None


def test_format_key_quotes_what_is_not_bare():
    assert format_key(["context", "rules", 2, "match"]) == "context.rules[2].match"
    assert format_key(["tree", "my docs", "path"]) == 'tree."my docs".path'


def test_config_objects_are_frozen():
    with pytest.raises(AttributeError):
        Config().root = Path("/")  # type: ignore[misc]
    rule = ContextRule(("*.rs",), terms=("rust",))
    config = Config(context=ContextSettings(rules=(rule,)))
    assert config.match_rules("a/b.rs").terms == ("rust",)
    assert config.match_rules("b.py") == MatchedRules()


def test_home_is_read_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert expand_tilde("~/x") == os.path.join(str(tmp_path), "x")


def test_daemon_autostart_merges_nearest_first_and_is_validated(tmp_path, isolated_home):
    """``[daemon] autostart``: on by default, the nearest file wins, a typo is a warning
    with the key it was meant to be, a wrong type an error with the line."""
    assert load_config(cwd=tmp_path).daemon.autostart is True
    _write(isolated_home / ".ra.toml", "[daemon]\nautostart = false\n")
    assert load_config(cwd=tmp_path).daemon.autostart is False
    _write(tmp_path / ".ra.toml", "[daemon]\nautostart = true\n")
    assert load_config(cwd=tmp_path).daemon.autostart is True
    assert tomllib.loads(load_config(cwd=tmp_path).to_toml())["daemon"] == {
        "autostart": True, "idle_minutes": 15.0}
    _write(tmp_path / ".ra.toml", "[daemon]\nautostrat = false\n")
    config = load_config(cwd=tmp_path)
    assert config.daemon.autostart is False  # the global file's, the typo ignored
    assert "[daemon.autostrat]: unknown key; ignored (did you mean 'autostart'?)" in str(
        config.warnings[0])
    _write(tmp_path / ".ra.toml", '[tree.d]\npath = "."\n[daemon]\nautostart = "no"\n')
    with pytest.raises(ConfigError, match="expected true or false") as info:
        load_config(cwd=tmp_path)
    assert (info.value.key, info.value.line) == ("daemon.autostart", 4)
    _write(tmp_path / ".ra.toml", "[daemon]\nidle_minutes = 2.5\n")
    assert load_config(cwd=tmp_path).daemon.idle_minutes == 2.5
    _write(tmp_path / ".ra.toml", "[daemon]\nidle_minutes = 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path)
    assert (info.value.key, info.value.line) == ("daemon.idle_minutes", 2)


def test_the_starters_commented_settings_are_the_defaults_and_valid(tmp_path):
    """``ra init`` writes every setting commented out at its default: uncommented, the
    file loads and changes nothing (a key the starter names but the loader refuses, or
    a default that moved without it, fails here). ``[semantic]`` and the context rule
    are examples of what to turn on, not defaults."""
    import dataclasses
    import re

    from ra.cli.index_cmd import STARTER
    from ra.config.settings import Config

    kept, section = [], None
    for line in STARTER.splitlines():
        if m := re.match(r"# (\[[a-z.]+\])", line):
            section = m.group(1)
            if section in ("[settings]", "[search]", "[context]", "[mcp]", "[daemon]"):
                kept.append(section)
        elif section in kept and (m := re.match(r"# ([a-z_]+ = \S+)", line)):
            kept.append(m.group(1))
    text = '[tree.docs]\npath = "./docs"\n' + "\n".join(kept) + "\n"
    (tmp_path / "docs").mkdir()
    assert "fill = true" in text and "long_query_words = 6" in text
    (tmp_path / ".ra.toml").write_text(text)
    (tmp_path / "home").mkdir()
    loaded, defaults = load_config(tmp_path, home=tmp_path / "home"), Config()
    assert loaded.warnings == ()
    assert loaded.settings.index_dir == tmp_path / ".ra" / "index"  # the default place
    assert loaded.index_dir == Config(root=tmp_path).index_dir
    for name in ("settings", "search", "context", "mcp", "daemon"):
        got = getattr(loaded, name)
        if name == "settings":
            got = dataclasses.replace(got, index_dir=None)
        assert got == getattr(defaults, name), name
