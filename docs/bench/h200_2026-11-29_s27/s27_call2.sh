#!/usr/bin/env bash
# Session 27 call 2: the driver's full run at the final code, part 1 (its throughput stages, into an
# empty output folder), then the length and rate of ResNet-20's cosine on both sides below 4 epochs,
# seeds 1-3, ended at the target: PyTorch b=256 over 3 epochs at lr 0.05 and 0.1 and over 4 at 0.1;
# cbtrain (b=32, learners auto) over 3 at 0.05 and over 4 at 0.1. Call 1 measured 4, 5, 6 at 0.05.
export PRECISION=fp32 CBT_COMMIT=$(cat .device/session/commit.txt)
FRESH=1 DRV_LIMIT=330 STAGES=export,torch_tput,cbt_tput,report bash docs/bench/h200_2026-11-27_s14/s14_drv.sh
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
source docs/bench/h200_2026-11-29_s25/s25_lib.sh
for s in 1 2 3; do
  torch_arm b256cos3 resnet20 256 0.91 3 $s
  torch_arm b256cos3lr0.1 resnet20 256 0.91 3 $s --lr 0.1
  torch_arm b256cos4lr0.1 resnet20 256 0.91 4 $s --lr 0.1
  tta resnet20 0.91 3 $s auto cos3
  tta_lr 0.1 cos4lr0.1 resnet20 0.91 4 $s
  echo "after seed $s: $((SECONDS-T0)) s"
done
$PY - $R/res/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f)); h = j.get("history") or []
    acc = [round(x["test_accuracy"] * 100, 1) for x in h] if h else [round(a * 100, 1) for a in j.get("accuracy", [])]
    print(f.split("/")[-1], j.get("epochs_to_target"), j.get("seconds_to_target"), acc, [round(x, 2) for x in j.get("elapsed_s", [])])
PY
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*.log $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
