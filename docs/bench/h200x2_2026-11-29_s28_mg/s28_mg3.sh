#!/usr/bin/env bash
# Session 28, call 3 (the machine of calls 1-2, kept warm): the driver's last skipped run
# (cbtrain ResNet-20 on 2 GPUs, seed 3); then the auto-tuner's threshold, the default 0.1
# against 0.4, side by side, seeds 1-3, ended at the target: on GPU 0 alone with the single-GPU
# driver's schedules (LeNet-5 to 90% over 30 epochs, ResNet-20 to 91% over 4), on both GPUs
# with the multi-GPU driver's (60 and 30), and the auto throughput at batch 32 on GPU 0.
OUT=${OUT:?}
M=$PWD/build-gpu/s28; T0=$SECONDS
ONNX=$PWD/.device/onnx/usr
CBT_DATA=$PWD/.device/data CBT_COMMIT=$(cat .device/session/commit.txt) CBT_LIB_DIR=$ONNX/lib/x86_64-linux-gnu \
  MG_SEEDS="1 2 3" MG_BUDGET_S=260 timeout 280 bash bench/run_multi_gpu.sh $M/mg full 2 tta_resnet,report > $M/mg4.log 2>&1
echo "multi-GPU tta rc $? after $((SECONDS-T0)) s"; grep -E "^---|reached" $M/mg4.log
grep -E "^\| 2 \|" $M/mg/MULTI_GPU.md
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
tta2() {  # name target epochs seed tag extra...: both GPUs, learners auto
  local n=$1 t=$2 e=$3 s=$4 tag=$5; shift 5
  timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$n/$n.ts17.onnx \
    --name $n --batch 32 --learners auto --gpus 0,1 --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s \
    --data $CBT_DATA --stop-at-target --timeout 55 --out $R/res/${n}_${tag}_s$s.json --logs $R/logs/$tag -- "$@" > /dev/null 2>&1
  show $R/res/${n}_${tag}_s$s.json
}
for s in 1 2 3; do
  tta lenet5 0.90 30 $s auto th01
  tta lenet5 0.90 30 $s auto th04 --autotune-threshold 0.4
  tta resnet20 0.91 4 $s auto th01
  tta resnet20 0.91 4 $s auto th04 --autotune-threshold 0.4
  tta2 lenet5 0.90 60 $s g2th04 --autotune-threshold 0.4
  tta2 resnet20 0.91 30 $s g2th04 --autotune-threshold 0.4
  echo "after seed $s: $((SECONDS-T0)) s"
done
$PY bench/models.py --out $R/models --models resnet32 > /dev/null 2>&1
cp models/lenet5/lenet5.ts17.onnx $R/models/lenet5.onnx
for th in 0.1 0.4; do
  timeout 120 $PY bench/cbtrain_runs.py throughput --cbtrain ./build-gpu/tools/cbtrain --models-dir $R/models \
    --models lenet5,resnet32 --batches 32 --ks auto --steps 100 --warmup 20 --timeout 100 \
    --out $R/res/tput_th$th.json --logs $R/logs/tput$th -- --autotune-threshold $th > $R/tput$th.txt 2>&1
  echo "threshold $th:"; tail -4 $R/tput$th.txt
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/check $R/models; tar czf $OUT/r.tgz -C $OUT r
