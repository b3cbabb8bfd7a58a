#!/usr/bin/env bash
# Session 29: the driver's full run at the final code, part 2: both time-to-accuracy stages into
# part 1's output folder, and the report of all. A machine given back between the calls gets part
# 1's output from .device/session/s29_tput.tgz (made from part 1's returned r.tgz).
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
mkdir -p build-gpu/bench_out
if [ ! -f build-gpu/bench_out/results/cbtrain_throughput_resnet32.json ]; then
  echo "part 1's output restored from .device/session/s29_tput.tgz"
  tar xzf .device/session/s29_tput.tgz -C build-gpu/bench_out
fi
TTA_SEEDS_SLOW=1 DRV_LIMIT=540 STAGES=export,cbt_tta,torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
