"""Text analysis shared by indexing and querying.

One analyzer turns text into index terms, the same way for documents and for queries, so
a query word always meets the terms it was indexed as. The pipeline follows the original
implementation (Tantivy's SimpleTokenizer → LowerCaser → RemoveLongFilter(40) → Snowball
stemmer) and adds CJK bigrams:

1. split on every character that is not a Unicode letter, digit or combining mark (so
   Devanagari and Tamil vowel signs stay inside their words);
2. lowercase;
3. drop tokens whose UTF-8 encoding is 40 bytes or longer (checked before stemming);
4. runs of CJK ideographs, kana or hangul become overlapping character bigrams (a single
   character stays a unigram), since those scripts do not separate words with spaces;
5. stem with the configured Snowball language (PyStemmer when present, which is the same
   algorithm compiled), caching each distinct word: corpora repeat words, stemming is the
   expensive step, and the cache makes it a dictionary lookup.

Positions count tokens (after dropping long ones), so phrase checks compare adjacent
positions within one field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ra.config.languages import normalize_language
from ra.text._marks import MARKS

MAX_TOKEN_BYTES = 40

#: Bump when analysis, or the reading of markup before it (``ra.text.markup``,
#: ``ra.text.headings``), changes what terms or chunks a text yields: the index records
#: it, so an upgrade re-reads every file once. 3: Liquid tags, Quarto callouts, JSX
#: attributes holding objects, API field names. 4: mdBook's includes and pymdownx
#: snippets inside code blocks, DocFX's extensions, template calls ({{ f(x) }}),
#: [[toc]], a shortcode's text= (Kubernetes' glossary tooltips), template markup in
#: headings, ```{r} cells, tldr's mnemonic letters (E[x]tract). 5: Nuxt Content's MDC
#: (components, props, slots, inline components), bracketed spans in headings. 6: JSX
#: attributes nesting braces deeper ({[{ items: [{…}] }]}), a component's description=,
#: Markdoc's tags ({% /callout %}, {% $var %}), a heading that prints the page's title,
#: a tag's double-quoted value holding < or > (type="Omit<P, 'x'>"), JSX fragments <>x</>,
#: an inline code span's {:lang} (rehype-pretty-code), Tailwind classes in attribute lists
#: ({.text-(--ui-primary)}), mkdocstrings' ::: fastapi.APIRouter and its members. 7: a
#: heading's id in an MDX comment (react.dev's {/*id*/}, Docusaurus' {/* #id */}), JSX's
#: titleText=, altText=, labelText=. 8: a CJK run of 14 characters or more is indexed as
#: its bigrams (it was dropped whole, as a word over 40 bytes). 9: Thai, Lao, Khmer and
#: Myanmar runs are bigrams too. 10: a file with a UTF-16 or UTF-32 byte-order mark is
#: read (it was skipped as binary; ``ra.pipeline.discover.wide_encoding``). 11: a braced
#: cell's options (MyST's ``:tags:`` of ```{code-cell}, Quarto's ``#| label:``) leave,
#: its caption stays. 12: bracketed text nests one level and a "[" that opens nothing
#: is text ([x [y](u) links "y"; a badge [![alt](img.svg)](url) links its alt text to url,
#: and its text is the alt text). 13: MDN's macros show their text ({{jsxref("Array")}}
#: is "Array", {{optional_inline}} "Optional"; they left nothing). 14: kramdown (Jekyll):
#: a heading's id on the line after it ({: #v4-0-0}), the {:toc} placeholder, {::comment}
#: and extension tags are markup; Jekyll's Liquid link targets ({% link x.md %},
#: {{ site.baseurl }}/x/) and a collection's pages (/docs/x/ is _docs/x.md) resolve; a
#: footnote's text ([^1]: …) is no link definition. 15: docsify's heading options
#: (## Title :id=custom, {docsify-ignore}) and callout marks (!> , ?> ) are markup. 16:
#: Logseq: page properties (title:: x) are metadata, a block's id:: and collapsed:: and
#: block references ((uuid)) are markup. 17: Cursor's file references ([x](mdc:path)) are
#: links to files of the project (they were external links); mdbook-spec's rule
#: identifiers on a line of their own (the Rust Reference's r[items.fn.intro]) are markup.
#: 18: Azure DevOps wikis: [[_TOC_]] and [[_TOSP_]] are markup, no links; a link target's
#: backslash escapes are read (/Page-\(SI\)), a percent escape also names a file whose
#: name keeps it (ODO%2D1-(SI).md), whose title and path words are decoded. 19: a title
#: taken from a file name in capitals reads its dashes as spaces (Getting-Started.md
#: is "Getting Started", as GitHub's and Azure DevOps' wikis title it); [[x]](url) is a
#: link whose text is [x], no wiki link (its URL was read as text). 20: a link to a page
#: whose name holds a dot that is no file kind's suffix (/Servers-.Net, v1.2) may name
#: its markdown file (Servers-.Net.md). 21: a heading's emoji and icon shortcodes
#: (``:material-transit-detour: Flexible Services``) are no words of its title. 22:
#: markdown-include's ``{!file.py!}`` and ``{!> file.py!}`` lines are markup. 23: a
#: heading's attribute list may hold bare keys (``{ data-search-exclude }``) and declare its
#: id as a key (``{ id="4.6.1" }``), as Python-Markdown's attr_list reads them. 24:
#: Dendron's wiki links: ``[[Label|dendron://vault/note#h]]`` names ``note``, shown as
#: "Label"; an alias's heading is an anchor (``[[Details|note#details]]``). 25: what a
#: reader sees of a chunk (``chunks.plain``) reads backslash escapes (``\(`` is "("; escaped
#: brackets are no link) and keeps code as written (its ``*``, ``_`` and backslashes).
#: 26: TOML front matter after blank lines (Zola's theme pages). 27: a folder's page
#: (index, _index, README) with no title of its own is titled by its folder's name. 28: a
#: link's anchor as a declared id is held (``#4.6.1`` reaches ``{ id="4.6.1" }``'s ``4-6-1``).
#: 29: a link's text reads backslash escapes and keeps its code as written. 30: an agent
#: skill (``SKILL.md``) applies to the folders its description names (``applies_to``).
#: 31: links of HTML anchors, JSX ``<Link>`` and Nuxt MDC components' ``to``. 32: front
#: matter of ``key: value`` lines YAML refuses (Svelte's ``title: bind:``) is read as text.
#: 33: an HTML anchor with no text (a permalink's icon, an image) is no link. 34: a wiki
#: link's alias separator escaped in a table (``[[Note\\|alias]]``) is one, an embedded
#: image's size (``![[a.png|200]]``) no text, and a wiki link's path may be relative;
#: Obsidian's block ids (``… text. ^b15695``) are no text. 35: the links artifact holds
#: the addresses front matter gives a page (``slug``, ``id``, ``permalink``, ``url``). 36:
#: and the ones it moved from (``aliases``, ``redirect_from``, ``oldUrl``); a relative URL
#: is also read from the folder a site serves its page at (Hugo: ``api.md`` is ``api/``);
#: a title under another key (``pageTitle``, ``linkTitle``, a navigation's key) names a
#: page without a title or h1; a skill's folder with a placeholder (``content/<lang>/``)
#: is none; ``[[toc]]`` is no link. 37: HTML anchors alone above a heading name its
#: section, not the one before (``<a id="c-case"></a>``), and links reach the chunk an
#: anchor's id names. 38: an option's shortcode shows its name (``{{% config_option
#: name="x" %}}``); a template variable's filter may take an object (Eleventy). 39: an
#: Obsidian block's id names its chunk for links (``[[Note#^b15695]]``). 40: a Nunjucks or
#: Liquid capture (``{% set x %}`` … ``{% endset %}``) holds no headings; ``---js`` front
#: matter is code, ``---json`` data (Eleventy). 41: a table of contents that opens a
#: section (a list of links to the page's own headings) is no text. 42: a colour whose
#: letters repeat (``#fff``, ``#fafafa``) is no tag. 43: an indented code block is code
#: (``ra.text.markup.indented_code``): no links, tags or markup in it. 44: its lines keep
#: their tabs past the indentation. 45: a template's capture is skipped as
#: ``_blank_highlights`` reads it (no longer a ``{% raw %}`` or ``{% comment %}`` block too).
#: 46: a page titled by its file's name is not titled by its language's suffix
#: (``llama.en.mdx`` is "llama"). 47: a list of ten links or more to the page's own
#: headings that closes a section's text is a table of contents (no text). 48: the path
#: field also holds the words of the file's camelCase name (``etcdNoLeader``). 49: a
#: link's text leaves roadmap.sh's kind of resource out (``[@official@Docs](…)``). 50:
#: kramdown-rfc's front matter ends at ``--- abstract``; ``--- middle`` is no text. 51:
#: a first h1 naming a part (``# Summary``) with other h1s after it is no title. 52: a
#: page with no other title is titled by its front matter's ``name``. 53: a page in an
#: ``archive/`` or ``archived/`` folder is archived. 54–63: readings of stop 54 (its
#: commits say which). 64: a chunk's tokens count the lines it is shown under, its id and
#: breadcrumb (``ra.text.tokens.frame``), so a budget counts what an agent reads; a site's
#: ``llms.txt`` files are markdown; Docsify's ``page.md?id=x`` links reach section x.
#: 65: a slug holds no emoji's variation selector; front matter ``keywords`` are tags;
#: Logseq's hidden block properties are no text. 66: a fence's label (``title="x"``,
#: Mintlify's tab name) is text. 67: an h1 that is a list item is no title, and a file
#: name's ``___`` is a namespace's slash (Logseq). 68: a page whose text opens before its
#: first of several h1s is titled by its file (rustdoc's included pages).
ANALYZER_VERSION = 68

_WORD = re.compile(f"[\\w{MARKS}]+")  # underscores are spaced out first
_ASCII_WORD = re.compile(r"\w+")  # the same on ASCII text, where there are no marks, faster
#: Scripts read as character bigrams: CJK, and the scripts written without spaces between
#: words, whose runs are phrases (Thai "การติดตั้งโปรแกรม", "installing a program": one
#: run, 51 bytes, was dropped as a word over the limit, and a shorter one matched only
#: whole). Their combining vowel and tone marks are in their blocks, so a run keeps them.
_CJK_CHAR = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\U00020000-\U0002ffff"
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
)
_CJK_RUN = re.compile(f"[{_CJK_CHAR}]+")
_HAS_CJK = re.compile(f"[{_CJK_CHAR}]")


def _make_stem(language: str):
    if language == "none":
        return lambda word: word
    try:
        import Stemmer  # PyStemmer: the Snowball C implementation

        return Stemmer.Stemmer(language).stemWord
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        import snowballstemmer

        return snowballstemmer.stemmer(language).stemWord


def has_cjk(text: str) -> bool:
    """Whether ``text`` has a CJK ideograph, kana or hangul (split into bigrams)."""
    return not text.isascii() and _HAS_CJK.search(text) is not None


def split_words(text: str) -> list[str]:
    """Lowercased surface words of ``text``, long ones dropped, CJK runs as bigrams.

    The length limit applies to the words as indexed: a CJK run is its bigrams, so a
    sentence written without spaces stays (before, a run of 14 characters, 42 bytes,
    was dropped whole: 36.6% of the Chinese characters of the Vue guide in Chinese)."""
    text = text.lower().replace("_", " ")
    ascii_only = text.isascii()
    words = (_ASCII_WORD if ascii_only else _WORD).findall(text)
    if not ascii_only and _HAS_CJK.search(text) is not None:
        words = [p for w in words for p in (_split_cjk(w) if _HAS_CJK.search(w) else (w,))]
    # a character is at most 4 UTF-8 bytes (1 in ASCII): only a word that could reach
    # the limit is measured
    if words and max(map(len, words)) * (1 if ascii_only else 4) >= MAX_TOKEN_BYTES:
        words = [w for w in words if len(w) * 4 < MAX_TOKEN_BYTES
                 or len(w.encode("utf-8")) < MAX_TOKEN_BYTES]
    return words


def _split_cjk(word: str) -> Iterator[str]:
    """Non-CJK stretches stay whole; CJK runs become overlapping bigrams."""
    pos = 0
    for run in _CJK_RUN.finditer(word):
        if run.start() > pos:
            yield word[pos:run.start()]
        chars = run.group()
        if len(chars) == 1:
            yield chars
        else:
            yield from (chars[i:i + 2] for i in range(len(chars) - 1))
        pos = run.end()
    if pos < len(word):
        yield word[pos:]


@dataclass
class Analyzer:
    """Tokenizer plus cached stemmer for one language."""

    language: str = "english"
    _cache: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.language = normalize_language(self.language)
        self._stem = _make_stem(self.language)

    @property
    def cached_stems(self) -> dict[str, str]:
        """The stem cache, ``word → term``, for callers that look up many words."""
        return self._cache

    def stem(self, word: str) -> str:
        """The index term for one lowercased surface word (CJK grams are not stemmed)."""
        term = self._cache.get(word)
        if term is None:
            term = word if _HAS_CJK.search(word) else self._stem(word)
            self._cache[word] = term
        return term

    def stem_all(self, words: list[str]) -> list[str]:
        """Terms of many surface words (uncached ones stemmed in one batch)."""
        cache = self._cache
        missing = {w for w in words if w not in cache}
        for w in missing:
            cache[w] = w if _HAS_CJK.search(w) else self._stem(w)
        return [cache[w] for w in words]

    def terms(self, text: str) -> list[str]:
        """Index terms of ``text`` in order; a term's list index is its position."""
        stem = self.stem
        return [stem(w) for w in split_words(text)]

    def surface_terms(self, text: str) -> list[tuple[str, str]]:
        """``(surface word, term)`` pairs in order, for building the fuzzy vocabulary."""
        stem = self.stem
        return [(w, stem(w)) for w in split_words(text)]


@lru_cache(maxsize=8)
def analyzer_for(language: str) -> Analyzer:
    """A shared analyzer per language (its stem cache persists within the process)."""
    return Analyzer(language)
