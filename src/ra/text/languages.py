"""Which language a set of notes is written in, for ``ra init`` to choose their stemmer.

ra stems every word with one Snowball stemmer, English unless ``[search] stemmer`` says
otherwise. Notes in Portuguese stemmed as English keep their plurals apart
("aplicação", "aplicações") and lose nothing of English's rules' mistakes; a team does not
know that the setting exists. ``ra init`` therefore looks at the notes it found: the
language whose most common words (articles, prepositions, pronouns) its text holds far
more of than of any other's is theirs.

Each language's words are those of its own: a word of two lists ("de", "que", "para")
tells nothing and counts for neither. A language is named only when its words are common
enough (``MIN_HITS``) and ``MARGIN`` times those of the next one; else none is (code,
tables and names, or mixed notes: English stays).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

#: The most common words of each language Snowball stems (by its name there), written
#: as they are, lowercase.
COMMON: dict[str, str] = {
    "english": "the and of to is in that it for with as was on are be this by not or at "
               "which from have an they you we can will there their been would these",
    "french": "le la les des est une dans qui pour pas sur au avec ce sont par plus ou "
              "leur nous vous mais elle cette aux ont être fait comme",
    "german": "der die und das ist nicht mit den ein eine zu auf für sich dem des auch "
              "werden wird von bei oder wenn kann sind nach wie",
    "spanish": "el los las del por una con es para lo como más pero sus al está son "
               "también puede este esta cuando muy sobre entre",
    "portuguese": "os uma com não do da dos das em ao pelo pela são também você mais "
                  "seu sua ser está mas quando foi isso essa este",
    "italian": "il di che è per una sono gli della con non le nel alla anche più come "
               "questo questa ha dei delle essere si",
    "dutch": "het een van en niet dat zijn op te voor met ook er maar worden wordt "
             "naar bij deze dit kan hebben uit",
    "swedish": "och att det som för på är med av inte den till har ett om vi kan eller "
               "men från sig också vara",
    "danish": "og at det er til på af ikke den med som for har et de kan vil fra eller "
              "også være blev skal efter meget noget nogle hvad",
    "norwegian": "og det er til på av ikke med som for har et de kan vil fra eller "
                 "også være ble skal jeg hun etter mye noe noen hva",
    "finnish": "ja on ei se että oli hän mutta kun myös tai ovat ole voi jos sekä kuin "
               "niin ovat tämä",
    "russian": "и в не на что с по как это для он она из к от но так его все также или "
               "при был быть",
}

#: Hits of the common words that name a language, at least.
MIN_HITS = 200
#: How many times the next language's hits the first one's must be.
MARGIN = 2.0
#: Characters of each text read, and texts read at most: enough to know, no more.
SAMPLE_CHARS = 20_000
SAMPLE_FILES = 200

_WORD = re.compile(r"[^\W\d_]+")


def _distinct() -> dict[str, frozenset[str]]:
    lists = {lang: set(words.split()) for lang, words in COMMON.items()}
    counts = Counter(w for words in lists.values() for w in words)
    return {lang: frozenset(w for w in words if counts[w] == 1)
            for lang, words in lists.items()}


WORDS = _distinct()
_LANGUAGE_OF = {w: lang for lang, words in WORDS.items() for w in words}


def hits(texts: Iterable[str]) -> Counter:
    """How many of each language's own common words ``texts`` hold."""
    found: Counter = Counter()
    for text in texts:
        for word in _WORD.findall(text[:SAMPLE_CHARS].lower()):
            lang = _LANGUAGE_OF.get(word)
            if lang is not None:
                found[lang] += 1
    return found


def detect(texts: Iterable[str]) -> str | None:
    """The language ``texts`` are written in, by Snowball's name; None when they do not
    say (too few of any language's words, or two languages close)."""
    ranked = hits(texts).most_common(2)
    if not ranked or ranked[0][1] < MIN_HITS:
        return None
    if len(ranked) > 1 and ranked[0][1] < MARGIN * ranked[1][1]:
        return None
    return ranked[0][0]


#: ISO 639-1's two-letter language codes: the names site generators give the folders of
#: a documentation's translations (Starlight's ``de/``, ``pt-br/``, Mintlify's ``es/``,
#: Hugo's ``content/en/``, Docusaurus' ``zh-Hans``).
ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv
cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr
ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw
ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv
ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr
ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi
yo za zh zu""".split())
_LANGUAGE = r"([a-z]{2})(?:[-_](?:[a-z]{2}|[a-z]{4}|\d{3}))?"  # code, region or script
_TAG = re.compile(_LANGUAGE, re.I)


#: The languages documentation is translated into, of ISO 639-1's: a name's suffix is
#: read as a language only when it is one of these (``pages.de``, ``index.fr.md``), as
#: a dotted name is more often a domain or a file kind (tldr's ``trunk.io.md`` beside
#: ``trunk.md``: Ido is in ISO 639-1, and no site is translated into it)
TRANSLATED_INTO = frozenset("""
af am ar az be bg bn bs ca cs cy da de el en es et eu fa fi fr ga gl gu he hi hr hu hy id
is it ja ka kk km kn ko ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl ps pt ro ru si
sk sl sq sr sv sw ta te tg th tl tr uk ur uz vi zh zu""".split())


@lru_cache(maxsize=4096)
def is_language_tag(name: str, translated: bool = False) -> bool:
    """Whether a folder's name is a language tag: an ISO 639-1 code, with a region or a
    script after a dash or an underscore (``de``, ``pt-BR``, ``zh_CN``, ``zh-Hans``,
    ``es-419``); ``translated``: of a language in ``TRANSLATED_INTO``."""
    m = _TAG.fullmatch(name)
    return m is not None and m.group(1).lower() in (TRANSLATED_INTO if translated
                                                    else ISO_639_1)


#: A folder named for a language is a translation of the folder it sits in when at least
#: this share of its pages, and ``TRANSLATED_MIN`` of them, have a page of the same path
#: there (``translations``).
TRANSLATED_SHARE = 0.5
TRANSLATED_MIN = 2
#: Folders whose language folders are translations of pages kept elsewhere, whatever
#: they mirror (Docusaurus' ``i18n/fr/docusaurus-plugin-content-docs/current/`` mirrors
#: ``docs/``).
TRANSLATION_FOLDERS = frozenset({"i18n", "l10n", "locales", "translations"})


def translations(paths: Iterable[str]) -> list[tuple[str, int]]:
    """``(exclude pattern, pages)`` of the translations among ``paths`` (a tree's markdown
    files, relative POSIX paths): the folders (``src/docs/de/**``) named for a language
    (``is_language_tag``) whose pages mirror those of the folder they sit in, path for
    path (Starlight's ``src/content/docs/de/``, Mintlify's ``es/``, VitePress' ``zh/``).
    Where that folder
    holds nothing but language folders (Hugo's ``content/en/``, ``content/de/``), the one
    with the most pages is the original (English on a tie) and the others mirror it;
    under ``i18n`` (Docusaurus: ``i18n/fr/docusaurus-plugin-content-docs/current/``
    mirrors ``docs/``) each is a translation (``TRANSLATION_FOLDERS``); so is a folder
    named for its sibling and a language that mirrors it (tldr-pages' ``pages.de/``
    beside ``pages/``); and the pages named for a page beside them and a language
    (``**/*.fr.md``: mkdocs-static-i18n's ``index.fr.md`` beside ``index.md``,
    ``_beside``). Searched together, a page and its translations answer a query two and
    three times over: on Starlight's docs, three of the first five results for "sidebar
    configuration" were the French and Russian pages of the first two. ``ra init``
    excludes them, and ``ra check`` names those a tree indexes."""
    files = list(paths)  # strings throughout: pathlib's parents took most of the time
    languages: dict[str, set[str]] = {}  # a folder ("" the top) → its children so named
    suffixed: set[str] = set()  # folders named for another one and a language
    for f in files:
        parts = f.split("/")
        for i, name in enumerate(parts[:-1]):
            if is_language_tag(name):
                languages.setdefault("/".join(parts[:i]), set()).add(name)
            elif "." in name[1:] and is_language_tag(name.rpartition(".")[2], True):
                suffixed.add("/".join(parts[: i + 1]))
    _three_letters(files, languages)
    found = _suffixed(files, suffixed)
    for parent in sorted(languages, key=lambda p: (p.count("/") + bool(p), p)):
        if any(parent == t or parent.startswith(f"{t}/") for t, _ in found):
            continue  # inside a translation already found
        names, prefix = languages[parent], f"{parent}/" if parent else ""
        pages: dict[str | None, set[str]] = {}  # a language (None: none) → paths
        for f in files:
            if f.startswith(prefix):
                rel = f[len(prefix):]
                first, slash, rest = rel.partition("/")
                lang = first if slash and first in names else None
                pages.setdefault(lang, set()).add(rest if lang else rel)
        original = pages.pop(None, None)
        if parent.rpartition("/")[2].lower() in TRANSLATION_FOLDERS:  # of pages elsewhere
            found += [(prefix + name, len(mine)) for name, mine in sorted(pages.items())]
            continue
        first = None
        if not original:
            first = _largest(pages)
            original = pages.pop(first)
        # where the folder holds nothing but language folders, one page that mirrors the
        # original's is a translation begun (opentelemetry.io's content/ko/, content/pl/)
        least = 1 if first else TRANSLATED_MIN
        mirrored = [(prefix + name, len(mine))
                    for name, mine in sorted(pages.items()) if mirrors(mine, original, least)]
        if not mirrored:
            mirrored = _vaults(pages, prefix, first and (first, original))
        found += mirrored
    away = tuple(f"{t}/" for t, _ in found)
    beside = _beside([f for f in files if not f.startswith(away)])
    return [(f"{t}/**", n) for t, n in found] + beside


#: Language folders of the same parent, at least, beside which a folder named with three
#: letters is one too (an ISO 639-2/3 code: opensource.guide's ``_articles/pcm/``,
#: Nigerian Pidgin, beside ``ar/`` … ``zh-hans/``), if it mirrors the original
THREE_LETTER_BESIDE = 3
_THREE = re.compile(r"[a-z]{3}")


def _three_letters(files: list[str], languages: dict[str, set[str]]) -> None:
    """Add to ``languages`` (a folder → its children named for a language) the children
    named with three lowercase letters of a folder with ``THREE_LETTER_BESIDE`` such
    children already."""
    parents = {p for p, names in languages.items() if len(names) >= THREE_LETTER_BESIDE}
    if not parents:
        return
    for f in files:
        parent = f.rpartition("/")[0]
        while parent:
            up, _, name = parent.rpartition("/")
            if up in parents and _THREE.fullmatch(name):
                languages[up].add(name)
                break
            parent = up


def _largest(pages: dict[str, set[str]]) -> str:
    """The language folder with the most pages (English on a tie): the original."""
    return max(sorted(pages), key=lambda n: (len(pages[n]), n.lower().startswith("en")))


#: Sibling folders named for languages sites are translated into, at least this many,
#: are one site in as many languages even when their pages' names are translated too.
VAULTS_MIN = 3
#: ... and the original holds this many pages at least: a site, not a few notes.
VAULT_PAGES = 10


def _vaults(pages: dict[str, set[str]], prefix: str,
            taken: tuple[str, set[str]] | None) -> list[tuple[str, int]]:
    """The translations among sibling language folders that mirror nothing, their pages'
    names being translated too (Obsidian's help: ``en/``, ``de/``, ``zh/``, 35 vaults of
    173 pages each, "Editing and formatting" being "Bearbeitung und Formatierung"): when
    ``VAULTS_MIN`` of them are named for languages sites are translated into
    (``TRANSLATED_INTO``) and hold ``TRANSLATED_MIN`` pages each, all but the largest
    (``taken`` already, with its pages, where the parent holds nothing else) are
    translations of it, if it holds ``VAULT_PAGES``. Two such folders are no evidence,
    nor are a few notes (``de/`` and ``it/`` may be a German office's and the IT
    team's)."""
    named = {n: mine for n, mine in pages.items()
             if is_language_tag(n, True) and len(mine) >= TRANSLATED_MIN}
    if taken is not None:
        named[taken[0]] = taken[1]
    if len(named) < VAULTS_MIN:
        return []
    first = taken[0] if taken is not None else _largest(named)
    if len(named[first]) < VAULT_PAGES:
        return []
    return [(prefix + n, len(mine)) for n, mine in sorted(named.items()) if n != first]


def mirrors(mine: set, original: set, least: int = TRANSLATED_MIN) -> bool:
    """Whether the pages ``mine`` translate (or are an older version of) those of
    ``original``: enough of them have a page of the same path there
    (``TRANSLATED_SHARE``, ``least``)."""
    same = len(mine & original)
    return same >= least and same >= TRANSLATED_SHARE * len(mine)


#: A page's name and a language: ``index.fr`` (mkdocs-static-i18n), ``README.zh-CN``, and
#: for a README only, after a dash or an underscore (``README-ja``, ``README_zh-CN``); or
#: four letters, a language and its country joined (``README-ptbr``: ``JOINED``)
_BESIDE = re.compile(rf"(.+?)(\.|(?<=readme)[-_])((?:{_LANGUAGE})|[a-z]{{4}})", re.I)
#: Countries' codes that name their language in translations' file names, where ISO 639-1
#: says otherwise or names no language sites are translated into (Nextra's
#: ``cot.jp.mdx`` and ``cot.kr.mdx`` beside ``cot.en.mdx`` on the Prompt Engineering
#: Guide; ``README-cn.md``, ``README-tw.md``, ``README-kh.md`` on
#: coding-interview-university), and a language joined to its country (``README-ptbr``).
#: Only beside a page of the same name: never a folder's name.
BY_COUNTRY = frozenset("br cn cz dk gr hk il ir jp kh kr tw ua vn".split())
JOINED = frozenset("ptbr ptpt zhcn zhtw zhhk enus engb esmx frca".split())


def names_language(tag: str) -> bool:
    """Whether a page's suffix (``_BESIDE``) names a language sites are translated into."""
    low = tag.lower()
    return low in BY_COUNTRY or low in JOINED or is_language_tag(tag, True)


def _beside(files: list[str]) -> list[tuple[str, int]]:
    """``(exclude pattern, pages)`` of the translations kept beside their pages, named for
    a page and a language: mkdocs-static-i18n's suffix layout (``index.fr.md`` beside
    ``index.md``, or beside ``index.en.md`` when every page is named for its language:
    then the language with the most pages is the original, English on a tie), and a
    project's README in another language (``README.zh-CN.md``, ``README-ja.md`` beside
    ``README.md``: one is enough; other pages, ``TRANSLATED_MIN`` of them). Only the
    languages sites are translated into count (``TRANSLATED_INTO``, and the countries'
    codes sites name them by: ``BY_COUNTRY``, ``JOINED``). A page in a ``translations/``
    folder (``TRANSLATION_FOLDERS``) translates the page of its name above it
    (ML-For-Beginners' ``2-Regression/3-Linear/translations/README.es.md``,
    coding-interview-university's ``translations/README-ja.md``)."""
    plain: set[tuple[str, str]] = set()  # (folder/name without suffix, suffix)
    named: dict[str, set[str]] = {}  # exclude pattern → folder/names of its pages
    suffix_of: dict[str, str] = {}
    for f in files:
        where, _, name = f.rpartition("/")
        stem, dot, kind = name.rpartition(".")
        stem, suffix = (stem, f".{kind}") if dot else (name, "")
        m = _BESIDE.fullmatch(stem)
        if m is None or not names_language(m.group(3)):
            plain.add((_page(where, stem), suffix))
            continue
        base, sep, lang = m.group(1, 2, 3)
        pattern = f"**/*.{lang}{suffix}" if sep == "." else f"**/{base}{sep}{lang}{suffix}"
        up, _, folder = where.rpartition("/")  # a page's translations/ folder: of the page
        home = up if folder.lower() in TRANSLATION_FOLDERS else where  # above it
        named.setdefault(pattern, set()).add(_page(home, base))
        suffix_of[pattern] = suffix
    if not named:
        return []
    originals = {suffix: {name for name, s in plain if s == suffix}
                 for suffix in set(suffix_of.values())}
    if not any(names & originals[suffix_of[p]] for p, names in named.items()):
        first = max(named, key=lambda p: (len(named[p]), ".en" in p.lower()))
        originals = {suffix_of[first]: named.pop(first)}
    out = []
    for pattern, names in sorted(named.items()):
        same = len(names & originals.get(suffix_of[pattern], set()))
        least = 1 if all(n.rpartition("/")[2].lower() == "readme" for n in names) else (
            TRANSLATED_MIN)
        if same >= least and same >= TRANSLATED_SHARE * len(names):
            out.append((pattern, len(names)))
    return out


def _page(folder: str, name: str) -> str:
    """A page's folder and name, as translations are matched with it (a README whatever
    its case: ``Readme.zh-cn.md`` beside ``README.md``)."""
    return f"{folder}/{'README' if name.lower() == 'readme' else name}"


def _suffixed(files: list[str], folders: set[str]) -> list[tuple[str, int]]:
    """The translations among ``folders``, each named for a sibling and a language, that
    mirror that sibling (tldr-pages keeps ``pages.de/`` and 48 more beside ``pages/``)."""
    if not folders:
        return []
    siblings = {f: f.rpartition(".")[0] for f in folders}
    wanted = folders | set(siblings.values())
    under: dict[str, set[str]] = {}  # a folder → its pages' paths in it
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if folder in wanted:
                under.setdefault(folder, set()).add("/".join(parts[i:]))
    return [(folder, len(under.get(folder, ())))
            for folder in sorted(folders)
            if mirrors(under.get(folder, set()), under.get(siblings[folder], set()))]


def said(patterns: list[str]) -> str:
    """Translations' exclude patterns as said to a user, those of one folder or page named
    once: ``a/de/**, a/fr/**`` as ``a/{de,fr}/``, ``pages.de/**, pages.fr/**`` as
    ``pages.{de,fr}/``, ``**/*.de.md, **/*.fr.md`` as ``*.{de,fr}.md``,
    ``**/README-ja.md`` as ``README-ja.md``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for p in patterns:
        if p.startswith("**/*."):  # pages named for a language: **/*.fr.md
            lang, _, suffix = p[len("**/*."):].partition(".")
            groups.setdefault(("*.", f".{suffix}"), []).append(lang)
            continue
        if p.startswith("**/"):  # a README named for a language: **/README-ja.md
            groups.setdefault(("", ""), []).append(p[len("**/"):])
            continue
        parent, _, name = p.removesuffix("/**").rpartition("/")
        start = f"{parent}/" if parent else ""
        stem, dot, lang = name.rpartition(".")  # pages.de, pages.fr: pages.{de,fr}
        groups.setdefault((f"{start}{stem}." if dot else start, "/"), []).append(
            lang if dot else name)
    return ", ".join(", ".join(names) if not start + end else
                     f"{start}{names[0] if len(names) == 1 else '{' + ','.join(names) + '}'}"
                     f"{end}" for (start, end), names in groups.items())
