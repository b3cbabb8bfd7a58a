#!/usr/bin/env bash
# On a machine with two GPUs: LeNet-5 on Fashion-MNIST trained by one process with both GPUs
# (--gpus 0,1) and by two processes under mpirun with one GPU each (same learners per GPU,
# batch, seed, epochs); prints the test accuracy of every epoch and images/s of both, checks
# that the curves agree and the throughputs are within 10 %, then kills (SIGKILL) and stops
# (SIGSTOP) one rank of a run and logs how the other ends. Logs go to OUT_DIR.
#
#   bash scripts/mpi_gpu_check.sh OUT_DIR [EPOCHS (5)] [LEARNERS_PER_GPU (4)]
#
# Builds build-gpu through scripts/gpu_check.sh (same carried .device/ folder); MPI comes from
# the system (libopenmpi-dev, openmpi-bin) or, where there is none, from .device/openmpi
# (scripts/prepare_gpu_carry.sh), relocated with OPAL_PREFIX.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: mpi_gpu_check.sh OUT_DIR [EPOCHS] [LEARNERS_PER_GPU]}
EPOCHS=${2:-5}
K=${3:-4}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=${CBT_DATA:-$PWD/.device/data}

MPIRUN_BIN=mpirun
if ! command -v mpirun > /dev/null; then
  R=$PWD/.device/openmpi/usr
  [ -x "$R/bin/orterun" ] ||
    { echo "no mpirun: install openmpi-bin and libopenmpi-dev, or carry .device/openmpi"; exit 1; }
  M=$R/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$R PMIX_INSTALL_PREFIX=$M/pmix2 PATH=$R/bin:$PATH
  export LD_LIBRARY_PATH=$M:$M/openmpi/lib:$LD_LIBRARY_PATH
  export CBT_EXTRA_CMAKE_ARGS="-DMPI_C_COMPILER=$(command -v gcc) -DMPI_C_HEADER_DIR=$M/openmpi/include
    -DMPI_C_LIB_NAMES=mpi -DMPI_mpi_LIBRARY=$M/openmpi/lib/libmpi.so -DCBT_WITH_MPI=ON"
  MPIRUN_BIN=$R/bin/orterun
fi
echo "== build (scripts/gpu_check.sh build)"
bash scripts/gpu_check.sh "$OUT/build" build || exit 1
grep -q "CBT_WITH_MPI:BOOL=ON" build-gpu/CMakeCache.txt ||
  { echo "build-gpu was configured without MPI (libopenmpi-dev missing?)"; exit 1; }
CBT=./build-gpu/tools/cbtrain
MPIRUN=("$MPIRUN_BIN" --oversubscribe --bind-to none -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
common=(models/lenet5/lenet5.ts17.onnx --data "$CBT_DATA" --epochs "$EPOCHS" --batch-size 32
        --learners "$K" --algorithm sma --lr 0.02 --seed 7 --log-every 0)

echo "== 1 process, 2 GPUs (--gpus 0,1), $K learners each"
$CBT "${common[@]}" --gpus 0,1 --metrics "$OUT/one_process.jsonl" > "$OUT/one_process.log" 2>&1
echo "exit code $?"; tail -3 "$OUT/one_process.log"
echo "== 2 processes (mpirun -np 2), 1 GPU each, $K learners each"
"${MPIRUN[@]}" $CBT "${common[@]}" --device cuda --metrics "$OUT/two_processes.jsonl" > "$OUT/two_processes.log" 2>&1
echo "exit code $?"; tail -3 "$OUT/two_processes.log"

python3 - "$OUT/one_process.jsonl" "$OUT/two_processes.jsonl" <<'EOF' | tee "$OUT/comparison.txt"
import json, sys
one, two = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
print(f"{'epoch':>5} {'acc 1 proc x 2 GPUs':>20} {'acc 2 procs x 1 GPU':>20} {'img/s 1 proc':>13} {'img/s 2 procs':>14}")
for a, b in zip(one, two):
    print(f"{a['epoch']:>5} {100*a['test_accuracy']:>19.2f}% {100*b['test_accuracy']:>19.2f}% "
          f"{a['images_per_sec']:>13.0f} {b['images_per_sec']:>14.0f}")
if len(one) != len(two) or not one:
    sys.exit(f"FAIL: {len(one)} and {len(two)} epochs recorded")
# Throughput over the epochs after the first (which includes start-up and CUDA graph capture).
rest = slice(1, None) if len(one) > 1 else slice(None)
ips1 = sum(r['images_per_sec'] for r in one[rest]) / len(one[rest])
ips2 = sum(r['images_per_sec'] for r in two[rest]) / len(two[rest])
acc_gap = max(abs(a['test_accuracy'] - b['test_accuracy']) for a, b in zip(one, two))
ratio = ips2 / ips1
print(f"largest accuracy gap {100*acc_gap:.2f} points; throughput 2 procs / 1 proc = {ratio:.3f}")
ok = acc_gap <= 0.01 and abs(ratio - 1) <= 0.10
print("PASS" if ok else "FAIL", "(accuracy within 1 point every epoch, throughput within 10 %)")
sys.exit(0 if ok else 1)
EOF
status=$?

# One rank killed (SIGKILL) or stopped (SIGSTOP, a hang) after the first epoch: the other must
# end within the timeout with a message naming rank 1 (mpirun's, or cbtrain's roll call). The
# survivor's end is timed; a launcher that still waits for the stopped rank a minute later is
# said, and that rank is then continued and killed.
fail_rank() {
  local sig=$1 log="$OUT/rank1_$1.log"
  echo "== SIG$sig of rank 1 after epoch 1 (--collective-timeout 20)"
  "${MPIRUN[@]}" $CBT models/lenet5/lenet5.ts17.onnx --data "$CBT_DATA" --epochs 1000 --batch-size 32 \
    --learners "$K" --device cuda --log-every 0 --progress off --collective-timeout 20 > "$log" 2>&1 &
  local launcher=$!
  for _ in $(seq 600); do grep -q "epoch 1:" "$log" && break; sleep 0.5; done
  local r0 r1 t0
  r0=$(grep -o "rank 0 of 2 (pid [0-9]*" "$log" | grep -o "[0-9]*$")
  r1=$(grep -o "rank 1 of 2 (pid [0-9]*" "$log" | grep -o "[0-9]*$")
  t0=$(date +%s.%N)
  kill -"$sig" "$r1"
  for _ in $(seq 1200); do kill -0 "$r0" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$r0" 2> /dev/null; then
    echo "rank 0 still runs 120 s after SIG$sig of rank 1"
  else
    echo "rank 0 ended $(awk "BEGIN { print $(date +%s.%N) - $t0 }") s after SIG$sig of rank 1"
  fi
  for _ in $(seq 600); do kill -0 "$launcher" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$launcher" 2> /dev/null; then
    echo "mpirun still waits for the stopped rank 1 60 s later: rank 1 continued and killed"
    kill -CONT "$r1" 2> /dev/null; kill -KILL "$r1" 2> /dev/null
  fi
  wait "$launcher"
  echo "mpirun exit code $? after $(awk "BEGIN { print $(date +%s.%N) - $t0 }") s"
  kill -CONT "$r1" 2> /dev/null; kill -KILL "$r1" 2> /dev/null
  grep -E "rank 1|error" "$log" | grep -v "trains learners" | head -5
}
fail_rank KILL
fail_rank STOP
exit $status
