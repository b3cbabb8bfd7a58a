#!/usr/bin/env bash
# Session 19 call 2: Nsight Compute on the 16-channel stage's direct kernels as 16 learners run
# them. A 16-learner run writes its convolution choices (--conv-choices); one learner then reads
# them with CBT_CONV_CONCURRENCY=8 (the key of a choice names the copies timed at once), so it
# runs the same configurations, and ncu takes the second direct forward launch of the timed
# window (the first 16-channel convolution; its backward data runs the same configuration) and
# the first tiled backward filter (the stage's last convolution): the full set, then the stall
# reasons per issued instruction. Then `cbtrain bench` with 16 learners and the choices timed
# as 16 copies at once (CBT_CONV_CONCURRENCY=16) against 8, alternating.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
B=./build-gpu/tools/cbtrain
M=$R/models/resnet32.onnx
timeout 60 $B bench $M --device cuda --batch-size 32 --learners 16 --steps 20 --warmup 5 --conv-choices $R/choices.txt \
  > /dev/null 2> $R/choices.err; echo "choices rc $?: $(grep -c '^choice' $R/choices.txt) lines"
STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
prof() {  # tag regex skip
  CBT_CONV_CONCURRENCY=8 timeout 120 ncu --profile-from-start off --clock-control none -k "regex:$2" --launch-skip $3 \
    --launch-count 1 $4 $B bench $M --device cuda --batch-size 32 --learners 1 --conv-choices $R/choices.txt \
    --cuda-graphs off --warmup 5 --steps 10 > $R/ncu_$1.txt 2> $R/ncu_$1.err
  echo "ncu $1 rc $? after $((SECONDS-T0)) s: $(grep -c 'Section:' $R/ncu_$1.txt) sections"
}
prof fwd direct_conv_kernel 1 "--set full"
prof fwd_stall direct_conv_kernel 1 "--metrics $STALL"
prof wgrad wgrad_tile_kernel 0 "--set full"
prof wgrad_stall wgrad_tile_kernel 0 "--metrics $STALL"
for f in fwd wgrad; do
  grep -E "direct_conv_kernel|wgrad_tile_kernel|Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Grid Size|Block Size|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|SM Frequency|Waves Per SM" $R/ncu_$f.txt | cut -c1-150
  grep -E "stalled" $R/ncu_${f}_stall.txt | awk '$NF+0 > 0.05' | cut -c1-150
done
for rep in 1 2; do
  for conc in 8 16; do
    CBT_CONV_CONCURRENCY=$conc timeout 90 $B bench $M --device cuda --batch-size 32 --learners 16 --steps 150 --warmup 20 \
      --json > $R/bench_c${conc}_$rep.out 2> $R/bench_c${conc}_$rep.err
    echo "resnet32 K=16 concurrency $conc rep $rep rc $?: $(tail -1 $R/bench_c${conc}_$rep.out | grep -o '"images_per_sec":[^,]*')"
  done
done
echo "total $((SECONDS-T0)) s"
rm -rf $R/models $R/check; tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
