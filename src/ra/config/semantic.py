"""``[semantic]``: whether and how ra adds meaning to keyword search.

Kept free of imports so that ``ra.config`` can hold it without loading anything of
the semantic extra. The defaults were chosen on the SciFact training split and the
known-item sets (``benchmarks/semantic.py``; the numbers are in ``docs/semantic.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The recipe of the text a chunk's vector stands for (``ra.text.embedding_text``): part of
#: the model id, so a new recipe re-embeds rather than mixing vectors of two recipes.
TEXT_VERSION = "t1"

#: The backends ra ships; ``backend`` may also name a factory, ``package.module:name``.
BACKENDS = ("auto", "sentence-transformers", "fastembed")
FUSIONS = ("convex", "rrf")


@dataclass(frozen=True)
class SemanticSettings:
    """``[semantic]``.

    ``weight`` is the share of the semantic side in the convex combination of
    normalised scores (0: keywords alone, 1: meaning alone); 0.2 is the weight at which
    SciFact train and every known-item set do at least as well as keywords alone
    (SciFact nDCG@10 .700 → .735; 0.3 lost on the 300 tldr descriptions). ``rrf_k`` is reciprocal
    rank fusion's constant, used when ``fusion = "rrf"``. ``allow_download`` lets a
    backend fetch a model it does not have locally (off: ra never reaches the network).
    ``batch_size`` is how many chunks are embedded (and saved) at a time.
    """

    enabled: bool = False
    model: str = "all-MiniLM-L6-v2"
    backend: str = "auto"
    weight: float = 0.2
    fusion: str = "convex"
    rrf_k: int = 60
    allow_download: bool = False
    batch_size: int = 64

    def model_id(self) -> str:
        """What identifies the vectors this configuration makes: backends that run the
        same weights give the same vectors, so the id names the model, not the backend
        (a local path names its folder)."""
        factory = f"{self.backend}/" if ":" in self.backend else ""  # its own vectors
        return f"{factory}{canonical_model(self.model)}#{TEXT_VERSION}"


def canonical_model(name: str) -> str:
    """``sentence-transformers/all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2`` are one
    model; a path is kept as written (its folder name is not proof of its weights)."""
    if name.startswith("sentence-transformers/"):
        return name.split("/", 1)[1]
    return name
