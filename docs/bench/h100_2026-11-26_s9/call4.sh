#!/usr/bin/env bash
# Session 9 call 4: engine choice vs throughput. LeNet-5 b=32 K=16 with the engines timed
# 8 (default), 16 and 1 copies at once, alternating, the choices logged; ResNet-32 8 vs 16.
set -uo pipefail
OUT=${OUT:?}
R=$OUT/r; mkdir -p $R
echo "commit $(cat .device/session/commit.txt)" > $R/commit.txt
T0=$SECONDS
bash scripts/gpu_check.sh $R/check build > $R/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CBT_DATA=$PWD/.device/data CBT_PYTHON=python3 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
CBT=./build-gpu/tools/cbtrain
cp models/lenet5/lenet5.ts17.onnx $R/lenet5.onnx
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
T1=$SECONDS
i=0
for rep in 1 2 3 4; do for c in 8 16 1; do
  i=$((i+1))
  CBT_LOG_CONV_ALGOS=1 CBT_CONV_CONCURRENCY=$c timeout 60 $CBT bench $R/lenet5.onnx --device cuda -b 32 -k 16 --json \
    2> $R/lenet_c${c}_r$rep.log | tail -1 | sed "s/^{/{\"c\": $c, \"rep\": $rep, /" >> $R/ab.jsonl
done; done
echo "lenet after $((SECONDS-T1)) s"
for rep in 1 2; do for c in 8 16; do
  CBT_LOG_CONV_ALGOS=1 CBT_CONV_CONCURRENCY=$c timeout 90 $CBT bench $R/models/resnet32.onnx --device cuda -b 32 -k 16 --json \
    2> $R/resnet_c${c}_r$rep.log | tail -1 | sed "s/^{/{\"c\": $c, \"rep\": $rep, /" >> $R/ab.jsonl
done; done
echo "all after $((SECONDS-T1)) s"
$PY - <<PY
import json, re, glob
for l in open('$R/ab.jsonl'):
    try: j=json.loads(l)
    except Exception as e: print('bad', l[:80]); continue
    m=j['model'].split('/')[-1]
    tag='lenet' if 'lenet' in m else 'resnet'
    log=open('$R/%s_c%d_r%d.log'%(tag,j['c'],j['rep'])).read()
    ch=re.findall(r'cbtrain conv engines: (\S+) x\d+ image=\((\d+),(\d+),(\d+),(\d+)\).*?chosen: (e\d+)', log)
    print(m, 'c', j['c'], 'rep', j['rep'], round(j['images_per_sec']), ' '.join('%s:C%s:%s'%(o[0][:5],o[2],o[5]) for o in ch) if tag=='lenet' else len(ch))
PY
rm -f $R/lenet5.onnx; rm -rf $R/models
tar czf $OUT/r.tgz -C $OUT r
