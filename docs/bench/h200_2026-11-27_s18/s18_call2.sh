#!/usr/bin/env bash
# Session 18 call 2: call 1 found LeNet-5 3.5% slower with the asynchronous loads (ResNet-32 7%
# and ResNet-20 4% faster), though every direct kernel LeNet-5 takes timed faster a copy. Are
# the kernels or the choices the cause? Each build ("new": asynchronous loads, "old": 1493408's
# ops/cuda) writes its convolution choices (--conv-choices); then both builds run with each
# file, so that the same kernels run on the same configurations: 2 files x 2 builds x 2 rounds,
# LeNet-5 and ResNet-32 at batch 32 with 16 learners.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
(cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
BUILD=$!
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
model() { case $1 in resnet32) echo $R/models/resnet32.onnx ;; *) echo models/$1/$1.ts17.onnx ;; esac; }
wait $BUILD; cat $R/old_build_rc.txt
binary() { [ $1 = old ] && echo /tmp/old/build-gpu/tools/cbtrain || echo ./build-gpu/tools/cbtrain; }
steps() { [ $1 = lenet5 ] && echo 1500 || echo 150; }
mkdir -p $R/choices
for m in lenet5 resnet32; do
  for arm in new old; do
    timeout 90 $(binary $arm) bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps $(steps $m) --warmup 20 \
      --json --conv-choices $R/choices/${m}_$arm.txt > $R/logs/${m}_${arm}_write.out 2> $R/logs/${m}_${arm}_write.err
    echo "$m $arm writes its choices, rc $?: $(tail -1 $R/logs/${m}_${arm}_write.out | grep -o '"images_per_sec":[^,]*')"
  done
done
for rep in 1 2; do
  for m in lenet5 resnet32; do
    for file in new old; do
      for arm in new old; do
        cp $R/choices/${m}_$file.txt /tmp/choices.txt
        timeout 90 $(binary $arm) bench $(model $m) --device cuda --batch-size 32 --learners 16 --steps $(steps $m) \
          --warmup 20 --json --conv-choices /tmp/choices.txt > $R/logs/${m}_${arm}_f${file}_$rep.out 2> $R/logs/${m}_${arm}_f${file}_$rep.err
        echo "$m build $arm choices $file rep $rep rc $?: $(tail -1 $R/logs/${m}_${arm}_f${file}_$rep.out | grep -o '"images_per_sec":[^,]*')"
      done
    done
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models; xz -9 $R/logs/*.err; tar czf $OUT/r.tgz -C $OUT r
