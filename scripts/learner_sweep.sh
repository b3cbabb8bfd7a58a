#!/usr/bin/env bash
# Throughput of cbtrain on the GPU per learners per GPU (K = 1, 2, 4, 8, 16 and auto), with
# and without CUDA graphs, batch 32 per learner, synthetic data; one JSON line per run.
#
#   bash scripts/learner_sweep.sh OUT_DIR [cbtrain binary]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: learner_sweep.sh OUT_DIR [cbtrain]}
CBT=${2:-./build-gpu/tools/cbtrain}
mkdir -p "$OUT"
for model in lenet5/lenet5.ts17.onnx resnet20/resnet20.ts17.onnx; do
  for graphs in on off; do
    for k in 1 2 4 8 16 auto; do
      "$CBT" bench "models/$model" --device cuda --batch-size 32 --learners $k \
        --cuda-graphs $graphs --warmup 10 --steps 40 --json 2>&1 \
        | grep '^{' | sed "s/}\$/, \"cuda_graphs\": \"$graphs\"}/" >> "$OUT/learner_sweep.jsonl"
    done
  done
done
python3 - "$OUT/learner_sweep.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | CUDA graphs | K | images/s | MiB per learner |")
print("|---|---|---|---|---|")
for r in rows:
    k = f"auto → {r['learners']}" if r["learners_flag"] == "auto" else r["learners"]
    print(f"| {r['model'].split('/')[-1]} | {r['cuda_graphs']} | {k} | {r['images_per_sec']:.0f} | {r['peak_bytes_per_learner']/2**20:.1f} |")
for r in rows:
    if r["learners_flag"] == "auto":
        print("autotune log:", r["autotune_log"].replace("|", "\n  "))
PY
