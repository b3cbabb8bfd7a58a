#!/usr/bin/env bash
# Session 24 call 6: the final code. The CUDA suite; ResNet-20 and LeNet-5 to their targets at
# the defaults (seed 1, ended at the target), whose logs show how the search ended.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
T1=$SECONDS
timeout 100 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
tta_arm final resnet20 0.91 15 1
tta_arm final lenet5 0.90 30 1
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
