#!/usr/bin/env bash
# Session 14 call 3: the default alpha min(1, (1 + mu_z) / k): the whole CUDA suite; ResNet-20
# and LeNet-5 to their targets with --learners auto (3 seeds), ResNet-20 at K=14 (2 seeds).
source .device/session/s14_lib.sh
T1=$SECONDS
timeout 230 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -20
for s in 1 2 3; do
  tta resnet20 0.91 15 $s auto auto_new
  tta lenet5 0.90 30 $s auto auto_new
done
for s in 1 2; do tta resnet20 0.91 15 $s 14 k14_new; done
grep -h "autotune: chose\|^epoch" $R/logs/auto_new/*resnet20*s1*.log | head -12
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
