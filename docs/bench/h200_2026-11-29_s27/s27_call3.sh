#!/usr/bin/env bash
# Session 27 call 3: the driver's full run at the final code, part 2: both time-to-accuracy stages
# into call 2's output folder, and the report of all. ResNet-20's schedule and PyTorch's rate as
# call 2 chose them (TTA_RESNET20_EPOCHS, TORCH_RESNET20_LR in the environment). A machine that was
# given back between the calls gets call 2's output from .device/session/s27_tput.tgz.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
mkdir -p build-gpu/bench_out
if [ ! -f build-gpu/bench_out/results/cbtrain_throughput_resnet32.json ]; then
  echo "call 2's output restored from .device/session/s27_tput.tgz"
  tar xzf .device/session/s27_tput.tgz -C build-gpu/bench_out
fi
TTA_SEEDS_SLOW=1 DRV_LIMIT=540 STAGES=export,cbt_tta,torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
