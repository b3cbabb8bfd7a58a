#!/usr/bin/env bash
# On the GPU machine (see GPU.md of the team): builds cbtrain there with the CUDA backend,
# runs the whole test suite (the CUDA-vs-CPU harness included), compute-sanitizer memcheck
# on the GPU tests, and short training runs; logs go to OUT_DIR.
#
#   bash scripts/gpu_check.sh OUT_DIR [full|quick|build]
#
# Expects .device/onnx (the unpacked libonnx-dev and libonnx1 Debian packages, made by
# scripts/prepare_gpu_carry.sh) and .device/data (Fashion-MNIST IDX files), carried along.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_check.sh OUT_DIR [quick]}
MODE=${2:-full}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data
bash scripts/unpack_carried_data.sh "$CBT_DATA"  # carried images come xz-compressed
export CBT_PYTHON=python3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1

step() { echo "== $*"; }
# The carried libjpeg's jconfig.h lies in the multiarch include folder, which the compiler
# searches below /usr only.
extra=()
if [ -d "$ONNX/include/x86_64-linux-gnu" ]; then extra+=("-DCMAKE_CXX_FLAGS=-isystem $ONNX/include/x86_64-linux-gnu"); fi
step configure
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCBT_WITH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCBT_CUDNN_ROOT=$V/cudnn -DCBT_NCCL_ROOT=$V/nccl \
  -DONNX_DIR=$ONNX/lib/x86_64-linux-gnu/cmake/ONNX -DCMAKE_PREFIX_PATH=$ONNX "${extra[@]}" ${CBT_EXTRA_CMAKE_ARGS:-} \
  > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
step build
cmake --build build-gpu -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; exit 1; }

[ "$MODE" = build ] && exit 0

step "GPU tests (CUDA vs CPU harness, GPU runtime)"
./build-gpu/tests/cbt_tests_cuda 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests? ran" | head -60

if [ "$MODE" = full ]; then
  step "compute-sanitizer memcheck (GPU tests)"
  compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/cbt_tests_cuda \
    --gtest_filter='*CudaVsCpu*' > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit code $?"; tail -3 "$OUT/memcheck.log"
fi

step "training: LeNet-5, 5 epochs, batch 32, one GPU"
./build-gpu/tools/cbtrain models/lenet5/lenet5.ts17.onnx --device cuda --data "$CBT_DATA" \
  --epochs 5 --batch-size 32 --lr 0.02 --lr-schedule cosine --log-every 0 \
  --output "$OUT/lenet5.cuda.onnx" --metrics "$OUT/lenet5.cuda.jsonl" 2>&1 | tee "$OUT/lenet5.log" | tail -7
python3 scripts/eval_onnx.py --data "$CBT_DATA" "$OUT/lenet5.cuda.onnx" | tee -a "$OUT/lenet5.log"

step "training: ResNet-20, 10 epochs, batch 128, one GPU"
./build-gpu/tools/cbtrain models/resnet20/resnet20.ts17.onnx --device cuda --data "$CBT_DATA" \
  --epochs 10 --batch-size 128 --lr 0.1 --lr-schedule cosine --log-every 0 \
  --output "$OUT/resnet20.cuda.onnx" --metrics "$OUT/resnet20.cuda.jsonl" 2>&1 | tee "$OUT/resnet20.log" | tail -12
python3 scripts/eval_onnx.py --data "$CBT_DATA" "$OUT/resnet20.cuda.onnx" | tee -a "$OUT/resnet20.log"

step "SMA: LeNet-5, 4 learners x batch 32, 3 epochs"
./build-gpu/tools/cbtrain models/lenet5/lenet5.ts17.onnx --device cuda --data "$CBT_DATA" \
  --epochs 3 --batch-size 32 --learners 4 --lr 0.02 --log-every 0 2>&1 | tee "$OUT/lenet5_sma.log" | tail -5

if [ "$MODE" = full ]; then
  step "compute-sanitizer memcheck and racecheck: 4 learners, 30 rounds"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 ./build-gpu/tools/cbtrain \
      models/lenet5/lenet5.ts17.onnx --device cuda --data "$CBT_DATA" --learners 4 --max-steps 30 \
      --epochs 1 --log-every 0 > "$OUT/$tool.learners.log" 2>&1
    echo "$tool (4 learners) exit code $?"; tail -2 "$OUT/$tool.learners.log"
  done
fi
