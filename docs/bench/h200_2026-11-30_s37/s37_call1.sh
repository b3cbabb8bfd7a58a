#!/usr/bin/env bash
# Session 37, call 1 (one H200): cbt_tests_cuda whole at the thirty-sixth session's last commit
# (its group_reduce swap had not run on a GPU), the decoder's kernel profile (rowgpt, one
# learner, against PyTorch eager), then a survey: every architecture of models/architectures.py
# not measured before, batch 32, 16 graphs on 16 streams against 16 learners (time-guarded: what
# does not fit is said).
#   OUT=... bash s37_call1.sh
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
PY=/opt/torch/.venv/bin/python
export PYTHON=$PY CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
echo "== profile rowgpt from $((SECONDS-T0)) s"
bash bench/profile_gpu.sh $OUT/prof rowgpt fp32 2>&1 | tail -30
for side in cbtrain torch; do
  echo "== rowgpt $side: longest kernels (us per step, launches per step)"
  $PY - $OUT/prof/rowgpt_fp32.$side.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steps"]
rows = sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:30]
print(f"total {d['us_per_step']:.0f} us/step, {d['launches_per_step']:.0f} launches/step")
for n, v in rows:
    print(f"{v['us']/s:8.1f} {v['launches']/s:5.1f}  {n[:150]}")
PYEOF
done
cp $OUT/prof/profile_rowgpt_fp32.md $OUT/ 2>/dev/null
rm -rf $OUT/prof
echo "== survey from $((SECONDS-T0)) s"
$PY bench/models.py --out $OUT/m --models vgg > /dev/null 2>&1
mkdir -p $OUT/tp
for m in mobilenetv3 efficientnet densenet shufflenet squeezenet googlenet seresnext mlpmixer swin poolformer vgg; do
  if [ $((SECONDS-T0)) -gt 530 ]; then echo "survey stopped before $m (time)"; break; fi
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=$OUT/m/$m.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED|Error" | tail -2
  timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k 16 --warmup 10 --steps 30 2>&1 | tail -1
done
rm -rf $OUT/m
tar czf $OUT/speed.tgz -C $OUT tp && rm -rf $OUT/tp
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
