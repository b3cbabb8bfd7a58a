#!/usr/bin/env bash
# Session 24 call 1: the training-time learner search with shorter windows (at least 5 rounds and
# 25 ms; a first window that lasted that long is the first of the three) against 18a531b (three
# windows after a sizing window of 10 rounds, 50 ms). The CUDA suite on the new build; then
# ResNet-20 to 91% (15 epochs) and LeNet-5 to 90% (30 epochs), learners auto, seeds 1-3, new and
# old alternating, each run ended at the target; and the new build with at most 8 learners
# (--autotune-max-learners 8), which K=8's fewer epochs to 91% in the 2026-11-25 runs suggest.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
build_old
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
wait $BUILD; cat $R/old_build_rc.txt; echo "builds and suite after $((SECONDS-T0)) s"
for s in 1 2 3; do
  for arm in new old; do
    tta_arm $arm resnet20 0.91 15 $s
    tta_arm $arm lenet5 0.90 30 $s
  done
  tta_arm max8 resnet20 0.91 15 $s --autotune-max-learners 8
  tta_arm max8 lenet5 0.90 30 $s --autotune-max-learners 8
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/check_old; xz -9 $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
