"""mistletoe loaded with its Unicode punctuation given (ra.text.mistletoe_import): the same
set and the same parses as mistletoe's own import, and its own import where it cannot."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

from ra.text.mistletoe_import import COMPUTED, unicode_punctuation

# emphasis next to punctuation, ASCII and not (CommonMark's flanking rules read the set)
SAMPLES = ["**你好世界。**Hello world!", "*«quoted»*text", "a**‐b**c", "__¿qué?__ sí",
           "*foo*bar", "**foo.**bar", "“*quoted*”", "_‹x›_y"]


def _run(code: str, path: Path | None = None) -> dict:
    env_path = [str(path)] if path else []
    script = f"import sys; sys.path[:0] = {env_path!r}\n" + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


PARSE = f"""
    import json, sys, unicodedata, mistletoe
    from mistletoe import core_tokens
    computed = {{chr(i) for i in range(sys.maxunicode + 1)
                if unicodedata.category(chr(i)).startswith("P")}}
    print(json.dumps({{
        "given": "_ra_unicode_punctuation" in vars(core_tokens),
        "punctuation": sorted(core_tokens.punctuation),
        "computed_in": computed <= core_tokens.punctuation,
        "html": [mistletoe.markdown(s) for s in {SAMPLES!r}]}}))
"""


#: whether ra has the ranges of this Python's Unicode version (3.11-3.13 have them; on
#: another, mistletoe imports as it is: ``test_another_unicode_version_imports_as_it_is``)
KNOWN = unicode_punctuation(unicodedata.unidata_version) is not None


def test_the_ranges_are_the_unicode_punctuation_of_this_python():
    computed = {chr(i) for i in range(sys.maxunicode + 1)
                if unicodedata.category(chr(i)).startswith("P")}
    for version in ("14.0.0", "15.0.0", "15.1.0"):  # CPython 3.11, 3.12, 3.13
        chars = unicode_punctuation(version)
        assert chars is not None and "\u3002" in chars and "a" not in chars
        if version == unicodedata.unidata_version:
            assert chars == computed
    assert unicode_punctuation("0.0.0") is None


def test_another_unicode_version_imports_as_it_is():
    """A Unicode version ra has no ranges for: mistletoe computes its set itself."""
    out = _run("import unicodedata\nunicodedata.unidata_version = '99.0.0'\n"
               "from ra.text.mistletoe_import import load_core_tokens\n"
               "loaded = load_core_tokens()\n" + textwrap.dedent(PARSE).replace(
                   '"given":', '"loaded": loaded, "given":'))
    assert out["loaded"] is False and not out["given"] and out["computed_in"]


def test_mistletoe_loads_the_same_module_with_the_set_given():
    own = _run(PARSE)
    given = _run("from ra.text.mistletoe_import import load_core_tokens\n"
                 f"assert load_core_tokens() is {KNOWN}\n" + textwrap.dedent(PARSE))
    assert not own["given"] and given["given"] is KNOWN
    assert given["punctuation"] == own["punctuation"]
    assert given["computed_in"] and len(given["punctuation"]) > 800
    assert given["html"] == own["html"]
    assert "<p>**你好世界。**Hello world!</p>" in own["html"][0]  # CommonMark's answer


def test_the_heading_scanner_takes_the_fast_import():
    out = _run("""
        import json, sys
        from ra.text.headings import Lines, scan_headings
        found, problems = scan_headings(Lines("# Title *«x»*\\n\\ntext\\n"))
        core = sys.modules["mistletoe.core_tokens"]
        print(json.dumps({"given": "_ra_unicode_punctuation" in vars(core),
                          "headings": [h.text for h in found], "problems": problems}))
    """)
    assert out == {"given": KNOWN, "headings": ["Title «x»"], "problems": []}


def test_an_unexpected_mistletoe_is_imported_as_it_is(tmp_path):
    """A mistletoe whose core_tokens no longer holds the expression is left alone."""
    package = tmp_path / "mistletoe"
    package.mkdir()
    (package / "__init__.py").write_text("from mistletoe import core_tokens\n")
    (package / "core_tokens.py").write_text(
        "punctuation = {c for c in 'ab' if c}  # not " + COMPUTED[:10] + "\n")
    out = _run("""
        import json
        from ra.text.mistletoe_import import load_core_tokens
        loaded = load_core_tokens()
        import mistletoe
        print(json.dumps({"loaded": loaded,
                          "punctuation": sorted(mistletoe.core_tokens.punctuation)}))
    """, tmp_path)
    assert out == {"loaded": False, "punctuation": ["a", "b"]}


def test_an_imported_core_tokens_is_not_loaded_twice():
    out = _run("""
        import json
        import mistletoe
        from ra.text.mistletoe_import import load_core_tokens
        print(json.dumps({"loaded": load_core_tokens()}))
    """)
    assert out == {"loaded": False}
