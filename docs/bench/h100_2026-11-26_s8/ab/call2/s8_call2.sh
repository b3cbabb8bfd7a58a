#!/usr/bin/env bash
# Session 8 call 2: build; CUDA suite; cuBLASLt fp32 epilogue probe; LeNet-5/ResNet-32 b=32
# throughput against PyTorch's 16 streams in one call; tarred into $OUT/r.tgz.
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
T1=$SECONDS
nvcc -O2 -std=c++17 -I$V/cublas/include -L$V/cublas/lib -o $R/lt_probe .device/session/lt_probe.cu -lcublasLt > $R/probe_build.txt 2>&1 \
  && timeout 30 $R/lt_probe > $R/probe.txt 2>&1; echo "probe rc $?"; cat $R/probe.txt | head -40; rm -f $R/lt_probe
T1=$SECONDS
timeout 120 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='-HostSignal.*' > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/gpu_tests.log | head -20
grep -E "with_gradient" $R/gpu_tests.log | head -4
mkdir -p $R/models
$PY bench/models.py --out $R/models --models resnet32 > $R/export.log 2>&1 || tail -5 $R/export.log
cp models/lenet5/lenet5.ts17.onnx $R/models/lenet5.onnx
run1() {  # model batch K steps
  timeout 90 $CBT bench $R/models/$1.onnx --device cuda -b $2 -k $3 --steps $4 --warmup 20 --json \
    >> $R/tput.jsonl 2>> $R/tput.err || echo "bench $* failed"
}
T3=$SECONDS
for rep in 1 2; do
  run1 lenet5 32 16 400; run1 lenet5 32 12 400; run1 resnet32 32 16 150
  timeout 120 $PY bench/torch_throughput.py --model lenet5 --batch 32 --modes multistream --ks 16 \
    --precision fp32 --out $R/torch_lenet5_$rep.json > $R/torch_lenet5_$rep.log 2>&1 || tail -5 $R/torch_lenet5_$rep.log
done
timeout 120 $PY bench/torch_throughput.py --model resnet32 --batch 32 --modes multistream --ks 16 \
    --precision fp32 --out $R/torch_resnet32.json > $R/torch_resnet32.log 2>&1 || tail -5 $R/torch_resnet32.log
echo "throughput after $((SECONDS-T3)) s"
$PY - $R/tput.jsonl <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["model"].split("/")[-1], "b", r["batch"], "K", r["learners"], round(r["images_per_sec"]), "enq", r["enqueue_fraction"])
PYEOF
grep -h "img/s" $R/torch_*.log
timeout 60 $CBT $R/models/lenet5.onnx --device cuda --batch-size 32 --learners auto --epochs 30 --lr 0.05 \
    --lr-schedule cosine --seed 1 --metrics $R/tta_auto.jsonl --data $CBT_DATA -o $R/t.onnx > $R/tta_auto.log 2>&1
echo "tta rc $?"; grep -E "autotune: chose|final" $R/tta_auto.log
$PY -c "
import json
h=[json.loads(l) for l in open('$R/tta_auto.jsonl') if 'test_accuracy' in l]
r=[x for x in h if x['test_accuracy']>=0.9]
print('best',max(x['test_accuracy'] for x in h),'first 90%', (r[0]['epoch'],r[0]['elapsed_s']) if r else None)"
rm -rf $R/models $R/t.onnx
tar czf $OUT/r.tgz -C $OUT r
