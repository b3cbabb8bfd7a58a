#!/usr/bin/env bash
# Session 25 call 7: the final code. The whole CUDA suite; then, side by side on this GPU, ResNet-20 to
# 91% (cbtrain as the driver runs it, seeds 1-3, and PyTorch eager b=256, the driver's better PyTorch,
# seeds 1-3, both lr 0.05 cosine over 15 epochs, ended at the target) and LeNet-5 to 90% (cbtrain, 30).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check build > $R/check.txt 2>&1
echo "tests build rc $? after $((SECONDS-T0)) s"
./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $?"; grep -E "^\[  (PASSED|FAILED) |tests? ran|SKIPPED \] [0-9]" $R/tests.txt
for s in 1 2 3; do
  tta_arm final resnet20 0.91 15 $s
  torch_arm b256 resnet20 256 0.91 15 $s
  tta_arm final lenet5 0.90 30 $s
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
