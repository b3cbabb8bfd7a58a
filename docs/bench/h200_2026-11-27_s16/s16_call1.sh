#!/usr/bin/env bash
# Session 16 call 1: where cbtrain's start-up goes. Timers (.device/session/prof.patch, not
# committed: the patch and its header are kept beside this script) around the model and data
# loading, each backend's cuBLAS and cuDNN handles, each learner, the programs, and the parts
# of cuDNN's engine search; then ResNet-20 and LeNet-5 with --learners auto for 2 epochs, with
# CBT_PROFILE=1 and CBT_LOG_CONV_ALGOS=1, and once with CUDA_MODULE_LOADING=EAGER.
cp .device/session/prof_tmp.h runtime/ && (git apply .device/session/prof.patch || patch -p1 < .device/session/prof.patch) || exit 3
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
cp .device/session/prof.patch .device/session/prof_tmp.h $R/
run() {  # tag model epochs env...
  local tag=$1 m=$2 e=$3; shift 3
  local t0=$(date +%s.%N)
  env CBT_PROFILE=1 CBT_LOG_CONV_ALGOS=1 "$@" timeout 60 ./build-gpu/tools/cbtrain models/$m/$m.ts17.onnx --device cuda \
    --batch-size 32 --learners auto --epochs $e --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA \
    --progress off > $R/logs/$tag.out 2> $R/logs/$tag.err
  echo "$tag rc $? wall $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b - a}') s"
  grep -E "built|autotune: 1 learner|epoch 1:|epoch 2:" $R/logs/$tag.out
  grep -E "^PROFILE (load|graph|programs|trainer_ctor)" $R/logs/$tag.err
  for k in backend_ctor backend_cublas backend_cudnn backend_setdevice+stream learner_ctor; do
    grep "^PROFILE $k " $R/logs/$tag.err | awk -v k=$k '{n++; s+=$3; if (n==1) f=$3} END {printf "%s n=%d first %.4f sum %.4f\n", k, n, f, s}'
  done
  grep "^PROFILE engine_search" $R/logs/$tag.err | awk '{for(i=4;i<=14;i+=2) s[i]+=$i; n++} END {printf "engine searches n=%d heur %.3f bufs %.3f plan %.3f ws %.3f time %.3f dl %.3f\n", n, s[4], s[6], s[8], s[10], s[12], s[14]}'
  grep -o "searched in [0-9.]*" $R/logs/$tag.err | awk '{s+=$3; n++} END {print "conv searches", n, "sum ms", s}'
  grep -o "^cbtrain conv engines: [a-z-]* x[0-9]*\|^cbtrain conv direct: [a-z-]* x[0-9]*" $R/logs/$tag.err | sort | uniq -c | head -12
}
run r20_a resnet20 2
run r20_b resnet20 2
run r20_eager resnet20 2 CUDA_MODULE_LOADING=EAGER
run lenet_a lenet5 2
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
