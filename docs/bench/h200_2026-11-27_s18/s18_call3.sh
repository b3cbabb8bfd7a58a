#!/usr/bin/env bash
# Session 18 call 3: Nsight Compute on the direct kernels of ResNet-32 (one learner, batch 32,
# no CUDA graphs, 68d5d69): throughput, occupancy, launch statistics and where the warps stall,
# for the first launches of the forward/backward-data kernel and the tiled backward filter in
# the timed windows.
source docs/bench/h200_2026-11-27_s14/s14_lib.sh
$PY bench/models.py --out $R/models --models resnet32 > $R/export.txt 2>&1 || tail -3 $R/export.txt
timeout 240 ncu --profile-from-start off --clock-control none -k regex:"direct_conv_kernel|wgrad_tile_kernel" \
  --launch-count 10 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis \
  ./build-gpu/tools/cbtrain bench $R/models/resnet32.onnx --device cuda --batch-size 32 --learners 1 \
  --cuda-graphs off --warmup 10 --steps 30 > $R/ncu.txt 2> $R/ncu.err
echo "ncu rc $?"; tail -3 $R/ncu.err
grep -E "direct_conv_kernel|wgrad_tile_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Dynamic Shared|Grid Size|Block Size|Warp Cycles Per Issued|Issued Warp|Executed Ipc A" $R/ncu.txt | head -150
echo "total $((SECONDS-T0)) s"
rm -rf $R/models; tar czf $OUT/r.tgz -C $OUT r
