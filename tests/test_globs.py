"""Glob semantics: globset's (Rust) defaults, checked against globset's own test table."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra.config.globs import GlobError, GlobSet, compile_glob, glob_set, translate

# (pattern, path) pairs from globset's `matches!` tests (crates/globset/src/glob.rs) that
# apply with default options.
GLOBSET_MATCHES = [
    ("a", "a"), ("a*b", "a_b"), ("a*b*c", "abc"), ("a*b*c", "a___b___c"),
    ("abc*abc*abc", "abcabcabcabcabcabcabc"), ("a*a*a*a*a*a*a*a*a", "a" * 31),
    ("a*b[xyz]c*d", "abxcdbxcddd"), ("*.rs", ".rs"), ("☃", "☃"),
    ("some/**/needle.txt", "some/needle.txt"), ("some/**/needle.txt", "some/one/needle.txt"),
    ("some/**/needle.txt", "some/one/two/needle.txt"), ("**", "abcde"), ("**", ""),
    ("**", ".asdf"), ("**", "/x/.asdf"), ("some/**/**/needle.txt", "some/needle.txt"),
    ("some/**/**/needle.txt", "some/one/two/needle.txt"), ("**/test", "one/two/test"),
    ("**/test", "one/test"), ("**/test", "test"), ("/**/test", "/one/two/test"),
    ("/**/test", "/one/test"), ("/**/test", "/test"), ("**/.*", ".abc"),
    ("**/.*", "abc/.abc"), ("**/foo/bar", "foo/bar"), (".*/**", ".abc/abc"),
    ("test/**", "test/"), ("test/**", "test/one"), ("test/**", "test/one/two"),
    ("some/*/needle.txt", "some/one/needle.txt"),
    ("a[0-9]b", "a0b"), ("a[0-9]b", "a9b"), ("a[!0-9]b", "a_b"), ("[a-z123]", "1"),
    ("[1a-z23]", "1"), ("[123a-z]", "1"), ("[abc-]", "-"), ("[-abc]", "-"),
    ("[-a-c]", "b"), ("[a-c-]", "b"), ("[-]", "-"), ("a[^0-9]b", "a_b"),
    ("*hello.txt", "hello.txt"), ("*hello.txt", "gareth_says_hello.txt"),
    ("*hello.txt", "some/path/to/hello.txt"), ("*hello.txt", "/an/absolute/path/to/hello.txt"),
    ("*some/path/to/hello.txt", "a/bigger/some/path/to/hello.txt"),
    ("_[[]_[]]_[?]_[*]_!_", "_[_]_?_*_!_"),
    ("a,b", "a,b"), (",", ","), ("{a,b}", "a"), ("{a,b}", "b"),
    ("{**/src/**,foo}", "abc/src/bar"), ("{**/src/**,foo}", "foo"), ("{[}],foo}", "}"),
    ("{foo}", "foo"), ("{}", ""), ("{,}", ""), ("{*.foo,*.bar,*.wat}", "test.bar"),
    ("foo{,.txt}", "foo.txt"), ("{a,b{c,d}}", "bc"), ("{a,b{c,d}}", "a"),
    ("\\[", "["), ("\\?", "?"), ("\\*", "*"), ("\\a", "a"),
]

# globset's `nmatches!` tests with default options.
GLOBSET_NON_MATCHES = [
    ("a*b*c", "abcd"), ("abc*abc*abc", "abcabcabcabcabcabcabca"),
    ("some/**/needle.txt", "some/other/notthis.txt"), ("/**/test", "test"),
    ("/**/test", "/one/notthis"), ("/**/test", "/notthis"), ("**/.*", "ab.c"),
    ("**/.*", "abc/ab.c"), (".*/**", "a.bc"), (".*/**", "abc/a.bc"), ("a[0-9]b", "a_b"),
    ("a[!0-9]b", "a0b"), ("a[!0-9]b", "a9b"), ("[!-]", "-"),
    ("*hello.txt", "hello.txt-and-then-some"), ("*hello.txt", "goodbye.txt"),
    ("*some/path/to/hello.txt", "some/other/path/to/hello.txt"), ("a", "foo/a"),
    ("./foo", "foo"), ("**/foo", "foofoo"), ("**/foo/bar", "foofoo/bar"),
    ("/*.c", "mozilla-sha1/sha1.c"), ("a[^0-9]b", "a0b"), ("[^-]", "-"),
    ("some/*/needle.txt", "some/needle.txt"), (".*/**", ".abc"), ("foo/**", "foo"),
    ("foo{,.txt}", "foo"),
]

# globset's `syntaxerr!` tests.
GLOBSET_ERRORS = [
    ("[", "unclosed character class"), ("[]", "unclosed character class"),
    ("[!", "unclosed character class"), ("[!]", "unclosed character class"),
    ("[z-a]", "invalid character range"), ("[z--]", "invalid character range"),
    ("{a,b", "unclosed alternate group"), ("{a,{b,c}", "unclosed alternate group"),
    ("a,b}", "unopened alternate group"), ("{a,b}}", "unopened alternate group"),
    ("abc\\", "dangling"),
]


@pytest.mark.parametrize(("pattern", "path"), GLOBSET_MATCHES)
def test_matches_like_globset(pattern, path):
    assert compile_glob(pattern).fullmatch(path), (pattern, translate(pattern))


@pytest.mark.parametrize(("pattern", "path"), GLOBSET_NON_MATCHES)
def test_rejects_like_globset(pattern, path):
    assert not compile_glob(pattern).fullmatch(path), (pattern, translate(pattern))


@pytest.mark.parametrize(("pattern", "problem"), GLOBSET_ERRORS)
def test_invalid_patterns_raise_value_error_naming_the_problem(pattern, problem):
    with pytest.raises(ValueError, match=re.escape(problem)) as info:
        compile_glob(pattern)
    assert isinstance(info.value, GlobError)
    assert repr(pattern) in str(info.value)


@pytest.mark.parametrize(("pattern", "regex"), [
    ("**", ".*"), ("**/", ".*"), ("**/**", ".*"), ("**/*", "(?:/?|.*/).*"),
    ("a/**", "a/.*"), ("a/**/**", "a/.*"), ("a/**/b", "a(?:/|/.*/)b"),
    ("**/b", "(?:/?|.*/)b"), ("a**", "a.*.*"), ("**a", ".*.*a"), ("/**", "/.*"),
    ("{a,{b,c}}", "(?:a|(?:b|c))"), ("[!a-z]", "[^a-z]"), ("foo{,.txt}", r"foo(?:\.txt)"),
])
def test_double_star_is_recursive_only_as_a_whole_component(pattern, regex):
    """The token rules of globset's parse_star, seen through the generated regex."""
    assert translate(pattern) == regex


def test_star_crosses_directories_and_question_mark_is_one_character():
    assert compile_glob("*.md").fullmatch("a/b/c.md")
    assert compile_glob("?.md").fullmatch("é.md")
    assert not compile_glob("?.md").fullmatch("ab.md")
    assert compile_glob("a?b").fullmatch("a/b")


def test_compiled_patterns_are_anchored_whatever_method_is_used():
    regex = compile_glob("*.md")
    assert regex.match("a.md") and regex.search("a.md")
    assert not regex.match("a.md.bak") and not regex.search("x/a.md.bak")


def test_patterns_with_regex_metacharacters_are_literal():
    assert compile_glob("notes (draft)+.md").fullmatch("notes (draft)+.md")
    assert not compile_glob("a.md").fullmatch("aXmd")
    assert compile_glob("line\nbreak*").fullmatch("line\nbreak\nmore")


def test_globset_matches_and_reports_which_patterns_matched():
    gs = GlobSet(["**/*.md", "docs/**", "*.txt"])
    assert gs.matches("docs/a.md")
    assert gs.matching("docs/a.md") == [0, 1]
    assert gs.matching("notes.txt") == [2]
    assert not gs.matches("image.png")
    assert gs.matching("image.png") == []
    assert len(gs) == 3 and "docs/**" in repr(gs)


def test_empty_globset_matches_nothing():
    assert not GlobSet([]).matches("")
    assert not GlobSet([]).matches("a.md")
    assert GlobSet([]).matching("a.md") == []


def test_globset_rejects_an_invalid_member():
    with pytest.raises(ValueError, match="unclosed"):
        GlobSet(["**/*.md", "[oops"])


def test_compiled_patterns_and_sets_are_cached():
    assert compile_glob("**/*.md") is compile_glob("**/*.md")
    assert glob_set(("a", "b")) is glob_set(("a", "b"))


_GLOB_CHARS = st.text(alphabet="ab/.*?[]{},!^-\\", max_size=12)


@given(_GLOB_CHARS)
def test_translate_raises_nothing_but_glob_error(pattern):
    try:
        regex = compile_glob(pattern)
    except GlobError:
        return
    assert isinstance(regex, re.Pattern)


@given(st.text(max_size=20))
def test_an_escaped_path_matches_exactly_itself(path):
    escaped = "".join("\\" + c for c in path)
    assert compile_glob(escaped).fullmatch(path)
    assert not compile_glob(escaped).fullmatch(path + "x")


_EXTENSIONS = st.lists(st.sampled_from(["md", "MD", "txt", "Rmd", "rmd", "markdown", "x1"]),
                       min_size=1, max_size=4, unique=True)
_PATHS = st.text(alphabet="aZ./_-mdMDtx1R é", max_size=16)


@given(_EXTENSIONS, _PATHS, st.booleans())
def test_extension_patterns_match_by_suffix_as_their_regex_does(extensions, path, ignore):
    """``**/*.md`` sets match by ``endswith`` (the regex took 3.8 µs a path that did not
    match, most of the freshness scan of a tree of source files); the answers are the
    regex's, in either case mode."""
    patterns = tuple(f"**/*.{e}" for e in extensions)
    fast = GlobSet(patterns, ignore_case=ignore)
    union = "|".join(f"(?:{compile_glob(p).pattern})" for p in patterns)
    slow = re.compile(union, re.DOTALL | (re.IGNORECASE if ignore else 0))
    assert fast.matches(path) == (slow.fullmatch(path) is not None)


def test_only_extension_patterns_take_the_suffix_path():
    assert GlobSet(("**/*.md",)).matches("a/b.md") and not GlobSet(("**/*.md",)).matches("b.MD")
    assert GlobSet(("**/*.md",), ignore_case=True).matches("a/README.MD")
    assert not GlobSet(("docs/*.md",)).matches("x/docs/a.md")  # no suffix rule here
    assert GlobSet(("docs/*.md", "**/*.txt")).matches("docs/a.md")
