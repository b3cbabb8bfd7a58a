#!/usr/bin/env bash
# Session 31, call 2 (one H200, kept warm after call 1, whose CUDA build it uses): kernel time of
# a ResNet-20 training step by group, cbtrain (Nsight Compute, one learner, graphs off) against
# PyTorch eager (torch.profiler), batch 32, float32: the share a bf16 path would speed up.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
[ -x build-gpu/tools/cbtrain ] || bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1
command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null
export PATH=$PATH:/usr/local/cuda/bin
PYTHON=/opt/torch/.venv/bin/python timeout 450 bash bench/profile_gpu.sh $OUT/profile resnet20 fp32
echo "rc $? after $((SECONDS-T0)) s"
rm -rf $OUT/profile/models
