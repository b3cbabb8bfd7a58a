#!/usr/bin/env bash
# Session 25 call 5: the whole CUDA suite at the final code (tests built: the build folder kept
# CBT_BUILD_TESTS=OFF from call 1), gpu_check's quick training runs, and an alpha too large for the
# count on the GPU: refused with 8 learners, and with --learners auto the search held to 7.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check quick > $R/check.txt 2>&1
echo "gpu_check rc $? after $((SECONDS-T0)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED|accuracy" $R/check.txt | head -30
cp $R/check/gpu_tests.log $R/tests.txt
./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --data $CBT_DATA -k 8 --alpha 0.5 --epochs 1 > $R/logs/alpha_k8.txt 2>&1
echo "alpha 0.5 with 8 learners: exit $?"; tail -2 $R/logs/alpha_k8.txt
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
tta_arm a0.5auto resnet20 0.91 15 1 --alpha 0.5
grep -h "autotune: at most" $R/logs/a0.5auto/*.log | head -2
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
