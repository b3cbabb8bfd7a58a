#!/usr/bin/env bash
# Session 37, call 5 (one H200): the rest of the survey of models/architectures.py side by side
# with PyTorch at batch 32 (8 and 16 graphs on as many streams against 8 and 16 learners), and
# ResNet-32 at 16 (issue 5's model: that the session's changes cost it nothing).
#   OUT=... bash s37_call5.sh [MODELS]
set -uo pipefail
OUT=${OUT:?}
MODELS=${1:-vit rowgpt densenet seresnext mlpmixer swin poolformer vgg}
T0=$SECONDS
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
mkdir -p $OUT/tp
$PY bench/models.py --out $OUT/m --models vgg,resnet32 > /dev/null 2>&1
$PY bench/torch_throughput.py --model resnet32 --batch 32 --modes multistream --ks 16 --windows 3 \
  --out $OUT/tp/torch_resnet32.json 2>&1 | grep -E "img/s|FAILED"
./build-gpu/tools/cbtrain bench $OUT/m/resnet32.onnx --device cuda -b 32 -k 16 --warmup 20 --steps 100 2>&1 | tail -1
echo "== survey from $((SECONDS-T0)) s"
for m in $MODELS; do
  if [ $((SECONDS-T0)) -gt 540 ]; then echo "survey stopped before $m (time)"; break; fi
  f=models/architectures/$m.ts17.onnx; [ -e $f ] || f=models/architectures/$m.dynamo_noopt.onnx
  [ -e $f ] || f=$OUT/m/$m.onnx
  $PY bench/torch_throughput.py --model $m --batch 32 --modes multistream --ks 8,16 --windows 3 \
    --out $OUT/tp/torch_$m.json 2>&1 | grep -E "img/s|FAILED"
  for k in 8 16; do
    timeout 60 ./build-gpu/tools/cbtrain bench $f --device cuda -b 32 -k $k --warmup 10 --steps 30 2>&1 | tail -1
  done
done
rm -rf $OUT/m
tar czf $OUT/results.tgz -C $OUT tp && rm -rf $OUT/tp
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
