"""One embedder per process and configuration, loaded once, shared by every thread.

Loading costs seconds (torch's import alone is about four), so a process loads each
configured model once. A thread that finds the model being loaded by another does not
wait for it (``embedder(..., wait=False)``): the daemon's and the MCP server's searches
answer with keywords alone while their embedding thread loads it. Query vectors are
kept for the last ``QUERY_CACHE`` queries: an agent often repeats a query (paging,
another budget, a second look).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ra.config.semantic import SemanticSettings

QUERY_CACHE = 256

_lock = threading.Lock()
_loaded: dict[tuple, object] = {}
_failed: dict[tuple, Exception] = {}
_loading: dict[tuple, threading.Event] = {}
_queries: OrderedDict[tuple, list[float]] = OrderedDict()
_pool: ThreadPoolExecutor | None = None


def _key(settings: SemanticSettings) -> tuple:
    """What makes a model: not the fusion's weight or method."""
    return (settings.backend, settings.model, settings.allow_download, settings.batch_size)

#: Threads for inference: one. Measured on 2 busy cores, MiniLM embedded a query in 8 ms
#: on one torch thread and 357 ms on two (they fought the other processes for cores).
THREADS = 1


def embedder(settings: SemanticSettings, *, wait: bool = True):
    """The loaded embedder of ``settings``; None when another thread is loading it and
    ``wait`` is off. A failure to load is raised again on every call (``EmbedderError``)
    until the configuration changes."""
    key = _key(settings)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        if key in _failed:
            raise _failed[key]
        busy = _loading.get(key)
        if busy is None:
            busy = _loading[key] = threading.Event()
            mine = True
        else:
            mine = False
    if not mine:
        if not wait:
            return None
        busy.wait()
        return embedder(settings)
    from ra.text.embedders import load_embedder

    model = None
    try:
        model = load_embedder(settings, threads=THREADS)
    except Exception as exc:
        with _lock:
            _failed[key] = exc
        raise
    finally:
        with _lock:
            if model is not None:
                _loaded[key] = model
            _loading.pop(key, None)
        busy.set()
    return model


def query_vector(settings: SemanticSettings, model, text: str) -> list[float]:
    """The vector of query ``text`` (cached)."""
    return query_vector_soon(settings, model, text).result()


def query_vector_soon(settings: SemanticSettings, model, text: str,
                      then: Callable[[list[float]], object] | None = None) -> Future:
    """The vector of query ``text`` as a future: done when cached, else embedded on the
    process's query thread, so the caller scores the query's words meanwhile (torch and
    DuckDB both run outside the GIL; on two cores the embedding then costs the search
    little more than the keyword side it overlaps). With ``then``, the future is
    ``then(vector)``, run on that thread too: what uses the vector overlaps as well."""
    key = (_key(settings), text)
    with _lock:
        cached = _queries.get(key)
        if cached is not None:
            _queries.move_to_end(key)
    if cached is not None and then is None:
        done: Future = Future()
        done.set_result(cached)
        return done
    return _query_pool().submit(_embed_then, key, model, text, cached, then)


def _embed_then(key: tuple, model, text: str, cached, then):
    vector = cached if cached is not None else _embed_query(key, model, text)
    return vector if then is None else then(vector)


def _query_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ra-query-vector")
        return _pool


def _embed_query(key: tuple, model, text: str) -> list[float]:
    vector = list(model.embed_query(text))
    with _lock:
        _queries[key] = vector
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return vector


def forget() -> None:
    """Drop every loaded model and failure (tests; a configuration reloaded)."""
    with _lock:
        _loaded.clear()
        _failed.clear()
        _queries.clear()
