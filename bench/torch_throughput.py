#!/usr/bin/env python3
"""PyTorch training-step throughput on one GPU: eager, one CUDA graph, K graphs on K streams.

    python3 bench/torch_throughput.py --model lenet5 --batch 8,16,32,64 \
        --modes eager,graph,multistream --ks 2,4,8,16 --out torch_lenet5.json [--quick]

A training step is forward, cross-entropy loss, backward and an SGD (momentum 0.9) update
on synthetic random data that stays on the GPU. Modes:
  eager        the step as ordinary PyTorch calls on the default stream
  graph        the whole step captured as one CUDA graph (the "whole network capture"
               pattern of the PyTorch CUDA-graphs documentation) and replayed
  multistream  K replicas, each with its own model, optimizer, data and graph, captured and
               replayed on its own stream; one round replays every replica once
Images/s = K * batch * steps / seconds, the median over --windows windows of --steps
steps each (synchronize + perf_counter around each window), after a warm-up.
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

# As many hardware work queues as cbtrain asks for (it sets 32 before its first CUDA call):
# with fewer, replicas' streams share queues and the multistream mode loses throughput
# (LeNet-5 b=32, 16 streams, H100: 702,685 img/s with the driver's 8, 880,986 with 32).
# Read when PyTorch makes its CUDA context; a value set by the caller is kept.
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS, add_precision_arg, build, set_precision  # noqa: E402

# Keep the random labels from driving the weights to overflow: the speed of a step
# does not depend on the learning rate.
LR = 1e-3


def conv_in_bf16(conv):
    """`conv`'s forward with its input and weight cast to bfloat16 and its output to float32."""
    def forward(x):
        bias = conv.bias.to(torch.bfloat16) if conv.bias is not None else None
        y = F.conv2d(x.to(torch.bfloat16), conv.weight.to(torch.bfloat16), bias, conv.stride, conv.padding,
                     conv.dilation, conv.groups)
        return y.float()
    return forward


class Replica:
    """One model with its optimizer and its static batch on the GPU."""

    # --amp: None is float32 as set_precision says. bf16: the forward pass under autocast to
    # bfloat16, model and data channels-last (PyTorch's recipe for mixed precision on tensor
    # cores). The others take that recipe apart, to tell where its gain comes from:
    # bf16-nchw: autocast without channels-last; conv-bf16 / conv-bf16-cl: only the
    # convolutions in bfloat16 (input and weight cast to it, output cast back to float32;
    # BatchNorm, ReLU and the additions stay float32), NCHW or channels-last.
    amp = None

    def __init__(self, name, batch, seed):
        torch.manual_seed(seed)
        self.model, shape = build(name)
        self.model.cuda().train()
        self.x = torch.randn((batch,) + tuple(shape), device="cuda")
        if self.amp in ("bf16", "conv-bf16-cl") and self.x.dim() == 4:
            self.model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        if self.amp in ("conv-bf16", "conv-bf16-cl"):
            for m in self.model.modules():
                if isinstance(m, torch.nn.Conv2d):
                    m.forward = conv_in_bf16(m)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=LR, momentum=0.9, foreach=True)
        self.y = torch.randint(0, 10, (batch,), device="cuda")
        self.graph = None
        self.stream = None

    def loss(self):
        if self.amp in ("bf16", "bf16-nchw"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return F.cross_entropy(self.model(self.x), self.y)
        return F.cross_entropy(self.model(self.x), self.y)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.opt.step()
        return loss

    def capture(self, stream, warmup=3):
        """Warm up on `stream`, then capture one whole step there as a CUDA graph."""
        self.stream = stream
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(warmup):
                self.step()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        # Grads set to None so that backward allocates them from the graph's private pool.
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph, stream=stream):
            self.static_loss = self.loss()
            self.static_loss.backward()
            self.opt.step()
        torch.cuda.synchronize()


def timed_windows(run_steps, steps, windows, images_per_step):
    """Median images/s over `windows` windows of `steps` calls of run_steps' body."""
    rates = []
    for _ in range(windows):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run_steps(steps)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        rates.append(images_per_step * steps / dt)
    return statistics.median(rates), rates


# PyTorch keeps a cuBLAS (and cuBLASLt) workspace per (handle, stream) from its caching
# allocator, made by the first matrix product on that stream and kept afterwards. Cleared
# before each baseline, the workspaces of a replica's own products count in its peak, as
# cbtrain's peak counts its cuBLAS workspace.
CLEARS_CUBLAS = hasattr(torch._C, "_cuda_clearCublasWorkspaces")
MEMORY_METHOD = ("cuBLAS workspaces cleared before the baseline: the peak includes those the "
                 "replica allocates" if CLEARS_CUBLAS else
                 "cuBLAS workspaces not cleared (no torch._C._cuda_clearCublasWorkspaces)")


def clear_cublas_workspaces():
    """Frees PyTorch's cuBLAS workspaces; returns the bytes freed (None: cannot clear)."""
    if not CLEARS_CUBLAS:
        return None
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch._C._cuda_clearCublasWorkspaces()
    return before - torch.cuda.memory_allocated()


def free_memory():
    clear_cublas_workspaces()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated(), torch.cuda.memory_reserved()


def memory_since(base, suffix=""):
    """Peak allocated and reserved bytes above `base` (free_memory()'s pair), then the cuBLAS
    workspaces the run left, cleared; `suffix` "_total" for several replicas together."""
    base_alloc, base_res = base
    return {"peak_bytes" + suffix: torch.cuda.max_memory_allocated() - base_alloc,
            "peak_reserved_bytes" + suffix: torch.cuda.max_memory_reserved() - base_res,
            "cublas_workspace_bytes": clear_cublas_workspaces()}


def run_eager(name, batch, steps, windows, warmup):
    base = free_memory()
    r = Replica(name, batch, seed=0)
    for _ in range(warmup):
        r.step()

    def body(n):
        for _ in range(n):
            r.step()

    ips, rates = timed_windows(body, steps, windows, batch)
    out = dict(images_per_sec=ips, window_images_per_sec=rates, **memory_since(base))
    del r
    return out


def run_graph(name, batch, steps, windows, warmup):
    base = free_memory()
    r = Replica(name, batch, seed=0)
    r.capture(torch.cuda.Stream())
    for _ in range(warmup):
        r.graph.replay()

    def body(n):
        for _ in range(n):
            r.graph.replay()

    ips, rates = timed_windows(body, steps, windows, batch)
    out = dict(images_per_sec=ips, window_images_per_sec=rates, **memory_since(base))
    del r
    return out


def run_multistream(name, batch, k, steps, windows, warmup):
    base = free_memory()
    reps = []
    for j in range(k):
        r = Replica(name, batch, seed=j)
        r.capture(torch.cuda.Stream())
        reps.append(r)

    def body(n):
        for _ in range(n):
            for r in reps:
                with torch.cuda.stream(r.stream):
                    r.graph.replay()

    body(warmup)
    ips, rates = timed_windows(body, steps, windows, k * batch)
    out = dict(images_per_sec=ips, window_images_per_sec=rates, **memory_since(base, "_total"))
    del reps
    return out


def environment():
    p = torch.cuda.get_device_properties(0)
    return dict(gpu=torch.cuda.get_device_name(0), gpu_memory_bytes=p.total_memory,
                torch=torch.__version__, cuda=torch.version.cuda,
                cudnn=torch.backends.cudnn.version(), cudnn_benchmark=True,
                cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                cuda_device_max_connections=os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--batch", default="32", help="per-replica batch size(s), comma-separated")
    ap.add_argument("--modes", default="eager,graph,multistream")
    ap.add_argument("--ks", default="2,4,8,16", help="replicas (streams) of multistream mode")
    ap.add_argument("--steps", type=int, default=0,
                    help="steps per timing window (default 50 for lenet5, 30 for ResNets)")
    ap.add_argument("--windows", type=int, default=5, help="timing windows (median taken)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps before timing")
    ap.add_argument("--quick", action="store_true", help="short windows (smoke run)")
    add_precision_arg(ap)
    ap.add_argument("--amp", choices=["bf16", "bf16-nchw", "conv-bf16", "conv-bf16-cl"], default=None,
                    help="mixed precision: bf16 is the forward pass under autocast to bfloat16, "
                         "channels-last; bf16-nchw without channels-last; conv-bf16[-cl] only the "
                         "convolutions (see Replica.amp). cbtrain has no such mode: for analysis only")
    ap.add_argument("--out", required=True, help="JSON file to write")
    args = ap.parse_args()
    Replica.amp = args.amp

    if not torch.cuda.is_available():
        raise SystemExit("torch_throughput.py needs a CUDA GPU")
    torch.backends.cudnn.benchmark = True
    set_precision(args.precision)
    batches = [int(b) for b in args.batch.split(",") if b]
    modes = [m for m in args.modes.split(",") if m]
    ks = [int(k) for k in args.ks.split(",") if k]
    steps = args.steps or (50 if args.model == "lenet5" else 30)
    windows, warmup = args.windows, args.warmup
    if args.quick:
        steps, windows, warmup = max(5, steps // 5), 3, 3

    doc = dict(tool="torch", model=args.model, precision=args.precision, amp=args.amp, input_shape=list(MODELS[args.model][1]),
               optimizer="SGD momentum 0.9 (foreach)", loss="cross_entropy",
               steps_per_window=steps, windows=windows, warmup_steps=warmup,
               quick=args.quick, memory_method=MEMORY_METHOD,
               cublas_workspaces_cleared=CLEARS_CUBLAS, env=environment(), results=[])
    t_start = time.perf_counter()
    for b in batches:
        runs = [(m, 1) for m in modes if m in ("eager", "graph")]
        if "multistream" in modes:
            runs += [("multistream", k) for k in ks]
        for mode, k in runs:
            rec = dict(model=args.model, batch=b, mode=mode, k=k)
            t0 = time.perf_counter()
            try:
                if mode == "eager":
                    rec.update(run_eager(args.model, b, steps, windows, warmup))
                elif mode == "graph":
                    rec.update(run_graph(args.model, b, steps, windows, warmup))
                elif mode == "multistream":
                    rec.update(run_multistream(args.model, b, k, steps, windows, warmup))
                else:
                    raise ValueError(f"unknown mode '{mode}'")
                rec["error"] = None
                print(f"{args.model} b={b} {mode} k={k}: {rec['images_per_sec']:.0f} img/s",
                      flush=True)
            except Exception as e:  # noqa: BLE001 - record the failure, go on
                traceback.print_exc()
                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                print(f"{args.model} b={b} {mode} k={k}: FAILED {rec['error']}", flush=True)
            rec["seconds"] = time.perf_counter() - t0
            doc["results"].append(rec)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            # Write after every run so that a killed run still leaves its results.
            doc["total_seconds"] = time.perf_counter() - t_start
            tmp = args.out + ".tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
