#!/usr/bin/env bash
# Session 27 call 5 (the device time left, about 4 minutes): ResNet-20 with a cosine over 3 epochs,
# where cbtrain's defaults reach 90.6-90.8% at epoch 3 (call 2) and PyTorch b=256 91.3-91.7%:
# does another SMA setting reach 91% there? Seeds 1-2: 4 and 6 learners fixed, 8 with central
# momentum 0.95, 8 with alpha 0.35. Each result line is printed as it comes (the call may be cut).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
TTA_LIMIT=30
for s in 1 2; do
  tta resnet20 0.91 3 $s 4 c3k4
  tta resnet20 0.91 3 $s 6 c3k6
  tta resnet20 0.91 3 $s 8 c3mu95 --sma-momentum 0.95
  tta resnet20 0.91 3 $s 8 c3a35 --alpha 0.35
  clocks $R/res/*_s$s.json 2>/dev/null | sed 's/^/  /'
done
echo "total $((SECONDS-T0)) s"
