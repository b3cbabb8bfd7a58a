#!/usr/bin/env bash
# Session 10 call 7: LeNet-5 b=32, PyTorch's best configuration (16 CUDA graphs on 16 streams)
# and cbtrain K=16, alternating, four processes each, at the final code.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
cp .device/session/commit.txt $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
T1=$SECONDS
for rep in 1 2 3 4; do
  timeout 60 $PY bench/torch_throughput.py --model lenet5 --batch 32 --modes multistream --ks 16 --precision fp32 \
    --out $R/torch_r$rep.json > $R/torch_r$rep.log 2>&1
  timeout 60 $CBT bench $R/lenet5.onnx --device cuda -b 32 -k 16 --json 2> $R/cbt_r$rep.log | tail -1 > $R/cbt_r$rep.json
  echo "rep $rep after $((SECONDS-T1)) s"
done
$PY - <<PY
import json, statistics
t=[]; c=[]
for r in range(1,5):
    try: t.append(json.load(open('$R/torch_r%d.json'%r))['results'][0]['images_per_sec'])
    except Exception as e:
        try:
            j=json.load(open('$R/torch_r%d.json'%r)); print('torch keys', list(j)[:20], str(j.get('results'))[:300])
        except Exception as e2: print('torch', r, e2)
    try: c.append(json.load(open('$R/cbt_r%d.json'%r))['images_per_sec'])
    except Exception as e: print('cbt', r, e)
print('torch', [round(x) for x in t]); print('cbtrain', [round(x) for x in c])
if t and c: print('median ratio %.3f' % (statistics.median(c)/statistics.median(t)))
PY
rm -f $R/lenet5.onnx
