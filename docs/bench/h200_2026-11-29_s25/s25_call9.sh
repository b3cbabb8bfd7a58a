#!/usr/bin/env bash
# Session 25 call 9: the whole CUDA suite at the final code (the loss kernels' label dispatch in one
# place, the divergence message), and one short training run on the GPU.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check build > $R/check.txt 2>&1
echo "tests build rc $? after $((SECONDS-T0)) s"
./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $?"; grep -E "^\[  (PASSED|FAILED) |tests? ran|SKIPPED \] [0-9]" $R/tests.txt
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
tta_arm final resnet20 0.91 15 1
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
