#!/usr/bin/env bash
# The benchmark on a GPU machine: PyTorch and cbtrain side by side in one run, same GPU;
# everything (models, JSON results, logs, BENCHMARKS.md, plots) goes into OUT_DIR.
#
#   bash bench/run_gpu.sh OUT_DIR [quick|full] [STAGES]
#
# STAGES: comma-separated subset of export,torch_tput,cbt_tput,torch_tta,cbt_tta,lr_sweep,
# report (default: all but lr_sweep; they run in that order). Environment: CBT_DATA
# (Fashion-MNIST IDX folder, default /usr/share/datasets/fashion-mnist), CBTRAIN (default
# ./build-gpu/tools/cbtrain), PYTHON (default: python3 if it imports torch, else
# /opt/torch/.venv/bin/python), CBT_LIB_DIR (extra folder for cbtrain's LD_LIBRARY_PATH,
# e.g. the ONNX shared libraries), CBT_COMMIT (the commit the report names, for a tree
# copied without its git history; default: git rev-parse HEAD and the files that differ),
# TTA_SEEDS (default "1 2 3"; quick: "1"), TTA_SEEDS_SLOW (seeds of the slow PyTorch
# ResNet-20 b=32 run, default "1"), CBT_EXTRA (extra flags for every cbtrain run), PRECISION
# (fp32, the default: TF32 off on both sides; or tf32: both may use TF32 tensor cores),
# CBT_PRECISION (cbtrain's alone, default PRECISION: bf16 for --precision bf16),
# TPUT_BATCHES (per-learner batches of the throughput stages, comma-separated; default
# 8,16,32,64, quick: 8,32), TTA_RESNET20_EPOCHS (the length of ResNet-20's cosine schedule
# on both sides, full mode; default 4), RESNET20_LABEL_SMOOTHING (ResNet-20's label smoothing
# on both sides, time to accuracy and lr_sweep; default 0.1, 0 for none).
# lr_sweep: SWEEP_MODEL (resnet20, the default: PyTorch at b=256, to 91%; or lenet5: PyTorch
# at b=32, to 90%), SWEEP_SCHEDULES (default cosine), SWEEP_EPOCHS (default 10),
# SWEEP_TORCH_LRS (default "0.05 0.1 0.2 0.4"), SWEEP_CBT_LRS (default "0.02 0.05 0.1 0.2");
# lists space- or comma-separated, empty: skip.
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${1:?usage: bash bench/run_gpu.sh OUT_DIR [quick|full] [STAGES]}
MODE=${2:-full}
STAGES=${3:-export,torch_tput,cbt_tput,torch_tta,cbt_tta,report}
case "$MODE" in quick|full) ;; *) echo "mode must be quick or full, not '$MODE'" >&2; exit 2 ;; esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
mkdir -p "$OUT/models" "$OUT/results" "$OUT/logs" "$OUT/env"

export NCCL_NVLS_ENABLE=0
# Both systems get 32 hardware work queues (cbtrain asks for them itself; PyTorch's
# multistream mode gains as much from them): one learner's stream waiting for another then
# holds up no third one queued behind it.
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
DATA=${CBT_DATA:-/usr/share/datasets/fashion-mnist}
bash scripts/unpack_carried_data.sh "$DATA"  # images carried xz-compressed, if any
CBT=${CBTRAIN:-./build-gpu/tools/cbtrain}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  if ! python3 -c 'import torch' >/dev/null 2>&1 && [ -x /opt/torch/.venv/bin/python ]; then
    PYTHON=/opt/torch/.venv/bin/python
  fi
fi
# cbtrain finds cuDNN and NCCL in PyTorch's venv on the GPU machine (see shared/GPU.md).
NV=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
CBT_LD="$NV/cudnn/lib:$NV/nccl/lib${CBT_LIB_DIR:+:$CBT_LIB_DIR}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PRECISION=${PRECISION:-fp32}
case "$PRECISION" in fp32|tf32) ;; *) echo "PRECISION must be fp32 or tf32, not '$PRECISION'" >&2; exit 2 ;; esac
# cbtrain's own precision, PRECISION unless set: bf16 runs cbtrain's --precision bf16 against
# PyTorch at PRECISION (the goals' baselines are PyTorch's float32 runs).
CBT_PRECISION=${CBT_PRECISION:-$PRECISION}
case "$CBT_PRECISION" in fp32|tf32|bf16) ;; *) echo "CBT_PRECISION must be fp32, tf32 or bf16, not '$CBT_PRECISION'" >&2; exit 2 ;; esac
read -r -a CBT_EXTRA_ARGS <<< "${CBT_EXTRA:-}"
EXTRA=(-- --precision "$CBT_PRECISION" "${CBT_EXTRA_ARGS[@]}")

if [ "$MODE" = quick ]; then
  QUICK=--quick
  TPUT_BATCHES=${TPUT_BATCHES:-8,32}; CBT_KS=1,4,16,auto
  LENET_STEPS=50; RESNET_STEPS=30; CBT_WARMUP=5
  SEEDS=${TTA_SEEDS:-1}; SEEDS_SLOW=${TTA_SEEDS_SLOW:-1}
  E_LENET=3; E_RESNET=3
else
  QUICK=
  TPUT_BATCHES=${TPUT_BATCHES:-8,16,32,64}; CBT_KS=1,2,4,8,16,auto
  LENET_STEPS=250; RESNET_STEPS=150; CBT_WARMUP=20
  SEEDS=${TTA_SEEDS:-1 2 3}; SEEDS_SLOW=${TTA_SEEDS_SLOW:-1}
  # LeNet-5 gets 30 epochs on both sides: with 32 work queues and at most 16 learners the
  # auto-tuner took 10-16, and at 15 epochs cbtrain then ended at 89.5-90.1% (one seed of three
  # at 90%): K learners make 1/K as many central-model updates per epoch (see BENCHMARKS.md).
  # (The tuner's default cap is 8 learners since 2026-11-29; the schedule was kept.)
  # ResNet-20's cosine spans 4 epochs on both sides (TTA_RESNET20_EPOCHS): PyTorch b=256 at lr
  # 0.05 reached 91% sooner the shorter its schedule (seeds 1-3, one H200, 2026-11-29: median
  # 6.2 s over 3 epochs, 6.4 over 4, 8.0 over 5, 8.7 over 6, 9.8 over 15; cbtrain 4.1, 4.0, 4.1
  # and 4.9 s over 4 to 15, and not at all over 3). 4 is the shortest that both reach.
  E_LENET=30; E_RESNET=${TTA_RESNET20_EPOCHS:-4}
fi
echo "$MODE" > "$OUT/env/mode.txt"
echo "$PRECISION" > "$OUT/env/precision.txt"
echo "$CBT_PRECISION" > "$OUT/env/cbtrain_precision.txt"
echo "$CUDA_DEVICE_MAX_CONNECTIONS" > "$OUT/env/cuda_device_max_connections.txt"

# Time-to-accuracy runs. PyTorch: "model batch lr schedule target max_epochs seeds".
# ResNet-20's rates come from the lr_sweep stage (seed 1, 15 epochs, H100, 2026-11-25: the
# fastest rate to 91% was 0.05 for both PyTorch at b=256 and cbtrain); override with
# TORCH_RESNET20_LR and CBT_RESNET20_LR.
# LeNet-5's: the same sweep (lenet5, constant and cosine) reached 90% for PyTorch at 0.05
# cosine and for cbtrain only at 0.02 constant (epoch 14) and 0.05 cosine (epoch 13); at 0.02
# constant cbtrain ended at 89.88% with one seed of three and PyTorch with all three, so both
# run 0.05 cosine (TORCH_LENET5_LR, CBT_LENET5_LR).
# ResNet-20 trains with label smoothing 0.1 on both sides: with it cbtrain reached 91% at epoch
# 3 on seeds 1-3 (91.05-91.15%), without it on none (90.58-90.93%), and PyTorch b=256 at epoch 3
# either way (one H200, 2026-12-01, docs/bench/h200_2026-12-01_s41 call 5).
RESNET20_LABEL_SMOOTHING=${RESNET20_LABEL_SMOOTHING:-0.1}
TORCH_RESNET20_LR=${TORCH_RESNET20_LR:-0.05}
CBT_RESNET20_LR=${CBT_RESNET20_LR:-0.05}
TORCH_LENET5_LR=${TORCH_LENET5_LR:-0.05}
CBT_LENET5_LR=${CBT_LENET5_LR:-0.05}
TORCH_TTA=(
  "lenet5 32 $TORCH_LENET5_LR cosine 0.90 $E_LENET $SEEDS"
  "resnet20 256 $TORCH_RESNET20_LR cosine 0.91 $E_RESNET $SEEDS"
  "resnet20 32 0.05 cosine 0.91 $E_RESNET $SEEDS_SLOW"
)
# cbtrain: "model batch learners lr schedule target epochs seeds" (runs all its epochs).
CBT_TTA=(
  "lenet5 32 auto $CBT_LENET5_LR cosine 0.90 $E_LENET $SEEDS"
  "resnet20 32 auto $CBT_RESNET20_LR cosine 0.91 $E_RESNET $SEEDS"
)
# Learning-rate sweep (stage lr_sweep): SWEEP_MODEL to its target, seed 1, PyTorch eager at
# the batch of its time-to-accuracy runs and cbtrain at b=32 per learner with --learners auto.
# SWEEP_EPOCHS is the maximum epochs of both, so a cosine schedule spans the same epochs on
# both sides (PyTorch stops at the target, cbtrain runs them all).
SWEEP_EPOCHS=${SWEEP_EPOCHS:-10}
SWEEP_MODEL=${SWEEP_MODEL:-resnet20}
SWEEP_SCHEDULES=${SWEEP_SCHEDULES:-cosine}
SWEEP_TORCH_LRS=${SWEEP_TORCH_LRS-0.05 0.1 0.2 0.4}
SWEEP_CBT_LRS=${SWEEP_CBT_LRS-0.02 0.05 0.1 0.2}

in_stages() { case ",$STAGES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

stage() {  # stage NAME FUNCTION: run it if selected, log to logs/NAME.log, note rc and time
  local name=$1 fn=$2 t0=$SECONDS rc
  in_stages "$name" || return 0
  echo "=== $name ($(date +%T))"
  "$fn" 2>&1 | tee "$OUT/logs/$name.log"
  rc=${PIPESTATUS[0]}
  echo "$name rc=$rc seconds=$((SECONDS - t0)) mode=$MODE" >> "$OUT/logs/stages.txt"
  echo "=== $name: rc=$rc, $((SECONDS - t0)) s"
}

env_info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    > "$OUT/env/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" > "$OUT/env/nvidia-smi.txt"
  LD_LIBRARY_PATH="$CBT_LD" "$CBT" --version > "$OUT/env/cbtrain_version.txt" 2>&1 ||
    echo "cbtrain --version failed ($CBT)" >> "$OUT/env/cbtrain_version.txt"
  # CBT_COMMIT names the code where the tree has no history of its own (a copy of a checkout).
  if [ -n "${CBT_COMMIT:-}" ]; then echo "$CBT_COMMIT (CBT_COMMIT)" > "$OUT/env/git.txt"
  else { git rev-parse HEAD 2>/dev/null || echo unknown
         echo "$(git status --porcelain 2>/dev/null | wc -l) files differ from HEAD"; } > "$OUT/env/git.txt"; fi
  "$PYTHON" -c 'import sys, numpy, torch; print("python", sys.version.split()[0]); print("numpy", numpy.__version__); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' \
    > "$OUT/env/python.txt" 2>/dev/null || echo "$PYTHON cannot import torch" > "$OUT/env/python.txt"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/env/date.txt"
}

do_export() {
  "$PYTHON" bench/models.py --out "$OUT/models" --models lenet5,resnet32,resnet20
  # LeNet-5 and ResNet-20 as shipped in models/: a fresh export shares identical
  # initializers between layers (every BatchNorm's ones and zeros become one tensor), which
  # would tie those parameters in training.
  cp models/lenet5/lenet5.ts17.onnx "$OUT/models/lenet5.onnx"
  cp models/resnet20/resnet20.ts17.onnx "$OUT/models/resnet20.onnx"
}

do_torch_tput() {
  local m
  for m in lenet5 resnet32; do
    "$PYTHON" bench/torch_throughput.py --model "$m" --batch "$TPUT_BATCHES" \
      --modes eager,graph,multistream --ks 2,4,8,16 --precision "$PRECISION" $QUICK \
      --out "$OUT/results/torch_throughput_$m.json"
  done
}

do_cbt_tput() {
  local m steps
  for m in lenet5 resnet32; do
    steps=$LENET_STEPS; [ "$m" = lenet5 ] || steps=$RESNET_STEPS
    LD_LIBRARY_PATH="$CBT_LD" "$PYTHON" bench/cbtrain_runs.py throughput --cbtrain "$CBT" \
      --models-dir "$OUT/models" --models "$m" --batches "$TPUT_BATCHES" --ks "$CBT_KS" \
      --steps "$steps" --warmup "$CBT_WARMUP" --out "$OUT/results/cbtrain_throughput_$m.json" \
      --logs "$OUT/logs/cbtrain" "${EXTRA[@]}"
  done
}

# One time-to-accuracy run of each system: model batch lr schedule target epochs seed out,
# and for cbtrain learners before lr and the log folder last.
# The label smoothing of model $1's time-to-accuracy runs, the same on both sides.
label_smoothing() { if [ "$1" = resnet20 ]; then echo "$RESNET20_LABEL_SMOOTHING"; else echo 0; fi; }
torch_tta_run() {
  local m=$1 b=$2 lr=$3 sched=$4 target=$5 epochs=$6 s=$7 out=$8
  echo "--- PyTorch $m b=$b lr=$lr $sched target $target seed $s"
  "$PYTHON" bench/torch_time_to_accuracy.py --model "$m" --batch "$b" --lr "$lr" \
    --schedule "$sched" --target "$target" --max-epochs "$epochs" --seed "$s" \
    --data "$DATA" --init-onnx "$OUT/models/$m.onnx" --precision "$PRECISION" \
    --label-smoothing "$(label_smoothing "$m")" --out "$out"
}
cbt_tta_run() {
  local m=$1 b=$2 k=$3 lr=$4 sched=$5 target=$6 epochs=$7 s=$8 out=$9 logs=${10}
  LD_LIBRARY_PATH="$CBT_LD" "$PYTHON" bench/cbtrain_runs.py tta --cbtrain "$CBT" \
    --model "$OUT/models/$m.onnx" --name "$m" --batch "$b" --learners "$k" \
    --epochs "$epochs" --lr "$lr" --schedule "$sched" --target "$target" --seed "$s" \
    --data "$DATA" --out "$out" --logs "$logs" "${EXTRA[@]}" --label-smoothing "$(label_smoothing "$m")"
}

do_torch_tta() {
  local cfg m b lr sched target epochs seeds s
  for cfg in "${TORCH_TTA[@]}"; do
    read -r m b lr sched target epochs seeds <<< "$cfg"
    for s in $seeds; do
      torch_tta_run "$m" "$b" "$lr" "$sched" "$target" "$epochs" "$s" \
        "$OUT/results/tta_torch_${m}_b${b}_s${s}.json"
    done
  done
}
do_cbt_tta() {
  local cfg m b k lr sched target epochs seeds s
  for cfg in "${CBT_TTA[@]}"; do
    read -r m b k lr sched target epochs seeds <<< "$cfg"
    for s in $seeds; do
      cbt_tta_run "$m" "$b" "$k" "$lr" "$sched" "$target" "$epochs" "$s" \
        "$OUT/results/tta_cbtrain_${m}_b${b}_k${k}_s${s}.json" "$OUT/logs/cbtrain"
    done
  done
}

do_lr_sweep() {
  local lr sched tb target
  case "$SWEEP_MODEL" in
    resnet20) tb=256; target=0.91 ;;
    lenet5) tb=32; target=0.90 ;;
    *) echo "SWEEP_MODEL must be resnet20 or lenet5, not '$SWEEP_MODEL'" >&2; return 2 ;;
  esac
  # Result names carry the schedule when it is not cosine (the first sweeps were cosine only).
  for sched in ${SWEEP_SCHEDULES//,/ }; do
    local tag=""
    [ "$sched" = cosine ] || tag="_$sched"
    for lr in ${SWEEP_TORCH_LRS//,/ }; do
      torch_tta_run "$SWEEP_MODEL" "$tb" "$lr" "$sched" "$target" "$SWEEP_EPOCHS" 1 \
        "$OUT/results/sweep_torch_${SWEEP_MODEL}_b${tb}${tag}_lr${lr}_s1.json"
    done
    for lr in ${SWEEP_CBT_LRS//,/ }; do
      echo "--- cbtrain $SWEEP_MODEL b=32 learners auto lr=$lr $sched target $target seed 1"
      # Logs in a folder per run: cbtrain_runs.py names them without the lr.
      cbt_tta_run "$SWEEP_MODEL" 32 auto "$lr" "$sched" "$target" "$SWEEP_EPOCHS" 1 \
        "$OUT/results/sweep_cbtrain_${SWEEP_MODEL}_b32_kauto${tag}_lr${lr}_s1.json" \
        "$OUT/logs/cbtrain_sweep/$SWEEP_MODEL$tag/lr$lr"
    done
  done
}

do_report() {
  "$PYTHON" bench/report.py "$OUT"
}

echo "cbtrain benchmark, $MODE mode, stages $STAGES, into $OUT"
echo "python: $PYTHON, cbtrain: $CBT, data: $DATA"
env_info
stage export do_export
stage torch_tput do_torch_tput
stage cbt_tput do_cbt_tput
stage torch_tta do_torch_tta
stage cbt_tta do_cbt_tta
stage lr_sweep do_lr_sweep
stage report do_report
echo "done: $OUT/BENCHMARKS.md"
