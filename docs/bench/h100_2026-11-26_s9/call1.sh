#!/usr/bin/env bash
# Session 9 call 1: HEAD on a GPU (CUDA suite: 7cc2015's SceGrad ran on no GPU yet), the fixed
# bench/profile_gpu.sh on LeNet-5, and a LeNet-5 baseline at K=16 for b=8/16/32.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi > $R/nvidia-smi.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
T1=$SECONDS
timeout 240 ./build-gpu/tests/cbt_tests_cuda > $R/suite.txt 2>&1; echo "suite rc $? after $((SECONDS-T1)) s"
tail -4 $R/suite.txt; grep -E "FAILED|SKIPPED" $R/suite.txt | head
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
for b in 8 16 32; do for rep in 1 2; do
  $CBT bench $R/lenet5.onnx --device cuda -b $b -k 16 --json 2>/dev/null | tail -1 >> $R/base.jsonl
done; done
$PY -c "
import json
for l in open('$R/base.jsonl'):
  d=json.loads(l); print(d['batch'], d['learners'], round(d['images_per_sec']), d['enqueue_fraction'])"
T1=$SECONDS
PYTHON=$PY timeout 200 bash bench/profile_gpu.sh $R/prof lenet5 fp32 > $R/prof.txt 2>&1
echo "profile rc $? after $((SECONDS-T1)) s"; head -30 $R/prof.txt
rm -f $R/lenet5.onnx; rm -rf $R/prof/models
tar czf $OUT/r.tgz -C $OUT r
