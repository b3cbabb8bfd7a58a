#!/usr/bin/env bash
# Session 22 call 7: the CUDA suite at the session's final code.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "StagingSlots|DeviceWarmUp|CopyTiming.Config|CudnnEngine|SavedConvolutionChoices|CommandLineTrainsOnCuda" $R/tests.txt | grep -E "OK|FAILED" | head -12
rm -rf $R/check; xz -9 $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
