#!/usr/bin/env bash
# Session 24 call 2: the final code (shorter search windows, at most 8 learners by default). The
# driver's export, throughput and memory stages into a fresh output folder (the first of three
# calls on one machine kept warm: calls 3 and 4 run the time-to-accuracy stages into the same
# folder); then the CUDA suite.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 DRV_LIMIT=470 STAGES=export,torch_tput,cbt_tput,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0
timeout 100 ./build-gpu/tests/cbt_tests_cuda > $OUT/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $OUT/tests.txt | head -12; xz -9 $OUT/tests.txt
