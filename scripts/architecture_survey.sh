#!/usr/bin/env bash
# Which well-known architectures cbtrain imports, runs and trains: for every DIR/*.onnx made by
# models/architectures.py (PyTorch) or models/keras_architectures.py (Keras), `cbtrain inspect`
# (are all ops supported), `cbtrain infer` on each device against the framework's output
# (DIR/<file>.output.npy), and `cbtrain bench` (training rounds on synthetic data) on each device. Prints a Markdown table; a cell says why where a step failed.
#
#   bash scripts/architecture_survey.sh DIR CBTRAIN [cpu,cuda]   (PYTHON: python with numpy)
set -uo pipefail
DIR=${1:?usage: architecture_survey.sh DIR CBTRAIN [DEVICES]}
CBT=${2:?usage: architecture_survey.sh DIR CBTRAIN [DEVICES]}
DEVICES=${3:-cpu}
PY=${PYTHON:-python3}
LOG=$(mktemp -d)

# The first line of a failed command's message, cut to fit a table cell.
why() { grep -m1 -iE "error|unsupported|not supported|refus|cannot|must" "$1" | cut -c1-110 | tr '|' '/'; }

header="| file | ops supported |"
rule="|---|---|"
for d in ${DEVICES//,/ }; do
  header+=" $d: max abs diff to the framework | $d: training images/s (b=16) |"
  rule+="---|---|"
done
echo "$header"
echo "$rule"
for m in "$DIR"/*.onnx; do
  f=$(basename "$m" .onnx)
  row="| $f |"
  if "$CBT" inspect "$m" > "$LOG/inspect" 2>&1; then
    row+=" yes |"
  else
    row+=" no: $(grep -m1 -E "unsupported|rror" "$LOG/inspect" | cut -c1-110 | tr '|' '/') |"
  fi
  for d in ${DEVICES//,/ }; do
    if "$CBT" infer "$m" --device "$d" --input "$DIR/$f.input.npy" --output "$LOG/out.npy" > "$LOG/infer" 2>&1; then
      row+=" $("$PY" -c "import numpy as np; a=np.load('$LOG/out.npy'); b=np.load('$DIR/$f.output.npy'); print('%.1e (of %.1f)' % (float(np.abs(a-b).max()), float(np.abs(b).max())) if a.shape == b.shape else 'shape %s, not %s' % (a.shape, b.shape))") |"
    else
      row+=" fails: $(why "$LOG/infer") |"
    fi
    if "$CBT" bench "$m" --device "$d" -b 16 --warmup 2 --steps 5 --json > "$LOG/bench" 2>&1; then
      row+=" $("$PY" -c "import json; print('%.0f' % json.loads(open('$LOG/bench').read().strip().splitlines()[-1])['images_per_sec'])" 2>/dev/null || echo '?') |"
    else
      row+=" fails: $(why "$LOG/bench") |"
    fi
  done
  echo "$row"
done
rm -rf "$LOG"
