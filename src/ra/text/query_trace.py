"""A query's vector through a TorchScript trace of a sentence-transformers model.

An agent's query is one short text, embedded while its words are scored. Run eagerly,
MiniLM spends about a fifth of its 7.3 ms in Python between torch's operations; traced
and frozen (``torch.jit.trace``, ``torch.jit.freeze``), the same model gives the same
vector in 5.8 ms (one thread, idle machine). Tracing takes about 0.15 s, once, on the
thread that loads the model.

Only what the trace reproduces is traced: a model that is a transformer, mean pooling
and an optional normalisation (what ra's default and most sentence encoders are), one
text at a time (a trace records the branches its example took; one text has no
padding, so every query takes the same ones). The trace is checked against the eager
model on texts of different lengths when it is made; when it is not the same vector, or
anything fails, queries are embedded eagerly, as before. Documents are always embedded
by ``encode`` in batches.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

#: Texts of different lengths the trace must reproduce, eager against traced.
PROBES = ("configure the linker",
          "C2065 undeclared identifier: how do I declare a variable before it is used in "
          "a template function, and why does the compiler say so")
TOLERANCE = 1e-5  # largest difference allowed per dimension (unit vectors)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def traced_query(model, torch) -> Callable[[str], list[float]] | None:
    """A function giving the unit vector of one text, as ``model`` does eagerly, through a
    trace of its transformer; None when the model is not of the traced shape or the
    trace does not give the eager model's vectors."""
    modules = list(model)
    if not _traceable(modules):
        return None
    prepare = getattr(model, "preprocess", None) or model.tokenize
    transformer = modules[0].auto_model
    try:
        features = prepare([PROBES[0]])
        names = [n for n in INPUTS if n in features]
        with warnings.catch_warnings(), _quiet("transformers"), torch.no_grad():
            warnings.simplefilter("ignore")
            graph = torch.jit.freeze(torch.jit.trace(
                transformer.eval(), example_kwarg_inputs={n: features[n] for n in names},
                strict=False, check_trace=False))
    except Exception:  # any model torch cannot trace: embed eagerly
        return None

    def embed(text: str) -> list[float]:
        with torch.inference_mode():
            f = prepare([text])
            out = graph(**{n: f[n] for n in names})
            tokens = out["last_hidden_state"] if isinstance(out, dict) else out[0]
            mask = f["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            v = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(v, dim=1)[0].tolist()

    try:
        for text in PROBES:
            if _distance(embed(text), _eager(model, torch, prepare, text)) > TOLERANCE:
                return None
    except Exception:
        return None
    return embed


def _traceable(modules: list) -> bool:
    """A transformer, mean pooling over tokens, and at most a normalisation."""
    names = [type(m).__name__ for m in modules]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return False
    if not hasattr(modules[0], "auto_model"):
        return False
    config = modules[1].get_config_dict()
    if "pooling_mode" in config:  # sentence-transformers 6
        return config["pooling_mode"] == "mean"
    modes = {k for k, v in config.items() if k.startswith("pooling_mode_") and v is True}
    return modes == {"pooling_mode_mean_tokens"}


def _eager(model, torch, prepare, text: str) -> list[float]:
    """The vector ``SentenceTransformersEmbedder`` gives without a trace."""
    with torch.inference_mode():
        out = model(prepare([text]))["sentence_embedding"]
        return torch.nn.functional.normalize(out, dim=1)[0].tolist()


def _distance(a: list[float], b: list[float]) -> float:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


class _quiet:
    """Raise a library's logger to ERROR for a while (transformers logs notes about
    its configuration while a model is traced)."""

    def __init__(self, name: str) -> None:
        self.logger = logging.getLogger(name)

    def __enter__(self) -> None:
        self.level = self.logger.level
        self.logger.setLevel(logging.ERROR)

    def __exit__(self, *exc) -> None:
        self.logger.setLevel(self.level)
