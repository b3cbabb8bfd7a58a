#!/usr/bin/env bash
# Session 30, call 5 (one H200): what bf16 would be worth for ResNet-20, measured on PyTorch
# (cbtrain has no bf16 mode): its training step in float32 and under autocast to bfloat16 with
# channels-last, eager and one graph at batch 256, K graphs of 32 and 8 of 256 on their streams.
set -uo pipefail
OUT=${OUT:?}
PY=/opt/torch/.venv/bin/python
export CUDA_DEVICE_MAX_CONNECTIONS=32
mkdir -p $OUT/res
for amp in "" bf16; do
  echo "== ${amp:-fp32}"
  $PY bench/torch_throughput.py --model resnet20 --batch 256 --modes eager,graph,multistream --ks 8 \
    ${amp:+--amp $amp} --out $OUT/res/torch_resnet20_${amp:-fp32}_b256.json 2>&1 | grep -v Warning | tail -3
  $PY bench/torch_throughput.py --model resnet20 --batch 32 --modes multistream --ks 8,16 \
    ${amp:+--amp $amp} --out $OUT/res/torch_resnet20_${amp:-fp32}_b32.json 2>&1 | grep -v Warning | tail -2
done
