#!/usr/bin/env bash
# Session 24 call 5: the default cap of 8 learners against 16 on more seeds (4-8, not those of the
# driver), ResNet-20 to 91% over 15 epochs and LeNet-5 to 90% over 30, alternating, each run ended
# at the target; then where a cold ResNet-20 start's first count goes (CBT_LOG_CONV_ALGOS=1 laps).
export CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
for s in 4 5 6 7 8; do
  tta_arm cap8 resnet20 0.91 15 $s
  tta_arm cap16 resnet20 0.91 15 $s --autotune-max-learners 16
done
for s in 4 5 6; do
  tta_arm cap8 lenet5 0.90 30 $s
  tta_arm cap16 lenet5 0.90 30 $s --autotune-max-learners 16
done
clocks $R/res/*.json
CBT_LOG_CONV_ALGOS=1 timeout 60 ./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --batch-size 32 \
  --learners auto --epochs 2 --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA > $R/logs/laps_resnet20.log 2>&1
echo "laps run rc $?"; grep -E "autotune: 1 |^epoch" $R/logs/laps_resnet20.log
$PY docs/bench/h200_2026-11-28_s23/search_laps.py $R/logs/laps_resnet20.log
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
