#!/usr/bin/env bash
# Session 8 call 1: build; LeNet-5 kernel profile (ncu one learner, nsys 16 learners if
# present); LeNet-5 time to 90% at K=16/24/30 on one GPU (SMA's statistical efficiency).
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
nvidia-smi > $R/nvidia-smi.txt 2>&1
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
which nsys ncu > $R/tools.txt 2>&1; ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys >> $R/tools.txt 2>&1
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
T1=$SECONDS
PYTHON=$PY timeout 200 bash bench/profile_gpu.sh $R/prof lenet5 fp32 > $R/prof.txt 2>&1
echo "profile rc $? after $((SECONDS-T1)) s"
NSYS=$(which nsys 2>/dev/null || ls /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  T1=$SECONDS
  timeout 90 $NSYS profile --cuda-graph-trace=node -t cuda -o $R/nsys_lenet16 --force-overwrite true \
    $CBT bench $R/lenet5.onnx --device cuda -b 32 -k 16 --steps 100 --warmup 20 > $R/nsys.log 2>&1
  timeout 60 $NSYS stats -r cuda_gpu_kern_sum -f csv -o $R/nsys_lenet16 $R/nsys_lenet16.nsys-rep >> $R/nsys.log 2>&1
  echo "nsys after $((SECONDS-T1)) s"; rm -f $R/nsys_lenet16.nsys-rep $R/nsys_lenet16.sqlite
fi
T1=$SECONDS
for spec in "16 0.05" "24 0.05" "30 0.05" "30 0.1" "16 0.1"; do
  set -- $spec
  timeout 60 $CBT $R/lenet5.onnx --device cuda --batch-size 32 --learners $1 --epochs 40 --lr $2 \
    --lr-schedule cosine --seed 1 --metrics $R/tta_k$1_lr$2.jsonl --data $CBT_DATA -o $R/t.onnx > $R/tta_k$1_lr$2.log 2>&1
  echo "K=$1 lr=$2 rc $?: $($PY -c "
import json,sys
h=[json.loads(l) for l in open('$R/tta_k$1_lr$2.jsonl') if 'test_accuracy' in l]
r=[x for x in h if x['test_accuracy']>=0.9]
print('best',max(x['test_accuracy'] for x in h),'first 90%', (r[0]['epoch'],r[0]['elapsed_s']) if r else None)" 2>&1)"
done
echo "tta after $((SECONDS-T1)) s"
rm -f $R/t.onnx $R/lenet5.onnx
tar czf $OUT/r.tgz -C $OUT r
