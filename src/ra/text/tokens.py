"""cl100k_base token counts, offline.

Token budgets are counted with OpenAI's cl100k_base encoding, which is within 10–20% of
other modern tokenizers. The BPE ranks ship inside the package (``data/``), checked
against their published sha256, so counting never touches the network. tiktoken is
imported on first use only: commands that only read stored counts never pay for it.
"""

from __future__ import annotations

from functools import lru_cache

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
}


#: What ``ra search`` and ``ra get`` show a chunk under (``ra.query.render``): a rule line
#: naming its id, its breadcrumb and a blank line. A chunk's stored token count includes it
#: (``frame``), so a token budget counts what an agent reads, not the chunk's text alone:
#: without it ten results could come to 4,157 tokens under a budget of 4,000.
RULE = "───"


def frame(chunk_id: str, breadcrumb: str) -> str:
    """The lines a chunk is shown under, in full, before its text."""
    return f"{RULE} {chunk_id} {RULE}\n{breadcrumb}\n\n"


@lru_cache(maxsize=1)
def encoding():
    """The cl100k_base encoding built from the packaged rank file."""
    import tiktoken

    encoder = tiktoken.Encoding(name="cl100k_base", pat_str=_PATTERN,
                                mergeable_ranks=ranks(), special_tokens=_SPECIAL)
    # tiktoken keeps the dictionary of ranks only to pickle the encoding (its Rust core
    # holds its own copy), which ra never does: 17 MB that a process which counts once
    # (the daemon and the MCP server prepare an update) would hold for as long as it lives
    encoder._mergeable_ranks = None
    return encoder


def ranks() -> dict[bytes, int]:
    """The packaged BPE ranks (``token-base64 rank`` per line), checked against their
    sha256. The same dictionary as ``tiktoken.load.load_tiktoken_bpe``, parsed in a few
    C-level passes instead of a Python loop per line: loading the encoder is on the path
    of the first update in a fresh process, and this halves the parse."""
    import binascii
    import hashlib
    from importlib import resources

    data = (resources.files("ra") / "data" / "cl100k_base.tiktoken").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(f"cl100k_base.tiktoken is corrupt (sha256 {digest})")
    fields = data.split()
    # the file (its sha256 checked above) numbers its tokens 0, 1, 2, ... in order: its
    # second column need not be parsed
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), range(len(fields) // 2),
                    strict=True))


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special-token text counts as plain text)."""
    return len(encoding().encode_ordinary(text))


def count_many(texts: list[str]) -> list[int]:
    """Token counts for many texts, one call each. tiktoken's batch encoder spreads a
    batch over threads, but a build already runs one worker process per core, and the
    thread pool's hand-offs cost more than they save: on 20,000 chunk texts of the C++
    docs the batch took 1.12 s of CPU (0.77 s wall), this loop 0.47 s."""
    encode = encoding().encode_ordinary
    return [len(encode(text)) for text in texts]


def count_frames(ids: list[str], breadcrumbs: list[str], doc_ids: list[str]) -> list[int]:
    """``count_tokens(frame(chunk_id, breadcrumb))`` of each chunk, the start its
    document's chunks share (``"─── tree:path"``) encoded once per document: a third of
    the frames' text on cpp-docs (0.86 -> 0.68 s of CPU).

    Exact: cl100k_base encodes a text piece by piece, and a piece never goes on past a
    letter or digit into a ``#`` or a space (runs of letters, of digits, and the
    contractions end there; a run of punctuation cannot hold the letter; whitespace
    runs cannot either), so when the document's id ends with an ASCII letter or digit,
    the pieces of the frame are those of its start and those of the rest, and so are the
    tokens (no piece looks behind it, and what a piece looks ahead at is its own
    side). Other ids are encoded whole."""
    encode = encoding().encode_ordinary
    start = len(RULE) + 1
    shared: dict[str, int] = {}
    counts = []
    for chunk_id, breadcrumb, doc_id in zip(ids, breadcrumbs, doc_ids, strict=True):
        text = frame(chunk_id, breadcrumb)
        cut = start + len(doc_id)
        last = doc_id[-1:]
        if (last.isascii() and last.isalnum() and chunk_id.startswith(doc_id)
                and text[cut] in "# "):
            head = shared.get(doc_id)
            if head is None:
                head = shared[doc_id] = len(encode(text[:cut]))
            counts.append(head + len(encode(text[cut:])))
        else:
            counts.append(len(encode(text)))
    return counts

