#!/usr/bin/env bash
# Session 14 call 2: SMA's correction factor alpha around 2/k: ResNet-20 at K=14 and K=8,
# LeNet-5 at K=12, and --learners auto with a fixed alpha.
source .device/session/s14_lib.sh
r20() { tta resnet20 0.91 15 "$@"; }
le5() { tta lenet5 0.90 30 "$@"; }
for s in 1 2; do
  r20 $s 14 k14_a10 --alpha 0.1
  r20 $s 14 k14_a20 --alpha 0.2
  r20 $s 14 k14_a15_m07 --alpha 0.15 --sma-momentum 0.7
  r20 $s 8 k8_def
  r20 $s 8 k8_a25 --alpha 0.25
  le5 $s 12 k12_def
  le5 $s 12 k12_a17 --alpha 0.1667
  r20 $s auto auto_a15 --alpha 0.15
  le5 $s auto auto_a15 --alpha 0.15
done
r20 3 14 k14_a15 --alpha 0.15
r20 3 14 k14_def
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
