#!/usr/bin/env bash
# Session 30, call 2 (one H200): where ResNet-20's ceiling is. Training-step throughput of
# ResNet-20 (1x28x28, synthetic data) side by side: cbtrain at 256 images a round split
# 8x32 (the time-to-accuracy runs' shape), 4x64, 2x128, 1x256, and 16x32; PyTorch eager and one
# CUDA graph at batch 256 and 32, and 8 graphs on 8 streams at 32. Then the small batches'
# cost: does the same 256 images a round cost cbtrain more split into 8 learners than as one?
# PREC=tf32 (call 3): the same in TF32 on both sides, fewer cbtrain shapes.
set -uo pipefail
OUT=${OUT:?}
T0=$SECONDS
bash scripts/gpu_check.sh $OUT/check build > $OUT/build.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CUDA_DEVICE_MAX_CONNECTIONS=32
PY=/opt/torch/.venv/bin/python
C=./build-gpu/tools/cbtrain
M=models/resnet20/resnet20.ts17.onnx
mkdir -p $OUT/res
PREC=${PREC:-fp32}
CFGS=("32 8 sma" "32 8 ssgd" "64 4 sma" "128 2 sma" "256 1 ssgd" "32 16 sma" "32 1 ssgd" "512 1 ssgd")
[ $PREC = tf32 ] && CFGS=("32 8 sma" "256 1 ssgd" "32 16 sma" "512 1 ssgd")
echo "== cbtrain bench ResNet-20 ($PREC; images/s, peak MiB per learner)"
for cfg in "${CFGS[@]}"; do
  set -- $cfg
  for rep in 1 2; do
    $C bench $M --device cuda --batch-size $1 --learners $2 --algorithm $3 --precision $PREC --warmup 20 --steps 100 --json \
      > $OUT/res/cbt_${PREC}_b$1_k$2_$3_r$rep.json 2> $OUT/res/cbt_${PREC}_b$1_k$2_$3_r$rep.err
    $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"b={j['batch']} k={j['learners']} {j['algorithm']}: {j['images_per_sec']:.0f} img/s, {j['peak_bytes_per_learner']/2**20:.0f} MiB/learner, enqueue {j['enqueue_fraction']}\")" \
      $OUT/res/cbt_${PREC}_b$1_k$2_$3_r$rep.json 2>&1 || tail -2 $OUT/res/cbt_${PREC}_b$1_k$2_$3_r$rep.err
  done
done
echo "== PyTorch (torch_throughput.py) from $((SECONDS-T0)) s"
$PY bench/torch_throughput.py --model resnet20 --batch 256,32 --modes eager,graph,multistream --ks 8 \
  --precision $PREC --out $OUT/res/torch_resnet20_$PREC.json 2>&1 | grep -v Warning | tail -8
echo "done after $((SECONDS-T0)) s"
tar czf $OUT/res.tgz -C $OUT res build.txt && rm -rf $OUT/res $OUT/build.txt
