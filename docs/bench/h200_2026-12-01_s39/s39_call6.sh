#!/usr/bin/env bash
# Session 39, call 6 (one H200), the session's last code: cbt_tests_cuda whole (the filters'
# conversions in one node each way, BatchNorm's sums at 4 rows a thread); ResNet-20 and ResNet-32
# at batch 32 side by side: cbtrain float32 and bf16 (8 and 16 learners) against PyTorch's 8 and
# 16 CUDA graphs on as many streams in float32 and under autocast to bfloat16 with channels-last;
# ResNet-20's bf16 kernel profile at one learner; then ResNet-20 to 91% as the driver runs it
# (seeds 1-3, a 4-epoch cosine, the tuner's learners): cbtrain bf16 and float32 against PyTorch
# eager b=256 in float32.
#   OUT=... bash s39_call6.sh
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
grep -E "^\[       OK \] (Bf16|ConvChannelsLast|Bf16Kernels)" $OUT/cuda_tests.txt | wc -l | sed 's/^/bf16 tests passed: /'
grep -B3 -A8 "Failure" $OUT/cuda_tests.txt | head -40
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
mkdir -p $OUT/res/logs $OUT/models
$PY bench/models.py --out $OUT/models --models resnet32 > $OUT/export.log 2>&1 || tail -3 $OUT/export.log
for m in resnet20 resnet32; do
  f=models/resnet20/resnet20.ts17.onnx; [ $m = resnet32 ] && f=$OUT/models/resnet32.onnx
  for p in fp32 bf16; do
    for k in 8 16; do
      timeout 90 $C bench $f --device cuda --batch-size 32 --learners $k --precision $p --warmup 20 --steps 100 --json \
        > $OUT/res/cbt_${m}_${p}_k$k.json 2> $OUT/res/cbt_${m}_${p}_k$k.err
      $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"cbtrain $m $p k=$k: {j['images_per_sec']:.0f} img/s, {j['peak_bytes_per_learner'] / 2**20:.1f} MiB a learner\")" \
        $OUT/res/cbt_${m}_${p}_k$k.json 2>/dev/null || tail -3 $OUT/res/cbt_${m}_${p}_k$k.err
    done
  done
  for amp in none bf16; do
    $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 \
      $([ $amp = none ] || echo --amp $amp) --out $OUT/res/torch_${m}_$amp.json 2>&1 | grep -E "img/s" | sed "s/^/torch $amp: /"
  done
  echo "== after $((SECONDS-T0)) s"
done
echo "== ResNet-20 bf16 kernel profile (one learner) from $((SECONDS-T0)) s"
timeout 120 ncu --csv --print-units base --metrics gpu__time_duration.sum --clock-control none --cache-control none \
  --profile-from-start off --launch-count 1500 $C bench models/resnet20/resnet20.ts17.onnx --device cuda --batch-size 32 \
  --learners 1 --cuda-graphs off --precision bf16 --warmup 10 --steps 100 > $OUT/res/resnet20_bf16.ncu.csv 2> $OUT/res/resnet20_bf16.ncu.err
$PY bench/kernel_profile.py ncu $OUT/res/resnet20_bf16.ncu.csv --steps-marker sce_rows_kernel --model resnet20 --batch 32 \
  --precision bf16 --out $OUT/res/resnet20_bf16.cbtrain.json > /dev/null 2>&1
$PY - $OUT/res/resnet20_bf16.cbtrain.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
steps = d["steps"]
print(f"step kernel time {d['us_per_step']:.1f} us, {d['launches_per_step']:.0f} launches")
for g, v in sorted(d["groups"].items(), key=lambda kv: -kv[1]["us_per_step"]):
    print(f"  {g:16s} {v['us_per_step']:8.1f} us ({v['launches_per_step']:.0f})")
for name, v in sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:12]:
    print(f"{v['us'] / steps:8.1f} us {v['launches'] / steps:5.1f}x  {name[:100]}")
PYEOF
rm -f $OUT/res/resnet20_bf16.ncu.csv
echo "== ResNet-20 to 91% from $((SECONDS-T0)) s"
$PY bench/models.py --out $OUT/models --models resnet20 >> $OUT/export.log 2>&1
for s in 1 2 3; do
  for p in bf16 fp32; do
    $PY bench/cbtrain_runs.py tta --cbtrain $C --model $OUT/models/resnet20.onnx --name resnet20 --batch 32 --learners auto \
      --epochs 4 --lr 0.05 --schedule cosine --target 0.91 --seed $s --data $CBT_DATA \
      --out $OUT/res/tta_cbtrain_${p}_resnet20_b32_kauto_s$s.json --logs $OUT/res/logs -- --precision $p > /dev/null 2>&1
  done
  $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
    --max-epochs 4 --seed $s --data $CBT_DATA --init-onnx $OUT/models/resnet20.onnx --precision fp32 \
    --out $OUT/res/tta_torch_resnet20_b256_s$s.json > $OUT/res/logs/torch_resnet20_b256_s$s.log 2>&1
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
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res $OUT/models
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
