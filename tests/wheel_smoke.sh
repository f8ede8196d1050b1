#!/usr/bin/env bash
# The package as a user gets it: build the wheel, install it with the eval extra into a new virtual environment
# in a temporary folder outside the checkout (no PYTHONPATH, no editable install, Hub offline), and run what a
# researcher runs on their own corpus: version, lexicon, build from the shipped dev preset, check, BM25 scores,
# and mteb through its stock loader agreeing with `ratio score` on a tiny model. pip's cache is reused; where
# /opt/wheels holds torch's CPU wheel (see the Makefile), that wheel is installed instead of a CUDA build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
CORPUS="$(cd "${RATIO_SHARED_CORPUS:-$ROOT/../shared/corpus}" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ratio-wheel.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS
step() { echo "== [$((SECONDS - T0))s] $*"; }

step "build the wheel"
"$PYTHON" -m pip wheel -q --no-deps "$ROOT" -w "$WORK/dist"
WHEEL="$(ls "$WORK"/dist/ratio_bench-*.whl)"
"$PYTHON" -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); n = z.namelist(); \
print(f'{sys.argv[1].rsplit(\"/\", 1)[1]}: {len(n)} files, {sum(i.file_size for i in z.infolist()) // 1024} KiB \
unpacked, {sum(\"/_data/\" in f for f in n)} data files')" "$WHEEL"

step "install it with [eval] into a new environment in $WORK"
"$PYTHON" -m venv "$WORK/venv"
TORCH="$(ls /opt/wheels/torch-*+cpu-*.whl 2>/dev/null | head -n 1 || true)"
# (this machine's pip configuration names index folders that do not exist for every package: drop those warnings)
{ "$WORK/venv/bin/python" -m pip install -q "$WHEEL[eval]" ${TORCH:+"$TORCH"} 2>&1; } | { grep -v "is ignored: it is neither" || true; }

cd "$WORK"
export PATH="$WORK/venv/bin:$PATH" HF_HOME="$WORK/hf" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 RATIO_CACHE="$WORK/cache"
unset PYTHONPATH RATIO_DEBUG
cp "$ROOT/tests/wheel_smoke.py" "$WORK/smoke.py"
step "ratio --version; python -m ratio_bench --version"
ratio --version
python -m ratio_bench --version
step "ratio lexicon check"
ratio lexicon check
step "ratio build --config dev on a sample of $CORPUS"
python smoke.py sample "$CORPUS" corpus
ratio build --config dev --corpus corpus --out rel --quiet
step "ratio check"
ratio check rel
step "ratio score --model bm25"
ratio score --model bm25 --dataset rel --split test
step "ratio score and mteb.evaluate (stock loader) on a tiny model"
python smoke.py tiny rel tiny-model
ratio score --model ./tiny-model --dataset rel --split test --relations specify --out scores/tiny.json
python smoke.py mteb rel tiny-model scores/tiny.json
step "done"
