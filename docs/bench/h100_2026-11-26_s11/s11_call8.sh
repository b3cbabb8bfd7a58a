#!/usr/bin/env bash
# Session 11 call 8: at the final code, the driver's cbtrain time-to-accuracy stage and the
# report (bench/out kept from calls 3-5 is not here: this is a fresh machine, so the stage
# writes a new bench/out); the whole CUDA suite; the learner search's seconds.
set -uo pipefail
OUT=${OUT:?}
STAGES=export,cbt_tta,report DRV_LIMIT=300 bash .device/session/s9_drv.sh
R=$OUT/r
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
grep -h "chose" bench/out/logs/cbtrain/cbtrain_tta_*.log
python3 - <<PY
import json, glob
for f in sorted(glob.glob('bench/out/results/tta_cbtrain_*.json')):
    j = json.load(open(f))
    print(f.split('/')[-1], 'epoch', j.get('epochs_to_target'), 'train s', j.get('seconds_to_target'), 'search s', j.get('autotune_seconds'), 'wall', round(j.get('wall_seconds') or 0, 1))
PY
tar czf $OUT/r.tgz -C $OUT r
