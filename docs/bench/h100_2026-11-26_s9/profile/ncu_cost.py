#!/usr/bin/env python3
"""What each kernel of a Nsight Compute CSV costs the GPU, per step (ninth session, call 3).

    python3 ncu_cost.py FILE.ncu.csv STEPS

Columns: launches per step; microseconds per step (gpu__time_duration, serialised); SM-equivalent
microseconds (sm__cycles_active summed over the SMs, over 132 SMs: how long the whole GPU would be
busy); warp-occupancy-equivalent microseconds (sm__warps_active summed, over 132 SMs x 64 warps:
how long the kernel's warps would fill the whole GPU); the first launch's grid, block and
registers. Needs the metrics of call3.sh.
"""
import csv, sys, collections, re
def load(p):
    rows = [r for r in csv.reader(open(p)) if r]
    i = next(k for k, r in enumerate(rows) if r and r[0] == "ID")
    h = rows[i]; data = rows[i+1:]
    ix = {n: h.index(n) for n in h}
    k = collections.OrderedDict()
    for r in data:
        if len(r) < len(h) or r[0] == "": continue
        key = (r[ix["ID"]], r[ix["Kernel Name"]])
        k.setdefault(key, {})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
    return k
def f(x):
    try: return float(x.replace(",", ""))
    except: return float("nan")
p = sys.argv[1]; steps = float(sys.argv[2])
k = load(p)
agg = collections.OrderedDict()
for (i, name), m in k.items():
    short = re.sub(r"\(.*", "", name)[:70]
    a = agg.setdefault(short, [0, 0, 0, 0, m.get("launch__grid_size"), m.get("launch__block_size"), m.get("launch__registers_per_thread")])
    a[0] += 1; a[1] += f(m.get("gpu__time_duration.sum", "nan")) / 1e3
    clk = f(m.get("sm__cycles_elapsed.avg", "nan")) / max(f(m.get("gpu__time_duration.sum", "1")), 1)  # cycles per ns
    a[2] += f(m.get("sm__cycles_active.sum", "nan")) / clk / 1e3 / 132  # SM-us / 132 = full-GPU-equivalent us
    a[3] += f(m.get("sm__warps_active.sum", "nan")) / clk / 1e3 / 132 / 64
tot = [0, 0, 0]
print(f"{'kernel':70s} {'n/step':>6s} {'us/step':>8s} {'SMeq-us':>8s} {'occ-us':>7s} grid block regs")
for s, a in sorted(agg.items(), key=lambda x: -x[1][2]):
    print(f"{s:70s} {a[0]/steps:6.1f} {a[1]/steps:8.1f} {a[2]/steps:8.2f} {a[3]/steps:7.2f} {a[4]} {a[5]} {a[6]}")
    tot[0] += a[1]/steps; tot[1] += a[2]/steps; tot[2] += a[3]/steps
print("total us/step %.1f, SM-equivalent us/step %.2f, warp-occupancy-equivalent us/step %.2f" % tuple(tot))
