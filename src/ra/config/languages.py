"""The stemmer languages ``[search] stemmer`` accepts: every Snowball algorithm, and
``none``. The configuration validates the name here; ``ra.text.analysis`` builds the
stemmer from it."""

from __future__ import annotations

#: Languages accepted for ``[search] stemmer``: every Snowball algorithm, plus ``none``.
LANGUAGES = (
    "arabic", "armenian", "basque", "catalan", "czech", "danish", "dutch", "english",
    "esperanto", "estonian", "finnish", "french", "german", "greek", "hindi", "hungarian",
    "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian", "persian",
    "polish", "porter", "portuguese", "romanian", "russian", "serbian", "spanish",
    "swedish", "tamil", "turkish", "yiddish", "none",
)


def normalize_language(name: str) -> str:
    """The canonical stemmer name for ``name`` (case-insensitive); ValueError if unknown."""
    lang = name.strip().lower()
    if lang not in LANGUAGES:
        raise ValueError(f"unknown stemmer language {name!r}; choose one of: "
                         + ", ".join(LANGUAGES))
    return lang
