"""Compound words (``tldr-pages``, ``file.test.ts``, ``src/api``): the parts, each
typo-tolerant, or the joined word; the compound as written ranks first.

Before, a compound was a phrase and phrases are never fuzzy, so one typo in a part
(``tldr-pagoes``) found nothing, and the parts apart (``pages of tldr``) did not count.

The corpus is written by this module; no third-party text is used here.
"""

from __future__ import annotations

import pytest

from conftest import doc_ids, kb_searcher
from ra.query.search import SearchOptions, in_files, numbered

DOCS = {
    "adjacent.md": "# Adjacent\n\nThe tldr-pages project collects command examples.\n",
    "apart.md": "# Apart\n\nPages of examples: a tldr for every command, one of many pages.\n",
    "tldr.md": "# Only one part\n\nA tldr is a summary.\n",
    "compose.md": "# Compose\n\nRun docker-compose up to start the stack.\n",
    "stack.md": "# Stack\n\nDocker images compose a stack of layers.\n",
    "mail.md": "# Mail\n\nSend an email to the list.\n",
    "tests.md": "# Tests\n\nName each file.test.ts after the module under src/api it tests.\n",
    "other.md": "# Other\n\nA test of the api from the source folder of the file.\n",
    "mutex.md": "# Shared state\n\nA Mutex lets one thread at a time reach the data.\n",
    "sync.md": "# Imports\n\nWrite use std::sync::Mutex; at the top, then lock the Mutex.\n",
    "std.md": "# Sync\n\nThe std library's sync module has channels.\n",
    "new.md": "# New values\n\nEvery type has a new function that makes one.\n",
    "hashmap.md": "# Maps\n\nHashMap::new makes an empty HashMap.\n",
    "whatsnew.md": "# What's new\n\nWhat is different in this release.\n",
    "cards.md": "# Cards\n\nA card and a linkcard: the linkcard is the card with a link.\n",
    "grid.md": "# Grid\n\nA grid lays out each card, and each linkcard, in columns.\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "compounds", DOCS) as searcher:
        yield searcher


def test_the_compound_as_written_ranks_above_its_parts_apart(searcher):
    assert doc_ids(searcher, "tldr-pages")[:2] == ["kb:adjacent.md", "kb:apart.md"]
    assert doc_ids(searcher, "docker-compose")[:2] == ["kb:compose.md", "kb:stack.md"]


def test_a_chunk_with_one_part_only_does_not_match(searcher):
    assert "kb:tldr.md" not in doc_ids(searcher, "tldr-pages")


@pytest.mark.parametrize("typo", ["tldr-pagoes", "tldr-pgaes", "tldr-paegs"])
def test_a_typo_in_one_part_still_finds_the_compound_first(searcher, typo):
    assert doc_ids(searcher, typo)[0] == "kb:adjacent.md"


def test_without_fuzzy_a_typo_in_a_part_is_no_match_of_the_compound(searcher):
    """No chunk holds it as written: the chunks holding its parts answer, and say so."""
    topic = searcher.search(["tldr-pagoes"], SearchOptions(fuzzy=False)).queries[0]
    assert topic.note.startswith("no chunk holds 'tldr-pagoes' as written")
    assert topic.match == "partial"


def test_the_joined_word_matches(searcher):
    assert doc_ids(searcher, "e-mail") == ["kb:mail.md"]


@pytest.mark.parametrize("query", ["file.test.ts", "src/api", "file.test.ts src/api"])
def test_dotted_and_slashed_words_rank_the_page_that_writes_them_first(searcher, query):
    found = doc_ids(searcher, query)
    assert found[0] == "kb:tests.md"


def test_a_negated_compound_excludes_only_the_words_adjacent(searcher):
    found = doc_ids(searcher, "stack -docker-compose")
    assert found == ["kb:stack.md"]  # has docker and compose, not docker-compose


def test_a_path_needs_its_name_not_its_namespaces(searcher):
    """Docs say "a Mutex" and keep ``use std::sync::Mutex;`` in their code listings: the
    page about it must not be left out for lacking ``std`` and ``sync``. Written out,
    the path ranks first; a page with the namespaces but not the name does not match."""
    found = doc_ids(searcher, "std::sync::Mutex")
    assert found[:2] == ["kb:sync.md", "kb:mutex.md"]
    assert "kb:std.md" not in found


def test_a_capitalized_qualifier_is_a_type_and_stays_required(searcher):
    """``HashMap::new``: the type is what is asked about; "new" alone is everywhere."""
    assert doc_ids(searcher, "HashMap::new") == ["kb:hashmap.md"]


def test_explain_marks_a_paths_phrase_as_score_only(searcher):
    opts = SearchOptions(explain=True)
    explain = searcher.search(["std::sync::Mutex"], opts).queries[0].explain
    shown = [(c["kind"], c["text"], c["score_only"]) for c in explain["clauses"]]
    assert shown == [("phrase", "std::sync::Mutex", True), ("term", "Mutex", False)]


def test_explain_shows_parts_joined_word_and_phrase(searcher):
    opts = SearchOptions(explain=True)
    explain = searcher.search(["e-mail"], opts).queries[0].explain
    kinds = [(c["kind"], c["text"]) for c in explain["clauses"]]
    assert kinds == [("term", "e"), ("term", "mail"), ("phrase", "e-mail"),
                     ("term", "email")]


def test_a_word_s_s_is_the_word_alone(searcher):
    """``what's`` was its parts, "what" and "s", and "whats" (which stems to "what"):
    "what" scored twice, and "s" added score to every chunk holding another's
    possessive. On the Starlight docs, "what's the difference between a Card and a
    LinkCard" put a page that says "what" and "different" above the LinkCard page (a
    short corpus makes "what" rare); on Vite's, "what's new in vite 8.1" required "what",
    and the 2.0 announcement came first. A possessive (``vite's``) is its word too."""
    opts = SearchOptions(explain=True)
    for query, word in (("what's", "what"), ("Rust's", "rust"), ("release’s", "release")):
        explain = searcher.search([query], opts).queries[0].explain
        kinds = [(c["kind"], c["text"]) for c in explain["clauses"]]
        assert kinds == [("term", word)], query
    assert doc_ids(searcher, "what's")[:1] == ["kb:whatsnew.md"]  # the part matches alone too
    assert doc_ids(searcher, "what is new")[:1] == ["kb:whatsnew.md"]
    query = "what's the difference between a card and a linkcard"
    assert doc_ids(searcher, query)[:1] == ["kb:cards.md"]


PATHS = {  # a project whose tree is its docs/ folder, as mkdocs sites are laid out
    "concepts/validators.md": "# Validators\n\nA validator checks a field.\n",
    "concepts/models.md": "# Models\n\nModels hold fields; see the validators page.\n",
    "api/validators.md": "# Reference\n\nThe functions of the validators module.\n",
    "guide/index.md": "# Getting started\n\nInstall it, then read the concepts.\n",
    "index.md": "# Welcome\n\nThe guide and the api reference.\n",
    "notes.md": "# Notes\n\nWrite the pages as .md files, one per concept.\n",
    "custom_types.md": "# Custom types\n\nTypes of your own.\n",
    "modes.md": "# Strict and lax\n\nStrict mode refuses what lax mode converts.\n",
    "SUMMARY.md": "# Contents\n\n- [Validators](concepts/validators.md)\n- [Modes](modes.md)\n",
    "chapter.md": "# Chapter\n\nText.\n\n## Summary\n\nIn summary: a summary of the summary.\n",
    "README.md": "# Site README\n\nThe site README: the site, the site README, the site.\n",
    "site/README.md": "# Building\n\nHow the pages are built.\n",
}


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "paths", PATHS) as searcher:
        yield searcher


@pytest.mark.parametrize(("query", "first"), [
    ("concepts/validators.md", "kb:concepts/validators.md"),
    ("api/validators.md", "kb:api/validators.md"),
    ("docs/concepts/validators.md", "kb:concepts/validators.md"),  # from the project root
    ("validators.md", "kb:concepts/validators.md"),
    ("guide/index.md", "kb:guide/index.md"),
    ("docs/index.md", "kb:index.md"),  # the tree's own index: no path field says "docs"
    ("custom_types.md", "kb:custom_types.md"),
    ("kb/concepts/Validators.MD", "kb:concepts/validators.md"),
])
def test_a_path_to_a_page_finds_the_page_first(paths, query, first):
    """The path field holds a page's tree-relative path without its suffix: a path typed
    with its suffix, or from the project's root, needs the file's name only, and its
    folders rank the page in them first. Before, "concepts/validators.md" required the
    word "md", which no path holds, and found nothing."""
    assert doc_ids(paths, query)[0] == first


def test_a_typed_file_ranks_first_where_its_name_is_a_sections_title(paths):
    """A file name that is a common title ("SUMMARY.md", "CONTRIBUTING.md") found the
    sections titled so first (the Rust book's SUMMARY.md was 13th, behind its chapters'
    "Summary" sections); a file the query typed now ranks first. The word alone still
    finds the section."""
    assert doc_ids(paths, "SUMMARY.md")[0] == "kb:SUMMARY.md"
    assert doc_ids(paths, "src/summary.md")[0] == "kb:SUMMARY.md"  # any case, its folder
    assert doc_ids(paths, "summary")[0] == "kb:chapter.md"
    raw = paths.search(["SUMMARY.md"], SearchOptions(raw=True)).queries[0].results
    assert raw[0].path == "chapter.md"  # raw: BM25F alone


@pytest.mark.parametrize(("path", "files", "level"), [
    ("src/SUMMARY.md", ("summary.md",), 2),
    ("concepts/validators.md", ("validators.md", "x.md"), 2),
    ("concepts/validators.md", ("docs/concepts/validators.md",), 1),  # from the root
    ("index.md", ("guide/index.md",), 1),  # as "docs/index.md" is: guide/index.md is 2
    ("api/validators.md", ("concepts/validators.md",), 0),
    ("myvalidators.md", ("validators.md",), 0),
])
def test_a_file_the_query_typed(path, files, level):
    assert in_files(path, files) == level


def test_a_typed_path_prefers_the_page_at_it_to_one_it_ends_with(paths):
    """"site/README.md" is the tree's site/README.md, not its root README.md as typed
    from the project's root, though the root's words match better (kind's docs, whose
    tree is the project: the root README came first)."""
    assert doc_ids(paths, "site/README.md")[:1] == ["kb:site/README.md"]
    assert doc_ids(paths, "docs/README.md")[:1] == ["kb:README.md"]
    assert doc_ids(paths, "guide/index.md")[:1] == ["kb:guide/index.md"]


def test_not_a_path_excludes_the_files_named_so(paths):
    """``NOT CHANGELOG.md`` leaves the pages of that name out, not the chunks that say
    its name; as a phrase ("summary md", no path holds "md") it excluded nothing."""
    assert "kb:SUMMARY.md" in doc_ids(paths, "validators")
    assert "kb:SUMMARY.md" not in doc_ids(paths, "validators NOT SUMMARY.md")
    assert doc_ids(paths, "summary NOT SUMMARY.md") == ["kb:chapter.md"]
    assert doc_ids(paths, "validators -api/validators.md")[:1] == ["kb:concepts/validators.md"]


def test_a_path_needs_the_files_name(paths):
    """The folders only add score: a page in that folder with another name is no match."""
    assert "kb:concepts/models.md" not in doc_ids(paths, "concepts/nothing.md")
    assert doc_ids(paths, "concepts/nothing.md") == []


def test_explain_shows_a_paths_folders_and_phrase_as_score_only(paths):
    opts = SearchOptions(explain=True)
    explain = paths.search(["docs/concepts/validators.md"], opts).queries[0].explain
    shown = [(c["kind"], c["text"], c["score_only"]) for c in explain["clauses"]]
    assert shown == [("term", "validators", False), ("term", "docs", True),
                     ("term", "concepts", True),
                     ("phrase", "docs/concepts/validators", True)]


def test_a_file_of_another_kind_is_a_compound_as_before(paths):
    """``file.test.ts`` names no page ra reads: its parts are all required."""
    opts = SearchOptions(explain=True)
    explain = paths.search(["notes.ts"], opts).queries[0].explain
    explain = explain.get("as_written", explain)  # no chunk holds it: its parts answered
    assert [(c["text"], c["score_only"]) for c in explain["clauses"]] == [
        ("notes", False), ("ts", False), ("notes.ts", True)]


@pytest.mark.parametrize(("query", "first"), [
    ("strict-mode-vs-lax-mode", "kb:modes.md"),
    ("strict-mode-versus-lax-mode.md", "kb:modes.md"),
    ("how-to-read-the-concepts", "kb:guide/index.md"),
])
def test_a_slugs_frame_and_comparison_word_only_add_score(paths, query, first):
    """A page's address writes its title as a slug; the page rarely says "vs" or "how
    to", and as parts of a compound they were required: these found nothing."""
    assert doc_ids(paths, query)[0] == first


def test_typed_operators_keep_a_slugs_words_required(paths):
    """With AND or OR typed, the words are the query's as written, as for words apart:
    no chunk holds them all, so the answer is partial."""
    topic = paths.search(["strict-mode-vs-lax-mode AND strict"],
                         SearchOptions(explain=True)).queries[0]
    assert ("vs", False) in [(c["text"], c["score_only"]) for c in topic.explain["clauses"]]
    assert topic.match == "partial"
    assert paths.search(["strict-mode-vs-lax-mode"]).queries[0].match == "all"


# A page numbered as the query says (a project's design records: Rust's RFCs, Kubernetes'
# KEPs, architecture decision records). Written for this test: no third-party text.
NUMBERED = {
    "sig-node/1287-in-place-resize/README.md": "# In-place Update of Pod Resources\n\n"
        "Resize a pod's containers in place.\n\n## Proposal\n\nThe kubelet resizes the "
        "containers of a running pod, one by one, as the pod's spec asks.\n\n"
        "## Release Signoff Checklist\n\nThe approvers of this KEP approve it when the "
        "tests pass, the docs are written and the graduation criteria are met.\n",
    "sig-node/5419-pod-level-resize/README.md": "# KEP-5419: Pod-Level Resize\n\n"
        "Builds on KEP-1287.\n",
    "sig-node/5554-cpu-manager/README.md": "# KEP-5554: CPU Manager Resize\n\n"
        "Extends KEP-1287.\n",
    "adr/0005-use-postgres.md": "# 5. Use Postgres\n\nWe store records in Postgres.\n",
    "adr/0012-queue.md": "# 12. Queue\n\nADR 5 chose Postgres; this ADR adds a queue.\n",
    "notes.md": "# Notes\n\nUTF-8 text everywhere; issue 1287 was closed.\n",
    # a Swift proposal's file: its title does not say the number
    "proposals/0296-async-await.md": "# Async/await\n\nFunctions that suspend.\n",
}


@pytest.fixture(scope="module")
def numbered_pages(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "numbered", NUMBERED) as searcher:
        yield searcher


@pytest.mark.parametrize(("query", "first"), [
    ("KEP-1287", "kb:sig-node/1287-in-place-resize/README.md"),
    ("kep 1287", "kb:sig-node/1287-in-place-resize/README.md"),
    ("1287", "kb:sig-node/1287-in-place-resize/README.md"),
    ("ADR 5", "kb:adr/0005-use-postgres.md"),
    ("ADR-0005", "kb:adr/0005-use-postgres.md"),
    ("KEP-5419", "kb:sig-node/5419-pod-level-resize/README.md"),
    # typed without the zeros the file is numbered with
    ("SE-296", "kb:proposals/0296-async-await.md"),
    ("se 296", "kb:proposals/0296-async-await.md"),
    ("SE-0296", "kb:proposals/0296-async-await.md"),
])
def test_a_number_names_the_page_numbered_so(numbered_pages, query, first):
    """The page whose file or folder name starts with the number ranks first, as the
    page (its title need not say "KEP"), before the pages that cite it by that name."""
    top = numbered_pages.search([query], SearchOptions()).queries[0].results[0]
    assert top.id.split("#")[0] == first
    assert top.breadcrumb == top.title  # the page, not one of its sections
    assert doc_ids(numbered_pages, query)[:1] == [first]


@pytest.mark.parametrize(("path", "numbers", "named"), [
    ("keps/1287-in-place-resize/README.md", ("1287",), True),
    ("text/0243-trait-based-exception-handling.md", ("243",), True),
    ("adr/0005-use-postgres.md", ("5",), True),
    ("adr/0005-use-postgres.md", ("0",), False),
    ("adr/0000-template.md", ("0",), True),
    ("ch05-01-structs.md", ("5",), False),  # "ch05" is no number
    ("posts/2024-01-05-release.md", ("2024",), True),
    ("keps/12870-other/README.md", ("1287",), False),
    ("notes.md", (), False),
])
def test_numbered(path, numbers, named):
    assert numbered(path, numbers) is named


def test_a_compound_of_a_word_and_a_number_stays_a_compound_elsewhere(numbered_pages):
    """No page is numbered 8: "UTF-8" finds the page that writes it, as before; with
    another word, the page's sections that hold it, not the whole page."""
    assert doc_ids(numbered_pages, "UTF-8") == ["kb:notes.md"]
    top = numbered_pages.search(["KEP-1287 approvers"], SearchOptions()).queries[0].results
    assert [r.id for r in top] == [
        "kb:sig-node/1287-in-place-resize/README.md#release-signoff-checklist"]


# Versions: release notes named and titled "v1.0.0" (Obsidian's help vault), "1.10.0" or
# "1.0". Written for this test: no third-party text.
VERSIONS = {
    "Release notes/v1.0.0.md": "# v1.0.0\n\nA new look for every window.\n",
    "Release notes/v1.10.0.md": "# 1.10.0\n\nA new look for the settings.\n",
    "Release notes/v0.10.0.md": "# v0.10.0\n\nA new look for the sidebar.\n",
    "Release notes/v1.1.0.md": "# 1.1.0\n\nFixed: the new window opens again.\n",
    "guide.md": "# Guide\n\nSince 1.0 every window has a new look.\n",
    "changes/2.0.md": "# 2.0\n\nBreaking: the old plugin API is gone.\n",
    "changes/bumps.md": "# Bumps\n\nDeno moved chalk 4.1.2 -> 5.2.0 and more.\n",
    "changes/bundle.md": "# Bundle\n\nStarting with Deno 2.5, bundle takes HTML.\n",
}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "versions", VERSIONS) as searcher:
        yield searcher


@pytest.mark.parametrize(("query", "first"), [
    ("1.0", 2),  # 1.1.0 holds "1 0" too, and its "1" twice
    ("1.0.0", 1),
    ("v1.0.0", 1),
    ("what's new in 1.0", 2),
])
def test_a_version_is_its_numbers_with_a_v_or_without(versions, query, first):
    """A version's joined digits are another number: "1.0" matched "10" and gave
    v0.10.0 and 1.10.0 first, and its "1" never met "v1.0.0"'s "v1"."""
    found = doc_ids(versions, query)
    assert "kb:Release notes/v1.0.0.md" in found[:first]
    assert "kb:Release notes/v0.10.0.md" not in found[:3]  # (the fill may list it after)


def test_a_version_is_its_numbers_adjacent(versions):
    """A version's numbers anywhere in a chunk matched it: "Deno 2.5" on Deno's docs
    gave the page on `deno outdated` first ("chalk 4.1.2 -> 5.2.0" holds a 2 and a 5),
    the page that says "Starting with Deno 2.5" 29th. Adjacent, they still meet across
    two versions ("4.1.2 -> 5.2.0" reads 2 then 5) and at a version's end (5.2.0 ends
    with 2.0): the words keep no separators."""
    assert doc_ids(versions, "2.0")[:1] == ["kb:changes/2.0.md"]
    assert doc_ids(versions, "2.5")[:1] == ["kb:changes/bundle.md"]
    assert doc_ids(versions, "deno 2.5") == ["kb:changes/bundle.md", "kb:changes/bumps.md"]
    assert versions.search(["deno 2.1"], SearchOptions()).queries[0].match != "all"


def test_a_version_with_a_v_finds_the_one_written_without(versions):
    assert doc_ids(versions, "v2.0")[:1] == ["kb:changes/2.0.md"]
    assert doc_ids(versions, "plugin api v2.0")[:1] == ["kb:changes/2.0.md"]
    assert doc_ids(versions, "new in 1.10")[:1] == ["kb:Release notes/v1.10.0.md"]


# --- words written as code ------------------------------------------------------------------
# An agent pastes an error message whole: its exception's name is one word among common
# ones, and the chunks naming it scored less than pages saying "server" and "response".

ERRORS = {
    "exceptions.md": "# Exceptions\n\n## Exception classes\n\nThe httpx transport raises "
                     "RemoteProtocolError when the server breaks the protocol or sends no "
                     "response, and LocalProtocolError when the client does.\n",
    "server.md": "# Servers\n\n## Server responses\n\nA server sends a response for every "
                 "request it reads, without waiting for the next one. A server that "
                 "disconnected after sending a response closed the connection.\n",
    "streaming.md": "# Streaming\n\n## Streaming responses\n\nRead a response without "
                    "loading it whole: the server keeps sending chunks of the response.\n",
    "proxies.md": "# Proxies\n\n## Forwarding\n\nA proxy server forwards each request and "
                  "sends the response back without a change.\n",
    "client.md": "# Clients\n\n## Sending requests\n\nThe httpx client sends a request "
                 "and reads the response from the server.\n",
    **{f"guide-{n}.md": f"# Guide {n}\n\n## Step {n}\n\nWith httpx, step {n} sends a "
                        "request to the server and checks the response.\n" for n in range(6)},
}


@pytest.fixture(scope="module")
def errors(tmp_path_factory):
    with kb_searcher(tmp_path_factory, "errors", ERRORS) as searcher:
        yield searcher


PASTED = "httpx.RemoteProtocolError: Server disconnected without sending a response."


def test_a_pasted_error_finds_the_chunk_naming_its_exception(errors, monkeypatch):
    """httpx's "RemoteProtocolError: Server disconnected without sending a response."
    put its exceptions page 6th. A word written as code weighs ``IDENTIFIER_BOOST``
    times as much in a ranked query; weighed as the other words, the pages saying
    "server", "sending" and "response" come first here too."""
    import ra.query.plan as plan

    assert doc_ids(errors, PASTED)[0] == "kb:exceptions.md"
    monkeypatch.setattr(plan, "IDENTIFIER_BOOST", 1.0)
    assert doc_ids(errors, PASTED)[0] != "kb:exceptions.md"


@pytest.mark.parametrize(("word", "code"), [
    ("RemoteProtocolError", True), ("getElementById", True), ("push_back", True),
    ("UV_CACHE_DIR", True), ("httpx.Client", True), ("crates.io", True),
    ("std::vector", True), ("HashMap", False), ("PrimPol", False), ("scFv", False),
    ("H2A.Z", False), ("e.g.", False), ("MyD88", False), ("server", False),
])
def test_a_word_written_as_code(word, code):
    """Two humps of camel case, an underscore, a dotted name of two letters a side or a
    ``::`` path; not a gene's or a protein's name (SciFact's claims: ``PrimPol``,
    ``scFv``, ``H2A.Z``, whose weighing moved seven of them, up and down)."""
    from ra.query.plan import _IDENTIFIER

    assert bool(_IDENTIFIER.search(word)) == code
