#!/usr/bin/env bash
# Session 39, call 3 (one H200): --precision bf16 after call 2 (the 1-channel stem left in float32;
# the training tests on a task with something to learn): cbt_tests_cuda whole; ResNet-20's
# throughput in bf16; then ResNet-20 to 91% and LeNet-5 to 90% as the driver runs them (its
# export and cbt_tta stages, CBT_PRECISION=bf16, seeds 1-3, a 4-epoch cosine), beside cbtrain
# float32 and PyTorch eager b=256 (the better PyTorch in every earlier run) on the same GPU.
#   OUT=... bash s39_call3.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
export CBT_DATA=$PWD/.device/data CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt > $OUT/cuda_tests_summary.txt
head -8 $OUT/cuda_tests_summary.txt
grep -E "^\[       OK \] (Bf16|ConvChannelsLast|Bf16Kernels)" $OUT/cuda_tests.txt
grep -B3 -A8 "Failure" $OUT/cuda_tests.txt | head -40
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
mkdir -p $OUT/res
for k in 8 16; do
  timeout 90 $C bench models/resnet20/resnet20.ts17.onnx --device cuda --batch-size 32 --learners $k --precision bf16 \
    --warmup 20 --steps 100 --json > $OUT/res/cbt_resnet20_bf16_k$k.json 2> $OUT/res/cbt_resnet20_bf16_k$k.err
  $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"cbtrain resnet20 bf16 k=$k: {j['images_per_sec']:.0f} img/s\")" \
    $OUT/res/cbt_resnet20_bf16_k$k.json 2>/dev/null || tail -3 $OUT/res/cbt_resnet20_bf16_k$k.err
done
echo "== driver stages export,cbt_tta with CBT_PRECISION=bf16 from $((SECONDS-T0)) s"
CBT_PRECISION=bf16 CBTRAIN=$C PYTHON=$PY bash bench/run_gpu.sh $OUT/tta full export,cbt_tta > $OUT/tta_driver.txt 2>&1
echo "driver rc $? after $((SECONDS-T0)) s"; grep -E "rc=" $OUT/tta_driver.txt
NV=$V
for s in 1 2 3; do
  LD_LIBRARY_PATH=$NV/cudnn/lib:$NV/nccl/lib:$CBT_LIB_DIR $PY bench/cbtrain_runs.py tta --cbtrain $C \
    --model $OUT/tta/models/resnet20.onnx --name resnet20 --batch 32 --learners auto --epochs 4 --lr 0.05 \
    --schedule cosine --target 0.91 --seed $s --data $CBT_DATA --out $OUT/tta/results/tta_cbtrain_fp32_resnet20_b32_kauto_s$s.json \
    --logs $OUT/tta/logs/cbtrain_fp32 -- --precision fp32 > /dev/null 2>&1
  $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
    --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $OUT/tta/models/resnet20.onnx --precision fp32 \
    --out $OUT/tta/results/tta_torch_resnet20_b256_s$s.json > $OUT/tta/logs/torch_resnet20_b256_s$s.log 2>&1
done
echo "== time to accuracy after $((SECONDS-T0)) s"
$PY - $OUT/tta/results <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tta_*.json"))):
    d = json.load(open(f))
    acc = ", ".join(f"{a:.4f}" for a in d.get("accuracy", []))
    el = ", ".join(f"{e:.2f}" for e in d.get("elapsed_s", []))
    print(f"{os.path.basename(f)[:-5]:45s} reached {d.get('reached')} epoch {d.get('epochs_to_target')} "
          f"at {d.get('seconds_to_target')} s; learners {d.get('learners_chosen', '-')}; acc [{acc}]; clock [{el}]")
PYEOF
tar czf $OUT/results.tgz -C $OUT res tta/results tta/logs 2>/dev/null && rm -rf $OUT/res $OUT/tta/logs $OUT/tta/models
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
