#!/usr/bin/env bash
# Session 23 call 5: the driver's export and cbtrain time-to-accuracy stages into a fresh output
# folder, and its report. (Written to follow call 4 on the same machine, but that machine had been
# given back, so this ran on another H200 with the tests not built; the two folders' results are
# merged in docs/bench/h200_fp32_2026-11-28_s23_tta/.)
export CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 TTA_SEEDS_SLOW=1 DRV_LIMIT=140 STAGES=export,cbt_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
