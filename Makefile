# The two commands README.md opens with: `make demo` and `make test`.
# Both create the project's virtual environment (.venv) when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)

.PHONY: demo test test-fast ui validate clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/eval-pipelines demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

ui: $(STAMP)
	$(BIN)/dagster dev -w workspace.yaml

validate: $(STAMP)
	$(BIN)/dagster definitions validate -w workspace.yaml

clean:
	rm -rf .data .dagster/storage .dagster/logs .dagster/history
