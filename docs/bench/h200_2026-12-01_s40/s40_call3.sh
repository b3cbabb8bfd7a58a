#!/usr/bin/env bash
# Session 40, call 3 (one H200): cbt_tests_cuda whole; the first epoch's set-up with cuDNN and
# cuBLASLt loaded while the data set is read (ops/cuda/library_warm_up.h), bf16 and float32; then
# ResNet-20 to 91% side by side as in s39_call7.sh (the model as shipped, seeds 1-3, a 4-epoch
# cosine, lr 0.05): cbtrain --precision bf16 and float32 with the tuner's learners against PyTorch
# eager b=256 in float32, which now loads its libraries before the clock too (--warm-libraries on),
# and, for comparison with the thirty-ninth session, without that (off).
#   OUT=... bash s40_call3.sh
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
for p in bf16 fp32; do
  CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 \
    --data $CBT_DATA --progress off --precision $p --learners auto > $OUT/res/start_$p.log 2>&1
  echo "== start $p (rc $?)"; grep -E "^autotune: [0-9]+ learner|^epoch [0-9]+:|^start:" $OUT/res/start_$p.log | sed 's/, first runs of/\n  first runs of/g'
done
for s in 1 2 3; do
  for p in bf16 fp32; do
    $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
      --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
      --out $OUT/res/tta_cbtrain_${p}_resnet20_b32_kauto_s$s.json --logs $OUT/res/logs/$p -- --precision $p > /dev/null 2>&1
  done
  for w in on off; do
    t=$(date +%s.%N)
    $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
      --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 --warm-libraries $w \
      --out $OUT/res/tta_torch_warm${w}_resnet20_b256_s$s.json > $OUT/res/logs/torch_warm${w}_resnet20_b256_s$s.log 2>&1 ||
      tail -2 $OUT/res/logs/torch_warm${w}_resnet20_b256_s$s.log
    echo "torch warm $w seed $s: process wall $($PY -c "import sys, time; print(round(time.time() - float(sys.argv[1]), 2))" $t) s" >> $OUT/res/torch_wall.txt
  done
  echo "seed $s after $((SECONDS-T0)) s"
done
$PY - $OUT/res <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tta_*.json"))):
    d = json.load(open(f))
    acc = ", ".join(f"{a:.4f}" for a in d.get("accuracy", []))
    el = ", ".join(f"{e:.2f}" for e in d.get("elapsed_s", []))
    print(f"{os.path.basename(f)[:-5]:44s} reached {d.get('reached')} epoch {d.get('epochs_to_target')} "
          f"at {d.get('seconds_to_target')} s; learners {d.get('learners_chosen', '-')}; acc [{acc}]; clock [{el}]; "
          f"wall {d.get('wall_seconds', 0):.1f}")
PYEOF
cat $OUT/res/torch_wall.txt
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
