# Session 25: shared set-up of the device calls (sourced after s14_lib.sh and s24_lib.sh): PyTorch's
# time-to-accuracy run as the driver runs it (from the committed model's weights), ended at the target.
torch_arm() {  # arm model batch target epochs seed [more flags]
  local arm=$1 m=$2 b=$3 t=$4 e=$5 s=$6; shift 6
  timeout 120 $PY bench/torch_time_to_accuracy.py --model $m --batch $b --lr 0.05 --schedule cosine --target $t \
    --max-epochs $e --seed $s --data $CBT_DATA --init-onnx models/$m/$m.ts17.onnx --out $R/res/${m}_${arm}_s$s.json \
    "$@" > $R/logs/torch_${m}_${arm}_s$s.log 2>&1
  show $R/res/${m}_${arm}_s$s.json
}
tta_lr() {  # lr arm model target epochs seed [cbtrain flags]: as tta_arm (the new build), at another learning rate
  local lr=$1 arm=$2 m=$3 t=$4 e=$5 s=$6; shift 6
  timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain ./build-gpu/tools/cbtrain --model models/$m/$m.ts17.onnx --name $m \
    --batch 32 --learners auto --epochs $e --lr $lr --schedule cosine --target $t --seed $s --data $CBT_DATA \
    --stop-at-target --timeout 55 --out $R/res/${m}_${arm}_s$s.json --logs $R/logs/$arm -- "$@" > /dev/null 2>&1
  show $R/res/${m}_${arm}_s$s.json
}
build_old_ops() {  # as s24_lib.sh's build_old, with ops/ of the baseline too (old.txz holds ops/, runtime/, tools/)
  mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device --exclude=./docs -cf - . | tar -xf - -C /tmp/old
  rm -rf /tmp/old/ops /tmp/old/runtime /tmp/old/tools && tar xJf .device/session/old.txz -C /tmp/old
  ln -sfn $PWD/.device /tmp/old/.device
  (cd /tmp/old && CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
  BUILD=$!
}
bin_of() { [ $1 = old ] && echo /tmp/old/build-gpu/tools/cbtrain || echo ./build-gpu/tools/cbtrain; }
searches() {  # the searches' milliseconds in a CBT_LOG_CONV_ALGOS=1 log: engines, direct, and the direct ones that ended early
  awk '/^cbtrain conv engines:/ { match($0, /searched in [0-9.]+ ms/); e += substr($0, RSTART + 12, RLENGTH - 15) }
       /^cbtrain conv direct:/ { match($0, /searched in [0-9.]+ ms/); t = substr($0, RSTART + 12, RLENGTH - 15); d += t; n++
                                 if ($0 ~ /first look/) { l++; lt += t } }
       END { printf "engines %.0f ms, direct %.0f ms in %d searches (%d ended after a first look, %.0f ms)\n", e, d, n, l, lt }' "$1"
}
startup() {  # arm model learners tag: `cbtrain bench` of 8 rounds after 1, searches logged; wall seconds and throughput
  local arm=$1 m=$2 k=$3 tag=$4 t
  t=$(date +%s%N)
  CBT_LOG_CONV_ALGOS=1 timeout 120 $(bin_of $arm) bench $m --device cuda --learners $k --batch-size 32 --warmup 1 --steps 8 --json \
    > $R/logs/startup_${tag}_$arm.json 2> $R/logs/startup_${tag}_$arm.log
  echo "$tag $arm rc $? wall $(( ($(date +%s%N) - t) / 1000000 )) ms; $(searches $R/logs/startup_${tag}_$arm.log)"
}
tput() {  # arm model learners tag: the driver's throughput window (20 rounds, 3 windows of 150)
  local arm=$1 m=$2 k=$3 tag=$4
  timeout 120 $(bin_of $arm) bench $m --device cuda --learners $k --batch-size 32 --warmup 20 --steps 150 --json \
    > $R/res/tput_${tag}_$arm.json 2> $R/logs/tput_${tag}_$arm.log
  echo "$tag $arm rc $? $(grep -o '"images_per_s[a-z_]*": *[0-9.]*' $R/res/tput_${tag}_$arm.json | head -1)"
}
