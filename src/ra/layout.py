"""Names shared by the index writer and its readers, free of heavy imports.

The query path imports this (not ``ra.artifacts``, which needs pyarrow) so that
``ra search`` starts fast.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

#: BM25F fields, in the order of their numeric codes in ``postings.field``.
FIELDS = ("title", "tags", "path", "body")
FIELD_CODE = {name: code for code, name in enumerate(FIELDS)}

#: Artifact name → file name inside a generation directory.
ARTIFACTS = ("files", "chunks", "analyzed", "lengths", "words", "terms", "postings")
MANIFEST = "manifest.json"


def artifact_file(name: str) -> str:
    """File name of artifact ``name`` (``chunks`` → ``chunks.parquet``)."""
    return f"{name}.parquet"
