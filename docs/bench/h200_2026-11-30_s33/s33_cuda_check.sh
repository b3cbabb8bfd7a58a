#!/usr/bin/env bash
# Session 33 (one H200): models/export_torch.py for the models named by EXPORT (PyTorch on the
# machine's CPU; their files are copied to $OUT/exported.tgz), a CUDA build, cbt_tests_cuda whole
# (its cases of the ops or models named by CASES, an extended regex, listed by name), and the
# fixtures named by FIXTURES run with `cbtrain infer --device cuda` against onnxruntime's outputs.
#   OUT=... EXPORT=seqnet FIXTURES="recurrent14 recurrent9" bash s33_cuda_check.sh 'seqnet|LSTM'
set -uo pipefail
OUT=${OUT:?}
CASES=${1:?usage: s33_cuda_check.sh CASES_REGEX}
T0=$SECONDS
if [ -n "${EXPORT:-}" ]; then
  /opt/torch/.venv/bin/python models/export_torch.py --out models --only $EXPORT > $OUT/export.txt 2>&1
  echo "export rc $? after $((SECONDS-T0)) s"; grep -E "FAILED|parameters|trajectory losses" $OUT/export.txt | head -20
  tar czf $OUT/exported.tgz $(for m in $EXPORT; do echo models/$m; done)
fi
tar xJf .device/onnx.txz -C .device
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
echo "== cbt_tests_cuda from $((SECONDS-T0)) s"
timeout 420 ./build-gpu/tests/cbt_tests_cuda > $OUT/cuda_tests.txt 2>&1
echo "cbt_tests_cuda rc $? after $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/cuda_tests.txt | head -20
grep -iE "$CASES" $OUT/cuda_tests.txt | grep -E "  OK |FAILED  " > $OUT/new_cases.txt
echo "$(grep -c OK $OUT/new_cases.txt) OK, $(grep -c FAILED $OUT/new_cases.txt) FAILED"; cat $OUT/new_cases.txt | head -20
echo "== the fixture models on the GPU"
for m in ${FIXTURES:-}; do
  ./build-gpu/tools/cbtrain infer tests/onnx_import/data/$m.onnx --device cuda --input tests/onnx_import/data/$m.input.npy --output $OUT/$m.gpu.npy 2>&1 | tail -1
  python3 -c "import numpy as np,sys; a=np.load('$OUT/$m.gpu.npy'); b=np.load('tests/onnx_import/data/$m.output.npy'); print('$m max |gpu - onnxruntime|', float(np.abs(a-b).max()))"
done
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/cuda_tests.txt $OUT/build.txt
