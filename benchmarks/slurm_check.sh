#!/usr/bin/env bash
# Manual check of `ratio mine run --executor slurm` against a single-node Slurm on this machine (Debian's
# slurm-wlm: `apt-get install slurm-wlm`), started here on loopback ports and stopped at the end. Needs root
# (munged --force, slurmd). Mines a 24-paper sample of ../shared/corpus with the local executor and through
# Slurm, then compares rows and statistics (benchmarks/ray_mining.py's digests). Output committed as
# benchmarks/results/slurm-check.log. Usage: bash benchmarks/slurm_check.sh [PYTHON]
set -euo pipefail
PY=${1:-$(command -v python)}
REPO=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d /tmp/slurm-XXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 1; rm -rf "$D"; }
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HOST=$(hostname -s)
mkdir -p "$D/state" "$D/spool" "$D/munge"
cat > "$D/slurm.conf" <<EOF
ClusterName=ratio-check
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$D/slurm.conf
munged --force --socket="$D/munge/munge.sock" --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
    --seed-file="$D/munge/seed" --key-file=/etc/munge/munge.key
PIDS+=("$(cat "$D/munge/munged.pid")")
slurmctld -D -f "$SLURM_CONF" > "$D/ctld.out" 2>&1 & PIDS+=($!)
slurmd -D -f "$SLURM_CONF" > "$D/d.out" 2>&1 & PIDS+=($!)
for _ in $(seq 60); do sinfo -h -o %T 2>/dev/null | grep -qE '^idle' && break; sleep 1; done
echo "== sinfo"; sinfo
SAMPLE=$D/sample; mkdir -p "$SAMPLE"
"$PY" - "$REPO/../shared/corpus" "$SAMPLE" <<'EOF'
import sys, pyarrow as pa, pyarrow.parquet as pq
src, out = sys.argv[1:]
for name in ("neurips_2023_2024_fulltext.parquet", "neurips_2025_fulltext.parquet"):
    t = pa.Table.from_batches([next(pq.ParquetFile(f"{src}/{name}").iter_batches(batch_size=12))])
    pq.write_table(t, f"{out}/{name}", row_group_size=4)
EOF
export PATH=$(dirname "$PY"):$PATH
MINE=("$PY" -m ratio_bench.cli mine run --corpus "$SAMPLE" --quiet --task-mb 0.25 --workers 2)
"${MINE[@]}" --out "$D/local" > /dev/null
echo "== ratio mine run --executor slurm"
"${MINE[@]}" --out "$D/slurm" --executor slurm --executor-option partition=debug \
    --executor-option time=00:20:00 --executor-option venv_path="$(dirname "$(dirname "$PY")")"
for _ in $(seq 300); do [ -z "$(squeue -h)" ] && break; sleep 2; done
echo "== sacct-less job record (squeue empty); completions: $(ls "$D/slurm/logs/completions" | wc -l)"
"$PY" -m ratio_bench.cli mine stats "$D/slurm" | tail -3
"$PY" - "$D/local" "$D/slurm" "$REPO/benchmarks" <<'EOF'
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from ray_mining import TIMINGS, digest
a, b = map(Path, sys.argv[1:3])
sa, sb = ({k: v for k, v in json.loads((p / "stats.json").read_text()).items() if k not in TIMINGS} for p in (a, b))
same = {sub: digest(a, sub) == digest(b, sub) for sub in ("pairs", "distractors")}
print(f"tasks {sb['tasks_done']}/{sb['tasks_planned']}; tuples {sum(sb['tuples'].values())}; "
      f"pairs same: {same['pairs']}; distractors same: {same['distractors']}; stats same: {sa == sb}")
EOF
