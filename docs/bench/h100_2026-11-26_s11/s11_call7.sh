#!/usr/bin/env bash
# Session 11 call 7: where the learner search's seconds go. LeNet-5 and ResNet-20,
# --learners auto, one epoch: as is; with CBT_CONV_DIRECT=off (no direct configurations timed);
# with CBT_CONV_CONCURRENCY=8 (one search per convolution instead of one per count up to 8).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
bash scripts/unpack_carried_data.sh "$CBT_DATA" > /dev/null 2>&1
for m in lenet5 resnet20; do for mode in as_is direct_off conc8; do
  E=(); [ $mode = direct_off ] && E=(CBT_CONV_DIRECT=off); [ $mode = conc8 ] && E=(CBT_CONV_CONCURRENCY=8)
  T1=$SECONDS
  env "${E[@]}" timeout 120 ./build-gpu/tools/cbtrain models/$m/$m.ts17.onnx --device cuda -b 32 --learners auto --epochs 1 \
    --lr 0.05 --data $CBT_DATA --log-every 0 --progress off --metrics $R/${m}_$mode.jsonl > $R/${m}_$mode.log 2>&1
  echo "== $m $mode rc $? wall $((SECONDS-T1)) s"; grep -E "autotune: .*learner|chose" $R/${m}_$mode.log | sed -E 's/images\/s \(([0-9.]+) MiB per learner; /ips (/' | cut -c1-90 | tr '\n' '|' ; echo
  cat $R/${m}_$mode.jsonl | cut -c1-260
done; done
tar czf $OUT/r.tgz -C $OUT r
