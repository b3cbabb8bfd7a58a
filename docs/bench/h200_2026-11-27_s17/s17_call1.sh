#!/usr/bin/env bash
# Session 17 call 1: the whole CUDA suite at the head (the engine search's tolerance under
# --precision tf32, NaN rejected); ResNet-32 at batch 32 with 16 learners in fp32 and tf32,
# alternating; PyTorch's CUDA graphs on 8 and 16 streams in tf32; which engines the tf32
# search takes; time to accuracy in tf32, one seed each.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
T1=$SECONDS
timeout 300 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "CudnnEngine|ANonFinite|Tf32Widens" $R/tests.txt | grep -E "OK|FAILED" | head
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
for rep in 1 2; do
  for p in fp32 tf32; do
    timeout 90 ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 16 \
      --steps 150 --warmup 20 --json --precision $p > $R/logs/r32_${p}_$rep.out 2> $R/logs/r32_${p}_$rep.err
    echo "resnet32 k16 $p rep $rep rc $?: $(tail -1 $R/logs/r32_${p}_$rep.out | grep -o '"images_per_sec":[^,]*')"
  done
done
CBT_LOG_CONV_ALGOS=1 timeout 60 ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda --batch-size 32 \
  --learners 16 --steps 20 --warmup 5 --json --precision tf32 > $R/logs/r32_tf32_log.out 2> $R/logs/r32_tf32_log.err
echo "tf32 choices: $(grep -c 'chosen' $R/logs/r32_tf32_log.err) searches; chosen engines on tensor cores:"
grep -o "candidates:.*chosen: e[0-9]*" $R/logs/r32_tf32_log.err | awk '{c=$NF; sub("chosen: ","",c); n=split($0,a," "); tc=0; for(i=1;i<=n;i++) if (a[i] ~ "^"c"/" && a[i] ~ "/tc/") tc=1; print c, tc}' | sort | uniq -c | head -20
grep -c "rejected" $R/logs/r32_tf32_log.err
timeout 200 $PY bench/torch_throughput.py --model resnet32 --batch 32 --modes graph,multistream --ks 8,16 --precision tf32 \
  --out $R/res/torch_r32_tf32.json > $R/logs/torch_tf32.txt 2>&1; echo "torch tf32 rc $?"; tail -8 $R/logs/torch_tf32.txt
tta resnet20 0.91 15 1 auto tf32 --precision tf32
tta lenet5 0.90 30 1 auto tf32 --precision tf32
echo "total $((SECONDS-T0)) s"
