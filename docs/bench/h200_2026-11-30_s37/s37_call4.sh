#!/usr/bin/env bash
# Session 37, call 4 (one H200): cbt_tests_cuda whole (the depthwise kernels, SiLU and the 32-bit
# max-pool kernels among its cases), the convolution choices of the depthwise models and of
# GoogLeNet at 16 learners (CBT_LOG_CONV_ALGOS=1: cuDNN's candidates, our kernels' times, the
# choice), then throughput side by side with PyTorch at batch 32 (8 and 16 graphs on as many
# streams against 8 and 16 learners) for the models the session's changes touch.
#   OUT=... bash s37_call4.sh [MODELS]
set -uo pipefail
OUT=${OUT:?}
MODELS=${1:-mobilenetv2 mobilenetv3 efficientnet shufflenet convnext googlenet squeezenet}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -14
grep -E "Depthwise|depthwise|Silu|DirectKernelsMatch" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head -14
PY=/opt/torch/.venv/bin/python
mkdir -p $OUT/tp $OUT/algos
echo "== conv choices from $((SECONDS-T0)) s"
for m in efficientnet mobilenetv2 convnext googlenet; do
  CBT_LOG_CONV_ALGOS=1 timeout 90 ./build-gpu/tools/cbtrain bench models/architectures/$m.ts17.onnx --device cuda \
    -b 32 -k 16 --warmup 5 --steps 10 > $OUT/algos/$m.txt 2>&1
  echo "$m: $(grep -c 'conv algos' $OUT/algos/$m.txt) choices, $(grep -ci 'depthwise' $OUT/algos/$m.txt) depthwise lines; $(tail -1 $OUT/algos/$m.txt)"
done
echo "== throughput from $((SECONDS-T0)) s"
for m in $MODELS; do
  if [ $((SECONDS-T0)) -gt 540 ]; then echo "throughput stopped before $m (time)"; break; fi
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
tar czf $OUT/results.tgz -C $OUT tp algos && rm -rf $OUT/tp $OUT/algos
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
