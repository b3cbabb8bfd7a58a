#!/usr/bin/env bash
# Session 24 call 4: the driver's cbtrain time-to-accuracy stage into the same folder, and the report.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
TTA_SEEDS_SLOW=1 DRV_LIMIT=300 STAGES=cbt_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
