#!/usr/bin/env bash
# Session 34 (one H200): which of the ways PyTorch calls cuDNN's recurrent networks makes cuDNN
# run its block-persistent kernels for cbtrain. CBT_RNN_VARIANT is a bit set (an experiment of
# this session, not a user setting): 1 = CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H where PyTorch
# takes it (hidden <= 192/128 for LSTM and GRU forward/backward, 384/256 for RNN), 2 = the
# unpacked sequence-major layout with padded I/O enabled, 4 = no device array of sequence
# lengths. CUDA build, the recurrent CUDA tests under variants 0 and 7, SeqNet throughput at
# batch 32 for each variant (K=1, then K=4 and 16 for the named ones), PyTorch's beside it.
#   OUT=... [VARIANTS="0 1 2 3 4 5 6 7"] [WIDE="0 7"] bash s34_rnn_variants.sh
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
PY=/opt/torch/.venv/bin/python
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
for v in 0 7; do
  CBT_RNN_VARIANT=$v timeout 120 ./build-gpu/tests/cbt_tests_cuda --gtest_filter='*LSTM*:*GRU*:*RNN*:*Recurrent*:*seqnet*' \
    > $OUT/tests_v$v.txt 2>&1
  echo "variant $v recurrent CUDA tests rc $?: $(grep -c '  OK ' $OUT/tests_v$v.txt) OK, $(grep -c 'FAILED  ' $OUT/tests_v$v.txt) FAILED"
  grep "FAILED  " $OUT/tests_v$v.txt | head -5
done
$PY bench/models.py --out $OUT --models seqnet > $OUT/export.txt 2>&1; echo "export rc $?"
for v in ${VARIANTS:-0 1 2 3 4 5 6 7}; do
  echo -n "variant $v b=32 k=1: "
  CBT_RNN_VARIANT=$v CBT_LOG_RNN=1 timeout 60 ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda --batch-size 32 \
    --learners 1 > $OUT/cbt_v${v}_k1.txt 2>&1; grep -E "images/s|rror" $OUT/cbt_v${v}_k1.txt | tail -1
done
for v in ${WIDE:-0 7}; do
  for k in 4 16; do
    echo -n "variant $v b=32 k=$k: "
    CBT_RNN_VARIANT=$v timeout 90 ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda --batch-size 32 \
      --learners $k > $OUT/cbt_v${v}_k$k.txt 2>&1; grep -E "images/s|rror" $OUT/cbt_v${v}_k$k.txt | tail -1
  done
done
[ "${TORCH:-1}" = 0 ] || $PY bench/torch_throughput.py --model seqnet --batch 32 --modes graph,multistream --ks 4,16 \
    --out $OUT/torch_seqnet_b32.json 2>&1 | grep -E "img/s|FAILED"
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
