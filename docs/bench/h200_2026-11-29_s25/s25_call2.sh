#!/usr/bin/env bash
# Session 25 call 2: the direct kernels' search ends after a first look at every fifth configuration
# when none comes within twice cuDNN's chosen engine. Against c00bc2a (ops/, runtime/, tools/ built
# beside): the new tests; the searches' milliseconds and the wall time of a cold start (cbtrain bench,
# 8 rounds) for ResNet-20 (8 learners), ResNet-32 (16) and a wider ResNet (64/128/256 channels, 8);
# ResNet-32's throughput at K=16 (the goal's figure) and the wider one's at 8, alternating; ResNet-20
# to 91% (seeds 1-2); the whole CUDA suite.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
build_old_ops
mkdir -p $R/models
$PY bench/models.py --out $R/models --models resnet32 > $R/logs/export.txt 2>&1
$PY docs/bench/h200_2026-11-29_s25/wide_resnet.py $R/models/wide.onnx >> $R/logs/export.txt 2>&1
tail -2 $R/logs/export.txt
grep -E "error|undefined" $R/check/build.log | grep -v "^: &&" | head -20
./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $R/tests.txt
wait $BUILD; cat $R/old_build_rc.txt; echo "built after $((SECONDS-T0)) s"
for arm in old new old new; do
  startup $arm models/resnet20/resnet20.ts17.onnx 8 resnet20
  startup $arm $R/models/wide.onnx 8 wide
done
startup old $R/models/resnet32.onnx 16 resnet32; startup new $R/models/resnet32.onnx 16 resnet32
echo "after start-ups $((SECONDS-T0)) s"
for arm in old new old new; do tput $arm $R/models/resnet32.onnx 16 resnet32; done
for arm in old new; do tput $arm $R/models/wide.onnx 8 wide; done
echo "after throughput $((SECONDS-T0)) s"
for s in 1 2; do for arm in old new; do [ $((SECONDS-T0)) -lt 540 ] && tta_arm $arm resnet20 0.91 15 $s; done; done
clocks $R/res/resnet20_*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/check_old; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
