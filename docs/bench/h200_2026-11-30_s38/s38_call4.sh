#!/usr/bin/env bash
# Session 38, call 4 (one H200): cbt_tests_cuda whole after Roll (torch.roll's Slices and Concat
# as one op), the warp attention reading its bias up front and taking several rows a pass, and
# the Gemm bias gradient in sum_to's passes; then Swin's and the decoder's kernel profiles (one
# learner, against PyTorch eager) and throughput side by side with PyTorch at batch 32 (8 and 16
# graphs on as many streams against 8 and 16 learners), ResNet-32 among them (issue 5's model).
#   OUT=... bash s38_call4.sh [MODELS]
set -uo pipefail
OUT=${OUT:?}
MODELS=${1:-swin vit rowgpt convnext mlpmixer}
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
grep -E "SoftmaxAttention_warp|Roll" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " | head -12
PY=/opt/torch/.venv/bin/python
export PYTHON=$PY CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
echo "== profiles from $((SECONDS-T0)) s"
bash bench/profile_gpu.sh $OUT/prof swin,rowgpt fp32 2>&1 | grep -v '^ *%' | tail -40
for m in swin rowgpt; do
  for side in cbtrain torch; do
    echo "== $m $side: longest kernels (µs per step, launches per step)"
    $PY - $OUT/prof/${m}_fp32.$side.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steps"]
rows = sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:30]
print(f"total {d['us_per_step']:.0f} us/step, {d['launches_per_step']:.0f} launches/step")
for n, v in rows:
    print(f"{v['us']/s:8.1f} {v['launches']/s:5.1f}  {n[:150]}")
PYEOF
  done
done > $OUT/longest.txt 2>&1
grep -A1 '^==' $OUT/longest.txt
cp $OUT/prof/profile_*_fp32.md $OUT/ 2>/dev/null
rm -rf $OUT/prof
echo "== throughput from $((SECONDS-T0)) s"
mkdir -p $OUT/tp
for m in $MODELS; do
  if [ $((SECONDS-T0)) -gt 540 ]; then echo "throughput stopped before $m (time)"; break; fi
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
echo "== resnet32 from $((SECONDS-T0)) s"
$PY bench/models.py --out $OUT/m --models resnet32 > /dev/null 2>&1
$PY bench/torch_throughput.py --model resnet32 --batch 32 --modes multistream --ks 16 --windows 3 \
  --out $OUT/tp/torch_resnet32.json 2>&1 | grep -E "img/s|FAILED"
timeout 90 ./build-gpu/tools/cbtrain bench $OUT/m/resnet32.onnx --device cuda -b 32 -k 16 --warmup 10 --steps 30 2>&1 | tail -1
rm -rf $OUT/m
tar czf $OUT/results.tgz -C $OUT tp && rm -rf $OUT/tp
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
