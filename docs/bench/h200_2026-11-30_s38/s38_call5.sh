#!/usr/bin/env bash
# Session 38, call 5 (one H200): cbt_tests_cuda whole at the session's last CUDA code (the warp
# attention for 512 matrices or more), then every architecture of models/architectures.py side by
# side with PyTorch at batch 32: 8 and 16 CUDA graphs on as many streams against 8 and 16
# learners (time-guarded: what does not fit is said).
#   OUT=... bash s38_call5.sh [MODELS]
set -uo pipefail
OUT=${OUT:?}
MODELS=${1:-swin rowgpt vit convnext mlpmixer mobilenetv2 mobilenetv3 efficientnet shufflenet googlenet squeezenet densenet seresnext poolformer vgg}
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
grep -E "SoftmaxAttention" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head -12
PY=/opt/torch/.venv/bin/python
$PY bench/models.py --out $OUT/m --models vgg > /dev/null 2>&1
mkdir -p $OUT/tp
echo "== throughput from $((SECONDS-T0)) s"
for m in $MODELS; do
  if [ $((SECONDS-T0)) -gt 545 ]; then echo "throughput stopped before $m (time)"; break; fi
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  [ -e $f ] || f=$OUT/m/$m.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
rm -rf $OUT/m
tar czf $OUT/results.tgz -C $OUT tp && rm -rf $OUT/tp
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
