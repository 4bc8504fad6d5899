"""Known-item retrieval over real corpora: short agent-style queries → the page a human picks.

Two corpora from ``../shared/corpora`` are copied into temporary trees and indexed once
per module:

- rust-book: the whole of ``rust-book/src`` (112 chapters). The Rust Programming Language,
  © The Rust Project Developers, MIT OR Apache-2.0;
- tldr: a deterministic subset, every ``common/`` and ``linux/`` page whose name starts
  with a, b or c (about 1,000 pages). tldr-pages, © the tldr-pages team and contributors,
  CC BY 4.0.

Attribution and full license texts: ``../shared/corpora/LICENSES.md`` and
``../shared/corpora/licenses/``. The texts are read, never modified.

Each case names the expected document (or chunk) and must rank first, or within the top
three where the query is genuinely ambiguous (the case says why). Every clean query also
comes with a one-typo variant (an adjacent transposition or a deletion in a word longer
than four letters), and there are phrase, negation, OR, boost, prefix and field variants.
A case that ranks wrong is a finding: it is marked ``xfail(strict=True)`` with the rank
and top three observed, so an improvement shows up as an unexpected pass. The last tests
compute Success@1 and MRR (over the top 10) per corpus and guard them against regression.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import ra.config.settings
import ra.index.freshness
import ra.query.search as search_module
from conftest import CORPORA
from ra.index.reader import IndexReader
from ra.query.search import Searcher, SearchOptions

DEPTH = 10  # ranks counted for MRR
OPTIONS = SearchOptions(limit=DEPTH)
RB = "docs:ch"  # rust-book ids start with the tree name and the chapter file
TLDR_SUBSET = [("common", "abc"), ("linux", "abc")]


@dataclass(frozen=True)
class Case:
    query: str
    target: str  # a document id (tree:path) or a chunk id (tree:path#slug)
    within: int = 1  # 3 for genuinely ambiguous queries
    why: str = ""  # why a case is ambiguous


def misrank(case: Case, observed: int | None, top3: str):
    """A case that ranks wrong today: strict xfail carrying what was observed."""
    where = "not in the top 10" if observed is None else f"rank {observed}"
    return pytest.param(case, id=case.query, marks=pytest.mark.xfail(
        strict=True, reason=f"MISRANK: {case.query!r} → {case.target} at {where}; "
                            f"top 3: {top3}"))


#: Since every matched section counts in its page's score (ra.query.rank, 2026-11-27): the
#: the reference-cycles page, whose sections each say "Rc" and "reference counting",
#: comes before ch15-04 (first before).
RC_TOP3 = ("ch15-06-reference-cycles.md#reference-cycles-can-leak-memory | "
           "ch15-04-rc.md#rct-the-reference-counted-smart-pointer | "
           "ch16-03-shared-state.md#multiple-ownership-with-multiple-threads")


def ok(case: Case):
    return pytest.param(case, id=case.query)


def hit(result, target: str) -> bool:
    """A result hits a document target when it is in that document; a chunk target when it
    is that chunk or an aggregated result standing for it."""
    if "#" in target:
        return result.id == target or target in result.constituents
    return result.id.split("#")[0] == target


def rank_of(searcher: Searcher, cache: dict, query: str, target: str) -> int | None:
    if query not in cache:
        cache[query] = searcher.search([query], OPTIONS).queries[0].results
    return next((i + 1 for i, r in enumerate(cache[query]) if hit(r, target)), None)


# --- corpora ----------------------------------------------------------------------------

@dataclass
class Corpus:
    searcher: Searcher
    cache: dict

    def rank(self, case: Case) -> int | None:
        return rank_of(self.searcher, self.cache, case.query, case.target)

    def results(self, query: str):
        rank_of(self.searcher, self.cache, query, "")
        return self.cache[query]


def _index(root: Path, home: Path) -> Corpus:
    (root / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        config = ra.config.settings.load_config(root, home=home)
        reader, _ = ra.index.freshness.open_index(config)
    return Corpus(Searcher(reader, config), {})


@pytest.fixture(scope="module")
def rust_book(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("rust-book")
    shutil.copytree(CORPORA / "rust-book" / "src", root / "docs")
    corpus = _index(root, tmp_path_factory.mktemp("rb-home"))
    yield corpus
    corpus.searcher.reader.close()


@pytest.fixture(scope="module")
def tldr(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("tldr")
    for platform, initials in TLDR_SUBSET:
        (root / "docs" / platform).mkdir(parents=True)
        for page in sorted((CORPORA / "tldr" / "pages" / platform).glob("*.md")):
            if page.name[0] in initials:
                shutil.copy(page, root / "docs" / platform / page.name)
    corpus = _index(root, tmp_path_factory.mktemp("tldr-home"))
    yield corpus
    corpus.searcher.reader.close()


# --- rust-book --------------------------------------------------------------------------

def rb(query: str, chapter: str, within: int = 1, why: str = "") -> Case:
    return Case(query, f"docs:{chapter}", within, why)


CLOSURES_WHY = "ch13-02 has a section 'Using Closures That Capture Their Environment'"
DROP_WHY = "ch21-03 'Graceful Shutdown and Cleanup' is about implementing Drop on a pool"
STREAMS_WHY = "all of chapter 17 is about async; streams is one of its sections"

RUST_CLEAN = [
    ok(rb("shared state concurrency mutex", "ch16-03-shared-state.md")),
    misrank(rb("Rc reference counting", "ch15-04-rc.md"), 2, RC_TOP3),
    ok(rb("trait objects dyn", "ch18-02-trait-objects.md")),
    ok(rb("message passing channels between threads", "ch16-02-message-passing.md")),
    ok(rb("spawn thread join handle", "ch16-01-threads.md")),
    ok(rb("Box heap recursive type", "ch15-01-box.md")),
    ok(rb("Deref trait smart pointer", "ch15-02-deref.md")),
    ok(rb("Drop trait cleanup", "ch15-03-drop.md", 3, DROP_WHY)),
    ok(rb("RefCell interior mutability", "ch15-05-interior-mutability.md")),
    ok(rb("reference cycles leak memory Weak", "ch15-06-reference-cycles.md")),
    ok(rb("hash map insert key value", "ch08-03-hash-maps.md")),
    ok(rb("vector store list of values", "ch08-01-vectors.md")),
    ok(rb("UTF-8 encoded text strings", "ch08-02-strings.md")),
    ok(rb("panic unrecoverable errors", "ch09-01-unrecoverable-errors-with-panic.md")),
    ok(rb("recoverable errors Result question mark operator",
          "ch09-02-recoverable-errors-with-result.md")),
    ok(rb("lifetime annotations borrow checker", "ch10-03-lifetime-syntax.md")),
    ok(rb("closures capture environment", "ch13-01-closures.md", 3, CLOSURES_WHY)),
    # the section "The Iterator Trait and the next Method" is named for it (ra.query.named)
    ok(rb("Iterator trait next method", "ch13-02-iterators.md")),
    ok(rb("cargo workspaces", "ch14-03-cargo-workspaces.md")),
    ok(rb("publish crate crates.io", "ch14-02-publishing-to-crates-io.md")),
    ok(rb("release profiles opt-level", "ch14-01-release-profiles.md")),
    ok(rb("unsafe raw pointers dereference", "ch20-01-unsafe-rust.md")),
    ok(rb("declarative macros macro_rules", "ch20-05-macros.md")),
    ok(rb("match control flow", "ch06-02-match.md")),
    ok(rb("if let concise control flow", "ch06-03-if-let.md")),
    ok(rb("string slices", "ch04-03-slices.md")),
    ok(rb("references borrowing", "ch04-02-references-and-borrowing.md")),
    ok(rb("method syntax impl self", "ch05-03-method-syntax.md")),
    ok(rb("guessing game random number", "ch02-00-guessing-game-tutorial.md")),
    ok(rb("streams async", "ch17-04-streams.md", 3, STREAMS_WHY)),
    ok(rb("graceful shutdown thread pool", "ch21-03-graceful-shutdown-and-cleanup.md")),
    ok(rb("integration tests directory", "ch11-03-test-organization.md#integration-tests")),
    ok(rb("environment variables case insensitive",
          "ch12-05-working-with-environment-variables.md")),
    ok(rb("refutable irrefutable patterns", "ch19-02-refutability.md")),
    ok(rb("derivable traits", "appendix-03-derivable-traits.md")),
    ok(rb("install rustup", "ch01-01-installation.md")),
    ok(rb("Send Sync marker traits", "ch16-04-extensible-concurrency-sync-and-send.md")),
    ok(rb("associated types", "ch20-02-advanced-traits.md")),
    ok(rb("type synonyms aliases", "ch20-03-advanced-types.md")),
    ok(rb("function pointers", "ch20-04-advanced-functions-and-closures.md#function-pointers")),
    ok(rb("shadowing variables mutability", "ch03-01-variables-and-mutability.md#shadowing")),
    ok(rb("integer overflow data types", "ch03-02-data-types.md#integer-overflow")),
]

RUST_TYPO = [
    ok(rb("shared state concurrecny mutex", "ch16-03-shared-state.md")),
    misrank(rb("Rc refrence counting", "ch15-04-rc.md"), 2, RC_TOP3),
    ok(rb("trait obejcts dyn", "ch18-02-trait-objects.md")),
    ok(rb("message pasing channels between threads", "ch16-02-message-passing.md")),
    ok(rb("spawn thread join hnadle", "ch16-01-threads.md")),
    ok(rb("Box heap recusive type", "ch15-01-box.md")),
    ok(rb("Deref trait smart ponter", "ch15-02-deref.md")),
    ok(rb("Drop trait claenup", "ch15-03-drop.md", 3, DROP_WHY)),
    ok(rb("RefCell interior mutabilty", "ch15-05-interior-mutability.md")),
    ok(rb("reference cyles leak memory Weak", "ch15-06-reference-cycles.md")),
    ok(rb("hash map insret key value", "ch08-03-hash-maps.md")),
    ok(rb("vetor store list of values", "ch08-01-vectors.md")),
    ok(rb("UTF-8 encoded text strnigs", "ch08-02-strings.md")),
    ok(rb("panic unrecoverable erorrs", "ch09-01-unrecoverable-errors-with-panic.md")),
    ok(rb("recoverable errors Result question mark opertor",
          "ch09-02-recoverable-errors-with-result.md")),
    ok(rb("lifetime anotations borrow checker", "ch10-03-lifetime-syntax.md")),
    ok(rb("closures captrue environment", "ch13-01-closures.md", 3, CLOSURES_WHY)),
    ok(rb("Iterator trait next mehtod", "ch13-02-iterators.md")),
    ok(rb("cargo worksapces", "ch14-03-cargo-workspaces.md")),
    ok(rb("pubilsh crate crates.io", "ch14-02-publishing-to-crates-io.md")),
    ok(rb("relase profiles opt-level", "ch14-01-release-profiles.md")),
    ok(rb("unsafe raw pointers derefernce", "ch20-01-unsafe-rust.md")),
    ok(rb("declarative marcos macro_rules", "ch20-05-macros.md")),
    ok(rb("match contorl flow", "ch06-02-match.md")),
    ok(rb("if let conicse control flow", "ch06-03-if-let.md")),
    ok(rb("string slcies", "ch04-03-slices.md")),
    ok(rb("references borowing", "ch04-02-references-and-borrowing.md")),
    ok(rb("method sytnax impl self", "ch05-03-method-syntax.md")),
    ok(rb("guesing game random number", "ch02-00-guessing-game-tutorial.md")),
    ok(rb("streasm async", "ch17-04-streams.md", 3, STREAMS_WHY)),
    ok(rb("graceful shutdonw thread pool", "ch21-03-graceful-shutdown-and-cleanup.md")),
    ok(rb("integraton tests directory", "ch11-03-test-organization.md#integration-tests")),
    ok(rb("enviroment variables case insensitive",
          "ch12-05-working-with-environment-variables.md")),
    ok(rb("refutable irrefutable pattrens", "ch19-02-refutability.md")),
    ok(rb("derivable triats", "appendix-03-derivable-traits.md")),
    ok(rb("isntall rustup", "ch01-01-installation.md")),
    ok(rb("Send Sync makrer traits", "ch16-04-extensible-concurrency-sync-and-send.md")),
    ok(rb("asociated types", "ch20-02-advanced-traits.md")),
    ok(rb("type synoynms aliases", "ch20-03-advanced-types.md")),
    ok(rb("function ponters", "ch20-04-advanced-functions-and-closures.md#function-pointers")),
    ok(rb("shadowign variables mutability", "ch03-01-variables-and-mutability.md#shadowing")),
    ok(rb("integer overflwo data types", "ch03-02-data-types.md#integer-overflow")),
]

RUST_SYNTAX = [
    ok(rb('"interior mutability" RefCell', "ch15-05-interior-mutability.md")),
    ok(rb('"message passing"', "ch16-02-message-passing.md", 3,
          "ch17-02 has a section on message passing between async tasks")),
    ok(rb('"reference counting" -Arc', "ch15-04-rc.md")),
    ok(rb('"reference counted smart pointer"', "ch15-04-rc.md")),
    ok(rb("mutex -async", "ch16-03-shared-state.md")),
    ok(rb('"hash map" OR HashMap', "ch08-03-hash-maps.md")),
    ok(rb("(Rc OR Weak) reference cycles", "ch15-06-reference-cycles.md")),
    ok(rb("threads OR channels message passing", "ch16-02-message-passing.md", 3,
          "an OR with a bare word: every chapter on threads qualifies")),
    ok(rb("title:slices", "ch04-03-slices.md")),
    ok(rb("title:closures", "ch13-01-closures.md")),
    ok(rb('title:"hash maps"', "ch08-03-hash-maps.md")),
    ok(rb("path:workspaces", "ch14-03-cargo-workspaces.md")),
    ok(rb("title:(lifetimes OR lifetime)", "ch10-03-lifetime-syntax.md")),
    ok(rb("unsafe^2 raw pointers", "ch20-01-unsafe-rust.md")),
    misrank(rb("iter* closures", "ch13-02-iterators.md"), 2,
            "ch13-04-performance.md | ch13-02-iterators.md#closures-that-capture-their-"
            "environment | ch13-00-functional-features.md"),
]


# --- tldr -------------------------------------------------------------------------------

def tl(query: str, page: str, within: int = 1, why: str = "") -> Case:
    return Case(query, f"docs:{page}", within, why)


CAL_WHY = "common/calendar.md 'Display upcoming events from a calendar file'"
CRON_WHY = "common/cron.md is the page about cron itself (it points to crontab)"
APT_WHY = "apt, apt-get and aptitude are all Debian package managers"

TLDR_CLEAN = [
    ok(tl("copy files and directories", "common/cp.md")),
    ok(tl("change access permissions of a file", "common/chmod.md")),
    ok(tl("change user and group ownership of files", "common/chown.md")),
    ok(tl("transfer data from a server url", "common/curl.md")),
    ok(tl("print and concatenate files", "common/cat.md")),
    ok(tl("display a calendar", "common/cal.md", 3, CAL_WHY)),
    ok(tl("schedule cron jobs", "common/crontab.md", 3, CRON_WHY)),
    ok(tl("encode decode base64", "common/base64.md")),
    ok(tl("block-sorting file compressor", "common/bzip2.md")),
    ok(tl("cut out fields from stdin", "common/cut.md")),
    ok(tl("compare two files byte by byte", "common/cmp.md")),
    ok(tl("change current working directory", "common/cd.md")),
    ok(tl("clear the terminal screen", "common/clear.md")),
    ok(tl("CRC checksums byte counts", "common/cksum.md")),
    ok(tl("create extract unix archives static libraries", "common/ar.md")),
    ok(tl("package manager debian", "linux/apt.md", 3, APT_WHY)),
    misrank(tl("add a new user", "linux/adduser.md"), None,
            "linux/abbr.md#abbr | common/composer.md#composer (adduser.md never has the "
            "word 'add': its name is one token, 'adduser')"),
    ok(tl("list partitions UUID", "linux/blkid.md")),
    ok(tl("change file attributes", "linux/chattr.md")),
    ok(tl("LUKS encrypted volumes", "linux/cryptsetup.md")),
    ok(tl("copy-on-write filesystem", "linux/btrfs.md")),
    ok(tl("manage bluetooth devices", "linux/bluetoothctl.md")),
    ok(tl("partition table curses UI", "linux/cfdisk.md")),
    ok(tl("change passwords for multiple users", "linux/chpasswd.md")),
    ok(tl("battery status thermal information", "linux/acpi.md")),
    ok(tl("ALSA soundcard mixer", "linux/alsamixer.md")),
    misrank(tl("CPU frequency information", "linux/cpufreq-info.md"), 2,
            "linux/cpufreq-set.md | linux/cpufreq-info.md | linux/cpupower.md"),
    ok(tl("change login shell", "linux/chsh.md")),
    ok(tl("device brightness", "linux/brightnessctl.md")),
]

TLDR_TYPO = [
    ok(tl("copy files and directoires", "common/cp.md")),
    ok(tl("change access permisions of a file", "common/chmod.md")),
    ok(tl("change user and group onwership of files", "common/chown.md")),
    ok(tl("trasnfer data from a server url", "common/curl.md")),
    ok(tl("print and concatenaet files", "common/cat.md")),
    ok(tl("display a calednar", "common/cal.md", 3, CAL_WHY)),
    ok(tl("schedlue cron jobs", "common/crontab.md", 3, CRON_WHY)),
    ok(tl("encdoe decode base64", "common/base64.md")),
    ok(tl("block-sorting file compresor", "common/bzip2.md")),
    ok(tl("cut out feilds from stdin", "common/cut.md")),
    ok(tl("comapre two files byte by byte", "common/cmp.md")),
    ok(tl("change current working directroy", "common/cd.md")),
    ok(tl("clear the termnial screen", "common/clear.md")),
    ok(tl("CRC chekcsums byte counts", "common/cksum.md")),
    ok(tl("create extract unix archvies static libraries", "common/ar.md")),
    ok(tl("package manager debain", "linux/apt.md", 3, APT_WHY)),
    ok(tl("list partitons UUID", "linux/blkid.md")),
    ok(tl("change file atributes", "linux/chattr.md")),
    ok(tl("LUKS encrypted vloumes", "linux/cryptsetup.md")),
    ok(tl("copy-on-write filesytem", "linux/btrfs.md")),
    ok(tl("manage bluetooht devices", "linux/bluetoothctl.md")),
    ok(tl("partition table cusres UI", "linux/cfdisk.md")),
    ok(tl("change passwords for mutliple users", "linux/chpasswd.md")),
    ok(tl("battery status themral information", "linux/acpi.md")),
    ok(tl("ALSA soundcrad mixer", "linux/alsamixer.md")),
    misrank(tl("CPU frequncy information", "linux/cpufreq-info.md"), 2,
            "linux/cpufreq-set.md | linux/cpufreq-info.md | linux/cpupower.md"),
    ok(tl("change lgoin shell", "linux/chsh.md")),
    ok(tl("device brigthness", "linux/brightnessctl.md")),
]

TLDR_SYNTAX = [
    ok(tl('"curses UI" partition', "linux/cfdisk.md")),
    ok(tl('"byte by byte"', "common/cmp.md")),
    ok(tl('"file compressor" -statistical', "common/bzip2.md")),
    ok(tl("title:chmod", "common/chmod.md")),
    ok(tl("path:linux cat", "linux/cat.md")),
    ok(tl("calendar -events", "common/cal.md")),
    ok(tl("(bzip2 OR gzip) block-sorting", "common/bzip2.md")),
    ok(tl('"Universally Unique Identifier"', "linux/blkid.md")),
    ok(tl("bluetooth^2 manage devices", "linux/bluetoothctl.md", 3,
          "linux/bluetui.md is a 'TUI for managing bluetooth devices'")),
    ok(tl("title:cksum OR title:crc", "common/cksum.md")),
    ok(tl("crypt* volumes", "linux/cryptsetup.md")),
]


# --- the cases --------------------------------------------------------------------------

def check(corpus: Corpus, case: Case) -> None:
    rank = corpus.rank(case)
    top = [r.id for r in corpus.results(case.query)[:3]]
    assert rank is not None and rank <= case.within, (rank, top, case.why)


@pytest.mark.parametrize("case", RUST_CLEAN + RUST_TYPO + RUST_SYNTAX)
def test_rust_book_known_item(rust_book, case):
    check(rust_book, case)


@pytest.mark.parametrize("case", TLDR_CLEAN + TLDR_TYPO + TLDR_SYNTAX)
def test_tldr_known_item(tldr, case):
    check(tldr, case)


def one_typo(clean: str, typo: str) -> bool:
    """Exactly one word differs, it is longer than four letters, and the typo is one
    adjacent transposition or one deleted letter."""
    pairs = [(a, b) for a, b in zip(clean.split(), typo.split(), strict=True) if a != b]
    if len(pairs) != 1 or len(pairs[0][0]) <= 4:
        return False
    a, b = pairs[0]
    deletions = {a[:i] + a[i + 1:] for i in range(len(a))}
    swaps = {a[:i] + a[i + 1] + a[i] + a[i + 2:] for i in range(len(a) - 1)}
    return b in deletions | swaps


@pytest.mark.parametrize("clean, typo", [(RUST_CLEAN, RUST_TYPO), (TLDR_CLEAN, TLDR_TYPO)],
                         ids=["rust-book", "tldr"])
def test_every_typo_case_is_one_edit_from_its_clean_twin(clean, typo):
    """Same targets in the same order (``add a new user`` has no word long enough)."""
    clean = [p.values[0] for p in clean if p.values[0].query != "add a new user"]
    for c, t in zip(clean, [p.values[0] for p in typo], strict=True):
        assert c.target == t.target and one_typo(c.query, t.query), (c.query, t.query)


def test_no_rust_book_result_nests_inside_another(rust_book):
    reader = rust_book.searcher.reader
    for param in RUST_CLEAN:
        results = rust_book.results(param.values[0].query)
        ids = {r.id for r in results}
        for r in results:
            meta = reader.meta(r.id)
            while meta.parent_id is not None:
                assert meta.parent_id not in ids, (param.values[0].query, r.id)
                meta = reader.meta(meta.parent_id)


@pytest.mark.parametrize("query, word", [
    ("mutex -async", "async"),
    ('"reference counting" -Arc', "arc"),
])
def test_negated_words_are_absent_from_rust_book_results(rust_book, query, word):
    results = rust_book.results(query)
    assert results
    for r in results:
        assert word not in r.content.lower().split(), r.id


@pytest.mark.parametrize("query", ["ownership -reference", "mutex -async", "error -panic",
                                   "trait -generic", "closure -iterator", "vector -string"])
def test_the_excluded_chunks_of_the_answers_documents_rank_as_all_of_them(rust_book, query,
                                                                         monkeypatch):
    """``bm25f_sql`` lists the chunks holding an excluded word only in the documents of
    its rows, where ranking looks (an answer's ancestors are of its document): the
    results are those of the whole list, aggregation included."""
    short = rust_book.searcher
    with IndexReader.open(short.config.index_dir) as reader:  # and a long-lived one's
        reader.keep_vocabulary = True
        searchers = (short, Searcher(reader, short.config))

        def results():
            return [[(r.id, r.score, r.content)
                     for r in s.search([query], SearchOptions()).queries[0].results]
                    for s in searchers]

        fewer = results()
        every = search_module.bm25f_sql
        monkeypatch.setattr(search_module, "bm25f_sql",
                            lambda *a, **k: every(*a, **{**k, "every_tainted": True}))
        assert all(fewer) and fewer == results()


def test_negated_words_are_absent_from_tldr_results(tldr):
    results = tldr.results("calendar -events")
    assert results
    for r in results:
        assert "events" not in r.content.lower(), r.id


# --- metrics ----------------------------------------------------------------------------

def metrics(corpus: Corpus, cases: list) -> tuple[float, float]:
    """``(Success@1, MRR@10)`` with every case's own target (ambiguity is not forgiven)."""
    ranks = [corpus.rank(p.values[0]) for p in cases]
    s1 = sum(r == 1 for r in ranks) / len(ranks)
    mrr = sum(1 / r for r in ranks if r) / len(ranks)
    return s1, mrr


# Floors sit a little under what was measured when these tests were written (see the
# report in each assertion); raise them when ranking improves.
@pytest.mark.parametrize("name, cases, floor_s1, floor_mrr", [
    ("rust-book clean", RUST_CLEAN, 0.75, 0.85),
    ("rust-book typo", RUST_TYPO, 0.70, 0.80),
    ("rust-book syntax", RUST_SYNTAX, 0.80, 0.90),
])
def test_rust_book_success_at_1_and_mrr(rust_book, name, cases, floor_s1, floor_mrr):
    s1, mrr = metrics(rust_book, cases)
    print(f"{name}: Success@1 {s1:.3f}  MRR@10 {mrr:.3f}  (n={len(cases)})")
    assert s1 >= floor_s1 and mrr >= floor_mrr, (name, s1, mrr)


@pytest.mark.parametrize("name, cases, floor_s1, floor_mrr", [
    ("tldr clean", TLDR_CLEAN, 0.80, 0.85),
    ("tldr typo", TLDR_TYPO, 0.80, 0.85),
    ("tldr syntax", TLDR_SYNTAX, 0.70, 0.80),
])
def test_tldr_success_at_1_and_mrr(tldr, name, cases, floor_s1, floor_mrr):
    s1, mrr = metrics(tldr, cases)
    print(f"{name}: Success@1 {s1:.3f}  MRR@10 {mrr:.3f}  (n={len(cases)})")
    assert s1 >= floor_s1 and mrr >= floor_mrr, (name, s1, mrr)
