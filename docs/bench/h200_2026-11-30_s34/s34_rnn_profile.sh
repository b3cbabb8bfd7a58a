#!/usr/bin/env bash
# Session 34 (one H200; the thirty-third session's script with BATCH): where a SeqNet training step's GPU time goes, cbtrain (Nsight Compute,
# one learner, CUDA graphs off, 40 steps after the warm-up) against PyTorch (torch.profiler),
# kernel names summed over a step, the largest first.   OUT=... bash s33_rnn_profile.sh
set -uo pipefail
OUT=${OUT:?}
BATCH=${BATCH:-32}
PY=/opt/torch/.venv/bin/python
V=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
ONNX=$PWD/.device/onnx/usr
export LD_LIBRARY_PATH=$V/cudnn/lib:$V/nccl/lib:$V/cublas/lib:$ONNX/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
[ -f $OUT/seqnet.onnx ] || $PY bench/models.py --out $OUT --models seqnet > $OUT/export.txt 2>&1
CBT_LOG_RNN=1 ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda --batch-size $BATCH --learners 1 2>&1 | sort | uniq -c | head -20
ncu --csv --print-units base --metrics gpu__time_duration.sum --clock-control none --cache-control none \
  --profile-from-start off --launch-count 3000 ./build-gpu/tools/cbtrain bench $OUT/seqnet.onnx --device cuda \
  --batch-size $BATCH --learners 1 --cuda-graphs off --warmup 5 --steps 40 > $OUT/cbt.ncu.csv 2> $OUT/cbt.ncu.err
$PY - "$OUT" <<'PYEOF'
import csv, sys, collections
out = sys.argv[1]
rows = [r for r in csv.DictReader(l for l in open(f"{out}/cbt.ncu.csv") if l.startswith('"'))]
t = collections.Counter(); n = collections.Counter()
for r in rows:
    if r.get("Metric Name") == "gpu__time_duration.sum":
        k = r["Kernel Name"][:90]; t[k] += float(r["Metric Value"].replace(",", "")); n[k] += 1
steps = max(1, n.get(next((k for k in n if "sce_rows" in k), ""), 1))
print(f"cbtrain: {len(rows)} kernels, {steps} steps, {sum(t.values())/steps/1e3:.1f} us a step")
for k, v in t.most_common(15): print(f"  {v/steps/1e3:8.1f} us  {n[k]/steps:6.1f}x  {k}")
PYEOF
B=$BATCH $PY - <<'PYEOF'
import os, sys, torch, collections
B = int(os.environ["B"])
sys.path.insert(0, "bench")
from models import build
torch.backends.cudnn.allow_tf32 = False; torch.backends.cuda.matmul.allow_tf32 = False
m, shape = build("seqnet"); m = m.cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
x = torch.randn((B,) + shape, device="cuda"); y = torch.randint(0, 10, (B,), device="cuda")
def step():
    opt.zero_grad(set_to_none=True); torch.nn.functional.cross_entropy(m(x), y).backward(); opt.step()
for _ in range(5): step()
torch.cuda.synchronize()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
    for _ in range(10): step()
    torch.cuda.synchronize()
t = collections.Counter(); n = collections.Counter()
for e in p.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        t[e.name[:90]] += e.device_time; n[e.name[:90]] += 1
print(f"pytorch: {sum(t.values())/10:.1f} us a step")
for k, v in t.most_common(15): print(f"  {v/10:8.1f} us  {n[k]/10:6.1f}x  {k}")
PYEOF
