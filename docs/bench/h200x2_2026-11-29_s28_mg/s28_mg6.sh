#!/usr/bin/env bash
# Session 28, call 6 (the machine of calls 1-5, kept warm): cbtrain's throughput on 1 and 2 GPUs
# with up to 8 learners per GPU (MG_TPUT_LEARNERS_PER_GPU=8: what the GPUs can do, where the
# driver's default cap of 8 in all leaves 4 per GPU on two), into its own folder; then the
# call 1-3 output folder and this one come back as one archive.
OUT=${OUT:?}
M=$PWD/build-gpu/s28; T0=$SECONDS
ONNX=$PWD/.device/onnx/usr
CBT_DATA=$PWD/.device/data CBT_COMMIT=$(cat .device/session/commit.txt) CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu \
  MG_SYSTEMS=cbtrain MG_TPUT_LEARNERS_PER_GPU=8 MG_BUDGET_S=400 timeout 420 \
  bash bench/run_multi_gpu.sh $M/mg_l8 full 1,2 export,tput,report > $M/mg_l8.log 2>&1
echo "rc $? after $((SECONDS-T0)) s"
grep -E "^\| [12] \|" $M/mg_l8/MULTI_GPU.md
tar czf $OUT/s28.tgz --exclude=models --exclude=check -C $M/.. s28
