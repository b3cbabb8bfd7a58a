#!/usr/bin/env bash
# Session 28, call 4 (the machine of calls 1-3, kept warm): more seeds of call 3's threshold
# comparison on GPU 0 (ResNet-20 to 91% over 4 epochs and LeNet-5 to 90% over 30, learners
# auto, --autotune-threshold 0.1 (the default) against 0.4, seeds 4-9 and 4-6); then ResNet-20
# on both GPUs over a 6-epoch cosine on both sides (the multi-GPU driver's are 15 for DDP and
# 30 for cbtrain): PyTorch DDP at 32 per GPU (lr 0.05 x 2) and cbtrain, seeds 1-3.
OUT=${OUT:?}
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
for s in 4 5 6 7 8 9; do
  tta resnet20 0.91 4 $s auto th01
  tta resnet20 0.91 4 $s auto th04 --autotune-threshold 0.4
done
for s in 4 5 6; do
  tta lenet5 0.90 30 $s auto th01
  tta lenet5 0.90 30 $s auto th04 --autotune-threshold 0.4
done
echo "after the threshold runs: $((SECONDS-T0)) s"
for s in 1 2 3; do
  timeout 150 $PY bench/torch_ddp.py tta --gpus 2 --model resnet20 --batch 32 --lr 0.05 --lr-scaling linear \
    --schedule cosine --target 0.91 --max-epochs 6 --seed $s --data $CBT_DATA \
    --init-onnx models/resnet20/resnet20.ts17.onnx --precision fp32 --budget 140 \
    --out $R/res/ddp_resnet20_cos6_s$s.json 2>&1 | grep -E "reached|did not|rror" | tail -2
  timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/resnet20/resnet20.ts17.onnx \
    --name resnet20 --batch 32 --learners auto --gpus 0,1 --epochs 6 --lr 0.05 --schedule cosine --target 0.91 --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 55 --out $R/res/resnet20_g2cos6_s$s.json --logs $R/logs/g2cos6 > /dev/null 2>&1
  show $R/res/resnet20_g2cos6_s$s.json
  echo "after seed $s: $((SECONDS-T0)) s"
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/check; tar czf $OUT/r.tgz -C $OUT r
