# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench install third-party redmine-up redmine-down toolkit-demo clean browser

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

# Real third-party MCP servers (PyPI and npm) the client, compat and check tests talk to.
third-party:
	PYTHON=$(PYTHON) bash scripts/third-party.sh

# A real Redmine (Debian packages) for the Redmine integration tests; needs root or sudo.
# Outside CI a machine that cannot install it still runs every other test (those skip, saying why);
# in CI the integration tests fail when it is missing.
redmine-up:
	bash scripts/redmine-up.sh >/dev/null || { test -z "$$CI" && echo "make: Redmine could not be started; its integration tests will be skipped" >&2; }

redmine-down:
	bash scripts/redmine-down.sh

# Debian's chromium (and CJK fonts) and axe-core for the archive web app's browser tests; as for
# Redmine, a machine that cannot install them skips those tests outside CI, and CI fails.
browser:
	bash scripts/browser-up.sh || { test -z "$$CI" && echo "make: chromium could not be installed; the browser tests will be skipped" >&2; }

# The main job: import the shipped sample archive, embed it offline, search it.
demo: $(STAMP)
	$(BIN)/python scripts/archive_demo.py

toolkit-demo: $(STAMP)
	$(BIN)/python examples/toolkit_demo.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples scripts
	$(BIN)/ruff format --check src tests bench examples scripts
	$(BIN)/mypy src
	$(BIN)/lint-imports --no-cache

# Every test, on all cores (pytest-xdist); `-m "not slow"` picks the quick ones while you work.
test: $(STAMP) third-party redmine-up browser lint
	$(BIN)/pytest -n auto

bench: $(STAMP) third-party
	$(BIN)/python bench/server_overhead.py
	$(BIN)/python bench/client_overhead.py
	$(BIN)/python bench/archive.py --posts 100000

clean:
	rm -rf $(VENV) .third-party .redmine .pytest_cache .mypy_cache .ruff_cache .hypothesis
