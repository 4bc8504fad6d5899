# Two set-up commands for a fresh clone: `make index` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: index test smoke bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

index: $(STAMP)
	$(BIN)/ra update

test: $(STAMP) smoke
	$(BIN)/python -m pytest -q -m "not slow"

# A plain `pip install .` (no extras) in a clean venv, then init, update, edit, search,
# context, get, ls and one MCP call through the installed `ra`: a module ra imports but
# pyproject.toml does not declare fails here, not for users.
smoke:
	$(PY) tests/smoke_install.py .venv-smoke

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	$(BIN)/python -m benchmarks $(BENCH)

lint: $(STAMP)
	$(BIN)/ruff check src tests

clean:
	rm -rf artifacts .ra .venv-smoke build *.egg-info src/*.egg-info
