#!/usr/bin/env bash
# Session 26 call 2: the learner search going down from the cap (new) against the climb from one
# learner (old: runtime/ and tools/ of 0747eec built alongside), side by side on one H200, seeds 1-3
# alternating: ResNet-20 to 91% (and 8 learners fixed, and PyTorch eager b=256, the driver's better
# PyTorch) and LeNet-5 to 90%, as the driver runs them (b=32, lr 0.05 cosine over 15 / 30 epochs,
# ended at the target). Then the whole CUDA suite of the new build.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
touch runtime/autotune.cpp runtime/autotune.h runtime/training_tuner.cpp runtime/training_tuner.h
build_old
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check build > $R/check.txt 2>&1
echo "tests build rc $? after $((SECONDS-T0)) s"
wait $BUILD; cat $R/old_build_rc.txt; echo "after the builds: $((SECONDS-T0)) s"
for s in 1 2 3; do
  tta_arm new resnet20 0.91 15 $s
  tta_arm old resnet20 0.91 15 $s
  tta resnet20 0.91 15 $s 8 k8
  torch_arm b256 resnet20 256 0.91 15 $s
  tta_arm new lenet5 0.90 30 $s
  tta_arm old lenet5 0.90 30 $s
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
timeout $((560 - SECONDS + T0)) ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $?"; grep -E "^\[  (PASSED|FAILED) |tests? ran|SKIPPED \] [0-9]" $R/tests.txt
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/check_old; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
