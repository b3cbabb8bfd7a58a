#!/usr/bin/env bash
# The Keras twin check: cbtrain trains the tf2onnx export of models/keras_lenet (NHWC input)
# with the recipe its Keras twin was trained with (models/keras_twin.py: SGD momentum 0.9,
# batch 32, lr 0.01, no weight decay, 3 epochs) and must end within 1 point of the twin's
# test accuracy, recorded in models/keras_lenet/keras_twin.json.
#   scripts/keras_twin_check.sh [CBTRAIN] [DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cbt=${1:-build/tools/cbtrain}
data=${2:-/usr/share/datasets/fashion-mnist}
twin=models/keras_lenet/keras_twin.json
epochs=$(python3 -c "import json; print(json.load(open('$twin'))['epochs'])")
lr=$(python3 -c "import json; print(json.load(open('$twin'))['lr'])")
out=$(mktemp -d)
"$cbt" models/keras_lenet/keras_lenet.op13.onnx --data "$data" --epochs "$epochs" \
  --batch-size 32 --lr "$lr" --momentum 0.9 --weight-decay 0 --log-every 0 \
  --metrics "$out/metrics.jsonl" --output "$out/trained.onnx"
python3 - "$twin" "$out/metrics.jsonl" <<'PY'
import json, sys
twin = json.load(open(sys.argv[1]))["test_accuracy"][-1]
ours = [json.loads(l)["test_accuracy"] for l in open(sys.argv[2])][-1]
print(f"Keras twin {100 * twin:.2f}%, cbtrain {100 * ours:.2f}%, difference {100 * (ours - twin):+.2f} points")
sys.exit(0 if abs(ours - twin) <= 0.01 else 1)
PY
