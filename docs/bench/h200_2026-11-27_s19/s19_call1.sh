#!/usr/bin/env bash
# Session 19 call 1: where ResNet-32's 16-channel stage kernels spend their time. The direct
# kernels' SASS (registers, shared-memory loads per FMA); Nsight Compute on the kernels that
# 16 learners run (the searches time 8 copies at once, so CBT_CONV_CONCURRENCY=8 makes one
# learner take the same configurations), one launch each of the forward, backward-data and
# tiled backward-filter kernel; then `cbtrain bench` at batch 32 with 16 learners, twice.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
B=./build-gpu/tools/cbtrain
O=build-gpu/CMakeFiles/cbt_ops_cuda.dir/ops/cuda/direct_conv.cu.o
[ -f $O ] || O=$(find build-gpu -name 'direct_conv.cu.o' | head -1)
cuobjdump -res-usage $O 2>&1 | grep -A1 -E "direct_conv_kernel|wgrad_tile" | grep -o "Function [^ ]*\|REG:[0-9]*\|SHARED:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste -sd' ' | sed 's/Function/\nFunction/g' | c++filt | head -60 > $R/res_usage.txt
cuobjdump -sass $O > $R/sass.txt 2>&1; xz -9 $R/sass.txt
CBT_LOG_CONV_ALGOS=1 timeout 60 $B bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 16 --steps 20 \
  --warmup 5 --json > /dev/null 2> $R/algos16.err
grep 'conv direct' $R/algos16.err | cut -c1-200
for k in "direct_conv_kernel<3, 8, 4>" "direct_conv_kernel<3, 8, 2>" "wgrad_tile_kernel<3, 4, 2>"; do
  tag=$(echo "$k" | tr -dc 'a-z0-9')
  CBT_CONV_CONCURRENCY=8 timeout 150 ncu --profile-from-start off --clock-control none --kernel-name-base demangled \
    -k "regex:$k" --launch-count 1 --set full \
    $B bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 1 \
    --cuda-graphs off --warmup 5 --steps 10 > $R/ncu_$tag.txt 2> $R/ncu_$tag.err
  echo "ncu $tag rc $? after $((SECONDS-T0)) s"; tail -2 $R/ncu_$tag.err
done
for rep in 1 2; do
  timeout 90 $B bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 16 --steps 150 --warmup 20 --json \
    > $R/bench_$rep.out 2> $R/bench_$rep.err
  echo "resnet32 K=16 rep $rep rc $?: $(tail -1 $R/bench_$rep.out | grep -o '"images_per_sec":[^,]*')"
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models; tar czf $OUT/r.tgz -C $OUT r
