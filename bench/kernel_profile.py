#!/usr/bin/env python3
"""Where a training step's GPU time goes, kernel by kernel, for cbtrain and PyTorch.

    # cbtrain: Nsight Compute's CSV of gpu__time_duration (see bench/profile_gpu.sh)
    python3 bench/kernel_profile.py ncu CSV --steps-marker REGEX --out JSON
    # PyTorch: eager training steps under torch.profiler (needs torch and a GPU)
    python3 bench/kernel_profile.py torch --model resnet32 --batch 32 --precision fp32 --out JSON
    # side by side
    python3 bench/kernel_profile.py compare A.json B.json [--md OUT.md]

Each JSON holds, per kernel name, launches and total microseconds, the number of steps the
profile covers and the kernels sorted into groups (convolution forward / backward data /
backward filter, normalisation, elementwise, ...), per step.
"""

import argparse
import csv
import json
import re
import sys
from collections import defaultdict

# First matching group wins; patterns are searched in the lower-cased kernel name.
GROUPS = [
    ("batch norm", r"batch_?norm|bn_|channel_affine|channel_partials|channel_reduce|welford"),
    # cbtrain's own direct kernel runs both (backward data as the forward of turned filters)
    ("conv forward / backward data (direct)", r"direct_conv_kernel"),
    ("conv backward filter", r"wgrad|bwd_filter|backward_filter|dgrad_engine.*filter|convolve_sgemm.*wgrad"),
    ("conv backward data", r"dgrad|bwd_data|backward_data"),
    ("conv forward", r"fprop|implicit_gemm|implicit_convolve|conv2d|xmma_fprop|sm90_xmma|cudnn|winograd|convolve"),
    ("matrix product", r"gemm|cutlass|sgemm|ampere_|sm90_"),
    ("pooling", r"pool|avg_|max_"),
    ("optimizer / SMA", r"sgd|momentum|multi_tensor|foreach|sma_|optim|axpy"),
    ("loss / softmax", r"softmax|cross_entropy|nll|loss"),
    ("reduction", r"reduce|sum_kernel|partials"),
    ("copy / fill", r"copy|fill|memset|memcpy|pad_image|crop_image"),
    ("elementwise", r"elementwise|relu|add|mul|threshold|unary|binary|vectorized|broadcast|where"),
]


def group_of(name):
    low = name.lower()
    for g, pat in GROUPS:
        if re.search(pat, low):
            return g
    return "other"


def summarise(kernels, steps, meta):
    total = sum(v["us"] for v in kernels.values())
    groups = defaultdict(lambda: {"launches": 0, "us": 0.0})
    for name, v in kernels.items():
        g = groups[group_of(name)]
        g["launches"] += v["launches"]
        g["us"] += v["us"]
    per_step = {g: {"launches_per_step": v["launches"] / steps, "us_per_step": v["us"] / steps}
                for g, v in groups.items()}
    return dict(meta, steps=steps, total_us=total, us_per_step=total / steps,
                launches_per_step=sum(v["launches"] for v in kernels.values()) / steps,
                groups=per_step, kernels=kernels)


def from_ncu(path, marker):
    """Nsight Compute --csv --metrics gpu__time_duration.sum (base units: ns)."""
    kernels = defaultdict(lambda: {"launches": 0, "us": 0.0})
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.startswith('"')]  # ncu prints its own lines before the CSV
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "ns")
        us = value / 1000.0 if unit in ("ns", "nsecond") else value * 1000.0 if unit in ("ms", "msecond") else value
        k = kernels[row["Kernel Name"]]
        k["launches"] += 1
        k["us"] += us
    if not kernels:
        raise SystemExit(f"{path}: no gpu__time_duration.sum rows")
    hits = [v["launches"] for n, v in kernels.items() if re.search(marker, n)]
    if not hits:
        raise SystemExit(f"{path}: no kernel matches the steps marker /{marker}/")
    return dict(kernels), max(1, min(hits))


def from_torch(a):
    """The eager training step of bench/torch_throughput.py (one Replica), profiled."""
    import os
    import torch
    from torch.profiler import ProfilerActivity, profile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from models import set_precision
    from torch_throughput import Replica
    torch.backends.cudnn.benchmark = True
    set_precision(a.precision)
    replica = Replica(a.model, a.batch, seed=0)
    for _ in range(10):
        replica.step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.steps):
            replica.step()
        torch.cuda.synchronize()
    kernels = defaultdict(lambda: {"launches": 0, "us": 0.0})
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.name and "Memcpy" not in ev.name:
            k = kernels[ev.name]
            k["launches"] += 1
            k["us"] += ev.device_time
    meta = dict(system=f"PyTorch {torch.__version__} eager", model=a.model, batch=a.batch,
                precision=a.precision, gpu=torch.cuda.get_device_name(0))
    return summarise(dict(kernels), a.steps, meta)


def compare(paths, md):
    docs = [json.load(open(p)) for p in paths]
    groups = sorted({g for d in docs for g in d["groups"]},
                    key=lambda g: -max(d["groups"].get(g, {}).get("us_per_step", 0) for d in docs))
    head = "| group | " + " | ".join(f"{d['system']} µs/step (launches)" for d in docs) + " |"
    out = [f"Model {docs[0].get('model')}, batch {docs[0].get('batch')}, "
           f"precision {docs[0].get('precision')}; kernel time per training step "
           "(serialised kernels, no launch gaps).", "", head,
           "|---|" + "---|" * len(docs)]
    for g in groups:
        cells = []
        for d in docs:
            v = d["groups"].get(g)
            cells.append(f"{v['us_per_step']:.1f} ({v['launches_per_step']:.0f})" if v else "—")
        out.append(f"| {g} | " + " | ".join(cells) + " |")
    out.append("| **all kernels** | " + " | ".join(
        f"**{d['us_per_step']:.1f}** ({d['launches_per_step']:.0f})" for d in docs) + " |")
    for d in docs:
        out += ["", f"Top kernels of {d['system']} (µs per step, launches per step):", ""]
        top = sorted(d["kernels"].items(), key=lambda kv: -kv[1]["us"])[:15]
        for name, v in top:
            short = name if len(name) < 110 else name[:107] + "..."
            out.append(f"- {v['us'] / d['steps']:.1f} µs, {v['launches'] / d['steps']:.1f}×: "
                       f"`{short}` [{group_of(name)}]")
    text = "\n".join(out) + "\n"
    print(text)
    if md:
        open(md, "w").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("ncu")
    n.add_argument("csv")
    n.add_argument("--steps-marker", required=True,
                   help="regex of a kernel launched once per step (counts the steps)")
    n.add_argument("--system", default="cbtrain")
    n.add_argument("--model", default="")
    n.add_argument("--batch", type=int, default=0)
    n.add_argument("--precision", default="fp32")
    n.add_argument("--out", required=True)
    t = sub.add_parser("torch")
    t.add_argument("--model", required=True)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--steps", type=int, default=20)
    t.add_argument("--precision", default="fp32", choices=["fp32", "tf32"])
    t.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("json", nargs="+")
    c.add_argument("--md")
    a = ap.parse_args()
    if a.cmd == "ncu":
        kernels, steps = from_ncu(a.csv, a.steps_marker)
        doc = summarise(kernels, steps, dict(system=a.system, model=a.model, batch=a.batch,
                                             precision=a.precision))
    elif a.cmd == "torch":
        doc = from_torch(a)
    else:
        return compare(a.json, a.md)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{doc['system']}: {doc['us_per_step']:.1f} µs of kernels per step, "
          f"{doc['launches_per_step']:.0f} launches, {doc['steps']} steps")


if __name__ == "__main__":
    main()
