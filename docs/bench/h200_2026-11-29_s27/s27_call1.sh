#!/usr/bin/env bash
# Session 27 call 1: the CUDA suite after the default alpha's cap (c3dd72e), then on one H200:
#  - the length of the cosine schedule on both sides (ResNet-20 to 91%, seeds 1-3, ended at the
#    target): cbtrain b=32 learners auto and PyTorch eager b=256, cosine over 4, 5 and 6 epochs
#    (the driver's is 15 on both);
#  - 3 and 4 learners fixed with the new default alpha (0.4), seeds 1-2;
#  - where the start goes beyond the searches: one epoch of ResNet-20 (8 learners, choices read
#    from a file) under nsys (CUDA API and OS runtime summaries), and CUDA_MODULE_LOADING=EAGER
#    against the default, choices read.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=ON bash scripts/gpu_check.sh $R/check build > $R/check.txt 2>&1
echo "tests build rc $? after $((SECONDS-T0)) s"
timeout 120 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "CUDA suite rc $?"; grep -E "^\[  (PASSED|FAILED) |tests? ran|SKIPPED \] [0-9]" $R/tests.txt
echo "after the suite: $((SECONDS-T0)) s"
for s in 1 2 3; do
  for e in 4 5 6; do
    tta resnet20 0.91 $e $s auto cos$e
    torch_arm b256cos$e resnet20 256 0.91 $e $s
  done
  echo "after seed $s: $((SECONDS-T0)) s"
done
for s in 1 2; do
  tta resnet20 0.91 15 $s 3 k3
  tta resnet20 0.91 15 $s 4 k4
done
echo "after k3/k4: $((SECONDS-T0)) s"
cc=$R/cc_k8.txt
tta resnet20 0.999 1 1 8 k8search --conv-choices $cc
for rep in 1 2; do
  tta resnet20 0.999 1 1 8 k8lazy$rep --conv-choices $cc
  CUDA_MODULE_LOADING=EAGER tta resnet20 0.999 1 1 8 k8eager$rep --conv-choices $cc
done
if command -v nsys > /dev/null; then
  timeout 90 nsys profile -t cuda,osrt -o $R/k8 --force-overwrite true ./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx \
    --device cuda --batch-size 32 --learners 8 --epochs 1 --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA \
    --conv-choices $cc > $R/logs/nsys_run.log 2>&1
  echo "nsys rc $?"
  nsys stats -r cuda_api_sum,osrt_sum $R/k8.nsys-rep > $R/nsys_stats.txt 2>&1; head -60 $R/nsys_stats.txt
  rm -f $R/k8.sqlite $R/k8.nsys-rep
else
  echo "no nsys on this machine"
fi
clocks $R/res/*.json
$PY - $R/res/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f)); h = j.get("history") or []
    acc = [round(x["test_accuracy"] * 100, 1) for x in h] if h else [round(a * 100, 1) for a in j.get("accuracy", [])]
    print(f.split("/")[-1], j.get("epochs_to_target"), j.get("seconds_to_target"), acc)
PY
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
