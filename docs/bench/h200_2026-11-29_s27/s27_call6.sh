#!/usr/bin/env bash
# Session 27 call 6 (the last two minutes of device time): the learner search with a higher
# threshold (--autotune-threshold 0.4: drop learners while each dropped one brings at most 40% of a
# learner's share, where the default is 10%), ResNet-20 over a 3-epoch cosine, seeds 1-3; then
# 6 learners fixed, seed 3; then the threshold over the driver's 4 epochs, seeds 1-2. Lines as they come.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
TTA_LIMIT=25
for s in 1 2 3; do tta resnet20 0.91 3 $s auto c3t40 --autotune-threshold 0.4; done
tta resnet20 0.91 3 3 6 c3k6
for s in 1 2; do tta resnet20 0.91 4 $s auto c4t40 --autotune-threshold 0.4; done
clocks $R/res/*.json
grep -h "autotune: chose\|learners  " $R/logs/*/*.log 2>/dev/null | head -12
echo "total $((SECONDS-T0)) s"
