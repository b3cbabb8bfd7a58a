#!/usr/bin/env bash
# Session 41, call 1 (one H200): BatchNorm's channels-last bfloat16 kernels in one launch each
# (thread-block clusters, ops/cuda/batch_norm_nhwc.cu) with up to 8 learners a GPU.
# cbt_tests_cuda whole; the bf16 step's throughput with the one launch (default) and without
# (CBT_BN_ONE_LAUNCH=off), the same binary; the one-learner kernel profile; then ResNet-20 to 91%
# side by side as in s40_call6.sh (the model as shipped, seeds 1-3, a 4-epoch cosine, lr 0.05,
# cbtrain bf16 with the tuner's learners against PyTorch eager b=256 float32, no warm-up).
#   OUT=... bash s41_call1.sh
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
bash scripts/unpack_carried_data.sh $CBT_DATA
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt > $OUT/cuda_tests_summary.txt
head -8 $OUT/cuda_tests_summary.txt
grep -B3 -A8 "Failure" $OUT/cuda_tests.txt | head -40
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res/logs
$PY bench/models.py --out $OUT/models --models resnet32 > $OUT/export.log 2>&1 || tail -3 $OUT/export.log
echo "== throughput (images/s), bf16, batch 32 a learner"
for f in $M $OUT/models/resnet32.onnx; do
  for k in 1 4 8 16; do
    for how in default off; do
      env $([ $how = off ] && echo CBT_BN_ONE_LAUNCH=off) timeout 90 $C bench $f --device cuda --batch-size 32 \
        --learners $k --precision bf16 --warmup 20 --steps 100 --json > $OUT/res/bench_$(basename $f .onnx)_k${k}_$how.json 2>&1
      echo "$(basename $f) k=$k $how: $(grep -o '"images_per_sec": *[0-9.]*' $OUT/res/bench_$(basename $f .onnx)_k${k}_$how.json)"
    done
  done
done
echo "== ResNet-20 bf16 kernel profile (one learner) from $((SECONDS-T0)) s"
for how in default off; do
  env $([ $how = off ] && echo CBT_BN_ONE_LAUNCH=off) timeout 120 ncu --csv --print-units base --metrics gpu__time_duration.sum \
    --clock-control none --cache-control none --profile-from-start off --launch-count 1500 $C bench $M --device cuda \
    --batch-size 32 --learners 1 --cuda-graphs off --precision bf16 --warmup 10 --steps 100 \
    > $OUT/res/resnet20_bf16_$how.ncu.csv 2> $OUT/res/resnet20_bf16_$how.ncu.err
  $PY bench/kernel_profile.py ncu $OUT/res/resnet20_bf16_$how.ncu.csv --steps-marker sce_rows_kernel --model resnet20 \
    --batch 32 --precision bf16 --out $OUT/res/resnet20_bf16_$how.cbtrain.json > /dev/null 2>&1
  $PY - $OUT/res/resnet20_bf16_$how.cbtrain.json $how <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
steps = d["steps"]
print(f"{sys.argv[2]}: step kernel time {d['us_per_step']:.1f} us, {d['launches_per_step']:.0f} launches")
for g, v in sorted(d["groups"].items(), key=lambda kv: -kv[1]["us_per_step"]):
    print(f"  {g:16s} {v['us_per_step']:8.1f} us ({v['launches_per_step']:.0f})")
for name, v in sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:8]:
    print(f"{v['us'] / steps:8.1f} us {v['launches'] / steps:5.1f}x  {name[:100]}")
PYEOF
done
echo "== ResNet-20 to 91% from $((SECONDS-T0)) s"
CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 \
  --data $CBT_DATA --progress off --precision bf16 --learners auto > $OUT/res/start_bf16.log 2>&1
grep -E "^autotune: [0-9]+ learner|^epoch [0-9]+:" $OUT/res/start_bf16.log
for s in 1 2 3; do
  $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
    --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
    --out $OUT/res/tta_cbtrain_bf16_resnet20_b32_kauto_s$s.json --logs $OUT/res/logs/bf16 -- --precision bf16 > /dev/null 2>&1
  $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
    --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 --warm-libraries off \
    --out $OUT/res/tta_torch_resnet20_b256_s$s.json > $OUT/res/logs/torch_resnet20_b256_s$s.log 2>&1 ||
    tail -2 $OUT/res/logs/torch_resnet20_b256_s$s.log
  echo "seed $s after $((SECONDS-T0)) s"
done
$PY - $OUT/res <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tta_*.json"))):
    d = json.load(open(f))
    acc = ", ".join(f"{a:.4f}" for a in d.get("accuracy", []))
    el = ", ".join(f"{e:.2f}" for e in d.get("elapsed_s", []))
    print(f"{os.path.basename(f)[:-5]:44s} reached {d.get('reached')} epoch {d.get('epochs_to_target')} "
          f"at {d.get('seconds_to_target')} s; learners {d.get('learners_chosen', '-')}; acc [{acc}]; clock [{el}]")
PYEOF
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res $OUT/models
