"""Embedding on a thread, for the processes that live long (``ra.index.warm``: the daemon and
the MCP server).

Such a process answers at once and embeds meanwhile: ``kick`` (after every refresh of
the index) starts a thread, unless one runs, that loads the model (searches say
"the model is loading" and use keywords alone until it has) and embeds whatever the
current generation lacks (``ra.index.embedding``), batch by batch, then publishes. The
process's watch on the index's ``CURRENT`` pointer sees the new generation, and the
next search fuses meaning with words. The thread runs again while chunks are left
(files changed meanwhile), stops between batches when the index is closed, and leaves
what it embedded in the cache for the next run.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger("ra.index.embedding")

#: Seconds between two runs when another process holds the embedding lock.
BUSY_RETRY = 30.0


class Embedding:
    """The embedding thread of one ``WarmIndex``."""

    def __init__(self, index) -> None:
        self.index = index
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.last = None  # the last run's ``EmbedReport``
        self._again = threading.Event()
        self._lock = threading.Lock()

    def kick(self) -> None:
        """Make sure a run starts soon (a thread started, or the running one runs once
        more)."""
        with self._lock:
            self._again.set()
            if self.thread is None or not self.thread.is_alive():
                self.stopping.clear()
                self.thread = threading.Thread(target=self._loop, name="ra-embed",
                                               daemon=True)
                self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while self._again.is_set() and not self.stopping.is_set():
            self._again.clear()
            try:
                busy = self._run()
            except Exception as exc:  # searches say why meaning is not used
                log.warning("embedding: %s", exc)
                return
            if busy:
                self._again.set()
                self.stopping.wait(BUSY_RETRY)

    def _run(self) -> bool:
        """One run; True when another process is embedding this index."""
        from ra.index.embedding import embed_index
        from ra.text import embedder_runtime as runtime

        config = self.index.config
        if not config.semantic.enabled or config.index_dir is None:
            return False
        model = runtime.embedder(config.semantic)
        report = embed_index(config, lambda: model, stop=self.stopping.is_set)
        self.last = report
        if report.embedded or report.resumed:
            log.info("%s", report.describe())
        if report.missing and not report.stopped:
            self._again.set()  # files changed meanwhile
        return report.busy


def embed_soon(index, embedding: Embedding | None, manifest: dict) -> Embedding:
    """``WarmIndex``'s hook after a refresh: embed on a thread what the generation it
    holds (``manifest``) lacks, and load the model meanwhile; searches use keywords
    alone, and say so, until its vectors are published. Returns the index's thread."""
    from ra.store.vector_state import readiness

    if embedding is not None and readiness(manifest, index.config.semantic.model_id()).ready:
        return embedding  # nothing to embed, and the model is loaded or loading
    embedding = embedding or Embedding(index)
    embedding.kick()
    return embedding
