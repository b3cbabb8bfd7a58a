#!/usr/bin/env bash
# Session 25 call 1: the statistics of SMA at the default cap of 8 learners, which were swept with 14-16:
# ResNet-20 to 91%, seeds 1-3, ended at the target: lr 0.05 (the driver's) against 0.1, alpha 0.5 against
# the default (1 + 0.9) / 8, central momentum 0.95; and the cosine over 8 epochs instead of 15 on both sides
# (PyTorch eager b=256 beside it, the driver's better PyTorch configuration).
export CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
for s in 1 2 3; do
  tta_arm base resnet20 0.91 15 $s
  tta_lr 0.1 lr0.1 resnet20 0.91 15 $s
  tta_arm a0.5 resnet20 0.91 15 $s --alpha 0.5
  tta_arm m0.95 resnet20 0.91 15 $s --sma-momentum 0.95
  tta_arm e8 resnet20 0.91 8 $s
  echo "after seed $s: $((SECONDS-T0)) s"
done
for s in 1 2 3; do
  torch_arm b256e15 resnet20 256 0.91 15 $s
  torch_arm b256e8 resnet20 256 0.91 8 $s
  echo "torch after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/resnet20_*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
