#!/usr/bin/env bash
# Session 26 call 3: SMA's own settings with the search going down from the cap (7cf81a3), ResNet-20
# to 91% as the driver runs it (b=32, lr 0.05 cosine over 15 epochs, ended at the target), seeds 1-3
# alternating: the defaults, the central momentum 0.8 and 0.95, at most 6 learners, alpha 0.15 and 0.35
# (the default with 8 learners is 1.9 / 8 = 0.2375).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
for s in 1 2 3; do
  tta_arm base resnet20 0.91 15 $s
  tta_arm mz0.8 resnet20 0.91 15 $s --sma-momentum 0.8
  tta_arm mz0.95 resnet20 0.91 15 $s --sma-momentum 0.95
  tta_arm cap6 resnet20 0.91 15 $s --autotune-max-learners 6
  tta_arm a0.15 resnet20 0.91 15 $s --alpha 0.15
  tta_arm a0.35 resnet20 0.91 15 $s --alpha 0.35
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
