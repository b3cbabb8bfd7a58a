#!/usr/bin/env bash
# Session 41, call 4 (one H200): two cuts of the start. (1) A learner builds one cuDNN execution
# plan per convolution geometry and op, shared by its nodes (conv.cu's EnginePlanCache; a plan
# keeps the variant packs of its last 32 pointer sets), instead of one per node. (2) A bfloat16
# search leaves the legacy backup (for pointers off the engine's alignment) to be chosen when a
# pointer needs it (kBackupLater), instead of asking cuDNN's heuristics in every search.
# cbt_tests_cuda whole (new: ConvChannelsLast.AnImageOffTheEnginesAlignmentRunsTheLegacyBackup);
# the first epoch's start (CBT_LOG_START=1); ResNet-20 to 91% side by side, seeds 1-6 for cbtrain
# bf16 and 1-3 for PyTorch eager b=256 (as call 1).
#   OUT=... bash s41_call4.sh
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
grep -E "^\[       OK \] ConvChannelsLast" $OUT/cuda_tests.txt
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res/logs
for r in 1 2; do
  CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed $r \
    --data $CBT_DATA --progress off --precision bf16 --learners auto > $OUT/res/start_bf16_$r.log 2>&1
  echo "== start, run $r"; grep -E "^epoch [0-9]+:|^start:" $OUT/res/start_bf16_$r.log | sed 's/, first runs of/\n  first runs of/g' | grep -E "epoch|searches |legacy|plans|first runs [0-9]|captures"
done
echo "== ResNet-20 to 91% from $((SECONDS-T0)) s"
for s in 1 2 3 4 5 6; do
  $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
    --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
    --out $OUT/res/tta_cbtrain_bf16_resnet20_b32_kauto_s$s.json --logs $OUT/res/logs/bf16 -- --precision bf16 > /dev/null 2>&1
  if [ $s -le 3 ]; then
    $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
      --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 --warm-libraries off \
      --out $OUT/res/tta_torch_resnet20_b256_s$s.json > $OUT/res/logs/torch_resnet20_b256_s$s.log 2>&1 ||
      tail -2 $OUT/res/logs/torch_resnet20_b256_s$s.log
  fi
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
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
