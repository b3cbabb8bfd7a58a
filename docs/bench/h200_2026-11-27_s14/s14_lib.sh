# Session 14: shared set-up of the device calls (sourced): build, environment, tta runner.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R/res $R/logs
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
show() {
  $PY - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(sys.argv[1].split('/')[-1], {k: j.get(k) for k in ('reached','epochs_to_target','seconds_to_target','autotune_seconds','learners_chosen','error')}, flush=True)
PY
}
tta() {  # name target epochs seed K tag extra...
  local n=$1 t=$2 e=$3 s=$4 k=$5 tag=$6; shift 6
  timeout ${TTA_LIMIT:-45} $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$n/$n.ts17.onnx \
    --name $n --batch 32 --learners $k --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s \
    --data $CBT_DATA --stop-at-target --timeout $(( ${TTA_LIMIT:-45} - 5 )) --out $R/res/${n}_${tag}_s$s.json --logs $R/logs/$tag -- "$@" > /dev/null 2>&1
  show $R/res/${n}_${tag}_s$s.json
}
