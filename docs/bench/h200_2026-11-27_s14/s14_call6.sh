#!/usr/bin/env bash
# Session 14 call 6: the residual Add + Relu fusion (8403009): the whole CUDA suite, then
# `cbtrain bench` at batch 32 with 16 learners, this commit's build against 10ab19f's
# (the fusion's files as they were, built alongside), alternating.
source .device/session/s14_lib.sh
T1=$SECONDS
timeout 150 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
mkdir -p $R/models /tmp/old
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1
cp models/resnet20/resnet20.ts17.onnx $R/models/resnet20.onnx; cp models/lenet5/lenet5.ts17.onnx $R/models/lenet5.onnx
tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
cp -r .device/session/old/. /tmp/old/ && ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1); echo "old build rc $? after $((SECONDS-T2)) s"
one() {  # build model k
  local bin=./build-gpu/tools/cbtrain; [ $1 = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  timeout 60 $bin bench $R/models/$2.onnx --device cuda --batch-size 32 --learners $3 --steps 150 --warmup 20 --json > $R/bench_$1_$2_$3_$rep.txt 2>&1
  echo "$1 $2 K=$3 rep $rep: $(grep -o '"images_per_sec": [0-9.]*' $R/bench_$1_$2_$3_$rep.txt | tail -1)"
}
for rep in 1 2; do
  for b in new old; do one $b resnet32 16; one $b resnet20 16; done
  for b in old new; do one $b lenet5 16; done
done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
