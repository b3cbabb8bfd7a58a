#!/usr/bin/env bash
# Session 10 call 8: the direct backward-filter kernel; its tests, LeNet-5, ResNet-32 and ResNet-20, direct off / timed. Build; their tests and the conv cases; then
# LeNet-5 b=32 K=16 with CBT_CONV_DIRECT=off / timed (default) alternating, the choices logged;
# PyTorch's LeNet-5 at b=32 on 16 streams in the same call; ResNet-32 off / timed once each.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
tail -5 $R/build.txt
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
timeout 240 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='Direct*:CudaConvAlgos.*:CudaDeterministic.*:Cases/CudaVsCpu.ForwardAndBackwardMatch/Conv*' > $R/tests.txt 2>&1
echo "tests rc $?"; grep -E "FAILED|PASSED|Failure|expected|Which is|worst" $R/tests.txt | head -40
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
T1=$SECONDS
for rep in 1 2 3; do for mode in off timed; do
  E=""; [ $mode = off ] && E=off
  CBT_LOG_CONV_ALGOS=1 CBT_CONV_DIRECT=$E timeout 60 $CBT bench $R/lenet5.onnx --device cuda -b 32 -k 16 --json \
    2> $R/lenet_${mode}_r$rep.log | tail -1 | sed "s/^{/{\"mode\": \"$mode\", \"rep\": $rep, /" >> $R/ab.jsonl
done; done
echo "lenet after $((SECONDS-T1)) s"
grep -h "cbtrain conv direct" $R/lenet_timed_r1.log | cut -c1-220
for rep in 1 2; do for mode in off timed; do
  E=""; [ $mode = off ] && E=off
  CBT_LOG_CONV_ALGOS=1 CBT_CONV_DIRECT=$E timeout 90 $CBT bench $R/models/resnet32.onnx --device cuda -b 32 -k 16 --json \
    2> $R/resnet_${mode}_r$rep.log | tail -1 | sed "s/^{/{\"mode\": \"$mode\", \"rep\": $rep, /" >> $R/ab.jsonl
done; done
grep -h "cbtrain conv direct: backward-filter" $R/resnet_timed_r1.log | cut -c1-220
cp models/resnet20/resnet20.ts17.onnx $R/resnet20.onnx
for rep in 1; do for mode in off timed; do
  E=""; [ $mode = off ] && E=off
  CBT_LOG_CONV_ALGOS=1 CBT_CONV_DIRECT=$E timeout 90 $CBT bench $R/resnet20.onnx --device cuda -b 32 -k 12 --json \
    2> $R/resnet20_${mode}_r$rep.log | tail -1 | sed "s/^{/{\"mode\": \"$mode\", \"rep\": $rep, /" >> $R/ab.jsonl
done; done
grep -h "cbtrain conv direct: backward-filter" $R/resnet20_timed_r1.log | cut -c1-220
echo "all after $((SECONDS-T1)) s"
$PY - <<PY
import json
for l in open('$R/ab.jsonl'):
    try: j=json.loads(l)
    except Exception: print('bad', l[:80]); continue
    print(j['model'].split('/')[-1], j['mode'], j['rep'], round(j['images_per_sec']))
try:
    t=json.load(open('$R/torch_lenet5.json'))
    print(json.dumps(t)[:600])
except Exception as e: print('torch json', e)
PY
rm -f $R/lenet5.onnx $R/resnet20.onnx; rm -rf $R/models
tar czf $OUT/r.tgz -C $OUT r
