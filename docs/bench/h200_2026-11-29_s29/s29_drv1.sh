#!/usr/bin/env bash
# Session 29: the driver's full run at the final code, part 1 (its throughput stages, into an empty
# output folder, build-gpu/bench_out, which the next call finds while the machine stays warm).
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 DRV_LIMIT=400 STAGES=export,torch_tput,cbt_tput,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
