#!/usr/bin/env bash
# Several GPUs of one machine: cbtrain (--gpus, auto-tuned learners per GPU, SMA) against
# PyTorch DistributedDataParallel at batch 32 per learner / per GPU, for N GPUs in GPU_COUNTS:
# throughput (LeNet-5, ResNet-32) and time to accuracy on Fashion-MNIST (LeNet-5 to 90%,
# ResNet-20 to 91%); OUT_DIR/MULTI_GPU.md holds the scaling tables.
#
#   bash bench/run_multi_gpu.sh OUT_DIR [quick|full] [GPU_COUNTS] [STAGES]
#
# GPU_COUNTS: e.g. 1,2,4 (default: 1, 2, 4, 8 up to the visible GPUs, and their number).
# STAGES: comma-separated subset of build,export,tput,tta_lenet,tta_resnet,report (default:
# all, in that order). Every run has a wall-clock cap, and the whole call keeps within
# MG_BUDGET_S seconds (default 560): a run that does not fit in what is left is skipped, and
# runs whose results are already in OUT_DIR are not run again (MG_REDO=1 runs them again), so
# the same command repeated in a later call (OUT_DIR carried along) does what is missing.
#
# Environment: CBTRAIN (default ./build-gpu/tools/cbtrain; the build stage makes it with
# scripts/gpu_check.sh when missing), CBT_DATA (default .device/data if present, else
# /usr/share/datasets/fashion-mnist), PYTHON, CBT_LIB_DIR, CBT_EXTRA (flags for every cbtrain
# run), PRECISION (fp32, the default, or tf32: both systems alike), MG_SYSTEMS (default ddp,cbtrain), MG_SEEDS (default 1), DDP_LR_SCALING (linear: the
# DDP rate is N x the one-GPU rate; none), MG_DDP_LR_LENET / MG_DDP_LR_RESNET (one-GPU rates,
# 0.02 / 0.05), MG_CBT_LR_LENET / MG_CBT_LR_RESNET (per learner, 0.05 / 0.05),
# MG_EPOCHS_LENET / MG_EPOCHS_RESNET (DDP's epochs and cosine length; quick 10 / 8, full
# 15 / 15), MG_CBT_EPOCHS_LENET / MG_CBT_EPOCHS_RESNET (cbtrain's; quick 40 / 20, full 60 / 30:
# its epochs take a fraction of a second to a few seconds, and SMA over K x N learners needs
# more of them; it stops at the target anyway), MG_BUDGET_S, MG_REDO, MG_TPUT_LEARNERS_PER_GPU
# (unset: the throughput stage's tuner keeps cbtrain's default cap of 8 learners in all (16
# before 2026-11-29), as the time-to-accuracy runs do, so N GPUs get 8/N each; a number L: it
# may take up to L per GPU, --autotune-max-learners L*N, which measures what the GPUs can do
# rather than what trains best).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
T0=$SECONDS

usage="usage: bash bench/run_multi_gpu.sh OUT_DIR [quick|full] [GPU_COUNTS] [STAGES]"
OUT=${1:?$usage}
MODE=${2:-full}
COUNTS_ARG=${3:-}
STAGES=${4:-build,export,tput,tta_lenet,tta_resnet,report}
case "$MODE" in quick|full) ;; *) echo "mode must be quick or full, not '$MODE'" >&2; exit 2 ;; esac
case "${MG_TPUT_LEARNERS_PER_GPU:-}" in
  ''|[1-9]|[1-9][0-9]) ;;
  *) echo "MG_TPUT_LEARNERS_PER_GPU must be a number of learners per GPU (1 to 99), not '$MG_TPUT_LEARNERS_PER_GPU'" >&2; exit 2 ;;
esac
for s in ${STAGES//,/ }; do
  case "$s" in build|export|tput|tta_lenet|tta_resnet|report) ;;
    *) echo "unknown stage '$s' (build, export, tput, tta_lenet, tta_resnet, report)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
mkdir -p "$OUT/models" "$OUT/results" "$OUT/logs/cbtrain" "$OUT/env"

# NVLink multicast off for NCCL, PyTorch and NVSHMEM (a shared host's GPUs are at stake).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
# Both systems get 32 hardware work queues (cbtrain asks for them itself), as in run_gpu.sh.
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
if [ -n "${CBT_DATA:-}" ]; then DATA=$CBT_DATA
elif [ -d .device/data ]; then DATA=$PWD/.device/data
else DATA=/usr/share/datasets/fashion-mnist; fi
bash scripts/unpack_carried_data.sh "$DATA"  # images carried xz-compressed, if any
CBT=${CBTRAIN:-./build-gpu/tools/cbtrain}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  if ! python3 -c 'import torch' >/dev/null 2>&1 && [ -x /opt/torch/.venv/bin/python ]; then
    PYTHON=/opt/torch/.venv/bin/python
  fi
fi
# cbtrain finds cuDNN, NCCL and cuBLAS in PyTorch's venv, the ONNX libraries in .device/onnx
# (as scripts/gpu_check.sh sets them).
NV=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
CBT_LD="$NV/cudnn/lib:$NV/nccl/lib:$NV/cublas/lib:$PWD/.device/onnx/usr/lib/x86_64-linux-gnu"
CBT_LD="$CBT_LD${CBT_LIB_DIR:+:$CBT_LIB_DIR}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PRECISION=${PRECISION:-fp32}
case "$PRECISION" in fp32|tf32) ;; *) echo "PRECISION must be fp32 or tf32, not '$PRECISION'" >&2; exit 2 ;; esac
read -r -a CBT_EXTRA_ARGS <<< "${CBT_EXTRA:-}"
EXTRA=(-- --precision "$PRECISION" "${CBT_EXTRA_ARGS[@]}")

BUDGET=${MG_BUDGET_S:-560}
RESERVE=20   # kept for the report at the end of the call
SYSTEMS=${MG_SYSTEMS:-ddp,cbtrain}
SEEDS=${MG_SEEDS:-1}
REDO=${MG_REDO:-0}
LR_SCALING=${DDP_LR_SCALING:-linear}

VISIBLE=$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
if [ -z "$COUNTS_ARG" ]; then
  COUNTS=""
  for n in 1 2 4 8; do [ "$n" -le "$VISIBLE" ] && COUNTS="$COUNTS $n"; done
  case " $COUNTS " in *" $VISIBLE "*) ;; *) [ "$VISIBLE" -gt 0 ] && COUNTS="$COUNTS $VISIBLE" ;; esac
else
  COUNTS=${COUNTS_ARG//,/ }
fi
for n in $COUNTS; do
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then echo "GPU_COUNTS takes numbers like 1,2,4, not '$COUNTS_ARG'" >&2; exit 2; fi
  if [ "$n" -gt "$VISIBLE" ]; then echo "GPU_COUNTS asks for $n GPUs, $VISIBLE visible" >&2; exit 2; fi
done
[ -n "$COUNTS" ] || { echo "no CUDA GPU visible to $PYTHON" >&2; exit 2; }

# Settings per mode. Caps are wall-clock seconds per run: DDP's grow as C0 + C1/N (its epochs
# shrink with N), cbtrain's are fixed (the auto-tuner comes first, epochs are short).
if [ "$MODE" = quick ]; then
  DDP_TPUT_FLAGS=(--quick); CBT_STEPS_LENET=30; CBT_STEPS_RESNET=20; CBT_WARMUP=5
  E_LENET=${MG_EPOCHS_LENET:-10}; E_RESNET=${MG_EPOCHS_RESNET:-8}
  CE_LENET=${MG_CBT_EPOCHS_LENET:-40}; CE_RESNET=${MG_CBT_EPOCHS_RESNET:-20}
  CAP_DDP_TPUT="40 40"; CAP_CBT_TPUT=120
  CAP_DDP_LENET="40 60"; CAP_CBT_LENET=90
  CAP_DDP_RESNET="40 190"; CAP_CBT_RESNET=150
else
  DDP_TPUT_FLAGS=(); CBT_STEPS_LENET=100; CBT_STEPS_RESNET=40; CBT_WARMUP=20
  E_LENET=${MG_EPOCHS_LENET:-15}; E_RESNET=${MG_EPOCHS_RESNET:-15}
  CE_LENET=${MG_CBT_EPOCHS_LENET:-60}; CE_RESNET=${MG_CBT_EPOCHS_RESNET:-30}
  CAP_DDP_TPUT="90 90"; CAP_CBT_TPUT=240
  CAP_DDP_LENET="60 90"; CAP_CBT_LENET=240
  CAP_DDP_RESNET="60 360"; CAP_CBT_RESNET=300
fi
DDP_LR_LENET=${MG_DDP_LR_LENET:-0.02}; DDP_LR_RESNET=${MG_DDP_LR_RESNET:-0.05}
CBT_LR_LENET=${MG_CBT_LR_LENET:-0.05}; CBT_LR_RESNET=${MG_CBT_LR_RESNET:-0.05}

{ echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  env | grep -E '^(MG_|DDP_LR_SCALING|CBT_EXTRA|PRECISION|CBTRAIN|CBT_DATA)=' | sort | sed 's/^/export /'
  echo "bash bench/run_multi_gpu.sh $*"; } >> "$OUT/env/mg_commands.txt"
echo "$MODE" > "$OUT/env/mg_mode.txt"

in_stages() { case ",$STAGES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
in_systems() { case ",$SYSTEMS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
gpu_list() { seq -s, 0 $(($1 - 1)); }
left() { echo $((BUDGET - (SECONDS - T0) - RESERVE)); }

stage() {  # stage NAME FUNCTION: run it if selected, log to logs/mg_NAME.log, note rc and time
  local name=$1 fn=$2 t0=$SECONDS rc
  in_stages "$name" || return 0
  echo "=== $name ($(date +%T), $(left) s of the call's budget left)"
  "$fn" 2>&1 | tee "$OUT/logs/mg_$name.log"
  rc=${PIPESTATUS[0]}
  echo "$name rc=$rc seconds=$((SECONDS - t0)) mode=$MODE gpus=${COUNTS// /,}" >> "$OUT/logs/mg_stages.txt"
  echo "=== $name: rc=$rc, $((SECONDS - t0)) s"
}

# plan NOMINAL_CAP RESULT_FILE: sets CAP for the next run, or returns 1 (and notes why) when
# the run is done already or does not fit in the call's budget (it needs half its cap).
RUNS="$OUT/logs/mg_runs.tsv"
plan() {
  local nominal=$1 file=$2 l
  NOMINAL=$nominal
  if [ "$REDO" != 1 ] && "$PYTHON" bench/report_multi_gpu.py --is-done "$file" "$nominal"; then
    echo "--- $(basename "$file"): done in an earlier call"
    return 1
  fi
  l=$(($(left) - 45))
  if [ "$l" -lt $((nominal / 2)) ] || [ "$l" -lt 30 ]; then
    echo "--- $(basename "$file"): skipped, $((l + 45)) s of the call's budget left (cap $nominal s): run this command again"
    printf '%s\t%s\tskipped-budget\t-\t0\t0\t%s\n' "$(date +%T)" "$(basename "$file")" "$nominal" >> "$RUNS"
    return 1
  fi
  CAP=$((l < nominal ? l : nominal))
  return 0
}
ran() {  # ran RESULT_FILE RC SECONDS
  printf '%s\t%s\tran\t%s\t%s\t%s\t%s\n' "$(date +%T)" "$(basename "$1")" "$2" "$3" "$CAP" "$NOMINAL" >> "$RUNS"
}
ddp_cap() { local c0 c1; read -r c0 c1 <<< "$1"; echo $((c0 + c1 / $2)); }

env_info() {
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader \
    > "$OUT/env/mg_nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" > "$OUT/env/mg_nvidia-smi.txt"
  nvidia-smi topo -m 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$OUT/env/mg_topology.txt" || true
  "$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "nccl", ".".join(map(str, torch.cuda.nccl.version())))' \
    > "$OUT/env/mg_python.txt" 2>/dev/null || echo "$PYTHON cannot import torch" > "$OUT/env/mg_python.txt"
  # CBT_COMMIT names the code where the tree has no history of its own (a copy of a checkout).
  if [ -n "${CBT_COMMIT:-}" ]; then echo "$CBT_COMMIT (CBT_COMMIT)" > "$OUT/env/mg_git.txt"
  else { git rev-parse HEAD 2>/dev/null || echo unknown
         echo "$(git status --porcelain 2>/dev/null | wc -l) files differ from HEAD"; } > "$OUT/env/mg_git.txt"; fi
  date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/env/mg_date.txt"
}
cbt_version() {
  LD_LIBRARY_PATH="$CBT_LD" "$CBT" --version > "$OUT/env/mg_cbtrain_version.txt" 2>&1 ||
    echo "cbtrain --version failed ($CBT)" >> "$OUT/env/mg_cbtrain_version.txt"
}

do_build() {
  if [ -x "$CBT" ]; then echo "cbtrain is there: $CBT"; return 0; fi
  if [ -n "${CBTRAIN:-}" ]; then echo "CBTRAIN=$CBTRAIN does not exist" >&2; return 2; fi
  timeout -k 10 $(($(left) > 60 ? $(left) : 60)) bash scripts/gpu_check.sh "$OUT/build" build
}

do_export() {
  { [ -f "$OUT/models/resnet32.onnx" ] && [ "$REDO" != 1 ]; } ||
    "$PYTHON" bench/models.py --out "$OUT/models" --models resnet32
  # LeNet-5 and ResNet-20 as shipped (see bench/run_gpu.sh: a fresh export would tie the
  # BatchNorm initializers); DDP starts from the same weights.
  cp models/lenet5/lenet5.ts17.onnx "$OUT/models/lenet5.onnx"
  cp models/resnet20/resnet20.ts17.onnx "$OUT/models/resnet20.onnx"
}

ensure_models() {  # the stages that need the ONNX files export them if an earlier call did not
  [ -f "$OUT/models/resnet32.onnx" ] && [ -f "$OUT/models/lenet5.onnx" ] &&
    [ -f "$OUT/models/resnet20.onnx" ] || do_export
}

do_tput() {
  local n m f rc t steps
  ensure_models
  for n in $COUNTS; do
    if in_systems ddp; then
      f="$OUT/results/mg_ddp_throughput_g$n.json"
      if plan "$(ddp_cap "$CAP_DDP_TPUT" "$n")" "$f"; then
        echo "--- PyTorch DDP throughput on $n GPU(s), cap $CAP s"
        t=$SECONDS
        timeout -k 15 $((CAP + 30)) "$PYTHON" bench/torch_ddp.py throughput --gpus "$n" \
          --models lenet5,resnet32 --batch 32 --precision "$PRECISION" "${DDP_TPUT_FLAGS[@]}" --out "$f"
        rc=$?; ran "$f" "$rc" $((SECONDS - t))
      fi
    fi
    if in_systems cbtrain; then
      for m in lenet5 resnet32; do
        f="$OUT/results/mg_cbtrain_throughput_${m}_g$n.json"
        steps=$CBT_STEPS_LENET; [ "$m" = lenet5 ] || steps=$CBT_STEPS_RESNET
        plan "$CAP_CBT_TPUT" "$f" || continue
        echo "--- cbtrain throughput $m on $n GPU(s), auto learners, cap $CAP s"
        t=$SECONDS
        local cap_flags=()
        [ -n "${MG_TPUT_LEARNERS_PER_GPU:-}" ] && cap_flags=(--autotune-max-learners $((MG_TPUT_LEARNERS_PER_GPU * n)))
        LD_LIBRARY_PATH="$CBT_LD" timeout -k 15 $((CAP + 30)) "$PYTHON" bench/cbtrain_runs.py \
          throughput --cbtrain "$CBT" --models-dir "$OUT/models" --models "$m" --batches 32 \
          --ks auto --gpus "$(gpu_list "$n")" --steps "$steps" --warmup "$CBT_WARMUP" \
          --timeout "$CAP" --out "$f" --logs "$OUT/logs/cbtrain" "${EXTRA[@]}" "${cap_flags[@]}"
        rc=$?; ran "$f" "$rc" $((SECONDS - t))
      done
    fi
  done
}

tta() {  # tta MODEL TARGET DDP_LR DDP_EPOCHS DDP_CAP CBT_LR CBT_EPOCHS CBT_CAP
  local m=$1 target=$2 dlr=$3 de=$4 dcap=$5 clr=$6 ce=$7 ccap=$8 n s f rc t
  ensure_models
  for n in $COUNTS; do
    for s in $SEEDS; do
      if in_systems ddp; then
        f="$OUT/results/mg_tta_ddp_${m}_g${n}_s$s.json"
        if plan "$(ddp_cap "$dcap" "$n")" "$f"; then
          echo "--- PyTorch DDP $m on $n GPU(s), lr $dlr x ($LR_SCALING), cosine, to $target, seed $s, cap $CAP s"
          t=$SECONDS
          timeout -k 15 $((CAP + 30)) "$PYTHON" bench/torch_ddp.py tta --gpus "$n" --model "$m" \
            --batch 32 --lr "$dlr" --lr-scaling "$LR_SCALING" --schedule cosine \
            --target "$target" --max-epochs "$de" --seed "$s" --data "$DATA" \
            --init-onnx "$OUT/models/$m.onnx" --precision "$PRECISION" --budget "$CAP" --out "$f"
          rc=$?; ran "$f" "$rc" $((SECONDS - t))
        fi
      fi
      if in_systems cbtrain; then
        f="$OUT/results/mg_tta_cbtrain_${m}_g${n}_s$s.json"
        if plan "$ccap" "$f"; then
          echo "--- cbtrain $m on $n GPU(s), auto learners, lr $clr, cosine, to $target, seed $s, cap $CAP s"
          t=$SECONDS
          LD_LIBRARY_PATH="$CBT_LD" timeout -k 15 $((CAP + 60)) "$PYTHON" bench/cbtrain_runs.py \
            tta --cbtrain "$CBT" --model "$OUT/models/$m.onnx" --name "$m" --batch 32 \
            --learners auto --gpus "$(gpu_list "$n")" --epochs "$ce" --lr "$clr" \
            --schedule cosine --target "$target" --seed "$s" --data "$DATA" --stop-at-target \
            --budget "$CAP" --timeout $((CAP + 30)) --out "$f" --logs "$OUT/logs/cbtrain" "${EXTRA[@]}"
          rc=$?; ran "$f" "$rc" $((SECONDS - t))
        fi
      fi
    done
  done
}

do_tta_lenet() { tta lenet5 0.90 "$DDP_LR_LENET" "$E_LENET" "$CAP_DDP_LENET" "$CBT_LR_LENET" "$CE_LENET" "$CAP_CBT_LENET"; }
do_tta_resnet() { tta resnet20 0.91 "$DDP_LR_RESNET" "$E_RESNET" "$CAP_DDP_RESNET" "$CBT_LR_RESNET" "$CE_RESNET" "$CAP_CBT_RESNET"; }
do_report() { "$PYTHON" bench/report_multi_gpu.py "$OUT"; }

echo "cbtrain multi-GPU benchmark, $MODE mode, GPUs: $COUNTS (of $VISIBLE), stages $STAGES, into $OUT"
echo "python: $PYTHON, cbtrain: $CBT, data: $DATA, budget of this call: $BUDGET s"
env_info
stage build do_build
in_systems cbtrain && cbt_version
stage export do_export
stage tput do_tput
stage tta_lenet do_tta_lenet
stage tta_resnet do_tta_resnet
stage report do_report
echo "done in $((SECONDS - T0)) s: $OUT/MULTI_GPU.md"
