#!/usr/bin/env bash
# Session 8 call 7: build; CUDA suite; the driver's throughput stages at batch 32 only
# (TPUT_BATCHES=32: PyTorch eager / graph / K streams, cbtrain K=1..16 and auto), one call.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data
( export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} CBT_PYTHON=python3
  T1=$SECONDS
  timeout 120 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='-HostSignal.*' > $R/gpu_tests.log 2>&1
  echo "gpu tests rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/gpu_tests.log | head -8 )
T1=$SECONDS
TPUT_BATCHES=32 CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 420 bash bench/run_gpu.sh bench/out full export,torch_tput,cbt_tput > $R/run.log 2>&1
echo "stages rc $? after $((SECONDS-T1)) s"
cat bench/out/logs/stages.txt 2>/dev/null
mkdir -p $R/out && cp -r bench/out/results bench/out/logs bench/out/env $R/out/ 2>/dev/null
/opt/torch/.venv/bin/python - bench/out/results <<'PYEOF'
import json, sys, os
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    j = json.load(open(os.path.join(d, f)))
    rows = j if isinstance(j, list) else j.get("results", j.get("runs", []))
    best = {}
    for r in rows if isinstance(rows, list) else []:
        key = (r.get("model"), r.get("batch"))
        v = r.get("images_per_sec") or 0
        if v and v > best.get(key, (0, None))[0]:
            best[key] = (v, r.get("mode", r.get("learners")), r.get("k"))
    print(f, {k: (round(v[0]), v[1], v[2]) for k, v in best.items()})
PYEOF
tar czf $OUT/r.tgz -C $OUT r
