#!/usr/bin/env bash
# Session 25 call 6 (call 5 again, after the bound was mended: 7 learners at alpha 0.5 diverged too): the whole CUDA suite at the final code (tests built: the build folder kept
# CBT_BUILD_TESTS=OFF from call 1), gpu_check's quick training runs, and an alpha too large for the
# count on the GPU: refused with 6 learners, and with --learners auto the search held to 5 (alpha (k + 1 + mu_z) < 2 (1 + mu_z)).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check quick > $R/check.txt 2>&1
echo "gpu_check rc $? after $((SECONDS-T0)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED|accuracy" $R/check.txt | head -30
cp $R/check/gpu_tests.log $R/tests.txt
./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --data $CBT_DATA -k 6 --alpha 0.5 --epochs 1 > $R/logs/alpha_k6.txt 2>&1
echo "alpha 0.5 with 6 learners: exit $?"; tail -2 $R/logs/alpha_k6.txt
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
for s in 1 2; do tta_arm a0.5auto resnet20 0.91 15 $s --alpha 0.5; done
grep -h "autotune: at most" $R/logs/a0.5auto/*.log | head -2
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
