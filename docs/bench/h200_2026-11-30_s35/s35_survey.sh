#!/usr/bin/env bash
# Session 35 (one H200): models/architectures.py (PyTorch on the machine's CPU; the files come
# back as $OUT/arch.tgz), a CUDA build, scripts/architecture_survey.sh on cpu and cuda, and the
# fixtures named by FIXTURES run with `cbtrain infer --device cuda` against onnxruntime's outputs.
#   OUT=... FIXTURES="attention23 ..." bash s35_survey.sh [ARCHITECTURES...]
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
PY=/opt/torch/.venv/bin/python
mkdir -p /tmp/arch
$PY models/architectures.py --out /tmp/arch ${@:+--only "$@"} > $OUT/export.txt 2>&1
echo "export rc $? after $((SECONDS-T0)) s"; grep -E "FAILED|failures|exports OK" $OUT/export.txt | head -30
tar czf $OUT/arch.tgz -C /tmp arch
tar xJf .device/onnx.txz -C .device
if [ ! -x build-gpu/tools/cbtrain ] || [ -z "${NO_BUILD:-}" ]; then
  bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
fi
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
PYTHON=$PY bash scripts/architecture_survey.sh /tmp/arch ./build-gpu/tools/cbtrain cpu,cuda | tee $OUT/survey.md
echo "== the fixtures named by FIXTURES on the GPU against onnxruntime"
for m in ${FIXTURES:-}; do
  ./build-gpu/tools/cbtrain infer tests/onnx_import/data/$m.onnx --device cuda --input tests/onnx_import/data/$m.input.npy --output /tmp/$m.gpu.npy 2>&1 | tail -1
  $PY -c "import numpy as np; a=np.load('/tmp/$m.gpu.npy'); b=np.load('tests/onnx_import/data/$m.output.npy'); print('$m max |gpu - onnxruntime|', float(np.abs(a-b).max()))"
done
echo "done after $((SECONDS-T0)) s"
xz -9 $OUT/build.txt
