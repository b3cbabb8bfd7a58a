#!/usr/bin/env bash
# The main job on the bundled default: LeNet-5 exported from PyTorch, trained on Debian's
# Fashion-MNIST on the CPU for 2 epochs, written to lenet5.trained.onnx and checked with
# onnxruntime on the test set.
set -euo pipefail
cd "$(dirname "$0")/.."
./build/tools/cbtrain models/lenet5/lenet5.ts17.onnx --epochs 2 --batch-size 32 --lr 0.02 --lr-schedule cosine \
  --output lenet5.trained.onnx --metrics lenet5.metrics.jsonl "$@"
.venv/bin/python scripts/eval_onnx.py lenet5.trained.onnx
