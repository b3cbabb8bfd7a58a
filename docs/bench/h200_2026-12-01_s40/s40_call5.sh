#!/usr/bin/env bash
# Session 40, call 5 (one H200): the first epoch's set-up of bf16 ResNet-20, now taken before the
# first evaluation (whose own convolution searches the earlier totals included); then the
# learning rate and the cosine's length for ResNet-20 to 91%, on both sides: cbtrain bf16 (the
# tuner's learners, batch 32) at lr 0.05 and 0.1 over 3- and 4-epoch cosines, seeds 1-3; PyTorch
# eager b=256 float32 at the same, seeds 1-2 (no library warm-up, its faster setting in calls 3-4).
#   OUT=... bash s40_call5.sh
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
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res/logs
CBT_LOG_START=1 timeout 120 $C $M --device cuda --batch-size 32 --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 \
  --data $CBT_DATA --progress off --precision bf16 --learners auto > $OUT/res/start_bf16.log 2>&1
echo "== start bf16 (rc $?)"; grep -E "^autotune: 8 learner|^epoch [0-9]+:|^start:" $OUT/res/start_bf16.log | sed 's/, /\n  /g' | grep -v "first runs of [A-Z]"
for e in 3 4; do
  for lr in 0.05 0.1; do
    for s in 1 2 3; do
      $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
        --epochs $e --lr $lr --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
        --out $OUT/res/tta_cbtrain_bf16_e${e}_lr${lr}_s$s.json --logs $OUT/res/logs/e${e}_lr$lr -- --precision bf16 > /dev/null 2>&1
    done
    echo "cbtrain e$e lr $lr after $((SECONDS-T0)) s"
  done
done
for e in 3 4; do
  for lr in 0.05 0.1; do
    for s in 1 2; do
      $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr $lr --schedule cosine --target 0.91 \
        --max-epochs $e --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 --warm-libraries off \
        --out $OUT/res/tta_torch_e${e}_lr${lr}_s$s.json > $OUT/res/logs/torch_e${e}_lr${lr}_s$s.log 2>&1 ||
        tail -2 $OUT/res/logs/torch_e${e}_lr${lr}_s$s.log
    done
    echo "torch e$e lr $lr after $((SECONDS-T0)) s"
  done
done
$PY - $OUT/res <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tta_*.json"))):
    d = json.load(open(f))
    acc = ", ".join(f"{a:.4f}" for a in d.get("accuracy", []))
    el = ", ".join(f"{e:.2f}" for e in d.get("elapsed_s", []))
    print(f"{os.path.basename(f)[:-5]:36s} reached {d.get('reached')} epoch {d.get('epochs_to_target')} "
          f"at {d.get('seconds_to_target')} s; acc [{acc}]; clock [{el}]")
PYEOF
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
