#!/usr/bin/env bash
# Session 24 call 3: the driver's PyTorch time-to-accuracy stage into call 2's output folder.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
TTA_SEEDS_SLOW=1 DRV_LIMIT=570 STAGES=torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
