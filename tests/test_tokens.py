"""Token counts: cl100k_base from the packaged ranks, offline.

- The ids and counts are cl100k_base's (the example of tiktoken's README: "hello world"
  is ``[15339, 1917]``); special-token text counts as plain text.
- The encoding holds no Python copy of its ranks (17 MB a long-lived process kept).
"""

from __future__ import annotations

from ra.text.tokens import count_many, count_tokens, encoding


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
