#!/usr/bin/env bash
# Session 15 calls 3 and 4: the driver's full run at the final code, in two parts
# (STAGES=... as for s14_drv.sh), then the whole CUDA suite (call 3).
bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
if [ -n "${SUITE:-}" ]; then
  T1=$SECONDS
  timeout 120 ./build-gpu/tests/cbt_tests_cuda > $OUT/r/tests.txt 2>&1
  echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $OUT/r/tests.txt | head -12
  grep -E "CudaBatchNorm|OneLaunch" $OUT/r/tests.txt | grep -E "OK|FAILED|SKIPPED"
  tar czf $OUT/r.tgz -C $OUT r
fi
