#!/usr/bin/env bash
# Session 36, call 4 (one H200): cbt_tests_cuda whole (the scatter reductions' and the fused
# attention's CUDA cases among them), the kernel profile of ViT and ConvNeXt, then the
# well-known architectures' throughput side by side with PyTorch (s35_arch_speed.sh's runs;
# since call 5 with 16 learners and 16 streams too).
#   OUT=... bash s36_call4.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 420 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -20
grep -E "Scatter.*(mul|max|min)|SoftmaxAttention|split_k|channels_last|to_channels|matrix_int64|LayerNorm" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head -30
export PYTHON=/opt/torch/.venv/bin/python CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
bash bench/profile_gpu.sh $OUT/prof vit,convnext fp32 > $OUT/prof.txt 2>&1
for m in vit convnext; do
  for side in cbtrain torch; do
    echo "== $m $side"
    $PYTHON - $OUT/prof/${m}_fp32.$side.json $side <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steps"]
print(f"total {d['us_per_step']:.0f} us/step, {d['launches_per_step']:.0f} launches/step")
if sys.argv[2] == "cbtrain":
    for n, v in sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:12]:
        print(f"{v['us']/s:8.1f} {v['launches']/s:5.1f}  {n[:100]}")
PY
  done
done
rm -rf $OUT/prof/models $OUT/prof/*.ncu.csv; tar czf $OUT/prof.tgz -C $OUT prof && rm -rf $OUT/prof
echo "== throughput from $((SECONDS-T0)) s"
for m in vit convnext mobilenetv2; do
  $PYTHON bench/torch_throughput.py --model $m --batch 32 --modes eager,graph,multistream --ks 8,16 \
    --windows 3 --out $OUT/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 1 8 16; do
    ./build-gpu/tools/cbtrain bench models/architectures/$m.ts17.onnx --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
tar czf $OUT/speed.tgz -C $OUT $(cd $OUT && ls torch_*.json) && rm -f $OUT/torch_*.json
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
