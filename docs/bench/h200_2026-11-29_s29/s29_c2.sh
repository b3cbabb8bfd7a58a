#!/usr/bin/env bash
# Session 29, call 2 (one H200): is ResNet-20's gap SMA's statistics or speed? cbtrain with
# --algorithm ssgd and 8 learners of 32 (one model, the gradients of 256 images a step: PyTorch
# b=256's arithmetic) beside PyTorch eager b=256, both lr 0.05, seeds 1-3, ended at the target:
# cosine over 3 epochs, the same with --label-smoothing 0.1, and over 2 epochs with it.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
TTA_LIMIT=40
for s in 1 2 3; do
  tta resnet20 0.91 3 $s 8 ssgd3 --algorithm ssgd
  tta resnet20 0.91 3 $s 8 ssgd3ls --algorithm ssgd --label-smoothing 0.1
  tta resnet20 0.91 2 $s 8 ssgd2ls --algorithm ssgd --label-smoothing 0.1
  tta resnet20 0.91 3 $s auto sma3
  torch_arm t3 resnet20 256 0.91 3 $s
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
