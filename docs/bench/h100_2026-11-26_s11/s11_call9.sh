#!/usr/bin/env bash
# Session 11 call 9: at the final code, on the machine of call 8 (kept warm): the driver's
# throughput stages, PyTorch's and cbtrain's, and the report over everything in bench/out.
set -uo pipefail
OUT=${OUT:?}
STAGES=export,torch_tput,cbt_tput,report DRV_LIMIT=540 bash .device/session/s9_drv.sh
grep -h "chose" bench/out/logs/cbtrain/cbtrain_bench_*kauto.log | head -10
