"""Names shared by the index writer and its readers, free of heavy imports.

The query path imports this (not ``ra.store.artifacts``, which needs pyarrow) so that
``ra search`` starts fast.
"""

from __future__ import annotations

import hashlib
import json

#: The first (negated) ``seq`` of a chunk's anchor rows in the links artifact, after a
#: document's page rows (``ra.pipeline.links`` writes them, ``ra.index.links`` reads them)
ANCHOR_SEQ = 1000

SCHEMA_VERSION = 12  # 5: declared heading ids, markup read for its text, #tags; 6: links/;
#  7: ctime_ns in fingerprints and files; 8: hot_store.arrow or hot_impacts (two branches);
#  9: both; 10: chunks.applies_to; 11: hot_postings.positions;
#  12: chunks.plain, hot_store.plain

#: BM25F fields, in the order of their numeric codes in ``postings.field``.
FIELDS = ("title", "tags", "path", "body")
FIELD_CODE = {name: code for code, name in enumerate(FIELDS)}

#: Artifacts stored per partition: a folder of ``part-NNNN.parquet`` files, each holding
#: the rows of one group of source files (see ``ra.pipeline.partitions``).
PARTITIONED = ("files", "chunks", "analyzed", "lengths", "surface", "postings", "links")
#: Artifacts stored once per generation, over the whole collection.
GLOBAL = ("terms", "words")
ARTIFACTS = PARTITIONED + GLOBAL
#: Stored once per generation for fast reads (``ra.pipeline.compact``): the postings with
#: their field lengths, the chunk rows without their texts (one-shot readers), each term's
#: quantized BM25F weight in each chunk (``ra.query.impacts``), and every chunk row a
#: long-lived reader holds, as Arrow IPC it memory-maps (``hot_store``).
COMPACT = ("hot_postings", "hot_chunks", "hot_impacts", "hot_store")
#: Artifacts stored as uncompressed Arrow IPC files (``.arrow``), not Parquet.
ARROW_FILES = ("hot_store",)
#: Partitioned too, but only in an index with ``[semantic] enabled`` (``ra.pipeline.vectors``).
VECTORS = "vectors"
MANIFEST = "manifest.json"
#: Per-file fingerprints and partition membership: read when files changed, not by a
#: freshness check that finds none (the manifest holds their digest).
FINGERPRINTS = "fingerprints.json"


def part_name(part: int) -> str:
    """File name of partition ``part`` inside an artifact folder."""
    return f"part-{part:04d}.parquet"


def artifact_path(name: str) -> str:
    """Where artifact ``name`` lives inside a generation: a folder or a file."""
    if name in ARROW_FILES:
        return f"{name}.arrow"
    return name if name in PARTITIONED or name == VECTORS else f"{name}.parquet"


def artifact_glob(name: str) -> str:
    """A path pattern DuckDB reads the whole artifact with (relative to the generation)."""
    return f"{name}/*.parquet" if name in PARTITIONED or name == VECTORS else f"{name}.parquet"


def config_hash(config) -> str:
    """Hash of everything that shapes the index: ra's schema and reading of files
    (analyzer) versions, and the configuration's own hash (``Config.config_hash``).

    The writer records it in the manifest and freshness compares it; it lives here, not
    with the writer, so that checking freshness imports nothing heavy (the writer needs
    pyarrow)."""
    from ra.text.analysis import ANALYZER_VERSION

    return _hash(SCHEMA_VERSION, ANALYZER_VERSION, config.config_hash())


def _hash(schema: int, analyzer: int, config: str) -> str:
    shape = {"schema": schema, "analyzer": analyzer, "config": config}
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


CONFIG_CHANGED, RA_UPGRADED = "config changed", "ra upgraded: it reads files differently"


def why_rebuilt(manifest: dict, config) -> str:
    """Why an index whose manifest is ``manifest`` no longer fits ``config``: its
    configuration (``CONFIG_CHANGED``), or ra itself (``RA_UPGRADED``: the manifest's
    hash is that of the configuration as it is, or as an earlier release's default
    ``include`` made it, with an earlier schema or analyzer version)."""
    from ra.text.analysis import ANALYZER_VERSION

    owns = [config.config_hash(), *config.earlier_config_hashes()]
    earlier = {_hash(schema, analyzer, own) for own in owns
               for schema in range(1, SCHEMA_VERSION + 1)
               for analyzer in range(1, ANALYZER_VERSION + 1)}
    return RA_UPGRADED if manifest.get("config_hash") in earlier else CONFIG_CHANGED
