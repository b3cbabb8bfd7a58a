# Session 24: shared set-up of the device calls (sourced after s14_lib.sh): the baseline build
# (runtime/ and tools/ of the commit in .device/session/old.txz over this tree, built alongside
# without tests) and a time-to-accuracy run of either build, ended at the target.
build_old() {  # in the background; wait for $BUILD, then read $R/old_build_rc.txt
  mkdir -p /tmp/old && tar --exclude=./build-gpu --exclude=./.device --exclude=./docs -cf - . | tar -xf - -C /tmp/old
  rm -rf /tmp/old/runtime /tmp/old/tools && tar xJf .device/session/old.txz -C /tmp/old
  ln -sfn $PWD/.device /tmp/old/.device
  (cd /tmp/old && CBT_EXTRA_CMAKE_ARGS=-DCBT_BUILD_TESTS=OFF bash scripts/gpu_check.sh $R/check_old build > $R/build_old.txt 2>&1; echo "old build rc $?" > $R/old_build_rc.txt) &
  BUILD=$!
}
tta_arm() {  # arm model target epochs seed [cbtrain flags]: learners auto, b=32, lr 0.05 cosine, as the driver
  # runs them; arm old is the baseline build, any other the new one (the arm names the results)
  local arm=$1 m=$2 t=$3 e=$4 s=$5; shift 5
  local bin=./build-gpu/tools/cbtrain; [ $arm = old ] && bin=/tmp/old/build-gpu/tools/cbtrain
  timeout 60 $PY bench/cbtrain_runs.py tta --cbtrain $bin --model models/$m/$m.ts17.onnx --name $m --batch 32 \
    --learners auto --epochs $e --lr 0.05 --schedule cosine --target $t --seed $s --data $CBT_DATA --stop-at-target \
    --timeout 55 --out $R/res/${m}_${arm}_s$s.json --logs $R/logs/$arm -- "$@" > /dev/null 2>&1
  show $R/res/${m}_${arm}_s$s.json
  grep -h "autotune: chose" $R/logs/$arm/*${m}*s$s.log 2>/dev/null | tail -1
}
clocks() {  # the training clock at the end of the first epochs, and the count of each
  $PY - "$@" <<'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f))
    h = j.get("history") or []
    print(f.split("/")[-1], "clock", [round(x["elapsed_s"], 2) for x in h[:5]], "learners", [x.get("learners") for x in h[:5]],
          "acc", [round(x["test_accuracy"], 4) for x in h], flush=True)
PY
}
