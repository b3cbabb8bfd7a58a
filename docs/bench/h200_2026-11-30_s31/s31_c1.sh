#!/usr/bin/env bash
# Session 31, call 1 (one H200): the whole test suite in a CUDA build at this session's code,
# then where PyTorch's bf16 gain on ResNet-20 comes from (which part a bf16 path in cbtrain
# would have to build): 8 and 16 graphs of 32 on their streams in float32, autocast bf16 with
# and without channels-last, and only the convolutions in bf16 (casts around each), with
# cbtrain's float32 8 x 32 and 16 x 32 in the same call for reference.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets 2>/dev/null && ln -s $CBT_DATA /usr/share/datasets/fashion-mnist 2>/dev/null &&
    echo "linked /usr/share/datasets/fashion-mnist" || echo "cannot link /usr/share/datasets/fashion-mnist"
fi
echo "== ctest (CUDA build) from $((SECONDS-T0)) s"
timeout 300 ctest --test-dir build-gpu -j 6 --timeout 250 > $OUT/ctest.txt 2>&1
echo "ctest rc $? after $((SECONDS-T0)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run" $OUT/ctest.txt | head -30
cp build-gpu/Testing/Temporary/LastTest.log $OUT/LastTest.log 2>/dev/null
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res
echo "== cbtrain bench ResNet-20 fp32 from $((SECONDS-T0)) s"
for k in 8 16; do
  $C bench $M --device cuda --batch-size 32 --learners $k --warmup 20 --steps 100 --json \
    > $OUT/res/cbt_fp32_b32_k$k.json 2> $OUT/res/cbt_fp32_b32_k$k.err
  $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"cbtrain b=32 k={j['learners']}: {j['images_per_sec']:.0f} img/s\")" \
    $OUT/res/cbt_fp32_b32_k$k.json 2>&1 || tail -2 $OUT/res/cbt_fp32_b32_k$k.err
done
for amp in none bf16 bf16-nchw conv-bf16 conv-bf16-cl; do
  echo "== PyTorch --amp $amp from $((SECONDS-T0)) s"
  $PY bench/torch_throughput.py --model resnet20 --batch 32 --modes multistream --ks 8,16 \
    $([ $amp = none ] || echo --amp $amp) --out $OUT/res/torch_resnet20_b32_$amp.json 2>&1 | grep -v Warning | tail -2
done
echo "done after $((SECONDS-T0)) s"
tar czf $OUT/logs.tgz -C $OUT ctest.txt LastTest.log build.txt res && rm -rf $OUT/res $OUT/ctest.txt $OUT/LastTest.log $OUT/build.txt
