#!/usr/bin/env bash
# Session 15 call 2: BatchNorm's blocks per channel. `cbtrain bench` at batch 32 with the
# one-launch kernels on or off (CBT_BN_ONE_LAUNCH) and about E elements a block
# (CBT_BN_BLOCK_ELEMENTS, an experiment's variable: at most 8 blocks, at least 1 per 4096).
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
mkdir -p $R/models
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1
cp models/resnet20/resnet20.ts17.onnx $R/models/resnet20.onnx
one() {  # on|off E model k
  local env="CBT_BN_BLOCK_ELEMENTS=$2"; [ $1 = off ] && env="$env CBT_BN_ONE_LAUNCH=off"
  env $env timeout 60 ./build-gpu/tools/cbtrain bench $R/models/$3.onnx --device cuda --batch-size 32 --learners $4 --steps 150 --warmup 20 --json > $R/bench_$1_$2_$3_$4_$rep.txt 2>&1
  echo "$1 E=$2 $3 K=$4 rep $rep: $(grep -o '"images_per_sec": [0-9.]*' $R/bench_$1_$2_$3_$4_$rep.txt | tail -1)"
}
for rep in 1 2; do
  for a in "off 1024" "off 2048" "off 4096" "on 4096" "on 1024"; do one $a resnet32 16; done
done
rep=1
for a in "off 1024" "off 4096" "on 4096"; do one $a resnet20 16; done
for a in "on 1024" "off 1024" "off 4096" "on 4096"; do one $a resnet32 1; done
for a in "on 1024" "off 1024" "off 4096"; do one $a resnet32 4; done
echo "total $((SECONDS-T0)) s"
tar czf $OUT/r.tgz -C $OUT r
