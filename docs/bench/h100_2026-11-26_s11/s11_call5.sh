#!/usr/bin/env bash
# Session 11 call 5: the driver's cbtrain time-to-accuracy stage and the report; the whole CUDA
# suite; then the tiled backward filter A/B: cbtrain with the previous direct_conv.{h,cu}
# (base) against this one (new), alternating, ResNet-32 b=32 K=16, ResNet-20 K=12, LeNet-5 K=16.
set -uo pipefail
OUT=${OUT:?}
STAGES=export,cbt_tta,report DRV_LIMIT=300 bash .device/session/s9_drv.sh
R=$OUT/r
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
B=/tmp/base; rm -rf $B; mkdir -p $B
tar cf - --exclude=./build-gpu --exclude=./.device --exclude=./bench/out . | tar xf - -C $B
cp .device/session/base/direct_conv.cu .device/session/base/direct_conv.h $B/ops/cuda/
cp .device/session/base/direct_conv_test.cpp $B/tests/cuda/
mkdir -p $B/.device && ln -s $PWD/.device/onnx $B/.device/onnx && ln -s $PWD/.device/data $B/.device/data
( cd $B && bash scripts/gpu_check.sh $R/basecheck build > $R/basebuild.txt 2>&1; echo "base build rc $?" )
tail -3 $R/basebuild.txt
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx; cp models/resnet20/resnet20.ts17.onnx $R/resnet20.onnx
run() {  # tag model k rep
  local bin=./build-gpu/tools/cbtrain; [ $1 = base ] && bin=$B/build-gpu/tools/cbtrain
  CBT_LOG_CONV_ALGOS=1 timeout 90 $bin bench $2 --device cuda -b 32 -k $3 --json 2> $R/ab_$(basename $2 .onnx)_$1_r$4.log | tail -1 |
    sed "s/^{/{\"tag\": \"$1\", \"rep\": $4, /" >> $R/ab.jsonl
}
T2=$SECONDS
for rep in 1 2; do for t in base new; do run $t $R/models/resnet32.onnx 16 $rep; done; done
for t in base new; do run $t $R/resnet20.onnx 12 1; done
for t in base new; do run $t $R/lenet5.onnx 16 1; done
for t in new base; do run $t $R/models/resnet32.onnx 16 3; done
for t in new base; do run $t $R/resnet20.onnx 12 2; done
echo "ab after $((SECONDS-T2)) s"
$PY -c "
import json
for l in open('$R/ab.jsonl'):
    try: j=json.loads(l)
    except Exception: print('bad', l[:80]); continue
    print(j['model'].split('/')[-1], j['tag'], j['rep'], round(j['images_per_sec']))"
mkdir -p $R/ablogs && mv $R/ab_*.log $R/ablogs/
rm -rf $R/models $R/*.onnx $R/basecheck
tar czf $OUT/r.tgz -C $OUT r
