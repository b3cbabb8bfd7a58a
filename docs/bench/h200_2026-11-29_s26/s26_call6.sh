#!/usr/bin/env bash
# Session 26 call 6: the default alpha (1.9 / k) with few learners fixed. With 2 learners it is 0.95,
# near SMA's bound (alpha (k + 1 + mu) < 2 (1 + mu)); ResNet-20 to 91% as the driver runs it
# (b=32, lr 0.05 cosine over 15 epochs, ended at the target): 2 learners with the default alpha and
# with 0.4, seeds 1-3; 3 learners with the default (0.633) and with 0.3, seeds 1-2.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
for s in 1 2 3; do
  tta resnet20 0.91 15 $s 2 k2
  tta resnet20 0.91 15 $s 2 k2a0.4 --alpha 0.4
  if [ $s -lt 3 ]; then
    tta resnet20 0.91 15 $s 3 k3
    tta resnet20 0.91 15 $s 3 k3a0.3 --alpha 0.3
  fi
  echo "after seed $s: $((SECONDS-T0)) s"
done
$PY - $R/res/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f)); h = j.get("history") or []
    print(f.split("/")[-1], j.get("epochs_to_target"), j.get("seconds_to_target"), [round(x["test_accuracy"] * 100, 1) for x in h])
PY
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; xz -9 $R/logs/*/*.log 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
