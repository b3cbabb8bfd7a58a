#!/usr/bin/env bash
# Session 27 call 4 (diagnostic): ResNet-20 trained by cbtrain with a cosine over 3 epochs (b=32,
# learners auto, lr 0.05; seeds 1-3), its trained model written; then bn_recalibrate.py measures
# the test accuracy of that model as exported (z with the learners' mean BatchNorm statistics) and
# with statistics recomputed from z's own activations on 20 and 234 training batches of 256.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
for s in 1 2 3; do
  timeout 40 ./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --batch-size 32 --learners auto \
    --epochs 3 --lr 0.05 --lr-schedule cosine --seed $s --data $CBT_DATA -o $R/cos3_s$s.onnx > $R/logs/cos3_s$s.log 2>&1
  echo "seed $s rc $?: $(grep -E '^epoch|test' $R/logs/cos3_s$s.log | tail -1)"
  timeout 60 $PY docs/bench/h200_2026-11-29_s27/bn_recalibrate.py $R/cos3_s$s.onnx $CBT_DATA 20 234
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/*.onnx; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
