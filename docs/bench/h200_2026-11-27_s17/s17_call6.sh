#!/usr/bin/env bash
# Session 17 call 6: the whole CUDA suite at the session's final code.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "ConvChoices|SavedConv|CudnnEngine|ANonFinite|ReluGrad" $R/tests.txt | grep -E "OK|FAILED" | head -12
