# The two set-up commands of the README. Both create .venv when missing and install
# torch==2.13.0 (the CPU build) before the project, so an open torch range never
# pulls a multi-GB CUDA build.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DB ?= sqlite:///transfuzz.db
BUDGET ?= 3m

.PHONY: setup run test

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'

run: setup
	$(BIN)/transfuzz --db $(DB) run examples/sample_issues.json --budget $(BUDGET)

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider
