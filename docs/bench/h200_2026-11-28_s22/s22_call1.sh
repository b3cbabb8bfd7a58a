#!/usr/bin/env bash
# Session 22 call 1: where the start of a training run goes. Built with trace.patch applied
# (CBT_TRACE=1 prints seconds since main at the trainer's build steps and after the first
# rounds). ResNet-20 and LeNet-5 on Fashion-MNIST, batch 32: learners auto, cold (no
# convolution choices) and warm (--conv-choices of the cold run); 16 learners fixed, cold;
# ResNet-20 cold with CUDA_MODULE_LOADING=EAGER.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
CBT=./build-gpu/tools/cbtrain
run() {  # tag model learners epochs extra...
  local tag=$1 m=$2 k=$3 e=$4; shift 4
  local t=$SECONDS
  CBT_TRACE=1 CBT_LOG_CONV_ALGOS=1 timeout 90 $CBT models/$m/$m.ts17.onnx --device cuda --batch-size 32 --learners $k \
    --epochs $e --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA -o $R/o.onnx "$@" > $R/logs/$tag.log 2>&1
  echo "$tag rc $? wall $((SECONDS-t)) s: $(grep -c 'searched in' $R/logs/$tag.log) searches, $(grep -o 'searched in [0-9.]*' $R/logs/$tag.log | awk '{s+=$3} END {printf "%.0f ms", s}')"
  grep -E "^TRACE|autotune: (built|1 learner|chose)|^epoch [0-9]+:" $R/logs/$tag.log | grep -v "step" | head -30
}
for m in resnet20 lenet5; do
  rm -f $R/choices_$m.txt
  run ${m}_auto_cold $m auto 3 --conv-choices $R/choices_$m.txt
  run ${m}_auto_warm $m auto 3 --conv-choices $R/choices_$m.txt
  run ${m}_k16_cold $m 16 2
done
CUDA_MODULE_LOADING=EAGER run resnet20_auto_eager resnet20 auto 3
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
