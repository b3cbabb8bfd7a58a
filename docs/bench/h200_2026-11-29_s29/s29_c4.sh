#!/usr/bin/env bash
# Session 29, call 4 (one H200): SMA's correction factor near its stability bound (alpha x (k + 1 + mu_z)
# < 2 (1 + mu_z): 0.384 for 8 learners) over ResNet-20's 3-epoch cosine, lr 0.05, seeds 1-3,
# ended at 91%: alpha 0.3 and 0.35 with 8 learners fixed; 6 learners fixed with the default alpha.
# (Call 3: --alpha 0.4 and 0.6 are refused for 8 learners, as they should be.)
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
TTA_LIMIT=40
for s in 1 2 3; do
  tta resnet20 0.91 3 $s 8 a03 --alpha 0.3
  tta resnet20 0.91 3 $s 8 a035 --alpha 0.35
  tta resnet20 0.91 3 $s 6 k6
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
