#!/usr/bin/env bash
# Session 23 call 2: shorter convolution searches (this tree, "new") against 68ff62f ("old": the
# laps alone; its ops/ built alongside, without tests). The CUDA suite on the new build; then cold
# starts of ResNet-20 and LeNet-5 (learners auto, 2 epochs, no choices kept, CBT_LOG_CONV_ALGOS=1),
# new and old alternating, three rounds: process wall time, the training clock, each search kind's
# laps (search_laps.py); the choices of both compared; then `cbtrain bench` ResNet-32 at batch 32
# with 16 learners, new and old alternating, two rounds (the choices must train as fast).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops && tar xJf .device/session/old_ops.txz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 400 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "CopyTiming|SearchPhases|CudnnEngine|CudaConvAlgos|DirectConv" $R/tests.txt | grep -E "OK|FAILED" | head -30
wait $BUILD; cat $R/old_build_rc.txt
LAPS=docs/bench/h200_2026-11-28_s23/search_laps.py
start() {  # arm model epochs tag
  local bin=./build-gpu/tools/cbtrain; [ $1 = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  local t0=$(date +%s%N)
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin models/$2/$2.ts17.onnx --device cuda --batch-size 32 --learners auto --epochs $3 \
    --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --metrics $R/logs/$4.jsonl > $R/logs/$4.log 2>&1
  local rc=$? t1=$(date +%s%N)
  $PY - $R/logs/$4 $rc $(( (t1 - t0) / 1000000 )) <<'PY'
import json, sys
base, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = [json.loads(l) for l in open(base + '.jsonl')]
print(f"{base.split('/')[-1]} rc {rc}: process {wall / 1000:.2f} s, build {m[-1]['autotune_s']:.2f} s, epoch 1 {m[0]['elapsed_s']:.2f} s, "
      f"epoch {m[-1]['epoch']} {m[-1]['elapsed_s']:.2f} s, acc {m[-1]['test_accuracy']:.4f}", flush=True)
PY
  $PY $LAPS $R/logs/$4.log
}
for rep in 1 2 3; do
  for arm in new old; do
    start $arm resnet20 2 resnet20_${arm}_$rep
    start $arm lenet5 2 lenet5_${arm}_$rep
  done
done
for m in resnet20 lenet5; do
  for arm in new old; do $PY $LAPS --choices $R/logs/${m}_${arm}_1.log > $R/logs/${m}_${arm}_choices.txt; done
  echo "$m choices new vs old: $(diff $R/logs/${m}_new_choices.txt $R/logs/${m}_old_choices.txt | grep -c '^[<>]') lines differ"
  diff $R/logs/${m}_new_choices.txt $R/logs/${m}_old_choices.txt | head -12
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
