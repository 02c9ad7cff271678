# The two set-up commands of the README. Both create .venv when missing and install
# torch==2.13.0 (the CPU build) before the project, so an open torch range never
# pulls a multi-GB CUDA build.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DB ?= sqlite:///transfuzz.db
BUDGET ?= 3m

.PHONY: setup run test bwrap

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(BIN)/python bwrap
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'

# Workers run inside bubblewrap (docs/trust_boundary.md): install it when we are root with apt-get,
# otherwise say how (the CLI refuses to fuzz without it unless given --no-sandbox).
bwrap:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "setup: installing bubblewrap (the worker sandbox)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "setup: bubblewrap (bwrap) is missing; workers cannot be sandboxed without it." >&2; \
	    echo "       install it: sudo apt-get install bubblewrap  (Fedora: sudo dnf install bubblewrap)" >&2; \
	  fi; }

run: setup
	$(BIN)/transfuzz --db $(DB) run examples/sample_issues.json --budget $(BUDGET)

# Two pytest processes by default (TEST_WORKERS=0 runs in this process); tests sharing a scarce resource (a local
# Ray cluster) carry the same xdist_group and run on one worker.
TEST_WORKERS ?= 2
test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup
