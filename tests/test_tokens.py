"""Token counts: cl100k_base from the packaged ranks, offline.

- The ids and counts are cl100k_base's (the example of tiktoken's README: "hello world"
  is ``[15339, 1917]``); special-token text counts as plain text.
- The encoding holds no Python copy of its ranks (17 MB a long-lived process kept).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ra.text.tokens import count_frames, count_many, count_tokens, encoding, frame


def test_counts_are_cl100k_base():
    assert encoding().encode_ordinary("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    assert count_many(["hello world", "", "hello"]) == [2, 0, 1]


def test_special_token_text_counts_as_plain_text():
    assert count_tokens("<|endoftext|>") > 1


def test_the_encoding_keeps_no_python_copy_of_its_ranks():
    enc = encoding()
    assert enc._mergeable_ranks is None
    assert enc.decode(enc.encode_ordinary("ownership and borrowing")) == "ownership and borrowing"


_PARTS = ["a", "Z", "md", "x1", "2019", "42", ".", "-", "_", "'s", "'ll", "'", " ", "é", "東",
          "#", "(", ")", "\n", "\t", "──", "!", "$", "ß"]
_text = st.lists(st.sampled_from(_PARTS), max_size=8).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_text, st.one_of(st.none(), _text), _text), min_size=1,
                max_size=6))
@example([("docs/guide.md", "intro", "Guide › Intro"), ("docs/guide.md", None, "Guide"),
          ("docs/v2", "x", ""), ("docs/a'll", "ll", "T"), ("docs/a-", "b", "T"),
          ("docs/a 1", "2", "T"), ("notes/c#", "d", "C#")])
def test_frames_are_counted_as_whole_texts(chunks):
    """``count_frames`` counts the start its document's chunks share once per document;
    every count must be the whole frame's (``count_tokens(frame(...))``), whatever the
    document's id ends with and the chunk's slug and breadcrumb begin with."""
    ids, crumbs, doc_ids = [], [], []
    for path, slug, breadcrumb in chunks:
        doc_id = f"kb:{path}"
        ids.append(doc_id if slug is None else f"{doc_id}#{slug}")
        crumbs.append(breadcrumb)
        doc_ids.append(doc_id)
    assert count_frames(ids, crumbs, doc_ids) == [
        count_tokens(frame(i, b)) for i, b in zip(ids, crumbs, strict=True)]
