#!/usr/bin/env bash
# Session 9 call 3: what each LeNet-5 kernel costs the GPU, not only how long it takes:
# Nsight Compute's duration, SM-active cycles, warp-cycles, grid and block of every kernel
# of 5 steps, cbtrain (K=1, graphs off) and PyTorch eager (same batch 32).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
M=gpu__time_duration.sum,sm__cycles_active.sum,sm__warps_active.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__cycles_elapsed.avg
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
T1=$SECONDS
for c in 8 1; do
CBT_CONV_CONCURRENCY=$c timeout 120 ncu --csv --print-units base --metrics $M --clock-control none --cache-control none \
  --launch-skip 1500 --launch-count 130 $CBT bench $R/lenet5.onnx --device cuda -b 32 -k 1 --cuda-graphs off \
  --warmup 10 --steps 100 > $R/cbt_ncu_c$c.csv 2> $R/cbt_ncu_c$c.err; echo "cbt ncu c$c rc $? after $((SECONDS-T1)) s"
done
timeout 120 ncu --csv --print-units base --metrics $M --clock-control none --cache-control none --profile-from-start off \
  $PY .device/session/s9_torch_ncu.py > $R/torch_ncu.csv 2> $R/torch_ncu.err; echo "torch ncu rc $? after $((SECONDS-T1)) s"
wc -l $R/*.csv
rm -f $R/lenet5.onnx
tar czf $OUT/r.tgz -C $OUT r
