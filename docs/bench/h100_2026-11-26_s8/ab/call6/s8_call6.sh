#!/usr/bin/env bash
# Session 8 call 6: A/B in one call of LeNet-5 b=32 K=16: 5b21747 (before the pool-gradient
# fusion and the conv-timing choice) against this commit, engines timed 8 and 1 at once, and
# this commit with the choice made by training; PyTorch's 16 streams between.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
mkdir -p /tmp/oldsrc && tar xzf .device/old.tgz -C /tmp/oldsrc && ln -s $PWD/.device /tmp/oldsrc/old/.device
( cd /tmp/oldsrc/old && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCBT_WITH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCBT_CUDNN_ROOT=$V/cudnn -DCBT_NCCL_ROOT=$V/nccl \
  -DONNX_DIR=$ONNX/lib/x86_64-linux-gnu/cmake/ONNX -DCMAKE_PREFIX_PATH=$ONNX "-DCMAKE_CXX_FLAGS=-isystem $ONNX/include/x86_64-linux-gnu" > $R/old_configure.log 2>&1 \
  && cmake --build build-gpu -j 16 --target cbtrain > $R/old_build.log 2>&1 ); echo "old build rc $? after $((SECONDS-T0)) s"
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
NEW=./build-gpu/tools/cbtrain OLD=/tmp/oldsrc/old/build-gpu/tools/cbtrain
mkdir -p $R/models; cp models/lenet5/lenet5.ts17.onnx $R/models/lenet5.onnx
run1() {  # tag binary K [env...]
  local tag=$1 bin=$2 k=$3; shift 3
  env "$@" timeout 90 $bin bench $R/models/lenet5.onnx --device cuda -b 32 -k $k --steps 400 --warmup 20 --json \
    > $R/one.json 2>> $R/tput.err || echo "bench $tag failed"
  $PY -c "import json,sys; r=json.load(open('$R/one.json')); r['tag']='$tag'; print(json.dumps(r))" >> $R/tput.jsonl
}
T3=$SECONDS
for rep in 1 2 3; do
  run1 old_c8 $OLD 16 CBT_CONV_CONCURRENCY=8
  run1 new_c8 $NEW 16 CBT_CONV_CONCURRENCY=8
  run1 old_c1 $OLD 16 CBT_CONV_CONCURRENCY=1
  run1 new_c1 $NEW 16 CBT_CONV_CONCURRENCY=1
  run1 new_chosen $NEW 16 X=1
  timeout 120 $PY bench/torch_throughput.py --model lenet5 --batch 32 --modes multistream --ks 16 \
    --precision fp32 --out $R/torch_lenet5_$rep.json > $R/torch_lenet5_$rep.log 2>&1 || tail -5 $R/torch_lenet5_$rep.log
done
echo "throughput after $((SECONDS-T3)) s"
$PY - $R/tput.jsonl <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["tag"], "K", r["learners"], round(r["images_per_sec"]), "enq", r["enqueue_fraction"], r.get("autotune_log", "").replace("conv timing: ", "")[:120])
PYEOF
grep -h "img/s" $R/torch_*.log
rm -rf $R/models
tar czf $OUT/r.tgz -C $OUT r
