#!/usr/bin/env bash
# Session 11 call 1: the whole CUDA suite at HEAD (the refactors after f2c4ed2 had not run on
# a GPU), then kernel profiles of ResNet-32 and LeNet-5 (cbtrain under ncu, PyTorch under
# torch.profiler) and ResNet-32's convolution choices at K=16.
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
bash scripts/unpack_carried_data.sh "$CBT_DATA" > /dev/null 2>&1
PY=/opt/torch/.venv/bin/python
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
T2=$SECONDS
PYTHON=$PY CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu timeout 200 bash bench/profile_gpu.sh $R/prof resnet32,lenet5 fp32 > $R/prof.txt 2>&1
echo "profile rc $? after $((SECONDS-T2)) s"; grep -E "^\| " $R/prof.txt | head -40
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
CBT_LOG_CONV_ALGOS=1 timeout 90 ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda -b 32 -k 16 --json > $R/r32_k16.json 2> $R/r32_k16.log
echo "r32 k16 rc $?"; cat $R/r32_k16.json | head -c 300; echo
grep -h "cbtrain conv" $R/r32_k16.log | grep -v "candidate" | cut -c1-200 | head -60
rm -rf $R/models $R/prof/models; rm -f $R/prof/*.ncu.csv
tar czf $OUT/r.tgz -C $OUT r
