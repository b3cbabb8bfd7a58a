#!/usr/bin/env bash
# Session 22 call 2: call 1's trace, finer (trace.patch as of this call: the CUDA backend's
# set-up steps for the first three backends; the first run of the first three programs, each
# op synchronised and timed, the slowest op types listed). ResNet-20 learners auto cold and
# warm, 1 learner warm; LeNet-5 auto warm.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
CBT=./build-gpu/tools/cbtrain
run() {  # tag model learners epochs extra...
  local tag=$1 m=$2 k=$3 e=$4; shift 4
  local t=$SECONDS
  CBT_TRACE=1 CBT_LOG_CONV_ALGOS=1 timeout 90 $CBT models/$m/$m.ts17.onnx --device cuda --batch-size 32 --learners $k \
    --epochs $e --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA -o $R/o.onnx "$@" > $R/logs/$tag.log 2>&1
  echo "$tag rc $? wall $((SECONDS-t)) s: $(grep -c 'searched in' $R/logs/$tag.log) searches, $(grep -o 'searched in [0-9.]*' $R/logs/$tag.log | awk '{s+=$3} END {printf "%.0f ms", s}')"
  grep -E "^TRACE|autotune: (built|1 learner|chose)|^epoch [0-9]+:" $R/logs/$tag.log | grep -v "step" | head -40
}
rm -f $R/choices_resnet20.txt $R/choices_lenet5.txt
run resnet20_auto_cold resnet20 auto 2 --conv-choices $R/choices_resnet20.txt
run resnet20_auto_warm resnet20 auto 2 --conv-choices $R/choices_resnet20.txt
run resnet20_k1_warm resnet20 1 1 --conv-choices $R/choices_resnet20.txt
run lenet5_auto_cold lenet5 auto 1 --conv-choices $R/choices_lenet5.txt
run lenet5_auto_warm lenet5 auto 1 --conv-choices $R/choices_lenet5.txt
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
