#!/usr/bin/env bash
# Session 28, call 9 (nvidia-h200, the device time left, under 5 minutes): does the convolution
# search pay for itself over ResNet-20's 4-epoch run to 91%? Learners auto, seeds 1-3, side by
# side: --cudnn-algos measure (the default: cuDNN's engines and cbtrain's direct kernels timed),
# heuristic (cuDNN's first heuristic choice, nothing timed) and find (cudnnFind); then measure
# with a --conv-choices file that seed 1 writes and seeds 2-3 read. Each line as it comes.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-29_s24/s24_lib.sh
TTA_LIMIT=30
for s in 1 2 3; do
  tta resnet20 0.91 4 $s auto meas
  tta resnet20 0.91 4 $s auto heur --cudnn-algos heuristic
  tta resnet20 0.91 4 $s auto find --cudnn-algos find
  tta resnet20 0.91 4 $s auto cc --conv-choices $R/choices.txt
  clocks $R/res/resnet20_*_s$s.json | sed 's/^/  /'
  echo "after seed $s: $((SECONDS-T0)) s"
done
