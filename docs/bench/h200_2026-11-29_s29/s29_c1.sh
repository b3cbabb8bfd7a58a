#!/usr/bin/env bash
# Session 29, call 1 (one H200): can ResNet-20 reach 91% by epoch 2? Seeds 1-3, side by side,
# both systems from the committed model's weights, ended at the target:
#  - cbtrain b=32 learners auto lr 0.05: a cosine over 3 epochs (control), the same with
#    --label-smoothing 0.1, at lr 0.1 with it, over 2 epochs with it, and over 3 epochs with it
#    and --autotune-threshold 0.4 (fewer learners);
#  - PyTorch eager b=256 lr 0.05: over 3 epochs, the same with --label-smoothing 0.1, over 2 with it.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
TTA_LIMIT=40
for s in 1 2 3; do
  tta resnet20 0.91 3 $s auto c3
  tta resnet20 0.91 3 $s auto c3ls --label-smoothing 0.1
  tta_lr 0.1 c3ls_lr01 resnet20 0.91 3 $s --label-smoothing 0.1
  tta resnet20 0.91 2 $s auto c2ls --label-smoothing 0.1
  tta resnet20 0.91 3 $s auto c3ls_t04 --label-smoothing 0.1 --autotune-threshold 0.4
  torch_arm t3 resnet20 256 0.91 3 $s
  torch_arm t3ls resnet20 256 0.91 3 $s --label-smoothing 0.1
  torch_arm t2ls resnet20 256 0.91 2 $s --label-smoothing 0.1
  echo "after seed $s: $((SECONDS-T0)) s"
done
clocks $R/res/*.json
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
