#!/usr/bin/env bash
# Session 22 call 3: the faster start (this tree, "new") against b9d15e8 ("old": its runtime/,
# tools/ and ops/ built alongside, without tests). The CUDA suite on the new build; then cold starts
# of ResNet-20 and LeNet-5 (learners auto, 2 epochs, no convolution choices kept), new and old
# alternating, three rounds: the build before training (autotune_s), the first count's time,
# the searches' sum, epoch 2's training clock; then `cbtrain bench` ResNet-32 at batch 32 with
# 16 learners, new against old, two rounds (the choices of the faster search must train as fast).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/runtime /tmp/old/tools /tmp/old/ops && tar xJf .device/session/old_src.txz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "StagingSlots|DeviceWarmUp|CopyTiming.Config|CudnnEngine|SavedConvolutionChoices" $R/tests.txt | grep -E "OK|FAILED" | head -12
wait $BUILD; cat $R/old_build_rc.txt
start() {  # arm model epochs tag
  local bin=./build-gpu/tools/cbtrain; [ $1 = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  local t0=$(date +%s.%N)
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin models/$2/$2.ts17.onnx --device cuda --batch-size 32 --learners auto --epochs $3 \
    --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA -o $R/o.onnx --metrics $R/logs/$4.jsonl > $R/logs/$4.log 2>&1
  local rc=$? t1=$(date +%s.%N)
  $PY - $R/logs/$4 $rc $t0 $t1 <<'PY'
import json, re, sys
base, rc, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
log = open(base + '.log').read()
m = [json.loads(l) for l in open(base + '.jsonl')]
x8 = sum(float(v) for v in re.findall(r'x(?:8|16) [^\n]*searched in ([0-9.]+) ms', log))
first = re.search(r'autotune: 1 learner\(s\): [0-9]+ images/s \([^;]*; ([0-9.]+) s\)', log)
print(f"{base.split('/')[-1]} rc {rc}: process {t1 - t0:.2f} s, build {m[-1]['autotune_s']:.2f} s, first count "
      f"{first.group(1) if first else '?'} s, training searches {x8:.0f} ms, epoch 1 {m[0]['elapsed_s']:.2f} s, "
      f"epoch {m[-1]['epoch']} {m[-1]['elapsed_s']:.2f} s, with build {m[-1]['elapsed_s'] + m[-1]['autotune_s']:.2f} s, "
      f"acc {m[-1]['test_accuracy']:.4f}", flush=True)
PY
}
for rep in 1 2 3; do
  for arm in new old; do
    start $arm resnet20 2 resnet20_${arm}_$rep
    start $arm lenet5 2 lenet5_${arm}_$rep
  done
done
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
for rep in 1 2; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    timeout 90 $bin bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 16 --steps 150 --warmup 20 --json \
      > $R/logs/r32_${arm}_$rep.out 2> $R/logs/r32_${arm}_$rep.err
    echo "resnet32 $arm rep $rep rc $?: $(tail -1 $R/logs/r32_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models $R/check $R/check_old; xz -9 $R/logs/*.log $R/logs/*.err $R/tests.txt; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
