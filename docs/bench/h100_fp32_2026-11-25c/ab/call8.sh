#!/usr/bin/env bash
# session-local: A/B of the synchronisation queue's stream priority (CBT_SYNC_PRIORITY)
set -u
OUT=$1
export CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu CBT_DATA=$PWD/.device/data CBT_PYTHON=python3
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
LD="$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$CBT_LIB_DIR"
PY=python3; python3 -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
t0=$SECONDS
bash scripts/gpu_check.sh $OUT/gc build > /dev/null || { tail -50 $OUT/gc/build.log; exit 1; }
echo "built $((SECONDS-t0)) s"
LD_LIBRARY_PATH=$LD ./build-gpu/tests/cbt_tests_cuda > $OUT/gpu_tests.log 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|SKIPPED \]|tests? ran" $OUT/gpu_tests.log | head
W=/tmp/bw; rm -rf $W; mkdir -p $W/models
$PY bench/models.py --out $W/models --models resnet32 > /dev/null 2>&1
cp models/lenet5/lenet5.ts17.onnx $W/models/lenet5.onnx
R=$OUT/ab_priority.jsonl; : > $R
one() {  # model b k steps prio
  echo "{\"prio\":\"$5\",\"r\":$(env LD_LIBRARY_PATH=$LD CBT_SYNC_PRIORITY=$5 ./build-gpu/tools/cbtrain bench $W/models/$1.onnx --device cuda -b $2 --learners $3 --warmup 20 --steps $4 --json 2>/dev/null | tail -1)}" >> $R
}
for rep in 1 2 3; do for p in normal high; do
  one lenet5 32 16 150 $p; one lenet5 8 16 150 $p; one lenet5 32 8 150 $p; one resnet32 32 16 60 $p
done; done
echo "done $((SECONDS-t0)) s"
$PY - $R <<'PY'
import json,sys,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    x=json.loads(l); r=x["r"]
    d[(r["model"].split("/")[-1],r["batch"],r["learners"],x["prio"])].append((round(r["images_per_sec"]),r["enqueue_fraction"]))
for k in sorted(d): print(k, d[k])
PY
