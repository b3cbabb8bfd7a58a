#!/usr/bin/env bash
# Session 17 call 4: the whole CUDA suite at the head; under --precision tf32, how far each
# tensor-core candidate of ResNet-32's searches is from the float32 reference (how many the
# float32 tolerance of 1e-4, used before ddcb1b6, would have rejected); ResNet-32 and
# ResNet-20 at batch 32 with 16 learners, fp32, this build ("new": ReluGrad through
# ternary_flat_map) against eb1890a's ops/cuda and tests/cuda ("old"), alternating.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/ops/cuda /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "CudnnEngine|CopyTiming|ReluGrad" $R/tests.txt | grep -E "OK|FAILED" | head
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
CBT_LOG_CONV_ALGOS=1 timeout 60 ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda --batch-size 32 \
  --learners 16 --steps 20 --warmup 5 --json --precision tf32 > $R/logs/r32_tf32_log.out 2> $R/logs/r32_tf32_log.err
grep -o " e[0-9]*/[0-9]*k/[^ ]*" $R/logs/r32_tf32_log.err | awk -F/ '{tc=0; for(i=1;i<=NF;i++){ if($i=="tc") tc=1; if($i ~ /^err/){e=substr($i,4)+0} }
  if (tc) {n++; if (e > 1e-4) over++; if (e > 5e-3) far++; if (e > mx) mx = e}} END {printf "tensor-core candidates %d, err > 1e-4: %d, > 5e-3: %d, largest %.2e\n", n, over, far, mx}'
wait $BUILD; cat $R/old_build_rc.txt
for rep in 1 2; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    for m in resnet32 resnet20; do
      f=$R/models/resnet32.onnx; [ $m = resnet20 ] && f=models/resnet20/resnet20.ts17.onnx
      timeout 90 $bin bench $f --device cuda --batch-size 32 --learners 16 --steps 150 --warmup 20 --json \
        > $R/logs/${m}_${arm}_$rep.out 2> $R/logs/${m}_${arm}_$rep.err
      echo "$m $arm rep $rep rc $?: $(tail -1 $R/logs/${m}_${arm}_$rep.out | grep -o '"images_per_sec":[^,]*')"
    done
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models; tar czf $OUT/r.tgz -C $OUT r
