#!/usr/bin/env bash
# Session 8 call 4 (as call 3, other runs): build; CUDA suite; LeNet-5 b=32 K=16 with the loss+bias fusion, and the
# engines timed 1/8/16 at once and with a wide deterministic slack; PyTorch's 16 streams
# interleaved; tarred into $OUT/r.tgz.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
mkdir -p $R/models
$PY bench/models.py --out $R/models --models resnet32 > $R/export.log 2>&1 || tail -5 $R/export.log
cp models/lenet5/lenet5.ts17.onnx $R/models/lenet5.onnx
run1() {  # tag model K steps [env...]
  local tag=$1 m=$2 k=$3 steps=$4; shift 4
  env "$@" timeout 90 $CBT bench $R/models/$m.onnx --device cuda -b 32 -k $k --steps $steps --warmup 20 --json \
    > $R/one.json 2>> $R/tput.err || echo "bench $tag failed"
  $PY -c "import json,sys; r=json.load(open('$R/one.json')); r['tag']='$tag'; print(json.dumps(r))" >> $R/tput.jsonl
}
T3=$SECONDS
cp models/resnet20/resnet20.ts17.onnx $R/models/resnet20.onnx
for rep in 1 2; do
  for c in 1 2 4 8; do run1 conc$c lenet5 16 400 CBT_CONV_CONCURRENCY=$c; done
  for c in 1 8; do run1 conc$c resnet32 16 150 CBT_CONV_CONCURRENCY=$c; run1 conc$c resnet20 12 150 CBT_CONV_CONCURRENCY=$c; done
done
for c in 1 8; do CBT_LOG_CONV_ALGOS=1 CBT_CONV_CONCURRENCY=$c timeout 60 $CBT bench $R/models/lenet5.onnx --device cuda -b 32 -k 16 --steps 20 --warmup 5 > /dev/null 2> $R/engines_lenet_conc$c.txt; done
for m in lenet5 resnet32; do
  timeout 120 $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 16 \
    --precision fp32 --out $R/torch_$m.json > $R/torch_$m.log 2>&1 || tail -5 $R/torch_$m.log
done
echo "throughput after $((SECONDS-T3)) s"
$PY - $R/tput.jsonl <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["tag"], r["model"].split("/")[-1], "K", r["learners"], round(r["images_per_sec"]), "enq", r["enqueue_fraction"])
PYEOF
grep -h "img/s" $R/torch_*.log
rm -rf $R/models
tar czf $OUT/r.tgz -C $OUT r
