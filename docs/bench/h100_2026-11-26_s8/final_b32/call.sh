#!/usr/bin/env bash
# Session 8 call 10: the final commit: build; CUDA suite; the driver's throughput stages at
# batch 32 (PyTorch eager / graph / K streams; cbtrain K=1..16 and auto); cbtrain time to
# accuracy, one seed each of LeNet-5 and ResNet-20 with the tuner's K.
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
TPUT_BATCHES=32 CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 300 bash bench/run_gpu.sh bench/out full export,torch_tput,cbt_tput > $R/run.log 2>&1
echo "stages rc $? after $((SECONDS-T1)) s"
cat bench/out/logs/stages.txt 2>/dev/null
( export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
  for m in lenet5 resnet20; do
    timeout 100 ./build-gpu/tools/cbtrain bench/out/models/$m.onnx --device cuda --batch-size 32 --learners auto --epochs 30 --lr 0.05 \
      --lr-schedule cosine --seed 1 --metrics $R/tta_$m.jsonl --data $CBT_DATA -o $R/t.onnx > $R/tta_$m.log 2>&1
    echo "tta $m rc $?"; grep -E "autotune: chose|final" $R/tta_$m.log
    /opt/torch/.venv/bin/python -c "
import json
h=[json.loads(l) for l in open('$R/tta_$m.jsonl') if 'test_accuracy' in l]
t=0.9 if '$m'=='lenet5' else 0.91
r=[x for x in h if x['test_accuracy']>=t]
print('$m best',max(x['test_accuracy'] for x in h),'first target', (r[0]['epoch'],r[0]['elapsed_s']) if r else None)"
  done; rm -f $R/t.onnx )
mkdir -p $R/out && cp -r bench/out/results bench/out/logs bench/out/env $R/out/ 2>/dev/null
/opt/torch/.venv/bin/python - bench/out/results <<'PYEOF'
import json, sys, os
d = sys.argv[1]
for m in ("lenet5", "resnet32"):
    c = json.load(open(os.path.join(d, f"cbtrain_throughput_{m}.json")))
    c = c if isinstance(c, list) else c.get("results", c.get("runs"))
    t = json.load(open(os.path.join(d, f"torch_throughput_{m}.json")))
    t = t if isinstance(t, list) else t.get("results", t.get("runs"))
    print(m, "cbtrain", [(r.get("learners_flag"), r.get("learners"), round(r.get("images_per_sec") or 0)) for r in c])
    print(m, "torch", [(r.get("mode"), r.get("k"), round(r.get("images_per_sec") or 0)) for r in t])
PYEOF
tar czf $OUT/r.tgz -C $OUT r
