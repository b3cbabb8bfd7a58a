#!/usr/bin/env bash
# Session 19 call 6: the CUDA suite with DirectConv.AnInputOffTheSixteenByteGridGivesTheSameOutputs
# (an input one float off the 16-byte grid takes the 4-byte copies, bit for bit the aligned run).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "DirectConv|DirectWgrad" $R/tests.txt | grep -E "OK|FAILED" | head -20
rm -rf $R/check; xz -9 $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
