#!/usr/bin/env bash
# Session 26 call 5: the driver's PyTorch time-to-accuracy stage into call 4's output folder, and the
# report of both. A machine that was given back between the calls gets call 4's results from
# .device/session/s26_cbt.tgz (its results/ and logs/, as call 4 returned them).
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
mkdir -p build-gpu/bench_out
if [ ! -f build-gpu/bench_out/results/tta_cbtrain_resnet20_b32_kauto_s1.json ]; then
  echo "call 4's results restored from .device/session/s26_cbt.tgz"
  tar xzf .device/session/s26_cbt.tgz -C build-gpu/bench_out
fi
TTA_SEEDS_SLOW=1 DRV_LIMIT=520 STAGES=export,torch_tta,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
