#!/usr/bin/env bash
# session-local: build, GPU tests, A/B of work queues (CUDA_DEVICE_MAX_CONNECTIONS) and of the
# deterministic-slack rule for cuDNN algorithms; cbtrain and PyTorch side by side.
set -u
OUT=$1
export NCCL_NVLS_ENABLE=0 CBT_LIB_DIR=$PWD/.device/onnx/usr/lib/x86_64-linux-gnu CBT_DATA=$PWD/.device/data CBT_PYTHON=python3
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
LD="$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$CBT_LIB_DIR"
PY=python3; python3 -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
t0=$SECONDS
bash scripts/gpu_check.sh $OUT/gc build || { tail -50 $OUT/gc/build.log; exit 1; }
echo "built $((SECONDS-t0)) s"
LD_LIBRARY_PATH=$LD ./build-gpu/tests/cbt_tests_cuda > $OUT/gpu_tests.log 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|tests? ran" $OUT/gpu_tests.log | head -20
echo "tests $((SECONDS-t0)) s"
W=/tmp/bw; rm -rf $W; mkdir -p $W/models
$PY bench/models.py --out $W/models --models lenet5,resnet32 > $OUT/export.log 2>&1
cp models/lenet5/lenet5.ts17.onnx $W/models/lenet5.onnx
cb() {  # tag env... -- args
  local tag=$1; shift
  echo -n "$tag "
  env "$@" 2>&1 | tail -1
}
R=$OUT/ab.jsonl; : > $R
B="LD_LIBRARY_PATH=$LD ./build-gpu/tools/cbtrain bench"
for conn in 8 32; do for b in 8 32; do for k in 8 16; do
  echo "{\"ab\":\"conn\",\"conn\":$conn,\"b\":$b,\"k\":$k,\"r\":$(env LD_LIBRARY_PATH=$LD CUDA_DEVICE_MAX_CONNECTIONS=$conn ./build-gpu/tools/cbtrain bench $W/models/lenet5.onnx --device cuda -b $b --learners $k --warmup 20 --steps 150 --json 2>/dev/null | tail -1)}" >> $R
done; done; done
echo "lenet conn $((SECONDS-t0)) s"
for conn in 8 32; do
  CUDA_DEVICE_MAX_CONNECTIONS=$conn timeout 120 $PY bench/torch_throughput.py --model lenet5 --batch 8,32 --modes multistream --ks 8,16 --precision fp32 --windows 3 --out $OUT/torch_lenet5_conn$conn.json > $OUT/torch_lenet5_conn$conn.log 2>&1 || tail -3 $OUT/torch_lenet5_conn$conn.log
  CUDA_DEVICE_MAX_CONNECTIONS=$conn timeout 120 $PY bench/torch_throughput.py --model resnet32 --batch 32 --modes multistream --ks 16 --precision fp32 --windows 3 --out $OUT/torch_resnet32_conn$conn.json > $OUT/torch_resnet32_conn$conn.log 2>&1 || tail -3 $OUT/torch_resnet32_conn$conn.log
done
echo "torch conn $((SECONDS-t0)) s"
# ResNet-32 b=32 K=16: slack 0 (old rule) vs 0.25, alternating processes; then connections 8.
for rep in 1 2 3 4; do for slack in 0 0.25; do
  echo "{\"ab\":\"slack\",\"slack\":$slack,\"conn\":32,\"k\":16,\"r\":$(env LD_LIBRARY_PATH=$LD CBT_CONV_DET_SLACK=$slack ./build-gpu/tools/cbtrain bench $W/models/resnet32.onnx --device cuda -b 32 --learners 16 --warmup 20 --steps 60 --json 2>/dev/null | tail -1)}" >> $R
done; done
echo "resnet slack $((SECONDS-t0)) s"
for rep in 1 2; do
  echo "{\"ab\":\"conn\",\"slack\":0.25,\"conn\":8,\"k\":16,\"r\":$(env LD_LIBRARY_PATH=$LD CUDA_DEVICE_MAX_CONNECTIONS=8 ./build-gpu/tools/cbtrain bench $W/models/resnet32.onnx --device cuda -b 32 --learners 16 --warmup 20 --steps 60 --json 2>/dev/null | tail -1)}" >> $R
done
for slack in 0 0.25; do for m in resnet32 lenet5; do
  echo "{\"ab\":\"slack1\",\"slack\":$slack,\"m\":\"$m\",\"k\":1,\"r\":$(env LD_LIBRARY_PATH=$LD CBT_CONV_DET_SLACK=$slack ./build-gpu/tools/cbtrain bench $W/models/$m.onnx --device cuda -b 32 --learners 1 --warmup 20 --steps 100 --json 2>/dev/null | tail -1)}" >> $R
done; done
echo "all $((SECONDS-t0)) s"
$PY - $OUT <<'PY'
import json,sys,glob
for l in open(f"{sys.argv[1]}/ab.jsonl"):
    try: d=json.loads(l)
    except Exception: print("bad", l[:200]); continue
    r=d.pop("r"); print(d, r.get("model","").split("/")[-1], r.get("batch"), r.get("learners"), round(r.get("images_per_sec",0)), r.get("enqueue_fraction"))
for f in sorted(glob.glob(f"{sys.argv[1]}/torch_*_conn*.json")):
    d=json.load(open(f))
    for r in d["results"]: print(f.split("/")[-1], r["mode"], r.get("batch"), r.get("k"), round(r["images_per_sec"]))
PY
