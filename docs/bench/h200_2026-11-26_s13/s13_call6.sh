#!/usr/bin/env bash
# Session 13 call 6: build, CUDA suite, the convolution search's milliseconds with every direct
# configuration timed in one CUDA graph, then time to accuracy tuned while training (3 seeds each).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R/res $R/logs
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
T1=$SECONDS
timeout 230 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
grep -A3 "CopyTiming" $R/tests.txt | head -6
for m in resnet20 lenet5; do
  /usr/bin/time -f "$m wall %e s" env CBT_LOG_CONV_ALGOS=1 ./build-gpu/tools/cbtrain bench models/$m/$m.ts17.onnx --device cuda \
    --batch-size 32 --learners 16 --steps 20 --warmup 5 > $R/$m.out 2> $R/$m.err
  tail -1 $R/$m.err; grep images_per_sec $R/$m.out | head -2
  grep -o "searched in [0-9.]* ms" $R/$m.err | awk -v m=$m '{s+=$3; n++} END {print m, n, "searches,", s, "ms in all"}'
  grep "conv direct" $R/$m.err | sed 's/cbtrain conv direct: //' | cut -c1-220
done
tta() {  # name target epochs seed tag extra...
  local n=$1 t=$2 e=$3 s=$4 tag=$5; shift 5
  timeout 95 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$n/$n.ts17.onnx \
    --name $n --batch 32 --learners auto --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 90 --out $R/res/${n}_${tag}_s$s.json --logs $R/logs/$tag -- "$@" > /dev/null 2>&1
}
for s in 1 2 3; do
  tta lenet5 0.90 30 $s during
  tta resnet20 0.91 15 $s during
done
grep -h "autotune\|^epoch" $R/logs/during/cbtrain_tta_resnet20_b32_kauto_s1.log | head -30
$PY - <<PY
import json, glob
for f in sorted(glob.glob('$R/res/*.json')):
    j = json.load(open(f))
    print(f.split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds','learners_chosen','learners_by_epoch','error')})
PY
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
