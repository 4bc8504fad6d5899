"""Which language notes are written in (``ra.text.languages``), for ``ra init``'s stemmer.

Samples are a few sentences each, repeated to the length of a small set of notes; the
five English corpora of ../shared must read as English, and code or names as nothing."""

from __future__ import annotations

import pytest
from tests.conftest import CORPORA

from ra.text.languages import COMMON, WORDS, detect, hits, is_language_tag, said, translations

SAMPLES = {
    "english": "The service reads the configuration from the file, and it is not changed "
               "by the tests. This is why we keep it with the code that uses it.",
    "portuguese": "A aplicação lê a configuração do arquivo e não é alterada pelos testes. "
                  "Por isso você mantém o arquivo com o código que o usa, como os outros.",
    "spanish": "El servicio lee la configuración del archivo y no es modificada por las "
               "pruebas. Por eso la mantenemos con el código que la usa, como los demás.",
    "french": "Le service lit la configuration dans le fichier et elle n'est pas modifiée "
              "par les tests. C'est pour cela que nous la gardons avec le code qui l'utilise.",
    "german": "Der Dienst liest die Konfiguration aus der Datei, und sie wird von den Tests "
              "nicht verändert. Deshalb bleibt sie bei dem Code, der sie auch benutzt.",
    "italian": "Il servizio legge la configurazione dal file e non è modificata dai test. "
               "Per questo la teniamo con il codice che la usa, come gli altri della squadra.",
    "dutch": "De dienst leest de configuratie uit het bestand en die wordt niet door de "
             "tests veranderd. Daarom houden we het bij de code die het ook gebruikt.",
    "swedish": "Tjänsten läser konfigurationen från filen och den ändras inte av testerna. "
               "Därför har vi den med koden som använder den, och det är också bra.",
    "finnish": "Palvelu lukee asetukset tiedostosta, eikä testit muuta niitä. Siksi se on "
               "koodin kanssa, joka sitä käyttää, ja niin se on myös jatkossa.",
    "russian": "Служба читает настройки из файла, и они не меняются в тестах. Поэтому мы "
               "храним это вместе с кодом, который его использует, как и все остальное.",
}


def notes(text: str) -> list[str]:
    """``text`` as a folder of twenty notes of a few paragraphs each."""
    return [" ".join([text] * 8)] * 20


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_notes_read_as_their_language(language):
    assert detect(notes(SAMPLES[language])) == language


def test_code_names_and_short_notes_say_nothing():
    code = "def main(argv):\n    return run(argv[1:], config=load())\n" * 200
    assert detect([code]) is None
    assert detect(["# Install\n\nRun the installer."]) is None  # too few words to tell
    assert detect([]) is None


def test_two_languages_close_say_nothing():
    mixed = notes(SAMPLES["english"]) + notes(SAMPLES["german"])
    found = hits(mixed)
    assert found["english"] < 2 * found["german"] and detect(mixed) is None


def test_a_word_of_two_languages_counts_for_neither():
    shared = {w for lang, words in COMMON.items() for w in words.split()
              if sum(w in other.split() for other in COMMON.values()) > 1}
    assert {"og", "det", "de", "con", "at"} <= shared  # Danish and Norwegian, ...
    assert not shared & set().union(*WORDS.values())
    assert all(len(words) >= 3 for words in WORDS.values())


@pytest.mark.parametrize("corpus", ["tldr", "rust-book", "cpp-docs", "powershell-docs",
                                    "gcp-community"])
def test_the_english_corpora_read_as_english(corpus):
    files = sorted((CORPORA / corpus).rglob("*.md"))[:200]
    assert detect(f.read_text(encoding="utf-8", errors="replace") for f in files) == "english"


@pytest.mark.parametrize(("name", "tag"), [
    ("de", True), ("pt-br", True), ("pt-BR", True), ("zh_CN", True), ("zh-Hans", True),
    ("es-419", True), ("id", True), ("EN", True), ("api", False), ("ai", False),
    ("docs", False), ("v2", False), ("en-", False), ("xx", False), ("de-x", False)])
def test_a_language_tag_names_a_translation_folder(name, tag):
    """Site generators name their translations' folders by ISO 639-1 code, with a region
    or script; ``ra init`` looks at those folders only (``translations``)."""
    assert is_language_tag(name) is tag


def test_translations_mirror_their_pages():
    """Each layout of a site's translations, and what is none (a folder with a
    language's name that mirrors nothing; one page in common; a dotted name that is no
    language)."""
    pages = ["index.md", "guide/a.md", "guide/b.md", "ref/c.md"]
    starlight = [f"src/docs/{p}" for p in pages] + [f"src/docs/de/{p}" for p in pages[:3]] + [
        "src/docs/it/vpn.md", "src/docs/it/laptops.md", "src/docs/fr/index.md"]
    assert translations(starlight) == [("src/docs/de/**", 3)]
    hugo = [f"content/en/{p}" for p in pages] + [f"content/fr/{p}" for p in pages[:2]]
    assert translations(hugo) == [("content/fr/**", 2)]
    # where the folder holds only language folders, one page is a translation begun
    # (opentelemetry.io's content/ko/ and content/pl/); beside an original, it is not
    assert translations([*hugo, "content/ko/ref/c.md"]) == [
        ("content/fr/**", 2), ("content/ko/**", 1)]
    docusaurus = [f"docs/{p}" for p in pages] + ["i18n/ja/current/x.md"]
    assert translations(docusaurus) == [("i18n/ja/**", 1)]
    tldr = [f"pages/common/{c}.md" for c in "abcd"] + [
        f"pages.{lang}/common/{c}.md" for lang, cs in (("de", "abc"), ("pt_BR", "ab"))
        for c in cs] + ["pages.en/x.md", "pages.en/y.md", "notes.v2/a.md"]
    assert translations(tldr) == [("pages.de/**", 3), ("pages.pt_BR/**", 2)]
    assert translations(["README.md", "es/README.md"]) == []
    # mkdocs-static-i18n: beside the pages, or beside pages all named for a language
    beside = [f"docs/{p}" for p in pages] + [
        f"docs/{p[:-3]}.fr.md" for p in pages[:3]] + ["docs/notes.v2.md", "docs/setup.py.md"]
    assert translations(beside) == [("**/*.fr.md", 3)]
    named = [f"docs/{p[:-3]}.{lang}.md" for p in pages for lang in ("en", "de")][:-1]
    assert translations(named) == [("**/*.de.md", 3)]
    # a dotted name that is a domain, not a language (tldr's trunk.io.md beside trunk.md;
    # Ido is ISO 639-1's "io"), even twice
    assert translations(["pages/trunk.md", "pages/trunk.io.md", "pages/socket.md",
                         "pages/socket.io.md", "pages/x.md"]) == []
    # a project's README in other languages; a dotted name that is no language
    assert translations(["README.md", "README.zh-CN.md", "README-ja.md", "docs/README_ko.md",
                         "docs/README.md", "setup.py.md", "setup.md", "notes-it.md",
                         "notes.md"]) == [
        ("**/*.zh-CN.md", 1), ("**/README-ja.md", 1), ("**/README_ko.md", 1)]
    assert said(["src/docs/de/**", "src/docs/fr/**", "pages.de/**", "pages.pt_BR/**", "es/**",
                 "**/*.fr.md", "**/*.de.md", "**/README-ja.md", "**/README_ko.md"]) == (
        "src/docs/{de,fr}/, pages.{de,pt_BR}/, es/, *.{fr,de}.md, README-ja.md, README_ko.md")


def test_translations_named_by_country_or_kept_in_a_folder_of_translations():
    """What the sites write, not ISO 639-1: Nextra's ``cot.jp.mdx`` and ``cot.kr.mdx``
    beside ``cot.en.mdx`` (the Prompt Engineering Guide), coding-interview-university's
    ``translations/README-cn.md``, ``-kh``, ``-ptbr`` (of the README above it), and
    ML-For-Beginners' lessons, each with a ``translations/`` folder of its README."""
    nextra = [f"pages/{p}.{lang}.mdx" for p in ("cot", "rag", "settings")
              for lang in ("en", "jp", "kr", "zh")]
    assert translations(nextra) == [("**/*.jp.mdx", 3), ("**/*.kr.mdx", 3),
                                    ("**/*.zh.mdx", 3)]
    ciu = ["README.md", "how-to.md", *(f"translations/README-{lang}.md" for lang in
                                       ("cn", "kh", "ptbr", "tw", "ja", "af"))]
    assert translations(ciu) == [(f"**/README-{lang}.md", 1) for lang in
                                 ("af", "cn", "ja", "kh", "ptbr", "tw")]
    lessons = [f"{n}-Lesson/{p}" for n in (1, 2) for p in (
        "README.md", "translations/README.es.md", "translations/README.pt-br.md",
        "assignment.md")] + ["Readme.zh-cn.md"] + ["README.md"]
    assert translations(lessons) == [("**/*.es.md", 2), ("**/*.pt-br.md", 2),
                                     ("**/*.zh-cn.md", 1)]
    # four letters that are no language and its country, or a country's code where no
    # page has its name, are no translation
    assert translations(["README.md", "README-test.md", "README-dev.md", "notes.md",
                         "notes.br.md", "guide.jp.md"]) == []


def test_a_three_letter_folder_beside_language_folders_is_one():
    """opensource.guide keeps Nigerian Pidgin in ``_articles/pcm/`` (ISO 639-3) beside
    ``ar/`` … ``zh-hans/``: its mostly untranslated copies stood for the English pages.
    A three-letter folder that mirrors nothing, or beside fewer language folders,
    stays."""
    pages = ["legal.md", "best-practices.md", "code-of-conduct.md"]
    guide = [f"_articles/{p}" for p in pages] + [
        f"_articles/{lang}/{p}" for lang in ("ar", "de", "fr", "pcm") for p in pages] + [
        "_articles/api/reference.md", "_articles/api/errors.md"]
    assert translations(guide) == [(f"_articles/{lang}/**", 3)
                                   for lang in ("ar", "de", "fr", "pcm")]
    few = [f"docs/{p}" for p in pages] + [f"docs/{lang}/{p}" for lang in ("de", "pcm")
                                          for p in pages]
    assert translations(few) == [("docs/de/**", 3)]


def test_sibling_vaults_with_translated_names_are_translations():
    """Obsidian's help keeps a vault per language beside its release notes, each page's
    name translated ("Editing and formatting" is "Bearbeitung und Formatierung"): no
    path mirrors another. Three or more sibling folders named for languages sites are
    translated into are one site in as many languages, the largest the original; two are
    no evidence, and neither are a folder of one page or a few notes."""
    en = [f"en/Editing and formatting/{n}.md" for n in range(12)]
    de = [f"de/Bearbeitung und Formatierung/{n}-de.md" for n in range(12)]
    fr = [f"fr/Édition et mise en forme/{n}-fr.md" for n in range(5)]
    zh = ["zh/主页.md", "zh/编辑与格式/链接.md"]
    rest = ["README.md", "Release notes/v1.0.md", "Release notes/v1.1.md"]
    assert translations(rest + en + de + fr + zh) == [
        ("de/**", 12), ("fr/**", 5), ("zh/**", 2)]  # en: the largest, English on a tie
    assert translations(en + de + fr) == [("de/**", 12), ("fr/**", 5)]  # nothing else
    assert translations(rest + en + de) == []
    assert translations(rest + en + de + ["fr/Accueil.md"]) == []  # fr: one page
    assert translations(rest + ["it/vpn.md", "it/laptops.md", "de/Büro.md", "de/Urlaub.md",
                                "fr/bureau.md", "fr/congés.md"]) == []  # a few notes
