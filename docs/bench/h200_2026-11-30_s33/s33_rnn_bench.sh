#!/usr/bin/env bash
# Session 33 (one H200, after s33_cuda_check.sh built ./build-gpu): training throughput of SeqNet
# (models/seqnet: a two-layer bidirectional LSTM, a GRU and an RNN over 28 steps), PyTorch 2.11
# (cuDNN's fused recurrent kernels; eager, one CUDA graph, K graphs on K streams) against cbtrain
# (the layers unrolled into MatMul, Split and element-wise kernels; K learners, CUDA graphs), side
# by side on one GPU, synthetic data, fp32.   OUT=... [TORCH=0] [KS="1 4"] bash s33_rnn_bench.sh
# First, one learner with CUDA graphs off, and on with CBT_LOG_CAPTURE=1 (a failed capture says why).
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
PY=/opt/torch/.venv/bin/python
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
$PY bench/models.py --out $OUT --models seqnet > $OUT/export.txt 2>&1; echo "export rc $?"
for graphs in off on; do
  echo -n "cbtrain seqnet b=32 k=1 cuda-graphs $graphs: "
  CBT_LOG_CAPTURE=1 ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda --batch-size 32 --learners 1 \
    --cuda-graphs $graphs 2>&1 | tail -3
done
for b in 32 64; do
  [ "${TORCH:-1}" = 0 ] || $PY bench/torch_throughput.py --model seqnet --batch $b --modes eager,graph,multistream --ks 4,8,16 \
    --out $OUT/torch_seqnet_b$b.json 2>&1 | grep -E "img/s|FAILED"
  for k in ${KS:-1 4 8 16 auto}; do
    echo -n "cbtrain seqnet b=$b k=$k: "
    ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda --batch-size $b --learners $k \
      > $OUT/cbt_seqnet_b${b}_k$k.txt 2>&1; grep -iE "images/s|img/s" $OUT/cbt_seqnet_b${b}_k$k.txt | tail -1
  done
done
echo "done after $((SECONDS-T0)) s"
