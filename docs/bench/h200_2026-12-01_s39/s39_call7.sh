#!/usr/bin/env bash
# Session 39, call 7 (one H200), at the code of call 6: ResNet-20 to 91% side by side as the
# driver runs it (the model as shipped, models/resnet20/resnet20.ts17.onnx, which the driver's
# export stage copies: a fresh export ties every BatchNorm's equal initializers, as call 6's runs
# had them; seeds 1-3, a 4-epoch cosine, lr 0.05): cbtrain --precision bf16 and float32 with the
# tuner's learners against PyTorch eager b=256 in float32.
#   OUT=... bash s39_call7.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
export CBT_DATA=$PWD/.device/data
bash scripts/unpack_carried_data.sh $CBT_DATA
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res/logs
for s in 1 2 3; do
  for p in bf16 fp32; do
    $PY bench/cbtrain_runs.py tta --cbtrain $C --model $M --name resnet20 --batch 32 --learners auto \
      --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
      --out $OUT/res/tta_cbtrain_${p}_resnet20_b32_kauto_s$s.json --logs $OUT/res/logs -- --precision $p > /dev/null 2>&1
  done
  $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
    --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $M --precision fp32 \
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
    print(f"{os.path.basename(f)[:-5]:40s} reached {d.get('reached')} epoch {d.get('epochs_to_target')} "
          f"at {d.get('seconds_to_target')} s; learners {d.get('learners_chosen', '-')}; acc [{acc}]; clock [{el}]")
PYEOF
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
