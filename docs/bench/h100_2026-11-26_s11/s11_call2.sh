#!/usr/bin/env bash
# Session 11 call 2: the tiled backward-filter kernel. Build; the direct and convolution tests;
# a second build of cbtrain with the previous direct_conv.{h,cu} (base); then ResNet-32 b=32
# K=16, ResNet-20 K=12 and LeNet-5 K=16, base / new alternating, the choices logged.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
tail -3 $R/build.txt
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
# base: the same tree with the previous direct kernels, built while the tests run
B=/tmp/base; rm -rf $B; mkdir -p $B
tar cf - --exclude=./build-gpu --exclude=./.device --exclude=./bench/out . | tar xf - -C $B
cp .device/session/base/direct_conv.cu $B/ops/cuda/; cp .device/session/base/direct_conv.h $B/ops/cuda/
mkdir -p $B/.device && ln -s $PWD/.device/onnx $B/.device/onnx && ln -s $PWD/.device/data $B/.device/data
( cd $B && bash scripts/gpu_check.sh $R/basecheck build > $R/basebuild.txt 2>&1; echo "base build rc $?" > $R/basebuild.rc ) &
T1=$SECONDS
timeout 240 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='Direct*:CudaConvAlgos.*:CudaDeterministic.*:Cases/CudaVsCpu.ForwardAndBackwardMatch/Conv*' > $R/tests.txt 2>&1
echo "tests rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|expected|Which is|C=" $R/tests.txt | head -30
wait; cat $R/basebuild.rc; echo "base ready after $((SECONDS-T0)) s"
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx; cp models/resnet20/resnet20.ts17.onnx $R/resnet20.onnx
run() {  # tag model k rep
  local bin=./build-gpu/tools/cbtrain; [ $1 = base ] && bin=$B/build-gpu/tools/cbtrain
  CBT_LOG_CONV_ALGOS=1 timeout 90 $bin bench $2 --device cuda -b 32 -k $3 --json 2> $R/$(basename $2 .onnx)_$1_r$4.log | tail -1 |
    sed "s/^{/{\"tag\": \"$1\", \"rep\": $4, /" >> $R/ab.jsonl
}
T2=$SECONDS
for rep in 1 2; do for t in base new; do run $t $R/models/resnet32.onnx 16 $rep; done; done
for t in base new; do run $t $R/resnet20.onnx 12 1; done
for t in base new; do run $t $R/lenet5.onnx 16 1; done
for t in new base; do run $t $R/models/resnet32.onnx 16 3; done
echo "ab after $((SECONDS-T2)) s"
$PY -c "
import json
for l in open('$R/ab.jsonl'):
    try: j=json.loads(l)
    except Exception: print('bad', l[:80]); continue
    print(j['model'].split('/')[-1], j['tag'], j['rep'], round(j['images_per_sec']))"
for f in resnet32_new_r1 resnet20_new_r1 lenet5_new_r1; do echo "== $f"; grep -h "cbtrain conv direct: backward-filter" $R/$f.log | cut -c1-200; done
rm -rf $R/models $R/*.onnx
tar czf $OUT/r.tgz -C $OUT r
