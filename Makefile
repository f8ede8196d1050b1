# Every target creates the project environment in .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CORPUS ?= ../shared/corpus
OUT ?= build

# This machine image keeps torch's CPU wheel in /opt/wheels; use it when present (an unpinned or PyPI torch is a
# multi-GB CUDA build). Elsewhere nothing changes.
WHEELS := $(wildcard /opt/wheels)
ifneq ($(WHEELS),)
export PIP_FIND_LINKS ?= $(WHEELS)
endif

.PHONY: install demo test test-all lint bench clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# The main job on the default corpus: the corpus report, then the dev release in ./ratio
# (mining is resumable and reused by later builds; see dataset_scripts/dev.yaml).
demo: install
	$(VENV)/bin/ratio corpus stats $(CORPUS) --rejects $(OUT)/corpus_rejects.jsonl --json $(OUT)/corpus_report.json
	$(VENV)/bin/ratio build --config dataset_scripts/dev.yaml --corpus $(CORPUS) --out ratio

test: install
	$(PY) -m pytest -q -m "not slow"

test-all: install
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: install
	$(PY) benchmarks/segmentation.py
	$(PY) benchmarks/corpus_throughput.py --corpus $(CORPUS)
	$(PY) benchmarks/mining.py --corpus $(CORPUS)
	$(PY) benchmarks/assembly.py
	$(PY) benchmarks/search.py
	$(PY) benchmarks/scoring.py --dataset ratio --split test

clean:
	rm -rf $(OUT)
