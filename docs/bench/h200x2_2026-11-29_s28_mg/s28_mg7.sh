#!/usr/bin/env bash
# Session 28, call 7 (a fresh machine; the code with `cbtrain bench` taking the --autotune-*
# flags, which call 6 found it refused): cbtrain's throughput on 1 and 2 GPUs with up to 8
# learners per GPU (MG_TPUT_LEARNERS_PER_GPU=8), then bench's auto at batch 32 on GPU 0 with
# --autotune-threshold 0.1 (the default) and 0.4.
OUT=${OUT:?}
M=$PWD/build-gpu/s28; mkdir -p $M; T0=$SECONDS
bash scripts/gpu_check.sh $M/check build > $M/build7.txt 2>&1; echo "build rc $? after $((SECONDS-T0)) s"
ONNX=$PWD/.device/onnx/usr
export CBT_DATA=$PWD/.device/data CBT_COMMIT=$(cat .device/session/commit.txt) CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu
MG_SYSTEMS=cbtrain MG_TPUT_LEARNERS_PER_GPU=8 MG_BUDGET_S=300 timeout 320 \
  bash bench/run_multi_gpu.sh $M/mg_l8 full 1,2 export,tput,report > $M/mg_l8.log 2>&1
echo "rc $? after $((SECONDS-T0)) s"
grep -E "^\| [12] \|" $M/mg_l8/MULTI_GPU.md
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for th in 0.1 0.4; do for m in lenet5 resnet32; do
  timeout 60 ./build-gpu/tools/cbtrain bench $M/mg_l8/models/$m.onnx --device cuda --batch-size 32 --learners auto \
    --steps 100 --warmup 20 --autotune-threshold $th | tail -1 | sed "s/^/threshold $th: /"
done; done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/s28.tgz --exclude=models --exclude=check -C $M/.. s28
