#!/usr/bin/env bash
# Session 13 call 2: where the convolution search's seconds go (CBT_LOG_CONV_ALGOS=1 with the
# search's milliseconds per op), ResNet-20 and LeNet-5 at batch 32 with 16 learners.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
git rev-parse --short HEAD > $R/commit.txt 2>/dev/null; cp .device/session/commit.txt $R/
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
for m in resnet20 lenet5; do
  /usr/bin/time -f "$m wall %e s" env CBT_LOG_CONV_ALGOS=1 ./build-gpu/tools/cbtrain bench models/$m/$m.ts17.onnx --device cuda \
    --batch-size 32 --learners 16 --steps 20 --warmup 5 > $R/$m.out 2> $R/$m.err
  tail -1 $R/$m.err
  grep -o "searched in [0-9.]* ms" $R/$m.err | awk -v m=$m '{s+=$3; n++} END {print m, n, "searches,", s, "ms in all"}'
  grep "conv direct" $R/$m.err | sed 's/.*: \(forward\|backward-data\|backward-filter\)/\1/' | awk '{print $1, $2, $NF, $(NF-2)}' | sort | uniq -c | head -40
  grep "conv engines" $R/$m.err | grep -o "^cbtrain conv engines: [a-z-]* x[0-9]* image=([0-9,]*)\|searched in [0-9.]* ms" | paste - - | head -40
done
tar czf $OUT/r.tgz -C $OUT r
