#!/usr/bin/env bash
# Session 16, fifth two-GPU call: the whole CUDA suite at the commit that creates the GPUs'
# contexts at once (prepare_devices), then the trainer's build for ResNet-20 with
# --learners auto on GPUs 0,1 ("autotune: built ..."), this build ("new") against e92ccd6's
# runtime/ and tests/cuda built alongside ("old"), alternating, three times each.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R/logs
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/runtime /tmp/old/tests/cuda && tar xzf .device/session/old_src.tgz -C /tmp/old
ln -sfn $PWD/.device /tmp/old/.device
T2=$SECONDS; (cd /tmp/old && bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $? after $((SECONDS-T2)) s" > $R/old_build_rc.txt) &
BUILD=$!
ONNX=$PWD/.device/onnx/usr
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data NCCL_NVLS_ENABLE=0
T1=$SECONDS
timeout 200 ./build-gpu/tests/cbt_tests_cuda > $R/tests.txt 2>&1
echo "suite rc $? after $((SECONDS-T1)) s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" $R/tests.txt | head -12
grep -E "PreparingDevices|TwoAlike|TwoGpus|Beyond48" $R/tests.txt | grep -E "OK|FAILED|SKIPPED"
wait $BUILD; cat $R/old_build_rc.txt
for rep in 1 2 3; do
  for arm in new old; do
    bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
    timeout 60 $bin models/resnet20/resnet20.ts17.onnx --device cuda --gpus 0,1 --batch-size 32 --learners auto \
      --epochs 1 --lr 0.05 --seed 1 --data $CBT_DATA --progress off > $R/logs/${arm}_$rep.out 2>&1
    echo "$arm rep $rep rc $?: $(grep -E 'autotune: built' $R/logs/${arm}_$rep.out)"
  done
done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
