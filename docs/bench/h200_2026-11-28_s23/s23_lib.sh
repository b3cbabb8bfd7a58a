# Session 23: shared set-up of calls 3 on (sourced after s14_lib.sh): the old build (OLD_OPS, the
# ops/ of another commit, built alongside without tests) and a cold start of either build.
build_old() {  # in the background; wait for $BUILD, then read $R/old_build_rc.txt
  mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device -cf - . | tar -xf - -C /tmp/old
  rm -rf /tmp/old/ops && tar xJf .device/session/old_ops.txz -C /tmp/old
  ln -sfn $PWD/.device /tmp/old/.device
  (cd /tmp/old && CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
  BUILD=$!
}
LAPS=docs/bench/h200_2026-11-28_s23/search_laps.py
start() {  # arm model epochs tag: learners auto, no choices kept, CBT_LOG_CONV_ALGOS=1
  local bin=./build-gpu/tools/cbtrain; [ $1 = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  local t0=$(date +%s%N)
  CBT_LOG_CONV_ALGOS=1 timeout 60 $bin models/$2/$2.ts17.onnx --device cuda --batch-size 32 --learners auto --epochs $3 \
    --lr 0.05 --lr-schedule cosine --seed 1 --data $CBT_DATA --metrics $R/logs/$4.jsonl > $R/logs/$4.log 2>&1
  local rc=$? t1=$(date +%s%N)
  $PY - $R/logs/$4 $rc $(( (t1 - t0) / 1000000 )) <<'PY'
import json, sys
base, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = [json.loads(l) for l in open(base + '.jsonl')]
print(f"{base.split('/')[-1]} rc {rc}: process {wall / 1000:.2f} s, build {m[-1]['autotune_s']:.2f} s, epoch 1 {m[0]['elapsed_s']:.2f} s, "
      f"epoch {m[-1]['epoch']} {m[-1]['elapsed_s']:.2f} s, acc {m[-1]['test_accuracy']:.4f}", flush=True)
PY
  $PY $LAPS $R/logs/$4.log
}
