#!/usr/bin/env bash
# Session 23 call 3: the searches with engine 0 built directly (no fallback list) against 68ff62f
# (the laps alone), and the span of ResNet-20's cosine schedule. The CUDA suite on the new build;
# cold starts of ResNet-20 and LeNet-5, new and old alternating, two rounds, and their choices;
# `cbtrain bench` ResNet-32 b=32 K=16, new and old alternating, two rounds. Then ResNet-20 to 91%
# with the cosine schedule over 8, 10 and 15 epochs, seeds 1-3, on both sides as the driver runs
# them (PyTorch eager b=256 lr 0.05; cbtrain b=32 per learner, learners auto, lr 0.05), each run
# ended at the target.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
source docs/bench/h200_2026-11-28_s23/s23_lib.sh
build_old
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/tests.txt | head -12
grep -E "CopyTiming|SearchPhases|CudnnEngine" $R/tests.txt | grep -E "OK|FAILED" | head -12
wait $BUILD; cat $R/old_build_rc.txt
for rep in 1 2; do
  for arm in new old; do
    start $arm resnet20 2 resnet20_${arm}_$rep
    start $arm lenet5 2 lenet5_${arm}_$rep
  done
done
for m in resnet20 lenet5; do
  for arm in new old; do $PY $LAPS --choices $R/logs/${m}_${arm}_1.log > $R/logs/${m}_${arm}_choices.txt; done
  echo "$m choices new vs old: $(diff $R/logs/${m}_new_choices.txt $R/logs/${m}_old_choices.txt | grep -c '^[<>]') lines differ"
  diff $R/logs/${m}_new_choices.txt $R/logs/${m}_old_choices.txt | head -8
done
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
for rep in 1 2; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    timeout 90 $bin bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 16 --steps 150 --warmup 20 --json \
      > $R/logs/r32_${arm}_$rep.out 2> $R/logs/r32_${arm}_$rep.err
    echo "resnet32 $arm rep $rep rc $?: $(tail -1 $R/logs/r32_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
  done
done
echo "searches done after $((SECONDS-T0)) s"
for e in 8 10 15; do
  for s in 1 2 3; do
    timeout 120 $PY bench/torch_time_to_accuracy.py --model resnet20 --batch 256 --lr 0.05 --schedule cosine --target 0.91 \
      --max-epochs $e --seed $s --data $CBT_DATA --init-onnx models/resnet20/resnet20.ts17.onnx --precision fp32 \
      --out $R/res/torch_resnet20_e${e}_s$s.json > $R/logs/torch_e${e}_s$s.log 2>&1
    show $R/res/torch_resnet20_e${e}_s$s.json
    TTA_LIMIT=60 tta resnet20 0.91 $e $s auto e$e
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models $R/check $R/check_old; xz -9 $R/logs/*.log $R/logs/*.err $R/logs/*/*.log $R/tests.txt 2>/dev/null; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
