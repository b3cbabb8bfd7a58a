#!/usr/bin/env bash
# Session 36, call 6 (one H200): cbt_tests_cuda whole (the masked attention's CUDA cases among
# them), then throughput side by side with PyTorch at batch 32: ViT, ConvNeXt and the decoder
# (rowgpt: causal mask, now fused) at K = 8 and 16, and ResNet-32 at 16 (issue 5's model: that
# the session's kernels cost it nothing).
#   OUT=... bash s36_call6.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -12
grep -E "SoftmaxAttention|bias_1000" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head
PY=/opt/torch/.venv/bin/python
echo "== throughput from $((SECONDS-T0)) s"
for m in vit convnext rowgpt; do
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
    ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
$PY bench/models.py --out $OUT/m --models resnet32 > /dev/null 2>&1
$PY bench/torch_throughput.py --model resnet32 --batch 32 --modes multistream --ks 16 --windows 3 \
  --out $OUT/torch_resnet32.json 2>&1 | grep -E "img/s|FAILED"
./build-gpu/tools/cbtrain bench $OUT/m/resnet32.onnx --device cuda -b 32 -k 16 --warmup 20 --steps 100 2>&1 | tail -1
rm -rf $OUT/m
tar czf $OUT/speed.tgz -C $OUT $(cd $OUT && ls torch_*.json) && rm -f $OUT/torch_*.json
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
