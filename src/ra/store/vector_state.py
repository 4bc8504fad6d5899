"""Whether a generation's vectors can serve a model: read from its manifest, no I/O.

Kept apart from ``ra.pipeline.vectors`` (which needs pyarrow to write the artifact) so
that a search and a long-lived process ask it for free.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Readiness:
    """Whether a generation's vectors serve model ``model``: ``ready`` when every chunk
    that should have one has one."""

    ready: bool
    model: str | None
    dims: int | None
    count: int
    missing: int

    def describe(self) -> str:
        if self.ready:
            return f"{self.count:,} chunks embedded"
        if self.count == 0:
            return f"no chunk embedded yet ({self.missing:,} to embed)"
        return (f"{self.count:,} of {self.count + self.missing:,} chunks embedded "
                f"({self.missing:,} to embed)")


def readiness(manifest: dict, model: str) -> Readiness:
    """What the ``vectors`` entry of ``manifest`` offers for ``model`` (light: no I/O)."""
    entry = manifest.get("vectors") or {}
    if entry.get("model") != model:
        chunks = manifest.get("counts", {}).get("chunks", 0)
        return Readiness(False, model, None, 0, chunks)
    count, missing = int(entry.get("count", 0)), int(entry.get("missing", 0))
    return Readiness(bool(entry.get("dims")) and missing == 0, model, entry.get("dims"),
                     count, missing)
