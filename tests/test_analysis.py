"""The analyzer shared by indexing and querying: conformance cases, CJK, byte-length rule."""

from __future__ import annotations

import pytest

from conftest import conformance
from ra.config.languages import normalize_language
from ra.text.analysis import (
    MAX_TOKEN_BYTES,
    Analyzer,
    analyzer_for,
    split_words,
)

CASES = conformance("analyzer")
LANGUAGES = CASES["languages"]


# --- languages ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", LANGUAGES["accepted_case_insensitive"])
def test_every_upstream_language_is_accepted_in_any_case(name):
    assert normalize_language(name) == name
    assert normalize_language(name.upper()) == name
    assert normalize_language(name.title()) == name
    assert Analyzer(name.upper()).language == name


@pytest.mark.parametrize("name", LANGUAGES["accepted_case_insensitive"])
def test_every_upstream_language_stems(name):
    # Building the stemmer is where an unknown Snowball algorithm would fail.
    assert Analyzer(name).terms("") == []


@pytest.mark.parametrize("name", LANGUAGES["case_insensitive_examples"]["inputs"])
def test_case_insensitive_examples(name):
    assert normalize_language(name) == name.lower()


@pytest.mark.parametrize("case", LANGUAGES["invalid"], ids=lambda c: c["input"])
def test_invalid_language_names_the_input(case):
    with pytest.raises(ValueError, match=case["error_contains"]):
        normalize_language(case["input"])
    with pytest.raises(ValueError, match=case["error_contains"]):
        Analyzer(case["input"])


# --- upstream token cases ----------------------------------------------------------------

@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["source"].rsplit("::", 1)[-1])
def test_upstream_analyzer_cases(case):
    assert Analyzer(case["language"]).terms(case["input"]) == case["expected_tokens"]


def test_lowercases_before_stemming():
    assert Analyzer("english").terms("RUNNING Handling") == ["run", "handl"]


def test_analyzer_for_is_shared_and_normalises_language():
    assert analyzer_for("english") is analyzer_for("english")
    assert analyzer_for("English").language == "english"


def test_language_none_does_not_stem():
    assert Analyzer("none").terms("running handling") == ["running", "handling"]


# --- splitting ---------------------------------------------------------------------------

def test_underscores_split_words():
    assert split_words("snake_case_word") == ["snake", "case", "word"]


def test_digits_are_word_characters():
    assert split_words("python3 v2.0 2024") == ["python3", "v2", "0", "2024"]


def test_unicode_letters_stay_in_words():
    assert split_words("Café NAÏVE straße") == ["café", "naïve", "straße"]


def test_indic_vowel_signs_do_not_split_words():
    assert split_words("भाषा") == ["भाषा"]  # Hindi: bha + aa-sign + ssa + aa-sign
    assert split_words("மொழி") == ["மொழி"]  # Tamil: ma + o-sign + llla + i-sign


def test_turkish_dotted_capital_i_does_not_split_words():
    assert len(split_words("İstanbul")) == 1
    assert len(Analyzer("turkish").terms("İzmir")) == 1


# --- the 40-byte rule --------------------------------------------------------------------

def test_long_token_limit_is_forty_bytes():
    assert MAX_TOKEN_BYTES == 40
    assert split_words("a" * 39) == ["a" * 39]
    assert split_words("a" * 40) == []


def test_long_token_rule_counts_utf8_bytes_not_characters():
    two_byte = "é" * 20  # 20 characters, 40 UTF-8 bytes: dropped
    assert len(two_byte) == 20 and len(two_byte.encode()) == 40
    assert split_words(f"keep {two_byte} this") == ["keep", "this"]
    assert split_words("é" * 19) == ["é" * 19]  # 38 bytes: kept
    # a CJK run is measured as the bigrams it is indexed as: 42 bytes of CJK are 13
    # bigrams of 6 bytes (dropped whole before, so long Chinese sentences were lost)
    assert split_words("語" * 14) == ["語語"] * 13
    assert split_words("哈希" + "a" * 45 + "值") == ["哈希", "值"]  # the long ASCII part


def test_long_token_rule_applies_after_lowercasing():
    # capital sharp s 'ẞ' (3 bytes) lowercases to 'ß' (2 bytes): Tantivy measures the
    # lowercased token, so 14 of them (42 bytes as written, 28 lowercased) are kept
    assert split_words("ẞ" * 14) == ["ß" * 14]
    assert split_words("ẞ" * 20) == []


def test_long_token_positions_are_not_counted():
    analyzer = Analyzer("english")
    terms = analyzer.terms(f"alpha {'x' * 50} beta")
    assert terms == ["alpha", "beta"]  # positions 0 and 1: the long token leaves no gap


# --- CJK ---------------------------------------------------------------------------------

def test_cjk_runs_become_overlapping_bigrams():
    assert split_words("日本語") == ["日本", "本語"]


def test_single_cjk_character_stays_a_unigram():
    assert split_words("語 x") == ["語", "x"]


def test_kana_runs_become_bigrams():
    assert split_words("テスト") == ["テス", "スト"]


def test_mixed_latin_and_cjk_in_one_word():
    assert split_words("abc日本語def") == ["abc", "日本", "本語", "def"]


def test_cjk_bigrams_are_not_stemmed():
    assert Analyzer("english").terms("日本語を勉強") == ["日本", "本語", "語を", "を勉", "勉強"]


def test_thai_lao_khmer_and_myanmar_runs_become_bigrams():
    """Scripts written without spaces between words: a run is a phrase, and as one word it
    matched only whole, or not at all past 40 bytes (13 Thai characters)."""
    # Thai "limitation of" (ข้อจำกัด + ของ): the word alone is in the run's bigrams
    run, word = split_words("ข้อจำกัดของ"), split_words("ข้อจำกัด")
    assert run[:len(word)] == word and len(run) == 10
    assert len(split_words("การติดตั้งโปรแกรมบนเครื่องของคุณ")) == 31  # 96 bytes: kept
    assert split_words("ສະບາຍດີ")[:2] == ["ສະ", "ະບ"]  # Lao
    assert split_words("ភាសាខ្មែរ")[:1] == ["ភា"]  # Khmer
    assert split_words("မြန်မာ")[:1] == ["မြ"]  # Myanmar


def test_query_and_document_analysis_agree_on_cjk():
    analyzer = analyzer_for("english")
    doc = analyzer.terms("東京都に住んでいます")
    assert set(analyzer.terms("東京")) <= set(doc)
