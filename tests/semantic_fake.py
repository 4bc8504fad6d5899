"""A small deterministic embedder for the tests: a fake with the ``Embedder`` interface
(``ra.text.embedders``), not a mock and not a backend ra ships.

Each word is mapped to a concept (``CONCEPTS``: a few groups of synonyms that share no
letters, so keyword search cannot find one from another), each concept to a bucket of
``DIMS`` by a stable hash, and a text's vector is its normalised bucket counts. Texts
about the same concepts are close whatever their words. Configure it with
``[semantic] backend = "semantic_fake:FakeEmbedder"`` (the tests' folder on the path).
``calls`` counts the texts embedded, so tests can tell what was embedded again.
"""

from __future__ import annotations

import hashlib
import math
import re

DIMS = 16
CONCEPTS = {
    "car": "vehicle", "automobile": "vehicle", "vehicle": "vehicle", "sedan": "vehicle",
    "dog": "canine", "puppy": "canine", "hound": "canine",
    "error": "failure", "exception": "failure", "fault": "failure", "crash": "failure",
}
STOP = {"the", "a", "an", "of", "and", "to", "in", "is", "for", "with", "on", "how"}


class FakeEmbedder:
    dims = DIMS
    calls = 0  # texts embedded, over every instance

    def __init__(self, settings=None) -> None:
        self.settings = settings

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * DIMS
        for word in re.findall(r"[a-z]+", text.lower()):
            if word in STOP:
                continue
            concept = CONCEPTS.get(word, word)
            bucket = hashlib.blake2b(concept.encode(), digest_size=4).digest()
            v[int.from_bytes(bucket, "little") % DIMS] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts) -> list[list[float]]:
        FakeEmbedder.calls += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
