"""Known-item sets: queries as agents type them, each with the page a human would pick.

Nine sets, over three corpora of ``../shared/corpora`` and one fixture of this
repository, every query in a clean and a one-typo variant (an adjacent swap or a
deletion in one word longer than four letters, fixed seed: the typos agents make):

- ``tldr`` (generated, ``TLDR_N`` pages): a page's first description line *as written*
  (punctuation, backticks, "or", "(...)" and all), minus the words of the command's own
  name, which would make the task trivial (``benchmarks.tldr`` picks the pages);
- ``rust-book``: the hand-written keyword queries of ``tests/test_known_items.py``
  (``RUST_CLEAN`` and their typo twins ``RUST_TYPO``), imported so that there is one list;
- ``cpp-docs`` (generated, ``CPP_N`` pages): compiler, linker and tool error messages as
  a build prints them, from the ``> message`` line of each page of ``error-messages/``,
  with the placeholders (``'*identifier*'``) filled with names a program might use and
  without the error code (which would find the page by its title alone); messages that
  several pages share are left out;
- ``tasks`` (hand-written, ``TASKS``): what an agent asks when it has a job to do
  ("count the lines, words and bytes in a file"), for the three corpora;
- ``questions`` (hand-written, ``QUESTIONS``): the same asked as a question, as agents
  and people type them ("how do I undo my last commit but keep the changes?"), written
  without looking at the pages' wording (2026-11-25).
- ``symbols`` (hand-written, ``SYMBOLS``): a qualified name as an agent copies it from
  the code it is editing (``std::sync::Mutex``, ``std::unique_ptr``), with the page that
  documents it (2026-11-27). Docs rarely spell the path out: the Rust book says "Mutex"
  and keeps ``use std::sync::Mutex;`` in its included listings, cpp-docs' reference pages
  say "the unique_ptr class".
- ``short`` (hand-written, ``SHORT``): a short question as typed into a search box ("how
  to add CORS" found no CORS page on FastAPI's docs: that page never says "how"), three
  to six words, for the three corpora (2026-11-27, written before any was run).
- ``topics`` (hand-written, ``TOPICS``): the name of a subject, one to three words
  ("closures", "move semantics"), with the page about it, for the Rust book and the C++
  docs (2026-11-27, written before any was run).
- ``cjk``: the 26 questions in Chinese of ``tests/test_cjk.py`` (imported: one list), as
  a Chinese reader types them, without spaces, on 21 pages of the Vue guide in Chinese
  (``tests/fixtures/cjk/``, CC BY 4.0, © Yuxi (Evan) You and Vue documentation
  contributors); their "typo" drops or swaps characters of a long run, which is not how
  Chinese is mistyped (an input method picks a wrong character), so read it as a
  stress test only.

Each set is split into a *tuning* half and a *reporting* half by a fixed seed
(``halves``). Ranking may be tuned on the tuning halves (and SciFact train) only; the
benchmark report labels every number measured on a tuning half as in-sample.

tldr-pages © the tldr-pages team and contributors (CC BY 4.0); The Rust Programming
Language © The Rust Project Developers (MIT OR Apache-2.0); Microsoft C++ docs
© Microsoft Corporation (CC BY 4.0). See ``shared/corpora/LICENSES.md``.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.scifact import SHARED
from benchmarks.tldr import misspell

CORPORA = SHARED / "corpora"
SEED = 20261124
SPLIT_SEED = 17
TLDR_N = 300
CPP_N = 300
DEPTH = 10  # ranks counted for MRR@10
TREES = {  # corpus: (tree name, folder indexed)
    "tldr": ("tldr", CORPORA / "tldr"),
    "rust-book": ("docs", CORPORA / "rust-book" / "src"),
    "cpp-docs": ("cpp", CORPORA / "cpp-docs" / "docs"),
    "vue-zh": ("vue", Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cjk"
               / "vue-zh-cn"),
}
SETS = ("tldr", "rust-book", "cpp-docs", "tasks", "questions", "symbols", "short", "topics",
        "cjk")


@dataclass(frozen=True)
class Item:
    """One query with its answer: any of ``targets`` (document or chunk ids) counts."""

    set: str
    corpus: str  # a key of TREES: the index the query runs against
    query: str  # as typed
    typo: str  # the same with one typo
    targets: tuple[str, ...]

    @property
    def key(self) -> str:
        """A stable name for per-query results (the first target)."""
        return self.targets[0]


# --- typos -----------------------------------------------------------------------------

_LONG_WORD = re.compile(r"[^\W\d_]{5,}")


def typo_of(text: str, rng: random.Random) -> str:
    """``text`` with one adjacent swap or deletion in one word longer than four letters
    (``text`` itself when it has no such word)."""
    spans = [m.span() for m in _LONG_WORD.finditer(text)]
    if not spans:
        return text
    start, end = rng.choice(spans)
    return text[:start] + misspell(text[start:end], rng) + text[end:]


# --- tldr --------------------------------------------------------------------------------

def without_name(description: str, name: str) -> str:
    """The description as written, minus the words of the command's name (and the
    backticks or brackets left empty by that), its final period dropped."""
    drop = {w.lower() for w in re.findall(r"[^\W_]+", name)}
    def keep(m: re.Match) -> str:  # a dropped word takes its hyphen: "lvm-managed"
        return "" if m.group(1).lower() in drop else m.group()

    text = re.sub(r"([^\W_]+)-?", keep, description)
    text = re.sub(r"(?<=\w)-(?=[\s,.;:)]|$)", "", text)  # "foo-lvm" minus "lvm"
    text = re.sub(r"`[\s\-./]*`|\(\s*\)|<\s*>", "", text)
    text = re.sub(r"\s+([,.;:)])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,")
    return text.removesuffix(".")


def tldr_items(n: int = TLDR_N) -> list[Item]:
    from benchmarks import tldr

    rng = random.Random(SEED)
    out = []
    for it in tldr.known_items(n=n):
        query = without_name(it.description, it.name)
        path = it.doc_id.split(":", 1)[1]
        out.append(Item("tldr", "tldr", query, typo_of(query, rng), (f"tldr:{path}",)))
    return out


# --- rust-book ----------------------------------------------------------------------------

def rust_book_items() -> list[Item]:
    """The clean/typo pairs of ``tests/test_known_items.py`` (one list for both uses)."""
    tests = Path(__file__).resolve().parents[1] / "tests"
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    import test_known_items as cases

    clean = [p.values[0] for p in cases.RUST_CLEAN]
    typo = {p.values[0].target: p.values[0].query for p in cases.RUST_TYPO}
    return [Item("rust-book", "rust-book", c.query, typo.get(c.target, c.query), (c.target,))
            for c in clean]


# --- cpp-docs error messages --------------------------------------------------------------

#: What a build would print in place of a placeholder, by a word of the placeholder.
FILLERS = (("file", "widget.h"), ("library", "util.lib"), ("dll", "util.dll"),
           ("module", "net"), ("class", "Widget"), ("struct", "Point"),
           ("function", "Resize"), ("member", "m_size"), ("type", "int"),
           ("number", "3"), ("address", "0x0040"), ("value", "42"), ("symbol", "_main"),
           ("name", "count"), ("identifier", "count"), ("operator", "operator+"),
           ("option", "/Zi"), ("keyword", "virtual"))
_PLACEHOLDER = re.compile(r"\*([^*\n]+)\*")


def fill(message: str) -> str:
    """A ``> message`` line as a build prints it: placeholders filled, markup dropped."""
    def one(m: re.Match) -> str:
        words = m.group(1).lower()
        return next((value for key, value in FILLERS if key in words), "x")

    text = _PLACEHOLDER.sub(one, message)
    return re.sub(r"\s+", " ", text.replace("`", "").replace("\\", "")).strip()


def error_pages(root: Path) -> list[tuple[str, str]]:
    """``(tree-relative path, message line)`` of each error page, sorted by path."""
    out = []
    for path in sorted((root / "error-messages").rglob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        h1 = next((i for i, x in enumerate(lines) if x.startswith("# ")), None)
        if h1 is None:
            continue
        after = [x for x in lines[h1 + 1:h1 + 4] if x.strip()]
        if after and after[0].startswith(">") and not after[0].startswith("> ["):
            out.append((path.relative_to(root).as_posix(), after[0][1:].strip()))
    return out


def cpp_items(n: int = CPP_N) -> list[Item]:
    tree, root = TREES["cpp-docs"]
    pages = [(p, fill(m)) for p, m in error_pages(root)]
    count: dict[str, int] = {}
    for _, m in pages:
        count[m.lower()] = count.get(m.lower(), 0) + 1
    usable = [(p, m) for p, m in pages if count[m.lower()] == 1 and len(m.split()) >= 3
              and _LONG_WORD.search(m)]
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(usable, min(n, len(usable))))
    return [Item("cpp-docs", "cpp-docs", m, typo_of(m, rng), (f"{tree}:{p}",))
            for p, m in chosen]


# --- tasks ---------------------------------------------------------------------------------

#: Hand-written task descriptions: (corpus, query, target). A tldr target names the
#: command: its page on any platform counts.
TASKS = [
    # tldr
    ("tldr", "replace the leading spaces in a file with tab characters", "unexpand"),
    ("tldr", "count the lines, words and bytes in a file", "wc"),
    ("tldr", "show the end of a log file and keep printing new lines as they arrive", "tail"),
    ("tldr", "make a symbolic link pointing to another file", "ln"),
    ("tldr", "how much free space is left on each mounted filesystem", "df"),
    ("tldr", "mirror a directory to a remote server over SSH, only sending changed files",
     "rsync"),
    ("tldr", "generate a new key pair for password-less SSH logins", "ssh-keygen"),
    ("tldr", "drop repeated adjacent lines from sorted output", "uniq"),
    ("tldr", "find out how long a command takes to run", "time"),
    ("tldr", "print the directory structure as an indented tree", "tree"),
    ("tldr", "which process has this file open?", "lsof"),
    ("tldr", "keep a command running after I log out of the terminal", "nohup"),
    ("tldr", "show the commit history of the repository with one line per commit",
     "git-log"),
    ("tldr", "set aside my uncommitted changes so I can switch branches, then restore them",
     "git-stash"),
    ("tldr", "start all the services defined in a compose.yaml file", "docker-compose"),
    ("tldr", "break a big file into several smaller pieces", "split"),
    ("tldr", "turn every uppercase letter of the input into lowercase", "tr"),
    ("tldr", "update a file's modification time without changing its content", "touch"),
    ("tldr", "copy a file to another machine over ssh", "scp"),
    ("tldr", "run a command on every file name that find prints", "xargs"),
    ("tldr", "rerun a command every two seconds and watch its output change", "watch"),
    ("tldr", "write the output of a pipeline to a file and to the screen at the same time",
     "tee"),
    ("tldr", "make a shell script executable", "chmod"),
    ("tldr", "extract the files of a .zip archive", "unzip"),
    ("tldr", "print only the second column of a comma-separated file", "cut"),
    ("tldr", "encode a file to base64", "base64"),
    ("tldr", "verify the SHA256 checksum of a downloaded file", "sha256sum"),
    ("tldr", "evaluate an arbitrary precision arithmetic expression", "bc"),
    ("tldr", "see which routers my packets pass through on the way to a host",
     "traceroute"),
    ("tldr", "get the file name from a path without its directories", "basename"),
    ("tldr", "resolve a relative path with symlinks to an absolute one", "realpath"),
    ("tldr", "securely erase a file so it cannot be recovered", "shred"),
    ("tldr", "shuffle the lines of a file in random order", "shuf"),
    ("tldr", "print the numbers from 1 to 10", "seq"),
    ("tldr", "print a file with its lines in reverse order, last line first", "tac"),
    ("tldr", "merge two sorted files on a shared field, like a database join", "join"),
    ("tldr", "lines that appear in both of two sorted files", "comm"),
    ("tldr", "wrap long lines to a width of 80 characters", "fold"),
    ("tldr", "pretty-print a JSON file and pick out one key", "jq"),
    ("tldr", "convert a video file from mkv to mp4", "ffmpeg"),
    # rust-book
    ("rust-book", "read the command line arguments passed to my program",
     "ch12-01-accepting-command-line-arguments.md"),
    ("rust-book", "print error messages to standard error instead of standard output",
     "ch12-06-writing-to-stderr-instead-of-stdout.md"),
    ("rust-book", "read the whole contents of a file into a String",
     "ch12-02-reading-a-file.md"),
    ("rust-book", "let several threads increment the same counter safely",
     "ch16-03-shared-state.md"),
    ("rust-book", "send values from one thread to another", "ch16-02-message-passing.md"),
    ("rust-book", "run some cleanup code when a value goes out of scope", "ch15-03-drop.md"),
    ("rust-book", "give one value several owners", "ch15-04-rc.md"),
    ("rust-book", "change a value even though only immutable references to it exist",
     "ch15-05-interior-mutability.md"),
    ("rust-book", "define a recursive enum whose size is unknown at compile time",
     "ch15-01-box.md"),
    ("rust-book", "a tree where children point back to their parent without leaking memory",
     "ch15-06-reference-cycles.md"),
    ("rust-book", "a growable list of values of the same type", "ch08-01-vectors.md"),
    ("rust-book", "count how many times each word occurs in a text",
     "ch08-03-hash-maps.md"),
    ("rust-book", "why can't I index into a String to get a character?",
     "ch08-02-strings.md"),
    ("rust-book", "return the error to the calling function instead of handling it here",
     "ch09-02-recoverable-errors-with-result.md"),
    ("rust-book", "when should my library panic rather than return an error?",
     "ch09-03-to-panic-or-not-to-panic.md"),
    ("rust-book", "accept any type that implements a particular trait as a parameter",
     "ch10-02-traits.md"),
    ("rust-book", "missing lifetime specifier when a function returns a reference",
     "ch10-03-lifetime-syntax.md"),
    ("rust-book", "run only the tests whose names match a string",
     "ch11-02-running-tests.md"),
    ("rust-book", "where do integration tests go and how do they use my crate?",
     "ch11-03-test-organization.md"),
    ("rust-book", "test that a function panics with the expected message",
     "ch11-01-writing-tests.md"),
    ("rust-book", "an anonymous function that captures variables from where it is defined",
     "ch13-01-closures.md"),
    ("rust-book", "chain map and filter over a collection and collect the results",
     "ch13-02-iterators.md"),
    ("rust-book", "set the optimization level for release builds in Cargo.toml",
     "ch14-01-release-profiles.md"),
    ("rust-book", "several related packages that share one Cargo.lock and output directory",
     "ch14-03-cargo-workspaces.md"),
    ("rust-book", "install a command-line tool someone published on crates.io",
     "ch14-04-installing-binaries.md"),
    ("rust-book", "documentation comments whose examples run as tests",
     "ch14-02-publishing-to-crates-io.md"),
    ("rust-book", "store values of different types that implement one trait in a vector",
     "ch18-02-trait-objects.md"),
    ("rust-book", "implement the state pattern for a blog post that must be approved",
     "ch18-03-oo-design-patterns.md"),
    ("rust-book", "ignore some fields of a struct when destructuring it in a match arm",
     "ch19-03-pattern-syntax.md"),
    ("rust-book", "dereference a raw pointer inside an unsafe block", "ch20-01-unsafe-rust.md"),
    ("rust-book", "overload the + operator for my own type", "ch20-02-advanced-traits.md"),
    ("rust-book", "return a closure from a function",
     "ch20-04-advanced-functions-and-closures.md"),
    ("rust-book", "write a macro that takes a variable number of arguments like vec!",
     "ch20-05-macros.md"),
    ("rust-book", "handle each incoming request of the web server on a pool of threads",
     "ch21-02-multithreaded.md"),
    ("rust-book", "listen for TCP connections and read an HTTP request",
     "ch21-01-single-threaded.md"),
    ("rust-book", "split my crate's code into modules in separate files",
     "ch07-05-separating-modules-into-different-files.md"),
    ("rust-book", "add methods to a struct with an impl block", "ch05-03-method-syntax.md"),
    ("rust-book", "update my Rust installation to the newest release",
     "ch01-01-installation.md"),
    ("rust-book", "return a value out of a loop with break", "ch03-05-control-flow.md"),
    ("rust-book", "give a name to an existing type to shorten long type signatures",
     "ch20-03-advanced-types.md"),
    # cpp-docs
    ("cpp-docs", "find memory errors such as buffer overflows with AddressSanitizer",
     "sanitizers/asan.md"),
    ("cpp-docs", "compile a C++ source file from the developer command prompt with cl",
     "build/walkthrough-compiling-a-native-cpp-program-on-the-command-line.md"),
    ("cpp-docs", "give a heap object a single owner that deletes it automatically",
     "cpp/how-to-create-and-use-unique-ptr-instances.md"),
    ("cpp-docs", "write an inline anonymous function that captures local variables",
     "cpp/lambda-expressions-in-cpp.md"),
    ("cpp-docs", "tell the compiler to use the C++20 language standard",
     "build/reference/std-specify-language-standard-version.md"),
    ("cpp-docs", "build my own DLL and call its functions from an app",
     "build/walkthrough-creating-and-using-a-dynamic-link-library-cpp.md"),
    ("cpp-docs", "open a CMake project in Visual Studio",
     "build/cmake-projects-in-visual-studio.md"),
    ("cpp-docs", "speed up compilation by precompiling a header that rarely changes",
     "build/creating-precompiled-header-files.md"),
    ("cpp-docs", "loop over every element of a container without an index",
     "cpp/range-based-for-statement-cpp.md"),
    ("cpp-docs", "transfer the resources of a temporary object instead of copying them",
     "cpp/move-constructors-and-move-assignment-operators-cpp.md"),
    ("cpp-docs", "member functions of the std::vector container",
     "standard-library/vector-class.md"),
    ("cpp-docs", "run loop iterations in parallel with the Concurrency Runtime",
     "parallel/concrt/parallel-algorithms.md"),
    ("cpp-docs", "detect integer overflow in arithmetic with a safe integer class",
     "safeint/safeint-library.md"),
    ("cpp-docs", "write assembly language instructions directly inside a C function",
     "assembler/inline/inline-assembler.md"),
    ("cpp-docs", "import a named module instead of including headers",
     "cpp/modules-cpp.md"),
    ("cpp-docs", "evaluate a function at compile time", "cpp/constexpr-cpp.md"),
    ("cpp-docs", "let the compiler deduce the type of a variable from its initializer",
     "cpp/auto-cpp.md"),
    ("cpp-docs", "a null pointer constant that is type-safe", "cpp/nullptr.md"),
    ("cpp-docs", "a type-safe union that holds one of several alternatives",
     "standard-library/variant-class.md"),
    ("cpp-docs", "a value that may or may not be present", "standard-library/optional-class.md"),
    ("cpp-docs", "protect shared data from concurrent access by several threads",
     "standard-library/mutex-class-stl.md"),
    ("cpp-docs", "iterate over the files of a directory", "standard-library/filesystem.md"),
    ("cpp-docs", "a non-owning view of a sequence of characters",
     "standard-library/string-view.md"),
    ("cpp-docs", "read an environment variable in a C program",
     "c-runtime-library/reference/getenv-wgetenv.md"),
    ("cpp-docs", "sort an array with a comparison function in C",
     "c-runtime-library/reference/qsort.md"),
    ("cpp-docs", "parse a string to a long integer in a given base",
     "c-runtime-library/reference/strtol-wcstol-strtol-l-wcstol-l.md"),
    ("cpp-docs", "optimize the build for the smallest code size or the fastest code",
     "build/reference/o1-o2-minimize-size-maximize-speed.md"),
    ("cpp-docs", "export functions from a DLL using __declspec(dllexport)",
     "build/exporting-from-a-dll-using-declspec-dllexport.md"),
    ("cpp-docs", "build a static library and link it into an app",
     "build/walkthrough-creating-and-using-a-static-library-cpp.md"),
    ("cpp-docs", "functions that take a variable number of template arguments",
     "cpp/ellipses-and-variadic-templates.md"),
]


#: Hand-written questions: (corpus, question, target), as ``TASKS``.
QUESTIONS = [
    # tldr
    ("tldr", "how do I search for some text inside all the files of a folder?", "grep"),
    ("tldr", "how do I make a compressed archive of a whole directory?", "tar"),
    ("tldr", "how can I change who owns a file?", "chown"),
    ("tldr", "how much disk space does each folder here take up?", "du"),
    ("tldr", "how do I undo my last commit but keep the changes?", "git-reset"),
    ("tldr", "how do I see which docker containers are running?", "docker-ps"),
    ("tldr", "how can I compare two text files line by line?", "diff"),
    ("tldr", "how do I schedule a script to run every night?", "crontab"),
    ("tldr", "which user am I logged in as?", "whoami"),
    ("tldr", "how do I add a new user account to the system?", "useradd"),
    ("tldr", "how do I attach a USB drive's filesystem to a folder?", "mount"),
    ("tldr", "where can I read the manual of a command?", "man"),
    ("tldr", "how do I follow the new lines a program writes to its log?", "tail"),
    # rust-book
    ("rust-book", "how do I make a variable that I can change later?",
     "ch03-01-variables-and-mutability.md"),
    ("rust-book", "why does the compiler say my value was moved when I use it again?",
     "ch04-01-what-is-ownership.md"),
    ("rust-book", "can I have two mutable references to the same data at once?",
     "ch04-02-references-and-borrowing.md"),
    ("rust-book", "how do I handle just one variant of an enum without a full match?",
     "ch06-03-if-let.md"),
    ("rust-book", "how can my program read settings from environment variables?",
     "ch12-05-working-with-environment-variables.md"),
    ("rust-book", "what does the ? operator do after a call that returns a Result?",
     "ch09-02-recoverable-errors-with-result.md"),
    ("rust-book", "how do I start a new thread and wait until it is done?",
     "ch16-01-threads.md"),
    ("rust-book", "what are the Send and Sync traits for?",
     "ch16-04-extensible-concurrency-sync-and-send.md"),
    ("rust-book", "how do I create a new project with cargo?", "ch01-03-hello-cargo.md"),
    ("rust-book", "which traits can I derive automatically with the derive attribute?",
     "appendix-03-derivable-traits.md"),
    ("rust-book", "how do I publish my library so others can use it?",
     "ch14-02-publishing-to-crates-io.md"),
    ("rust-book", "why can I call the methods of the inner value directly on a Box?",
     "ch15-02-deref.md"),
    ("rust-book", "how do I use a function from another module without its full path?",
     "ch07-04-bringing-paths-into-scope-with-the-use-keyword.md"),
    ("rust-book", "which patterns are allowed in a let statement and which are not?",
     "ch19-02-refutability.md"),
    ("rust-book", "how do I shut the web server down cleanly?",
     "ch21-03-graceful-shutdown-and-cleanup.md"),
    ("rust-book", "what is a Rust edition and why would I pick one?",
     "appendix-05-editions.md"),
    # cpp-docs
    ("cpp-docs", "how do I run a function on another thread in C++?",
     "standard-library/thread-class.md"),
    ("cpp-docs", "what is the difference between a class and a struct?",
     "cpp/classes-and-structs-cpp.md"),
    ("cpp-docs", "how do I throw an exception and catch it?",
     "cpp/try-throw-and-catch-statements-cpp.md"),
    ("cpp-docs", "what does the volatile keyword do?", "cpp/volatile-cpp.md"),
    ("cpp-docs", "how can I define what + means for my own class?",
     "cpp/operator-overloading.md"),
    ("cpp-docs", "how do I let a derived class override a base class function?",
     "cpp/virtual-functions.md"),
    ("cpp-docs", "which smart pointer should I use instead of raw new and delete?",
     "cpp/smart-pointers-modern-cpp.md"),
    ("cpp-docs", "how do I make the compiler treat warnings as errors?",
     "build/reference/compiler-option-warning-level.md"),
    ("cpp-docs", "how do several objects share ownership of one heap object?",
     "cpp/how-to-create-and-use-shared-ptr-instances.md"),
    ("cpp-docs", "what is RAII and why does modern C++ rely on it?",
     "cpp/object-lifetime-and-resource-management-modern-cpp.md"),
    ("cpp-docs", "which header do I need for std::sort?", "standard-library/algorithm.md"),
    ("cpp-docs", "how do I convert a std::string to an int?",
     "standard-library/string-functions.md"),
    ("cpp-docs", "how do I write a function that works for any type?", "cpp/templates-cpp.md"),
    ("cpp-docs", "how can I avoid name clashes between two libraries?",
     "cpp/namespaces-cpp.md"),
]


#: Hand-written short questions, as typed into a search box (3 to 6 words, lower case, no
#: question mark; written 2026-11-27 before any was run): (corpus, query, target).
SHORT = [
    # tldr
    ("tldr", "how to extract a tar.gz file", "tar"),
    ("tldr", "how to kill a process", "kill"),
    ("tldr", "how to rename a file", "mv"),
    ("tldr", "how to change file permissions", "chmod"),
    ("tldr", "how to count lines in a file", "wc"),
    ("tldr", "how to sort lines", "sort"),
    ("tldr", "how to find files by name", "find"),
    ("tldr", "how to compare two files", "diff"),
    ("tldr", "how to create a symlink", "ln"),
    ("tldr", "how to schedule a cron job", "crontab"),
    ("tldr", "how to clone a repository", "git-clone"),
    ("tldr", "how to make a zip archive", "zip"),
    ("tldr", "what is the current directory", "pwd"),
    ("tldr", "who is logged in", "who"),
    ("tldr", "how to list running processes", "ps"),
    ("tldr", "how to change file owner", "chown"),
    # rust-book
    ("rust-book", "how to read a file", "ch12-02-reading-a-file.md"),
    ("rust-book", "what is ownership", "ch04-01-what-is-ownership.md"),
    ("rust-book", "what are lifetimes", "ch10-03-lifetime-syntax.md"),
    ("rust-book", "how to define a struct", "ch05-01-defining-structs.md"),
    ("rust-book", "what is a closure", "ch13-01-closures.md"),
    ("rust-book", "how to spawn a thread", "ch16-01-threads.md"),
    ("rust-book", "what are smart pointers", "ch15-00-smart-pointers.md"),
    ("rust-book", "how to write tests", "ch11-01-writing-tests.md"),
    ("rust-book", "what are trait objects", "ch18-02-trait-objects.md"),
    ("rust-book", "how to handle errors", "ch09-00-error-handling.md"),
    ("rust-book", "what is unsafe rust", "ch20-01-unsafe-rust.md"),
    ("rust-book", "what is a slice", "ch04-03-slices.md"),
    ("rust-book", "how do macros work", "ch20-05-macros.md"),
    # cpp-docs
    ("cpp-docs", "what is a lambda", "cpp/lambda-expressions-in-cpp.md"),
    ("cpp-docs", "how to use unique_ptr", "cpp/how-to-create-and-use-unique-ptr-instances.md"),
    ("cpp-docs", "what is an rvalue reference", "cpp/rvalue-reference-declarator-amp-amp.md"),
    ("cpp-docs", "what is constexpr", "cpp/constexpr-cpp.md"),
    ("cpp-docs", "how to overload operators", "cpp/operator-overloading.md"),
    ("cpp-docs", "what are templates", "cpp/templates-cpp.md"),
    ("cpp-docs", "how to declare an enum", "cpp/enumerations-cpp.md"),
    ("cpp-docs", "what is a virtual function", "cpp/virtual-functions.md"),
    ("cpp-docs", "how to create a DLL",
     "build/walkthrough-creating-and-using-a-dynamic-link-library-cpp.md"),
    ("cpp-docs", "what is RAII", "cpp/object-lifetime-and-resource-management-modern-cpp.md"),
    ("cpp-docs", "how to throw an exception", "cpp/try-throw-and-catch-statements-cpp.md"),
]


#: Hand-written qualified names (see the module docstring): (corpus, query, target).
_STD = "standard-library/"
SYMBOLS = [
    # rust-book
    ("rust-book", "std::collections::HashMap", "ch08-03-hash-maps.md"),
    ("rust-book", "std::env::args", "ch12-01-accepting-command-line-arguments.md"),
    ("rust-book", "std::fs::read_to_string", "ch12-02-reading-a-file.md"),
    ("rust-book", "std::process::exit", "ch12-03-improving-error-handling-and-modularity.md"),
    ("rust-book", "std::sync::mpsc", "ch16-02-message-passing.md"),
    ("rust-book", "std::sync::Mutex", "ch16-03-shared-state.md"),
    ("rust-book", "std::sync::Arc", "ch16-03-shared-state.md"),
    ("rust-book", "std::thread::spawn", "ch16-01-threads.md"),
    ("rust-book", "std::rc::Rc", "ch15-04-rc.md"),
    ("rust-book", "std::cell::RefCell", "ch15-05-interior-mutability.md"),
    ("rust-book", "std::rc::Weak", "ch15-06-reference-cycles.md"),
    ("rust-book", "std::ops::Deref", "ch15-02-deref.md"),
    ("rust-book", "std::ops::Drop", "ch15-03-drop.md"),
    ("rust-book", "std::mem::drop", "ch15-03-drop.md"),
    ("rust-book", "std::ops::Add", "ch20-02-advanced-traits.md"),
    ("rust-book", "std::net::TcpListener", "ch21-01-single-threaded.md"),
    ("rust-book", "std::pin::Pin", "ch17-05-traits-for-async.md"),
    ("rust-book", "std::io::stdin", "ch02-00-guessing-game-tutorial.md"),
    ("rust-book", "std::cmp::Ordering", "ch02-00-guessing-game-tutorial.md"),
    ("rust-book", "std::slice::from_raw_parts", "ch20-01-unsafe-rust.md"),
    ("rust-book", "HashMap::entry", "ch08-03-hash-maps.md"),
    ("rust-book", "Rc::strong_count", "ch15-04-rc.md|ch15-06-reference-cycles.md"),
    ("rust-book", "Box::new", "ch15-01-box.md"),
    ("rust-book", "String::push_str", "ch08-02-strings.md"),
    # cpp-docs
    ("cpp-docs", "std::vector", _STD + "vector-class.md"),
    ("cpp-docs", "std::vector::push_back", _STD + "vector-class.md"),
    ("cpp-docs", "std::map", _STD + "map-class.md"),
    ("cpp-docs", "std::unordered_map", _STD + "unordered-map-class.md"),
    ("cpp-docs", "std::unique_ptr", _STD + "unique-ptr-class.md"),
    ("cpp-docs", "std::shared_ptr", _STD + "shared-ptr-class.md"),
    ("cpp-docs", "std::make_shared", _STD + "memory-functions.md"),
    ("cpp-docs", "std::move", _STD + "utility-functions.md"),
    ("cpp-docs", "std::optional", _STD + "optional-class.md"),
    ("cpp-docs", "std::thread", _STD + "thread-class.md"),
    ("cpp-docs", "std::mutex", _STD + "mutex-class-stl.md"),
    ("cpp-docs", "std::chrono::duration", _STD + "duration-class.md"),
    ("cpp-docs", "std::sort", _STD + "algorithm-functions.md"),
    ("cpp-docs", "std::function", _STD + "function-class.md"),
    ("cpp-docs", "std::array", _STD + "array-class-stl.md"),
    ("cpp-docs", "std::string_view",
     _STD + "basic-string-view-class.md|" + _STD + "string-view-typedefs.md"),
    ("cpp-docs", "std::string::substr", _STD + "basic-string-class.md"),
    ("cpp-docs", "std::filesystem::path", _STD + "path-class.md"),
    ("cpp-docs", "std::atomic", _STD + "atomic-structure.md"),
    ("cpp-docs", "std::async", _STD + "future-functions.md"),
    ("cpp-docs", "std::tuple", _STD + "tuple-class.md"),
    ("cpp-docs", "std::variant", _STD + "variant-class.md"),
    ("cpp-docs", "std::pair", _STD + "pair-structure.md"),
    ("cpp-docs", "concurrency::parallel_for",
     "parallel/concrt/reference/concurrency-namespace-functions.md|"
     "parallel/concrt/parallel-algorithms.md"),
]


#: Hand-written topics: the name of a subject, one to three words, as an agent types it
#: to read up on it ("closures", "move semantics"), with the page about that subject
#: (2026-11-27, written before any was run): (corpus, query, target).
TOPICS = [
    ("rust-book", "ownership", "ch04-01-what-is-ownership.md|ch04-00-understanding-ownership.md"),
    ("rust-book", "closures", "ch13-01-closures.md"),
    ("rust-book", "iterators", "ch13-02-iterators.md"),
    ("rust-book", "structs", "ch05-01-defining-structs.md|ch05-00-structs.md"),
    ("rust-book", "enums", "ch06-01-defining-an-enum.md|ch06-00-enums.md"),
    ("rust-book", "modules", "ch07-02-defining-modules-to-control-scope-and-privacy.md|"
     "ch07-00-managing-growing-projects-with-packages-crates-and-modules.md"),
    ("rust-book", "generics", "ch10-01-syntax.md|ch10-00-generics.md"),
    ("rust-book", "traits", "ch10-02-traits.md"),
    ("rust-book", "lifetimes", "ch10-03-lifetime-syntax.md"),
    ("rust-book", "vectors", "ch08-01-vectors.md"),
    ("rust-book", "strings", "ch08-02-strings.md"),
    ("rust-book", "hash maps", "ch08-03-hash-maps.md"),
    ("rust-book", "slices", "ch04-03-slices.md"),
    ("rust-book", "references", "ch04-02-references-and-borrowing.md"),
    ("rust-book", "smart pointers", "ch15-00-smart-pointers.md"),
    ("rust-book", "Box", "ch15-01-box.md"),
    ("rust-book", "Rc", "ch15-04-rc.md"),
    ("rust-book", "RefCell", "ch15-05-interior-mutability.md"),
    ("rust-book", "threads", "ch16-01-threads.md"),
    ("rust-book", "message passing", "ch16-02-message-passing.md"),
    ("rust-book", "mutex", "ch16-03-shared-state.md"),
    ("rust-book", "macros", "ch20-05-macros.md"),
    ("rust-book", "unsafe", "ch20-01-unsafe-rust.md"),
    ("rust-book", "trait objects", "ch18-02-trait-objects.md"),
    ("rust-book", "pattern matching", "ch19-00-patterns.md|ch19-03-pattern-syntax.md|"
     "ch06-02-match.md"),
    ("rust-book", "match", "ch06-02-match.md"),
    ("rust-book", "workspaces", "ch14-03-cargo-workspaces.md"),
    ("rust-book", "release profiles", "ch14-01-release-profiles.md"),
    ("rust-book", "panic", "ch09-01-unrecoverable-errors-with-panic.md"),
    ("rust-book", "Result", "ch09-02-recoverable-errors-with-result.md"),
    ("rust-book", "tests", "ch11-01-writing-tests.md|ch11-00-testing.md"),
    ("rust-book", "async", "ch17-01-futures-and-syntax.md|ch17-00-async-await.md"),
    ("rust-book", "streams", "ch17-04-streams.md"),
    ("rust-book", "futures", "ch17-01-futures-and-syntax.md"),
    ("rust-book", "Drop", "ch15-03-drop.md"),
    ("rust-book", "Deref", "ch15-02-deref.md"),
    ("rust-book", "control flow", "ch03-05-control-flow.md"),
    ("rust-book", "data types", "ch03-02-data-types.md"),
    ("rust-book", "variables", "ch03-01-variables-and-mutability.md"),
    ("rust-book", "functions", "ch03-03-how-functions-work.md"),
    ("rust-book", "comments", "ch03-04-comments.md"),
    ("rust-book", "methods", "ch05-03-method-syntax.md"),
    ("rust-book", "editions", "appendix-05-editions.md"),
    ("rust-book", "operators", "appendix-02-operators.md"),
    ("rust-book", "keywords", "appendix-01-keywords.md"),
    ("rust-book", "derive", "appendix-03-derivable-traits.md"),
    ("cpp-docs", "lambda expressions", "cpp/lambda-expressions-in-cpp.md"),
    ("cpp-docs", "templates", "cpp/templates-cpp.md"),
    ("cpp-docs", "namespaces", "cpp/namespaces-cpp.md"),
    ("cpp-docs", "constructors", "cpp/constructors-cpp.md"),
    ("cpp-docs", "destructors", "cpp/destructors-cpp.md"),
    ("cpp-docs", "inheritance", "cpp/inheritance-cpp.md"),
    ("cpp-docs", "virtual functions", "cpp/virtual-functions.md"),
    ("cpp-docs", "operator overloading", "cpp/operator-overloading.md"),
    ("cpp-docs", "smart pointers", "cpp/smart-pointers-modern-cpp.md"),
    ("cpp-docs", "unique_ptr", "cpp/how-to-create-and-use-unique-ptr-instances.md|"
     + _STD + "unique-ptr-class.md"),
    ("cpp-docs", "shared_ptr", "cpp/how-to-create-and-use-shared-ptr-instances.md|"
     + _STD + "shared-ptr-class.md"),
    ("cpp-docs", "exceptions", "cpp/errors-and-exception-handling-modern-cpp.md|"
     "cpp/exception-handling-in-visual-cpp.md"),
    ("cpp-docs", "move semantics", "cpp/move-constructors-and-move-assignment-operators-cpp.md|"
     "cpp/rvalue-reference-declarator-amp-amp.md"),
    ("cpp-docs", "enumerations", "cpp/enumerations-cpp.md"),
    ("cpp-docs", "unions", "cpp/unions.md"),
    ("cpp-docs", "friend", "cpp/friend-cpp.md"),
    ("cpp-docs", "const", "cpp/const-cpp.md"),
    ("cpp-docs", "constexpr", "cpp/constexpr-cpp.md"),
    ("cpp-docs", "auto", "cpp/auto-cpp.md"),
    ("cpp-docs", "decltype", "cpp/decltype-cpp.md"),
    ("cpp-docs", "references", "cpp/references-cpp.md"),
    ("cpp-docs", "pointers", "cpp/pointers-cpp.md"),
    ("cpp-docs", "arrays", "cpp/arrays-cpp.md"),
    ("cpp-docs", "static_cast", "cpp/static-cast-operator.md"),
    ("cpp-docs", "dynamic_cast", "cpp/dynamic-cast-operator.md"),
    ("cpp-docs", "inline functions", "cpp/inline-functions-cpp.md"),
    ("cpp-docs", "function overloading", "cpp/function-overloading.md"),
    ("cpp-docs", "header files", "cpp/header-files-cpp.md"),
    ("cpp-docs", "modules", "cpp/modules-cpp.md"),
    ("cpp-docs", "attributes", "cpp/attributes.md"),
    ("cpp-docs", "calling conventions", "cpp/calling-conventions.md"),
    ("cpp-docs", "bit fields", "cpp/cpp-bit-fields.md"),
    ("cpp-docs", "copy constructors",
     "cpp/copy-constructors-and-copy-assignment-operators-cpp.md"),
    ("cpp-docs", "vector", _STD + "vector-class.md"),
    ("cpp-docs", "map", _STD + "map-class.md"),
    ("cpp-docs", "thread", _STD + "thread-class.md"),
    ("cpp-docs", "mutex", _STD + "mutex-class-stl.md"),
    ("cpp-docs", "regular expressions", _STD + "regular-expressions-cpp.md"),
    ("cpp-docs", "iostream", _STD + "iostream.md|" + _STD + "iostream-programming.md"),
    ("cpp-docs", "precompiled headers", "build/creating-precompiled-header-files.md"),
    ("cpp-docs", "OpenMP", "parallel/openmp/openmp-in-visual-cpp.md"),
    ("cpp-docs", "AddressSanitizer", "sanitizers/asan.md"),
]


def _tldr_targets(name: str) -> tuple[str, ...]:
    root = TREES["tldr"][1]
    found = sorted(p.relative_to(root).as_posix() for p in root.glob(f"pages/*/{name}.md"))
    if not found:
        raise ValueError(f"no tldr page for {name!r}")
    return tuple(f"tldr:{p}" for p in found)


def task_items(name: str = "tasks", listed: list | None = None) -> list[Item]:
    """``listed`` (``TASKS`` by default) as items; a target is a tldr command, a page, or
    several pages separated by ``|`` (any of them answers)."""
    rng = random.Random(SEED)
    out = []
    for corpus, query, target in TASKS if listed is None else listed:
        tree, root = TREES[corpus]
        if corpus == "tldr":
            targets = _tldr_targets(target)
        else:
            targets = tuple(f"{tree}:{t}" for t in target.split("|"))
            missing = [t for t in target.split("|") if not (root / t).is_file()]
            if missing:
                raise ValueError(f"task target does not exist: {corpus} {missing[0]}")
        out.append(Item(name, corpus, query, typo_of(query, rng), targets))
    return out


def question_items() -> list[Item]:
    return task_items("questions", QUESTIONS)


def symbol_items() -> list[Item]:
    return task_items("symbols", SYMBOLS)


def short_items() -> list[Item]:
    return task_items("short", SHORT)


def topic_items() -> list[Item]:
    return task_items("topics", TOPICS)


def cjk_items() -> list[Item]:
    """The questions of ``tests/test_cjk.py`` (one list for both uses)."""
    tests = Path(__file__).resolve().parents[1] / "tests"
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    import test_cjk

    return task_items("cjk", [("vue-zh", q, page) for q, page in test_cjk.QUESTIONS])


# --- the sets and their halves ------------------------------------------------------------

def items(name: str) -> list[Item]:
    """The items of one set, in a fixed order."""
    make = {"tldr": tldr_items, "rust-book": rust_book_items, "cpp-docs": cpp_items,
            "tasks": task_items, "questions": question_items, "symbols": symbol_items,
            "short": short_items, "topics": topic_items, "cjk": cjk_items}
    return make[name]()


def halves(found: list[Item], seed: int = SPLIT_SEED) -> tuple[list[Item], list[Item]]:
    """``(tuning, reporting)``: a fixed random half of the items, and the rest."""
    order = list(range(len(found)))
    random.Random(seed).shuffle(order)
    tune = set(order[:len(found) // 2])
    return ([it for i, it in enumerate(found) if i in tune],
            [it for i, it in enumerate(found) if i not in tune])


def half(name: str, which: str) -> list[Item]:
    """``which``: ``tuning``, ``reporting`` or ``all``."""
    found = items(name)
    if which == "all":
        return found
    tune, report = halves(found)
    return tune if which == "tuning" else report


def hit(result_id: str, constituents, targets: tuple[str, ...]) -> bool:
    """A result answers a document target when it is in that document, a chunk target
    when it is that chunk or an aggregated result standing for it."""
    for t in targets:
        if "#" in t:
            if result_id == t or t in constituents:
                return True
        elif result_id.split("#")[0] == t:
            return True
    return False
