#!/usr/bin/env bash
# Session 39, call 5 (one H200): the bf16 tests (the convolution test without the 1-channel stem,
# which the training graph keeps in float32), then the channels-last BatchNorm's rows a thread
# (CBT_BN_NHWC_ROWS 1, 4, 16: fewer, longer blocks) against ResNet-20's and ResNet-32's bf16
# throughput at 1, 8 and 16 learners.
#   OUT=... bash s39_call5.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 300 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='*Bf16*:*ChannelsLast*:*BatchNorm*:*Conv*' > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda (bf16, BatchNorm and convolution tests) rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $OUT/cuda_tests.txt | head -8
grep -B3 -A8 "Failure" $OUT/cuda_tests.txt | head -30
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
mkdir -p $OUT/res $OUT/models
$PY bench/models.py --out $OUT/models --models resnet32 > $OUT/export.log 2>&1 || tail -3 $OUT/export.log
for rows in 1 4 16; do
  for m in resnet20 resnet32; do
    f=models/resnet20/resnet20.ts17.onnx; [ $m = resnet32 ] && f=$OUT/models/resnet32.onnx
    for k in 1 8 16; do
      [ $m = resnet32 ] && [ $k = 1 ] && continue
      CBT_BN_NHWC_ROWS=$rows timeout 90 $C bench $f --device cuda --batch-size 32 --learners $k --precision bf16 \
        --warmup 20 --steps 100 --json > $OUT/res/cbt_${m}_rows${rows}_k$k.json 2> $OUT/res/cbt_${m}_rows${rows}_k$k.err
      $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"rows $rows $m bf16 k=$k: {j['images_per_sec']:.0f} img/s\")" \
        $OUT/res/cbt_${m}_rows${rows}_k$k.json 2>/dev/null || tail -3 $OUT/res/cbt_${m}_rows${rows}_k$k.err
    done
  done
done
tar czf $OUT/results.tgz -C $OUT res && rm -rf $OUT/res $OUT/models
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt $OUT/cuda_tests.txt
