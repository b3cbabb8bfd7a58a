#!/usr/bin/env bash
# Session 16, fourth two-GPU call (a fresh machine): where the trainer's build goes on two GPUs.
# Timers not committed (.device/session/prof2.patch, kept here as prof2.patch, with
# ../h200_2026-11-27_s16/prof_tmp.h), then ResNet-20 with --learners auto for one epoch on
# GPUs 0,1 (twice) and on GPU 0 alone, CBT_PROFILE=1.
cp .device/session/prof_tmp.h runtime/ && (git apply .device/session/prof2.patch || patch -p1 < .device/session/prof2.patch) || exit 3
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R/logs
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data NCCL_NVLS_ENABLE=0
run() {  # tag gpus
  local t0=$(date +%s.%N)
  CBT_PROFILE=1 timeout 60 ./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --gpus $2 \
    --batch-size 32 --learners auto --epochs 1 --lr 0.05 --seed 1 --data $CBT_DATA --progress off > $R/logs/$1.out 2> $R/logs/$1.err
  echo "$1 rc $? wall $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b - a}') s"
  grep -E "built|autotune: 1 learner|epoch 1:" $R/logs/$1.out
  grep -E "^PROFILE (load|graph|programs|trainer_ctor|all_reduce)" $R/logs/$1.err
  for k in backend_ctor backend_cublas backend_cudnn backend_setdevice+stream learner_ctor sync_backend; do
    grep "^PROFILE $k " $R/logs/$1.err | awk -v k=$k '{n++; s+=$3; printf "%s", (n<=20 ? "" : ""); v[n]=$3} END {printf "%s n=%d sum %.4f:", k, n, s; for (i=1;i<=n;i++) printf " %.3f", v[i]; printf "\n"}'
  done
}
run g01_a 0,1
run g01_b 0,1
run g0 0
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
