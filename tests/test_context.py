"""``ra context``, ``ra likethis`` and ``ra inspect ctx``: signals, ranking, search, CLI.

Three tiers:

- conformance ports (``context_path_terms``, ``context_tokenize``,
  ``context_markdown_parser``, ``stopwords``) and unit tests of the pure pieces;
- a small two-tree project written here, for tree-aware IDF and rule tree restrictions;
- the whole Rust book, copied from ``../shared/corpora/rust-book/src`` into a temporary
  tree and indexed once for the module: The Rust Programming Language, © The Rust Project
  Developers, MIT OR Apache-2.0 (attribution and license texts:
  ``../shared/corpora/LICENSES.md``). The Rust programs below were written for these
  tests.

Deviations from the upstream cases, each noted where it applies: every file that is not
markdown is analysed as plain text (upstream's ``TextParser.can_parse`` is false for
``.rs``, but upstream falls back to it for any file anyway), and the ``source`` of a
weighted word is upstream's (``path:filename``, ``md:h1``, ``body``), reported by ``ra
context --explain`` as ``origin`` next to the coarse ``source`` (path, rule, content).
One more, at the level of ``ra context``: a ``--tree`` sharing no tree with a file's rule
restriction is honoured, not turned into "every tree" (see the test).
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import ra.config.settings
import ra.index.freshness
import ra.query.context
from conftest import CORPORA, conformance
from ra.cli.app import main
from ra.config.globs import translate
from ra.query import disjunction
from ra.query.ast import to_query_string
from ra.query.bm25f import Filters, bm25f_sql
from ra.query.context import ContextOptions, context_search, likethis
from ra.query.parser import parse
from ra.query.plan import PlanOptions, plan_query
from ra.query.search import Searcher
from ra.query.signals import (
    RULE_BOOST,
    ContextError,
    ContextTerm,
    UnreadableFile,
    content_words,
    extract_signals,
    is_markdown,
    kind_terms,
    path_terms,
    project_path,
    query_node,
    sample_content,
    tally,
    tokenize,
)
from ra.text.analysis import Analyzer
from ra.text.document import skill_folders
from ra.text.stopwords import STOPWORDS, for_file, is_stopword


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def by_word(words) -> dict:
    return {w.word: w for w in words}


# --- conformance: context_path_terms ------------------------------------------------------

def _case(category: str, source_suffix: str) -> dict:
    return next(c for c in conformance(category)["cases"] if c["source"].endswith(source_suffix))


def test_path_terms_weigh_the_file_name_above_directories():
    case = _case("context_path_terms", "extract_path_terms_assigns_weights")
    words = by_word(path_terms(case["path"], min_length=3))
    assert set(words) == set(case["expected"]["terms"])  # the extension "rs" is dropped
    for word, want in case["expected"]["terms"].items():
        assert (words[word].source, words[word].weight) == (want["source"], want["weight"])


def test_numbers_and_a_folder_s_page_name_are_no_path_words():
    """Deviation from the original (which keeps any alphanumeric word): a zettelkasten's
    new note ``docs/3000/README.md`` searched "3000" ("$3000", "localhost:3000") and
    "readme" (the notes on writing READMEs)."""
    assert set(by_word(path_terms("docs/3000/README.md"))) == set()
    assert set(by_word(path_terms("guides/2024/payments/index.md"))) == {"guides",
                                                                          "payments"}


def test_analyze_file_combines_path_and_content(tmp_path):
    case = _case("context_path_terms", "analyze_file_combines_signals")
    file = tmp_path / "src" / "auth" / "login.rs"
    file.parent.mkdir(parents=True)
    file.write_text(case["content"])
    (tmp_path / ".ra.toml").write_text("")
    config = ra.config.settings.load_config(tmp_path)
    signals = extract_signals(file, config)
    path_words = {t.word for t in signals.terms if "path" in t.source}
    assert set(case["expected"]["path_terms_contain"]) <= path_words
    sample = sample_content(file, config.context.sample_size)
    assert case["expected"]["content_sample_contains"] in sample


def test_sample_content_reads_only_the_first_bytes(tmp_path):
    case = _case("context_path_terms", "sample_content_truncates_large_file")
    file = tmp_path / "large.txt"
    file.write_text("x" * case["content_len"])
    assert len(sample_content(file, 1000)) == case["expected"]["sample_len"]


def test_sample_content_reads_utf16_with_a_byte_order_mark(tmp_path):
    """A source file saved as UTF-16 (Visual Studio, Windows PowerShell) is text, not a
    binary file to skip."""
    file = tmp_path / "Pool.cs"
    file.write_text("// Worker pool\r\nclass WorkerPool {}\r\n", encoding="utf-16")
    assert sample_content(file, 1000) == "// Worker pool\nclass WorkerPool {}\n"
    (tmp_path / "raw.bin").write_bytes("no mark".encode("utf-16-le"))
    with pytest.raises(UnreadableFile, match="binary"):
        sample_content(tmp_path / "raw.bin", 1000)


@pytest.mark.parametrize(("path", "tests"), [
    ("tests/test_orders.py", True), ("src/orders_test.go", True), ("app/Orders.test.tsx", True),
    ("x/orders.spec.js", True), ("spec/models/order_spec.rb", True),
    ("src/OrdersTest.java", True), ("lib/__tests__/a.js", True),
    ("src/Latest.java", False), ("src/contest.py", False), ("docs/testing.md", False),
    ("src/attest.py", False)])
def test_a_file_of_tests_is_about_testing(path, tests):
    """A path's ``test``/``tests`` are noise (conformance, above); that the file is one of
    tests is a signal of its own: "test", weighed as a folder's word."""
    found = kind_terms(path)
    assert [(w.word, w.source, w.weight) for w in found] == (
        [("test", "path:kind", 3.0)] if tests else [])


def test_context_of_a_test_file_finds_the_testing_guidelines(tmp_path, monkeypatch, capsys):
    """Microsoft's engineering playbook: ``ra context tests/test_orders.py`` (a pytest file
    using ``unittest.mock``) gave its observability recipes and Git's basics."""
    docs = {"testing.md": "# Unit testing\n\nWrite a unit test for every public function; "
                          "mock what the test does not own.\n",
            "git.md": "# Git\n\nCreate an orders branch, commit and push it.\n",
            "observe.md": "# Observability\n\nLog each order once it is created.\n"}
    for name, text in docs.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_orders.py").write_text(
        "from unittest.mock import MagicMock\n\ndef test_create_order():\n    repo = "
        "MagicMock()\n    create_order(repo, 'book')\n    repo.save.assert_called_once()\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "context", "tests/test_orders.py", "--list")
    assert code == 0 and out.split()[0] == "docs:testing.md#unit-testing"


RULE_SOURCE = """\
module.exports = {
    create(context) {
        const sourceCode = context.sourceCode;
        return {
            "Program:exit"(node) {
                for (const variable of sourceCode.getScope(node).variables) {
                    if (variable.references.length === 0) {
                        context.report({ node, message: "unused variable" });
                    }
                }
            }
        };
    }
};
"""


def _rules_project(root: Path) -> None:
    """eslint's layout: a rule's source in ``lib/rules``, its page in ``docs/rules``; the
    guide to writing rules says most of the source's words."""
    docs = {"rules/no-unused-vars.md": "# no-unused-vars\n\nDisallow a variable declared "
                                       "and never read.\n",
            "rules/no-shadow.md": "# no-shadow\n\nDisallow a variable that shadows another "
                                  "in an outer scope.\n",
            "extend/custom-rules.md": "# Custom rules\n\nA rule's create(context) returns "
                                      "visitors of each node; context.report a problem at a "
                                      "node with a message; context.sourceCode and its "
                                      "getScope(node) give a scope's variables and their "
                                      "references. A variable's references: each node that "
                                      "reads the variable. Report the node at Program:exit, "
                                      "once every scope is known.\n",
            "extend/scope-manager.md": "# Scope manager\n\nsourceCode.getScope(node) gives "
                                       "the scope of a node: its variables, each variable's "
                                       "references, the references of each node.\n"}
    for rule in ("no-unused-expressions", "no-unused-labels", "no-unused-private-class-members",
                 "vars-on-top", "no-var", "one-var", "no-undef-init"):  # unused, vars
        docs[f"rules/{rule}.md"] = (f"# {rule}\n\nReports unused code: vars declared, "
                                    "expressions and labels unused by the program.\n")
    for name, text in docs.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text)
    (root / "lib" / "rules").mkdir(parents=True)
    (root / "lib" / "rules" / "no-unused-vars.js").write_text(RULE_SOURCE)
    (root / "lib" / "rules" / "index.js").write_text(RULE_SOURCE)
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')


def test_the_page_named_as_a_source_file_comes_before_pages_sharing_its_words(
        tmp_path, monkeypatch, capsys):
    """eslint (MIT): ``ra context lib/rules/no-unused-vars.js`` gave the rule's page 8th,
    after the pages on writing rules, whose words (node, scope, report) the source is
    made of; a document named as the source file (``no-unused-vars.md``, or cargo's
    ``cargo-fetch.md`` for ``cargo_fetch.rs``) scores ``FILE_NAMED`` times as much."""
    _rules_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "context", "lib/rules/no-unused-vars.js", "--list")
    assert code == 0 and out.split()[0] == "docs:rules/no-unused-vars.md#no-unused-vars"


def test_a_name_every_folder_has_names_no_page(tmp_path, monkeypatch, capsys):
    """``index.js`` says where a file is, not what it is about: no page is its page."""
    _rules_project(tmp_path)
    (tmp_path / "docs" / "index.md").write_text(
        "# Index\n\nThe rules: a rule's context reports a node, its scope's variables.\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "context", "lib/rules/index.js", "--list")
    assert code == 0 and out.split()[0] == "docs:extend/custom-rules.md#custom-rules"


def test_a_file_named_as_a_keyword_of_its_language_keeps_its_name(tmp_path):
    """Go's keywords are stopwords in a Go file's text (``func``, ``defer``), but a file
    named for one is about it: go-task's ``taskfile/ast/defer.go`` searched without
    "defer", and its guide's section on cleaning up with defer did not come."""
    (tmp_path / "taskfile" / "ast").mkdir(parents=True)
    source = tmp_path / "taskfile" / "ast" / "defer.go"
    source.write_text("package ast\n\ntype Defer struct {\n\tTask string\n}\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    config = ra.config.settings.load_config(tmp_path, home=tmp_path / "home")
    signals = extract_signals(source, config)
    assert "defer" in {t.word for t in signals.terms if "path" in t.source}


def test_a_source_file_s_addresses_are_no_words_of_it():
    """typer's ``params.py`` links its docs in docstrings (``https://typer.tiangolo.com/…``):
    "https" and "tiangolo" were among its 15 terms; a license header's address (apache)
    is in every file of a project. The path of an address stays (eslint's rules link
    their own page)."""
    text = ('"""See https://typer.tiangolo.com/tutorial/options/ for options."""\n'
            "# Licensed under http://www.apache.org/licenses/LICENSE-2.0\n"
            "def option(default, help):\n    return Option(default, help=help)\n")
    words = {w.word for w in content_words(text, markdown=False)}
    assert {"options", "licensed", "help", "tutorial"} <= words  # a path's words stay
    assert not words & {"https", "http", "tiangolo", "apache", "www"}


def test_path_terms_split_camel_case_and_drop_noise():
    """camelCase splits (not upstream, which splits at ``_ - .`` only), and the name is
    also one word: docs write ``editLink`` as code, which the analyzer reads whole."""
    words = by_word(path_terms("src/tests/HTTPServer/oauthHandler_v2-config.test.ts",
                               min_length=4))
    assert set(words) == {"http", "server", "httpserver", "oauth", "handler", "oauthhandler",
                          "config"}
    assert words["server"].source == "path:dir" and words["handler"].weight == 4.0
    assert words["oauthhandler"].weight == 4.0
    assert set(by_word(path_terms("components/EditLink.astro"))) == {
        "components", "edit", "link", "editlink"}


def test_path_terms_merge_repeats_keeping_the_stronger_source():
    oauth = by_word(path_terms("oauth/oauth_service.rs", min_length=3))["oauth"]
    assert (oauth.source, oauth.weight, oauth.frequency) == ("path:filename", 4.0, 2)
    assert by_word(path_terms("async/static_handler.rs", min_length=3)).keys() == {"handler"}


# --- conformance: context_tokenize ---------------------------------------------------------

@pytest.mark.parametrize("case", conformance("context_tokenize")["cases"],
                         ids=lambda c: c["source"].split("::")[-1])
def test_tokenize_conformance(case):
    if "extract_terms" in case:
        spec = case["extract_terms"]
        words = by_word(content_words(spec["text"], markdown=False, min_length=spec["min_len"]))
        assert not set(case["expected"]["not_contains"]) & set(words)
        assert set(case["expected"]["contains"]) <= set(words)
        assert all((w.source, w.weight) == (spec["source"], spec["weight"])
                   for w in words.values())
        return
    tokens = tokenize(case["input"], case["min_len"])
    if "expected" in case:
        assert tokens == case["expected"]
    else:
        assert set(case["expected_contains"]) <= set(tokens)


def test_tokenize_drops_numbers_and_long_words():
    assert tokenize("port 8080 utf8 " + "x" * 31, 1, 30) == ["port", "utf8"]


# --- conformance: context_markdown_parser ---------------------------------------------------

@pytest.mark.parametrize("case", conformance("context_markdown_parser")["cases"],
                         ids=lambda c: c["source"].split("::")[-1])
def test_markdown_and_text_parsing_conformance(case):
    if "can_parse_text" in case:
        # Deviation: every non-markdown file is analysed as text (upstream's fallback too),
        # so "file.rs" is text here although upstream's TextParser.can_parse says no.
        for name, text in case["can_parse_text"].items():
            assert (not is_markdown(name)) == (text or name.endswith(".rs")), name
        return
    markdown = "content" in case
    words = by_word(content_words(case["content"] if markdown else case["text_content"],
                                  markdown=markdown, min_length=3))
    expected = case["expected"]
    assert not set(expected.get("not_contains", ())) & set(words)
    assert set(expected.get("contains", ())) <= set(words)
    for word, count in expected.get("frequency", {}).items():
        assert words[word].frequency == count
    for word, want in expected.items():
        if isinstance(want, dict) and "source" in want:
            assert (words[word].source, words[word].weight) == (want["source"], want["weight"])


def test_markdown_weighted_frequency_sums_heading_and_body_weights():
    words = by_word(content_words("# Tokio\n\n## Tokio runtime\n\ntokio tokio\n",
                                  markdown=True, min_length=3))
    assert words["tokio"].frequency == 4 and words["tokio"].tf == 3.0 + 2.0 + 1.0 + 1.0
    assert words["runtime"].source == "md:h2-h3"


def test_headings_inside_code_blocks_are_body_text():
    words = by_word(content_words("```\n# not a heading\n```\n", markdown=True, min_length=3))
    assert words["heading"].source == "body"


# --- conformance: stopwords -----------------------------------------------------------------

def test_stopwords_conformance():
    for case in conformance("stopwords")["cases"]:
        for word, expected in case.get("is_stopword", {}).items():
            assert is_stopword(word) == expected, (case["source"], word)
        if "len_gt" in case.get("expected", {}):
            assert len(STOPWORDS) > case["expected"]["len_gt"]


def test_language_keywords_apply_to_their_own_files_only():
    assert is_stopword("func", for_file("main.go")) and not is_stopword("func")
    assert is_stopword("lambda", for_file("x.py")) and not is_stopword("lambda", for_file("x.rs"))
    assert is_stopword("constexpr", for_file("a.HPP"))
    assert not any(is_stopword(w) for w in ("mutex", "arc", "thread", "join", "state"))


# --- terms and queries ------------------------------------------------------------------------

def test_rare_content_terms_drop_unless_the_path_names_them():
    words = content_words("alpha alpha beta gamma", markdown=False, min_length=4)
    terms = {t.term: t for t in tally(path_terms("gamma.txt"), words, Analyzer(), 2)}
    assert set(terms) == {"alpha", "gamma"}
    assert terms["gamma"].source == "path+content" and terms["gamma"].tf == 5.0


def test_query_sums_the_boosts_of_a_term_selected_twice():
    def term(t, word, boost):
        return ContextTerm(t, word, "content", "body", 1, 1.0, boost=boost)

    node = query_node([term("mutex", "mutex", 1.0), term("lock", "locks", 0.5),
                       term("mutex", "mutexes", 0.25), term("rust lang", "rust lang", 2.0)])
    assert to_query_string(node) == '"rust lang"^2 OR mutex^1.25 OR locks^0.5'


def test_project_path_is_relative_to_the_root(tmp_path, monkeypatch):
    (tmp_path / ".ra.toml").write_text("")
    config = ra.config.settings.load_config(tmp_path)
    monkeypatch.chdir(tmp_path / ".")
    assert project_path(tmp_path / "src" / "a.rs", config) == "src/a.rs"
    assert project_path(Path("/elsewhere/deep/dir/b.rs"), config) == "dir/b.rs"


# --- a small two-tree project -----------------------------------------------------------------

SMALL = {
    "kb/locks.md": "# Lock notes\n\n## Mutex\n\nA mutex guards the counter. Lock the mutex "
                   "first.\n\n## Spinlocks\n\nSpinning on a lock burns the processor.\n",
    "kb/garden.md": "# Garden\n\nTomatoes and compost and a mutex, oddly.\n",
    "other/mutex.md": "# Mutex everywhere\n\nmutex mutex mutex.\n\n## More\n\nmutex again.\n",
    "other/weather.md": "# Weather\n\nRain and wind.\n",
}
SMALL_CONFIG = """\
[tree.kb]
path = "./kb"

[tree.other]
path = "./other"

[[context.rules]]
match = "src/kb_only/**"
trees = ["kb"]
terms = ["spinning"]
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctx-small")
    for rel, text in SMALL.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".ra.toml").write_text(SMALL_CONFIG)
    (root / "src" / "kb_only").mkdir(parents=True)
    code = "fn main() {\n    let counter = Mutex::new(0); // mutex around the counter\n}\n"
    (root / "src" / "kb_only" / "lock.rs").write_text(code)
    (root / "src" / "plain.rs").write_text(code)
    home = tmp_path_factory.mktemp("ctx-small-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    yield root, config, reader
    reader.close()


def _df_by_hand(reader, term: str, trees: tuple[str, ...]) -> tuple[int, int]:
    """(df, N) counted in Python from the chunk texts, independently of the postings,
    over the indexed chunks: not those with sections below them and no words of their
    own (``ra.pipeline.analyze``)."""
    analyzer = Analyzer()
    rows = reader.query("SELECT c.tree, c.title, c.breadcrumb, c.path, c.body FROM chunks c "
                        "WHERE c.descendants = 0 "
                        "OR regexp_matches(coalesce(c.description, '') || c.body, '\\w')")
    rows = [r for r in rows if r[0] in trees]
    df = sum(term in analyzer.terms(" ".join(str(x) for x in r[1:])) for r in rows)
    return df, len(rows)


def test_idf_counts_only_the_selected_trees(small):
    root, config, reader = small
    everywhere = extract_signals(root / "src" / "plain.rs", config, reader)
    in_kb = extract_signals(root / "src" / "plain.rs", config, reader, trees=("kb",))
    mutex_all = next(t for t in everywhere.terms if t.term == "mutex")
    mutex_kb = next(t for t in in_kb.terms if t.term == "mutex")
    df, n = _df_by_hand(reader, "mutex", ("kb",))
    assert mutex_kb.df == df and mutex_kb.idf == pytest.approx(
        math.log(1 + (n - df + 0.5) / (df + 0.5)))
    assert mutex_all.df == _df_by_hand(reader, "mutex", ("kb", "other"))[0] > df


def test_tree_option_restricts_results(small):
    root, config, reader = small
    resp = context_search(reader, config, [root / "src" / "plain.rs"],
                          ContextOptions(trees=("other",)))
    assert resp.queries[0].results and {r.tree for r in resp.queries[0].results} == {"other"}


def test_rule_trees_restrict_and_rule_terms_join_the_query(small):
    root, config, reader = small
    resp = context_search(reader, config, [root / "src" / "kb_only" / "lock.rs"],
                          ContextOptions(explain=True))
    topic = resp.queries[0]
    assert {r.tree for r in topic.results} == {"kb"}
    assert "spinning^2" in topic.query
    file = topic.explain["files"][0]
    assert file["trees"] == ["kb"] and file["rules"]["terms"] == ["spinning"]


def test_search_filters_apply_to_context(small, monkeypatch, capsys):
    root, config, reader = small
    resp = context_search(reader, config, [root / "src" / "plain.rs"],
                          ContextOptions(path="locks.md", cutoff_ratio=0.0))
    assert {r.path for r in resp.queries[0].results} == {"locks.md"}
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "context", "src/plain.rs", "--path", "mutex.md", "--json")
    assert code == 0
    assert {r["path"] for r in json.loads(out)["queries"][0]["results"]} == {"mutex.md"}


def test_injected_rule_terms_are_boosted_2():
    assert RULE_BOOST == conformance("context_rules")["injected_term_boost"]["expected"]


def test_tree_option_outside_the_rule_trees_wins_with_a_warning(small):
    # Deviation: upstream's compute_effective_trees turns a rule restriction and a --tree
    # with no tree in common into "no restriction" (conformance context_rules, "upstream
    # quirk"). ra keeps that for rules among themselves (MatchedRules), but an explicit
    # --tree is honoured: the user asked for those trees only.
    root, config, reader = small
    resp = context_search(reader, config, [root / "src" / "kb_only" / "lock.rs"],
                          ContextOptions(trees=("other",)))
    assert {r.tree for r in resp.queries[0].results} == {"other"}
    assert any("--tree" in w for w in resp.warnings)


def test_files_restricted_to_different_trees_are_summed(small):
    root, config, reader = small
    files = [root / "src" / "kb_only" / "lock.rs", root / "src" / "plain.rs"]
    resp = context_search(reader, config, files,
                          ContextOptions(explain=True, limit=20, cutoff_ratio=0.0))
    assert len(resp.queries[0].explain["groups"]) == 2
    assert {r.tree for r in resp.queries[0].results} == {"kb", "other"}


def test_words_absent_from_the_index_are_an_error(small):
    root, config, reader = small
    odd = root / "src" / "zzz.txt"
    odd.write_text("qwxyzzy qwxyzzy frobnicatorium frobnicatorium\n")
    with pytest.raises(ContextError, match="occurs in the index"):
        context_search(reader, config, [odd])


# --- the Rust book ----------------------------------------------------------------------------

SHARED_STATE = """\
//! A job counter shared between worker threads.
//!
//! Every worker increments a shared counter and records which jobs it handled.
//! The counter lives behind a mutex, shared through an atomic reference count.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

struct Stats {
    counter: u64,
    handled: Vec<usize>,
}

fn run_workers(workers: usize, jobs_per_worker: usize) -> Arc<Mutex<Stats>> {
    let stats = Arc::new(Mutex::new(Stats { counter: 0, handled: Vec::new() }));
    let mut handles = Vec::with_capacity(workers);
    for worker in 0..workers {
        let stats = Arc::clone(&stats);
        let handle = thread::spawn(move || {
            for _ in 0..jobs_per_worker {
                // Hold the lock only while we update the shared state.
                let mut guard = stats.lock().unwrap();
                guard.counter += 1;
                guard.handled.push(worker);
                drop(guard);
                thread::sleep(Duration::from_millis(1));
            }
        });
        handles.push(handle);
    }
    for handle in handles {
        handle.join().expect("a worker thread panicked");
    }
    stats
}

fn main() {
    let stats = run_workers(4, 10);
    let stats = stats.lock().unwrap();
    println!("counter = {}", stats.counter);
    println!("handled by workers: {:?}", stats.handled);
}
"""

CHANNELS = """\
use std::sync::mpsc;
use std::thread;

fn producer(id: u32, tx: mpsc::Sender<String>) {
    for i in 0..5 {
        let message = format!("producer {id} sends message {i}");
        tx.send(message).unwrap();
    }
}

fn main() {
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    thread::spawn(move || producer(1, tx));
    thread::spawn(move || producer(2, tx2));
    // The receiver iterates until every sender has been dropped.
    for received in rx {
        println!("got: {received}");
    }
    let (tx3, rx3) = mpsc::channel::<i32>();
    drop(tx3);
    match rx3.recv() {
        Ok(v) => println!("value {v}"),
        Err(_) => println!("channel closed: every sender dropped"),
    }
}
"""

HANDLERS = """\
fn handle_connection(mut stream: TcpStream) {
    let buf_reader = BufReader::new(&stream);
    let request_line = buf_reader.lines().next().unwrap().unwrap();
    let (status_line, filename) = if request_line == "GET / HTTP/1.1" {
        ("HTTP/1.1 200 OK", "hello.html")
    } else {
        ("HTTP/1.1 404 NOT FOUND", "404.html")
    };
    let contents = fs::read_to_string(filename).unwrap();
    let response = format!("{status_line}\\r\\nContent-Length: {}\\r\\n\\r\\n{contents}",
                           contents.len());
    stream.write_all(response.as_bytes()).unwrap();
}
"""

BOOK_CONFIG = """\
[tree.docs]
path = "./docs"

[[context.rules]]
match = "src/api/**"
terms = ["http"]
include = ["docs:ch21-01-single-threaded.md"]

[[context.rules]]
match = "src/limited/**"
search = { limit = 2 }
"""

SHARED_STATE_DOC = "docs:ch16-03-shared-state.md"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctx-rust-book")
    shutil.copytree(CORPORA / "rust-book" / "src", root / "docs")
    (root / ".ra.toml").write_text(BOOK_CONFIG)
    for rel, text in {"src/worker_pool.rs": SHARED_STATE, "src/channels.rs": CHANNELS,
                      "src/api/handlers.rs": HANDLERS, "src/limited/pool.rs": SHARED_STATE,
                      "src/empty.rs": "\n  \n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "src" / "blob.bin").write_bytes(b"\x00\x01binary\x00" * 50)
    home = tmp_path_factory.mktemp("ctx-rust-book-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    yield root, config, reader
    reader.close()


@pytest.fixture
def in_book(book, monkeypatch):
    monkeypatch.chdir(book[0])
    return book


def ids(response) -> list[str]:
    return [r.id for r in response.queries[0].results]


def test_shared_state_program_gets_the_shared_state_chapter(book):
    root, config, reader = book
    found = ids(context_search(reader, config, [root / "src" / "worker_pool.rs"]))
    assert any(i.startswith(SHARED_STATE_DOC) for i in found[:3]), found


def test_cli_context_json_has_the_search_shape(in_book, capsys):
    code, out, _ = run(capsys, "context", "src/worker_pool.rs", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["queries"]) == 1
    topic = data["queries"][0]
    assert "mutex" in topic["query"] and topic["results"][0]["content"]
    assert any(r["id"].startswith(SHARED_STATE_DOC) for r in topic["results"][:3])


def test_rule_include_comes_first_and_is_not_repeated(in_book, capsys):
    code, out, _ = run(capsys, "context", "src/api/handlers.rs", "--json", "--max-tokens", "0")
    assert code == 0  # (no budget: the chapter the rule includes comes whole)
    results = json.loads(out)["queries"][0]["results"]
    assert results[0]["id"] == "docs:ch21-01-single-threaded.md"
    assert results[0]["content"].startswith("## Building a Single-Threaded Web Server")
    assert not any(r["path"] == "ch21-01-single-threaded.md" for r in results[1:])


def test_explain_json_lists_content_and_rule_terms(in_book, capsys):
    code, out, _ = run(capsys, "context", "src/api/handlers.rs", "--explain", "--json")
    assert code == 0
    explain = json.loads(out)["queries"][0]["explain"]
    terms = explain["files"][0]["terms"]
    assert {"term": "http", "source": "rule", "boost": 2.0}.items() <= next(
        t for t in terms if t["source"] == "rule").items()
    content = [t for t in terms if "content" in t["source"] and t["selected"]]
    assert content and all(t["idf"] > 0 and t["score"] > 0 and t["frequency"] >= 1
                           for t in content)
    assert explain["included"] == ["docs:ch21-01-single-threaded.md"]
    assert explain["query"].startswith("http^2") and "SELECT" in explain["sql"]


def test_path_words_are_terms(book):
    root, config, reader = book
    terms = {t.term: t for t in extract_signals(root / "src" / "worker_pool.rs", config,
                                                 reader).terms}
    assert (terms["pool"].source, terms["pool"].origin, terms["pool"].tf) == (
        "path", "path:filename", 4.0)
    assert terms["worker"].source == "path+content" and terms["worker"].boost == 1.0


def test_explain_text_shows_the_term_table(in_book, capsys):
    code, out, _ = run(capsys, "context", "src/worker_pool.rs", "--explain", "--list")
    assert code == 0
    assert "context:" in out and "query: " in out and " idf " in out
    assert "mutex" in out.split("context:")[1]


def test_several_files_give_one_merged_answer(book):
    root, config, reader = book
    files = [root / "src" / "worker_pool.rs", root / "src" / "channels.rs"]
    wide = ContextOptions(limit=50, cutoff_ratio=0.0, aggregation=False)
    both = context_search(reader, config, files, wide)
    single = [{r.id: r.score for r in context_search(reader, config, [f], wide)
               .queries[0].results} for f in files]
    assert len(both.queries) == 1
    found = ids(both)
    assert len(found) == len(set(found))
    # leaves only: an ancestor shown in place of its sections takes their best score,
    # which need not come from the same section in each answer
    shared = [r for r in both.queries[0].results
              if all(r.id in s for s in single) and r.descendants == 0]
    assert shared
    for r in shared[:5]:  # one OR query with summed boosts = the files' scores summed
        assert r.score == pytest.approx(single[0][r.id] + single[1][r.id], rel=1e-6)


def test_an_input_file_is_never_returned(book):
    root, config, reader = book
    doc = root / "docs" / "ch16-03-shared-state.md"
    resp = context_search(reader, config, [doc], ContextOptions(explain=True))
    assert resp.queries[0].results
    assert not any(r.path == "ch16-03-shared-state.md" for r in resp.queries[0].results)
    assert resp.queries[0].explain["files"][0]["indexed_as"] == SHARED_STATE_DOC
    assert SHARED_STATE_DOC in resp.queries[0].explain["excluded"]


def test_binary_files_are_skipped_and_missing_ones_searched_by_their_path(in_book, capsys):
    code, out, err = run(capsys, "context", "src/worker_pool.rs", "src/missing.rs",
                         "src/blob.bin", "--list")
    assert code == 0 and out.strip()
    assert "src/missing.rs: no such file yet: its path alone" in err
    assert "src/blob.bin: binary file; skipped" in err
    code, _, err = run(capsys, "context", "src", "--list")  # a folder: what to give instead
    assert code == 1 and "src: a folder; skipped (give its files: src/*)" in err
    root, config, reader = in_book
    resp = context_search(reader, config, ["src/missing.rs", "src/worker_pool.rs"])
    assert resp.to_dict()["warnings"] == ["src/missing.rs: no such file yet: its path alone"]


def test_a_file_not_written_yet_is_searched_by_its_path(in_book, capsys):
    """An agent asks before it creates the file (both helpers' tries: "nothing to
    analyse: …: no such file"); an empty file just created is the same."""
    root, config, reader = in_book
    new = context_search(reader, config, ["src/shared_state/mutex_guard.rs"],
                         ContextOptions(explain=True))
    words = {t["word"] for t in new.queries[0].explain["files"][0]["terms"]}
    assert {"mutex", "guard", "shared", "state"} <= words
    assert new.queries[0].results[0].path == "ch16-03-shared-state.md"
    assert new.warnings == ["src/shared_state/mutex_guard.rs: no such file yet: its path alone"]
    code, out, err = run(capsys, "context", "src/empty.rs", "--list")
    assert code == 0 and out.strip() and "src/empty.rs: empty: its path alone" in err
    code, out, err = run(capsys, "context", "src/qxzv.rs", "--list")
    assert code == 1 and not out  # no word of its path is the book's
    assert ("nothing to search for: no word of src/qxzv.rs occurs in the index; "
            "src/qxzv.rs: no such file yet: its path alone") in err
    code, _, err = run(capsys, "context", "src/blob.bin")
    assert code == 1 and "nothing to analyse" in err and "binary" in err


def test_rule_search_overrides_apply(book):
    root, config, reader = book
    resp = context_search(reader, config, [root / "src" / "limited" / "pool.rs"],
                          ContextOptions(cutoff_ratio=0.0))
    assert len(resp.queries[0].results) == 2
    more = context_search(reader, config, [root / "src" / "limited" / "pool.rs"],
                          ContextOptions(cutoff_ratio=0.0, limit=4))
    assert len(more.queries[0].results) == 4  # the caller's limit beats the rule's


def test_list_and_token_budget(in_book, capsys):
    code, out, _ = run(capsys, "context", "src/worker_pool.rs", "--json", "--list",
                       "--max-tokens", "300", "-n", "5")
    assert code == 0
    data = json.loads(out)
    assert data["max_tokens"] == 300 and 0 < data["tokens_used"] <= 300
    assert all("content" not in r for r in data["queries"][0]["results"])


def test_likethis_a_chunk_leaves_out_itself_and_its_relatives(book):
    root, config, reader = book
    chunk = f"{SHARED_STATE_DOC}#controlling-access-with-mutexes"
    meta = reader.meta(chunk)
    assert meta is not None
    resp = likethis(reader, config, chunk, ContextOptions(limit=10))
    results = resp.queries[0].results
    assert results
    for r in results:
        inside = meta.ord <= r.ord <= meta.ord + meta.descendants
        around = r.ord <= meta.ord <= r.ord + r.descendants
        assert not inside and not around, r.id
    assert any(r.path.startswith(("ch16", "ch21")) for r in results[:3]), ids(resp)


def test_likethis_a_file_is_context_for_that_file(in_book, capsys):
    _, like, _ = run(capsys, "likethis", "src/worker_pool.rs", "--json")
    _, ctx, _ = run(capsys, "context", "src/worker_pool.rs", "--json")
    assert json.loads(like) == json.loads(ctx)


def test_likethis_unknown_id_suggests(in_book, capsys):
    code, _, err = run(capsys, "likethis", "docs:ch16-03-shared-stat.md")
    assert code == 1 and "did you mean" in err and SHARED_STATE_DOC in err


def test_inspect_ctx_shows_signals_without_searching(in_book, capsys):
    code, out, _ = run(capsys, "inspect", "ctx", "src/api/handlers.rs", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["path"] == "src/api/handlers.rs" and info["rules"]["terms"] == ["http"]
    assert info["rules"]["include"] == ["docs:ch21-01-single-threaded.md"]
    assert "http^2" in info["query"]
    code, out, _ = run(capsys, "inspect", "ctx", "src/api/handlers.rs")
    assert code == 0 and out.startswith("context:") and "rules: terms http" in out


def test_inspect_ctx_says_whether_the_file_is_indexed(tmp_path, monkeypatch, capsys):
    """A file in a tree's folder that its include leaves out is no chunk: ``ra inspect
    ctx`` said "indexed as docs:build.py" of it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nBuild the project with make.\n")
    (tmp_path / "docs" / "build.py").write_text("import subprocess\nsubprocess.run(['make'])\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\ninclude = ["**/*.md"]\n')
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "update")[0] == 0
    code, out, _ = run(capsys, "inspect", "ctx", "docs/build.py")
    assert code == 0 and "indexed as" not in out
    assert "in tree docs, not indexed (its include and exclude leave it out)" in out
    code, out, _ = run(capsys, "inspect", "ctx", "docs/build.py", "--json")
    assert json.loads(out)["indexed"] is False
    code, out, _ = run(capsys, "inspect", "ctx", "docs/guide.md")
    assert code == 0 and "indexed as docs:guide.md;" in out


def test_a_context_that_finds_nothing_says_the_files_words_not_its_query(
        tmp_path, monkeypatch, capsys):
    """uv's CLAUDE.md holds only ``@AGENTS.md``: ``ra context CLAUDE.md`` said "no results
    for 'claude^1'", the query syntax ra made of it; the JSON keeps the query."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nBuild the project with make.\n")
    (tmp_path / "docs" / "CLAUDE.md").write_text("@AGENTS.md\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "context", "docs/CLAUDE.md")
    assert code == 0 and "no results for the words of docs/CLAUDE.md (claude)" in out
    assert "^" not in out
    code, out, _ = run(capsys, "context", "docs/CLAUDE.md", "--json")
    assert json.loads(out)["queries"][0]["query"] == "claude^1"


def test_inspect_ctx_has_help_with_an_example(capsys):
    code, out, _ = run(capsys, "inspect", "ctx", "--help")
    assert code == 0 and "Example" in out


def test_inspect_ctx_without_configuration(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("# Kubernetes\n\nkubernetes pods and pods\n")
    code, out, _ = run(capsys, "inspect", "ctx", "notes.md", "--json")
    assert code == 0
    terms = {t["term"]: t for t in json.loads(out)["terms"]}
    assert terms["kubernet"]["origin"] == "md:h1" and terms["kubernet"]["idf"] is None


# --- the disjunction scorer -------------------------------------------------------------------
# ``ra context`` scores its ``word^boost OR …`` queries with ``ra.query.disjunction`` (an
# approximate pass in DuckDB, then the exact BM25F of the few best chunks in Python); the
# rows must be ``bm25f_sql``'s, float for float, for every query shape it accepts.

def _plan(reader, query: str):
    return plan_query(parse(query), reader, Analyzer(), PlanOptions(fuzzy=False))


def _both(reader, config, query: str, filters: Filters = Filters(), limit: int = 100):
    """``(disjunction rows, bm25f_sql rows)`` of one query, both with ancestors."""
    plan = _plan(reader, query)
    assert disjunction.applies(plan)
    weights = Searcher(reader, config).weights()
    fast, _ = disjunction.score(reader, plan, weights, filters, limit)
    ref = bm25f_sql(plan, reader.stats.chunks, reader.stats.avg_length, weights, filters, limit,
                    ancestors=True)
    return fast, reader.query(ref.text, ref.params)


def _assert_same_rows(fast: list[tuple], ref: list[tuple]) -> None:
    scored = [(r[0], r[3], r[5:]) for r in ref if r[0] is not None]
    assert scored, "the query should match something"
    assert [(r[0], r[3], r[5:]) for r in fast if r[0] is not None] == scored  # exact floats
    assert {r[6] for r in ref if r[0] is None} <= {r[6] for r in fast}  # ancestors too


BOOK_QUERIES = [
    "worker^1 OR handled^0.93 OR counter^0.803 OR thread^0.681 OR guard^0.6 OR mutex^0.55",
    "channel^1 OR mpsc^0.81 OR producer^0.81 OR dropped^0.712 OR message^0.6 OR sender^0.5",
    "http^2 OR line^1 OR unwrap^0.914 OR contents^0.804 OR stream^0.804",
    "title:mutex^2 OR body:lock OR thread^0.5 OR tags:rust",
    "the OR a OR rust OR string OR vector",  # common words: thousands of ties and near-ties
    "ownership",
    "mutex OR mutexes^0.5 OR lock",  # two clauses of one term
]


@pytest.mark.parametrize("query", BOOK_QUERIES)
@pytest.mark.parametrize("limit", [100, 7, 1])
def test_disjunction_scores_equal_bm25f_sql_bit_for_bit(book, query, limit):
    _, config, reader = book
    _assert_same_rows(*_both(reader, config, query, limit=limit))


def test_disjunction_applies_the_search_filters(book):
    _, config, reader = book
    query = BOOK_QUERIES[0]
    excluded = tuple(r[0] for r in reader.query(
        "SELECT id FROM chunks WHERE path = 'ch16-03-shared-state.md'"))
    fast, ref = _both(reader, config, query, Filters(exclude_ids=excluded))
    _assert_same_rows(fast, ref)
    assert excluded and not set(excluded) & {r[6] for r in fast if r[0] is not None}
    fast, ref = _both(reader, config, query, Filters(path_regex=translate("ch16-*")))
    _assert_same_rows(fast, ref)
    paths = {r[10] for r in fast if r[0] is not None}
    assert "ch16-03-shared-state.md" in paths and all(p.startswith("ch16-") for p in paths)
    _assert_same_rows(*_both(reader, config, query, Filters(trees=("docs",))))
    assert _both(reader, config, query, Filters(tags=("nothing",))) == ([], [])


def test_disjunction_boosts_local_trees_only(tmp_path_factory):
    home, root = tmp_path_factory.mktemp("disj-home"), tmp_path_factory.mktemp("disj")
    (root / "docs").mkdir()
    (home / "notes").mkdir()
    for folder in (root / "docs", home / "notes"):
        (folder / "locks.md").write_text("# Locks\n\nA mutex guards shared state.\n\n"
                                         "## Spinning\n\nA spinlock spins on a mutex.\n")
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    (home / ".ra.toml").write_text(f'[tree.notes]\npath = "{home / "notes"}"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    try:
        fast, ref = _both(reader, config, "mutex^1.5 OR spinlock OR shared^0.3")
        _assert_same_rows(fast, ref)
        scores = {(r[9], r[14]): r[0] for r in fast if r[0] is not None}  # (tree, title)
        titles = {title for _, title in scores}
        assert titles == {"Locks", "Spinning"}
        for title in titles:  # the same text in a local and in a global tree
            assert scores["docs", title] == pytest.approx(1.5 * scores["notes", title])
    finally:
        reader.close()


def test_disjunction_applies_only_to_an_or_of_indexed_words(book):
    _, _, reader = book
    assert disjunction.applies(_plan(reader, "mutex OR thread^0.5"))
    assert disjunction.applies(_plan(reader, "mutex"))
    for query in ("mutex thread", "mutex OR -thread", '"shared state" OR mutex',
                  "mutex OR qwxyzzy", "tree:docs OR mutex", "mutex OR (thread lock)"):
        assert not disjunction.applies(_plan(reader, query)), query
    fuzzy = plan_query(parse("thraed"), reader, Analyzer(), PlanOptions(fuzzy=True))
    assert len(fuzzy.clauses[0].alts) > 1 and not disjunction.applies(fuzzy)


def test_context_answers_the_same_through_bm25f_sql(book, monkeypatch):
    root, config, reader = book
    cases = [([root / "src" / "worker_pool.rs"], ContextOptions()),
             ([root / "src" / "worker_pool.rs", root / "src" / "channels.rs"],
              ContextOptions(limit=50, cutoff_ratio=0.0, aggregation=False)),
             ([root / "docs" / "ch16-03-shared-state.md"], ContextOptions(limit=20))]

    def answer(files, options):
        topic = context_search(reader, config, files, replace(options, explain=True)).queries[0]
        return ([(r.id, r.score, r.snippet) for r in topic.results], topic.total_matches,
                topic.explain["sql"])

    fast = [answer(*case) for case in cases]
    monkeypatch.setattr(disjunction, "applies", lambda plan: False)
    slow = [answer(*case) for case in cases]
    for (ranked, total, sql), (want, want_total, want_sql) in zip(fast, slow, strict=True):
        assert ranked == want and total == want_total
        assert "per_chunk" in want_sql and "per_chunk" not in sql  # the two scorers ran


# --- agent rule files: documents that say which files they are about ----------------------

RULES = {
    ".cursor/rules/api.mdc": "---\ndescription: API handlers\nglobs: src/api/**/*.ts, "
                             "src/server.ts\nalwaysApply: false\n---\n\n# API rules\n\n"
                             "Return problem documents; never leak traces.\n",
    ".cursor/rules/react.mdc": "---\nglobs: **/*.tsx\n---\n\n# React rules\n\nUse hooks.\n",
    ".claude/rules/tests.md": "---\npaths:\n  - \"**/*.test.ts\"\n  - \"e2e/**\"\n---\n\n"
                              "# Testing\n\nOne assertion per test.\n",
    ".github/instructions/ts.instructions.md": "---\napplyTo: \"**/*.ts,**/*.mts\"\n---\n\n"
                                               "# TypeScript\n\nStrict mode everywhere.\n",
    ".claude/rules/old.md": "---\npaths: src/**\nstatus: archived\n---\n\n# Old rules\n\nx\n",
    ".claude/rules/bad.md": "---\npaths: [\"src/[api\"]\n---\n\n# Broken glob\n\ny\n",
    ".claude/rules/all.md": "---\npaths: \"**\"\n---\n\n# Every file\n\nBe kind.\n",
}
RULES_CONFIG = """\
[tree.cursor]
path = ".cursor/rules"
[tree.claude]
path = ".claude/rules"
[tree.copilot]
path = ".github/instructions"
[tree.docs]
path = "docs"
"""


def _project(root, files: dict[str, str], config: str) -> None:
    """``files`` (project-relative path -> text) under ``root``, and its ``.ra.toml``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".ra.toml").write_text(config)


@pytest.fixture
def rules_project(tmp_path, monkeypatch):
    files = {**RULES, "docs/paging.md": "# Paging\n\nHandlers paginate with cursors.\n",
             "src/api/handlers.ts": "export function list(req) { return paginate(req); }\n",
             "src/api/handlers.test.ts": "test('list', () => expect(list()).toBe(1));\n",
             "src/ui/Button.tsx": "export const Button = () => <button />;\n",
             "lib/qq/Wq.tsx": "zzqx zzqx\n", "lib/qq/Wq.zzz": "zzqx zzqx\n"}
    _project(tmp_path, files, RULES_CONFIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def context_ids(capsys, *argv: str) -> tuple[list[str], dict]:
    code, out, err = run(capsys, "context", *argv, "--json", "--explain")
    assert code == 0, err
    data = json.loads(out)
    return [r["id"] for r in data["queries"][0]["results"]], data


def test_rule_files_that_name_a_file_come_first_for_it(rules_project, capsys):
    """Cursor's ``globs``, Claude Code's ``paths`` and Copilot's ``applyTo`` say which
    files a rule is about: editing one of them, those rules lead, the most specific glob
    first; a rule archived, about other files or about every file (``**``) does not come
    because it says so."""
    found, data = context_ids(capsys, "src/api/handlers.ts")
    assert found[:2] == ["cursor:api.mdc", "copilot:ts.instructions.md"]
    assert data["queries"][0]["explain"]["included"] == found[:2]
    assert not {"claude:old.md", "cursor:react.mdc", "claude:all.md"} & set(found)
    assert any("claude:bad.md" in w and "src/[api" in w for w in data["warnings"])

    found, _ = context_ids(capsys, "src/api/handlers.test.ts")
    assert found[:3] == ["cursor:api.mdc", "claude:tests.md", "copilot:ts.instructions.md"]
    found, _ = context_ids(capsys, "src/ui/Button.tsx")
    assert found[0] == "cursor:react.mdc" and "cursor:api.mdc" not in found[:1]


def test_a_group_of_alternatives_pins_a_path_down_as_its_shortest():
    """awesome-copilot: for ``agents/my-reviewer.agent.md`` its rule on agent files
    (``**/*.agent.md``) came 10th of 17 matching rules, behind a glob listing twenty
    extensions in braces, each counted."""
    from ra.query.context import specificity

    listed = "**/*.{md,js,mjs,cjs,ts,tsx,jsx,json,py,go,rs,java,kt,swift,cs,cpp,hpp}"
    assert specificity("**/*.agent.md") > specificity(listed) == specificity("**/*.md")
    assert specificity("src/{api,{web,ui}}/*.ts") == specificity("src/ui/*.ts")
    assert specificity("**/for_*/**/*.cs") > specificity("**/*.cs")


def test_a_rule_for_other_files_does_not_come_for_its_words(tmp_path, monkeypatch, capsys):
    """A Next.js and FastAPI project with awesome-copilot's rules: the Kubernetes
    manifests' rule (``applyTo: k8s/**/*.yaml``) came for ``Cart.tsx``, five sections of
    the Next.js rule for ``cmd/server/main.go``. A rule about other files is no convention
    for this one, whatever words they share; a note that names no files still comes."""
    files = {".github/instructions/k8s.instructions.md":
             "---\napplyTo: 'k8s/**/*.yaml'\n---\n# Manifests\n\nEach cart service "
             "declares its checkout resources.\n",
             ".github/instructions/tsx.instructions.md":
             "---\napplyTo: '**/*.tsx'\n---\n# Components\n\nA cart component renders "
             "checkout totals.\n",
             "docs/cart.md": "# Cart\n\nThe cart checkout flow and its totals.\n",
             "web/Cart.tsx": "export const Cart = () => <Checkout totals={cartTotals} />;\n",
             "cmd/cart.go": "package main // cart checkout totals\n"}
    _project(tmp_path, files, '[tree.copilot]\npath = ".github/instructions"\n'
                              '[tree.docs]\npath = "docs"\n')
    monkeypatch.chdir(tmp_path)
    found, data = context_ids(capsys, "web/Cart.tsx")
    assert found[0] == "copilot:tsx.instructions.md"
    assert any(i.startswith("docs:cart.md") for i in found)
    assert not any(i.startswith("copilot:k8s.instructions.md") for i in found)
    found, _ = context_ids(capsys, "cmd/cart.go")
    assert any(i.startswith("docs:cart.md") for i in found)
    assert not any(i.startswith("copilot:") for i in found)


def test_a_rule_too_large_for_half_the_budget_comes_as_its_sections_that_hold_the_words(
        tmp_path, monkeypatch, capsys):
    """awesome-copilot's Docker rule (7,500 tokens), the one rule for a Dockerfile, came as
    a snippet of 70 tokens; its Copilot SDK rule (3,998 tokens) took all but 2 of a
    route handler's 4,000, eleven results not shown. A rule larger than half the budget
    comes as its sections that hold the file's words, in its order; whole in a list."""
    filler = " ".join(f"word{i}" for i in range(400))
    files = {".github/instructions/docker.instructions.md":
             "---\napplyTo: '**/Dockerfile'\n---\n# Docker\n\n## Multi-stage builds\n\n"
             "Name the builder stage and copy only the artifacts.\n\n## Unrelated\n\n"
             f"{filler}\n\n## Layer caching\n\nOrder the builder's layers so npm ci is cached.\n",
             "docs/deploy.md": "# Deploy\n\nThe builder image is pushed by CI.\n",
             "web/Dockerfile": "FROM node:22 AS builder\n# layers cached first\nRUN npm ci\n"
                               "COPY --from=builder dist\n"}
    _project(tmp_path, files, '[tree.copilot]\npath = ".github/instructions"\n'
                              '[tree.docs]\npath = "docs"\n')
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "context", "web/Dockerfile", "--max-tokens", "300", "--json")
    assert code == 0, err
    found = [r["id"] for r in json.loads(out)["queries"][0]["results"]]
    assert found[:2] == ["copilot:docker.instructions.md#multi-stage-builds",
                         "copilot:docker.instructions.md#layer-caching"]
    assert "copilot:docker.instructions.md#unrelated" not in found
    assert any(i.startswith("docs:deploy.md") for i in found)
    listed, _ = context_ids(capsys, "web/Dockerfile", "--max-tokens", "300", "--list")
    assert listed[0] == "copilot:docker.instructions.md"


def test_a_rule_comes_for_a_file_none_of_whose_words_is_indexed(rules_project, capsys):
    """Before, ``ra context`` said "nothing to search for"; the rule that names the file
    is still the knowledge for it, and ``--explain`` says no search ran."""
    found, data = context_ids(capsys, "lib/qq/Wq.tsx")
    assert found == ["cursor:react.mdc"]
    assert "no search" in data["queries"][0]["explain"]["note"]
    code, out, _ = run(capsys, "context", "lib/qq/Wq.tsx", "--explain")
    assert code == 0 and "no search: no word of the files" in out and "pipeline" not in out
    code, _, err = run(capsys, "context", "lib/qq/Wq.zzz")  # no rule names it
    assert code == 1 and "no word of lib/qq/Wq.zzz occurs in the index" in err


def test_the_instruction_files_of_the_folders_above_a_file_come_first(tmp_path, monkeypatch,
                                                                      capsys):
    """An agent reads the ``AGENTS.md`` or ``CLAUDE.md`` of the package it works in (Jest
    keeps a ``CLAUDE.md`` per package): for a file below one, it comes as a whole, nearest
    first; the root's, which the agent reads at every start, and another package's do
    not come for it."""
    files = {"AGENTS.md": "# Repository\n\nSnapshot tests run in CI.\n",
             "packages/snap/CLAUDE.md": "# snap notes\n\n## Layout\n\nState lives in "
                                        "state.ts.\n\n## CI\n\nNo writes in CI.\n",
             "packages/snap/src/AGENTS.md": "# sources\n\nKeep state pure.\n",
             "packages/mock/CLAUDE.md": "# mock notes\n\nState of mocks.\n",
             "docs/state.md": "# State\n\nThe snapshot state is saved at teardown.\n",
             "packages/snap/src/state.ts": "export class SnapshotState { save() {} }\n"}
    _project(tmp_path, files, '[tree.all]\npath = "."\n')
    monkeypatch.chdir(tmp_path)
    found, data = context_ids(capsys, "packages/snap/src/state.ts")
    assert found[:2] == ["all:packages/snap/src/AGENTS.md", "all:packages/snap/CLAUDE.md"]
    assert data["queries"][0]["explain"]["included"] == found[:2]
    assert "all:AGENTS.md" not in found[:2] and "all:packages/mock/CLAUDE.md" not in found[:2]
    assert not any(i.startswith("all:packages/snap/CLAUDE.md#") for i in found)  # whole
    found, _ = context_ids(capsys, "docs/state.md")
    assert not {"all:packages/snap/CLAUDE.md", "all:packages/snap/src/AGENTS.md"} & set(
        found[:1])


def test_rule_files_stay_within_the_trees_asked_for(rules_project, capsys):
    found, _ = context_ids(capsys, "src/api/handlers.ts", "--tree", "docs")
    assert found and all(i.startswith("docs:") for i in found)


@pytest.mark.parametrize("description, folders", [
    ("Reference page structure for src/content/reference/. For components, see "
     "/docs-components.", ("src/content/reference/**",)),  # react.dev; /name: a command
    ("Use when editing files in lib/ or app/api/ (calls go through lib/ghl/client.ts)",
     ("lib/**", "app/api/**")),  # a file named is not the skill's scope
    ("Use inside the library source (src/), or `./docs/`", ("src/**", "docs/**")),
    ("See https://example.com/docs/guide/, ~/.claude/skills/, $HOME/x/, ../shared/ and "
     "and/or TCP/IP", ()),
    # a folder a placeholder goes on: a skill on making one (opentelemetry.io's skill to
    # set up a localization was first in `ra context` for every page of its content/)
    ("Set up a new localization, wiring a new `content/<lang>/` tree, or {lang}/x/", ()),
    (None, ()),
])
def test_a_skill_applies_to_the_folders_its_description_names(description, folders):
    """Agent Skills say when to use them in their description; "Use when editing files in
    src/content/learn/" is a rule's ``paths`` in words (react.dev's three writer skills)."""
    assert skill_folders("docs-writer/SKILL.md", description) == folders
    assert skill_folders("notes/paging.md", description) == ()  # a page's description


def test_a_skill_whose_description_names_a_folder_comes_for_its_files(tmp_path, monkeypatch,
                                                                        capsys):
    files = {".claude/skills/learn-writer/SKILL.md":
             "---\nname: learn-writer\ndescription: Use when writing or editing files in "
             "src/content/learn/. Tone and structure.\n---\n\n# Learn Page Writer\n\n"
             "Short sentences.\n",
             ".agents/skills/blog/SKILL.md": "---\nname: blog\ndescription: Use when editing "
                                             "src/content/blog/\n---\n\n# Blog\n\nDates.\n",
             "src/content/notes.md": "---\ndescription: about src/content/learn/\n---\n\n"
                                     "# Notes\n\nEffects and state.\n",
             "src/content/learn/effects.md": "# Effects\n\nEffects synchronize state.\n"}
    _project(tmp_path, files, '[tree.claude-skills]\npath = ".claude/skills"\n'
             '[tree.agent-skills]\npath = ".agents/skills"\n[tree.docs]\npath = "src/content"\n')
    monkeypatch.chdir(tmp_path)
    found, data = context_ids(capsys, "src/content/learn/effects.md")
    assert found[0] == "claude-skills:learn-writer/SKILL.md"
    assert data["queries"][0]["explain"]["included"] == found[:1]  # not the notes page
    assert "agent-skills:blog/SKILL.md" not in found


def test_a_skill_kept_in_several_agents_folders_comes_once(tmp_path, monkeypatch, capsys):
    """Repositories generate one skill into ``.claude/skills``, ``.agents/skills`` and
    ``.github/skills``: ``ra context`` gave the same text three times, whole."""
    skill = ("---\nname: learn\ndescription: Use when editing files in src/learn/.\n---\n\n"
             "# Learn writer\n\nShort sentences.\n")
    for folder in (".claude/skills", ".agents/skills", ".github/skills"):
        (tmp_path / folder / "learn").mkdir(parents=True)
        (tmp_path / folder / "learn" / "SKILL.md").write_text(skill)
    (tmp_path / "src/learn").mkdir(parents=True)
    (tmp_path / "src/learn/effects.md").write_text("# Effects\n\nEffects and state.\n")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init")[0] == 0
    found, data = context_ids(capsys, "src/learn/effects.md")
    first = data["queries"][0]["results"][0]
    assert found[0] == "agent-skills:learn/SKILL.md" and not any("SKILL" in i for i in found[1:])
    assert first["copies"] == ["claude-skills:learn/SKILL.md", "copilot-skills:learn/SKILL.md"]


def test_release_notes_rank_below_the_pages_for_a_file(tmp_path, monkeypatch, capsys):
    """A changelog names a file's functions in short entries, which matched a source
    file better than the page on the feature (uv's lock/mod.rs had two entries fourth and
    fifth); as in a search, they score half. For release notes, others do not."""
    files = {"docs/locking.md": "# Locking\n\nThe lockfile records the resolution for "
                                "every platform the project supports. It is written after "
                                "each change to the project's requirements, read by sync "
                                "and by run, and checked into version control so that every "
                                "machine installs the same packages; the markers of each "
                                "entry say where it applies.\n",
             "CHANGELOG.md": "# Changelog\n\n## 0.5.3\n\n- Lockfile resolution markers: the "
                             "lock writer forks the resolver (#123)\n",
             "changelogs/0.4.md": "# 0.4\n\n## Fixed\n\n- Lockfile resolution markers: the "
                                  "lock writer forks the resolver again (#99)\n",
             "src/lock.rs": "fn write_lockfile(resolution: Resolution, markers: Markers) "
                            "{ lock_writer.fork(resolver) }\n"}
    _project(tmp_path, files, '[tree.all]\npath = "."\n')
    monkeypatch.chdir(tmp_path)
    found, _ = context_ids(capsys, "src/lock.rs")
    assert found[0] == "all:docs/locking.md#locking"
    factor = ra.query.context.RELEASE_NOTES
    monkeypatch.setattr(ra.query.context, "RELEASE_NOTES", 1.0)  # as before
    assert context_ids(capsys, "src/lock.rs")[0][0] != "all:docs/locking.md#locking"
    monkeypatch.setattr(ra.query.context, "RELEASE_NOTES", factor)
    found, _ = context_ids(capsys, "changelogs/0.4.md")
    assert found[0] == "all:CHANGELOG.md#053"


def test_applies_to_is_in_the_chunks_artifact(rules_project, capsys):
    code, out, _ = run(capsys, "sql", "select id, applies_to from chunks where applies_to is "
                       "not null order by id", "--json")
    assert code == 0
    rows = {r["id"]: r["applies_to"] for r in json.loads(out)}
    assert rows["cursor:api.mdc"] == ["src/api/**/*.ts", "src/server.ts"]
    assert rows["copilot:ts.instructions.md"] == ["**/*.ts", "**/*.mts"]
    assert rows["claude:tests.md"] == ["**/*.test.ts", "e2e/**"]
