#!/usr/bin/env bash
# Session 17 call 5: the whole CUDA suite with --conv-choices; ResNet-20 and LeNet-5 for 3
# epochs with --learners auto, without the file ("none"), then writing it ("cold") and reading
# it ("warm"), twice; time to accuracy with the file read (3 seeds each).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "ConvChoices|SavedConv" $R/tests.txt | grep -E "OK|FAILED" | head
run() {  # arm model epochs
  local arm=$1 m=$2 e=$3 tag=$1_$2_$rep extra=()
  [ $arm != none ] && extra=(--conv-choices $R/choices_$m.txt)
  [ $arm = cold ] && rm -f $R/choices_$m.txt
  local t0=$(date +%s.%N)
  CBT_LOG_CONV_ALGOS=1 timeout 60 ./build-gpu/tools/cbtrain models/$m/$m.ts17.onnx --device cuda --batch-size 32 --learners auto \
    --epochs $e --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --progress off "${extra[@]}" > $R/logs/$tag.out 2> $R/logs/$tag.err
  local rc=$? wall=$(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b - a}')
  local se=$(grep -o "searched in [0-9.]*" $R/logs/$tag.err | awk '{s+=$3} END {printf "%.0f", s}')
  echo "$tag rc $rc wall $wall s; searches $(grep -c 'searched in' $R/logs/$tag.err) ($se ms); $(grep -E 'autotune: 1 learner' $R/logs/$tag.out | grep -o '[0-9.]* s)'); $(grep -E '^epoch 3:' $R/logs/$tag.out | grep -o 'test accuracy [0-9.]*%'); $(grep -o 'convolution choice.*' $R/logs/$tag.out | tr '\n' ';')"
}
for rep in 1 2; do
  for m in resnet20 lenet5; do for arm in none cold warm; do run $arm $m 3; done; done
done
for s in 1 2 3; do tta resnet20 0.91 15 $s auto warm --conv-choices $R/choices_resnet20.txt; done
for s in 1 2 3; do tta lenet5 0.90 30 $s auto warm --conv-choices $R/choices_lenet5.txt; done
head -3 $R/choices_resnet20.txt | cut -c1-200; wc -l $R/choices_*.txt
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
