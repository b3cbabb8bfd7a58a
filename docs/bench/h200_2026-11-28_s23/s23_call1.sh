#!/usr/bin/env bash
# Session 23 call 1: where a cold convolution search's milliseconds go. Builds cbtrain (no tests),
# then trains ResNet-20 and LeNet-5 for one epoch from cold (learners auto, no choices kept) with
# CBT_LOG_CONV_ALGOS=1, whose lines now split each search into laps (search_phases.h); ResNet-20
# twice with lazy module loading (the default) and once with CUDA_MODULE_LOADING=EAGER, which
# loads every kernel before the searches (so their first runs load nothing).
export CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
run() {  # model tag [env...]
  local m=$1 tag=$2; shift 2
  local t0=$(date +%s%N)
  env CBT_LOG_CONV_ALGOS=1 "$@" timeout 90 ./build-gpu/tools/cbtrain models/$m/$m.ts17.onnx --device cuda --batch-size 32 \
    --learners auto --epochs 1 --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --metrics $R/logs/$tag.jsonl \
    > $R/logs/$tag.log 2>&1
  local rc=$?; echo "$tag rc $rc wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  $PY docs/bench/h200_2026-11-28_s23/search_laps.py $R/logs/$tag.log
}
run resnet20 resnet20_lazy_1
run resnet20 resnet20_eager CUDA_MODULE_LOADING=EAGER
run resnet20 resnet20_lazy_2
run lenet5 lenet5_lazy
echo "total $((SECONDS-T0)) s"
xz -9 $R/logs/*.log; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
