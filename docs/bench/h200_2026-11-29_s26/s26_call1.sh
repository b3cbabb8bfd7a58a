#!/usr/bin/env bash
# Session 26 call 1: where ResNet-20's first epoch goes, and whether fewer learners reach 91% sooner.
# Each run is the driver's cbtrain run (b=32, lr 0.05 cosine) with one thing changed:
#   cold   : --learners auto, convolution choices searched (the driver's run), written to a file
#   warm   : --learners auto, the choices read from that file (no convolution search)
#   k8warm : 8 learners fixed (no learner search), choices read
#   k8cold : 8 learners fixed, choices searched
#   k8eager: 8 learners fixed, choices read, --cuda-graphs off
# then ResNet-20 to 91% with 4 and 6 learners fixed, seeds 1-3 (the choices of each count kept in a file).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
for m in resnet20 lenet5; do
  for rep in 1 2; do
    cc=$R/cc_${m}_$rep.txt
    tta $m 0.999 2 1 auto cold$rep --conv-choices $cc
    tta $m 0.999 2 1 auto warm$rep --conv-choices $cc
    tta $m 0.999 2 1 8 k8warm$rep --conv-choices $cc
    tta $m 0.999 2 1 8 k8cold$rep
    [ $m = resnet20 ] && tta $m 0.999 2 1 8 k8eager$rep --conv-choices $cc --cuda-graphs off
  done
  echo "after $m: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
for k in 4 6; do
  for s in 1 2 3; do tta resnet20 0.91 15 $s $k fixed$k --conv-choices $R/cc_fixed$k.txt; done
done
clocks $R/res/resnet20_fixed*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
