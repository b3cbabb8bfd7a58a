#!/usr/bin/env bash
# Session 29, call 3 (one H200): SMA's correction factor over ResNet-20's 3-epoch cosine (8
# learners fixed, lr 0.05, seeds 1-3, ended at 91%): alpha 0.125 (1/k), the default (0.2375),
# 0.4, 0.6, and 0.4 with --sma-momentum 0.8. Call 2 had ssgd reach 91% at epoch 3 on every seed
# where SMA with the tuner's 8 learners did not.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
TTA_LIMIT=40
for s in 1 2 3; do
  tta resnet20 0.91 3 $s 8 a0125 --alpha 0.125
  tta resnet20 0.91 3 $s 8 adef
  tta resnet20 0.91 3 $s 8 a04 --alpha 0.4
  tta resnet20 0.91 3 $s 8 a06 --alpha 0.6
  tta resnet20 0.91 3 $s 8 a04m08 --alpha 0.4 --sma-momentum 0.8
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
