#!/usr/bin/env bash
# Session 26 call 4: the driver's cbtrain time-to-accuracy stage at the final code, into an empty
# output folder, and its report (call 5 adds PyTorch's stage to the same folder).
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 TTA_SEEDS_SLOW=1 DRV_LIMIT=300 STAGES=export,cbt_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
