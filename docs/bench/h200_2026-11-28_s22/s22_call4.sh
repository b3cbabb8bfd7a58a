#!/usr/bin/env bash
# Session 22 call 4: the driver's export and PyTorch time-to-accuracy stages into a fresh output
# folder (the first of two calls on one machine kept warm; call 5 runs cbtrain's stage into the
# same folder), then the CopyTiming tests of this tree.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 TTA_SEEDS_SLOW=1 DRV_LIMIT=520 STAGES=export,torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
timeout 30 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='CopyTiming.*' 2>&1 | grep -E "OK|FAILED|Failure|PASSED" | head
