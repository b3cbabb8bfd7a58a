#!/usr/bin/env bash
# Session 20 calls 8 and 9: the CUDA suite at the final code (call 8: the shared atomic file writer
# and MatMul's shared operand shapes on top of 1a5e721's kernels; call 9: Gemm's shared attributes).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "MatMul|Gemm|ConvChoices|Choices" $R/tests.txt | grep -E "OK|FAILED" | head -12
xz -9 $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
