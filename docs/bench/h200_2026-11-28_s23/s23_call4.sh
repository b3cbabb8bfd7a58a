#!/usr/bin/env bash
# Session 23 call 4: the final code. The CUDA suite; one cold start of ResNet-20 (laps and choices);
# then the driver's export and PyTorch time-to-accuracy stages into a fresh output folder (the
# first of two calls on one machine kept warm; call 5 runs cbtrain's stage into the same folder).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-28_s23/s23_lib.sh
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
start new resnet20 2 resnet20_final
$PY $LAPS --choices $R/logs/resnet20_final.log | grep backward-filter
xz -9 $R/logs/*.log $R/tests.txt
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 TTA_SEEDS_SLOW=1 DRV_LIMIT=500 STAGES=export,torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
