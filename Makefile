# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench install third-party clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

third-party:
	PYTHON=$(PYTHON) bash scripts/third-party.sh

demo: $(STAMP)
	$(BIN)/python examples/toolkit_demo.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy src

test: $(STAMP) third-party lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/server_overhead.py

clean:
	rm -rf $(VENV) .third-party .pytest_cache .mypy_cache .ruff_cache .hypothesis
