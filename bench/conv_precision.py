#!/usr/bin/env python3
"""What bfloat16 in channels-last would save in a model's convolutions and BatchNorms, measured
op by op with cuDNN through PyTorch on one GPU.

    python3 bench/conv_precision.py --model resnet20 --batch 32 --out conv_precision.json

For every Conv2d of the model (its shapes taken from one forward pass) the forward, the
backward-data and the backward-filter convolution are timed alone, and for every BatchNorm2d
the training forward with its Relu and the backward, in three layouts:
  fp32     float32 NCHW, TF32 off (cbtrain's default arithmetic)
  bf16     bfloat16 NCHW
  bf16-cl  bfloat16 channels-last (NHWC), PyTorch's recipe for tensor cores
Each op is captured --reps times in one CUDA graph and the graph replayed --windows times;
an op's time is the median window's GPU time (CUDA events) over --reps, so launch costs do
not count. The totals are per training step of one replica of --batch images: the sum over
the model's layers, which is what the kernels of one learner's step would take serialised.
"""

import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import build  # noqa: E402

LAYOUTS = {"fp32": (torch.float32, torch.contiguous_format),
           "bf16": (torch.bfloat16, torch.contiguous_format),
           "bf16-cl": (torch.bfloat16, torch.channels_last)}


def gpu_us(fn, reps, windows):
    """Median over `windows` replays of a graph of `reps` calls of fn, in microseconds a call."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm-up: cuDNN's algorithm choice (benchmark mode) happens here
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    times = []
    for _ in range(windows):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / reps)
    return statistics.median(times)


def layer_shapes(model, batch, shape):
    """(kind, module, input shape) of every Conv2d and BatchNorm2d, from one forward pass."""
    found = []
    hooks = [m.register_forward_hook(lambda m, i, o: found.append((type(m).__name__, m, tuple(i[0].shape))))
             for m in model.modules() if isinstance(m, (nn.Conv2d, nn.BatchNorm2d))]
    with torch.no_grad():
        model(torch.randn(batch, *shape, device="cuda"))
    for h in hooks:
        h.remove()
    return found


def time_conv(m, xshape, dtype, fmt, reps, windows):
    x = torch.randn(xshape, device="cuda", dtype=dtype).to(memory_format=fmt)
    w = m.weight.detach().to(dtype).to(memory_format=fmt)
    y = F.conv2d(x, w, None, m.stride, m.padding, m.dilation, m.groups)
    dy = torch.randn_like(y).to(memory_format=fmt)
    args = (None, list(m.stride), list(m.padding), list(m.dilation), False, [0, 0], m.groups)

    def backward(mask):
        return lambda: torch.ops.aten.convolution_backward(dy, x, w, *args, mask)

    return {"fwd": gpu_us(lambda: F.conv2d(x, w, None, m.stride, m.padding, m.dilation, m.groups), reps, windows),
            "dgrad": gpu_us(backward([True, False, False]), reps, windows),
            "wgrad": gpu_us(backward([False, True, False]), reps, windows)}


def time_bn(m, xshape, dtype, fmt, reps, windows):
    x = torch.randn(xshape, device="cuda", dtype=dtype).to(memory_format=fmt).requires_grad_()
    weight = m.weight.detach().clone().requires_grad_()  # float32, as under autocast
    bias = m.bias.detach().clone().requires_grad_()
    mean, var = m.running_mean.clone(), m.running_var.clone()
    dy = torch.randn(xshape, device="cuda", dtype=dtype).to(memory_format=fmt)

    def forward():
        return F.relu(F.batch_norm(x, mean, var, weight, bias, True, 0.1, 1e-5))

    def step():
        y = forward()
        torch.autograd.grad(y, (x, weight, bias), dy)

    fwd = gpu_us(forward, reps, windows)
    return {"fwd": fwd, "bwd": max(gpu_us(step, reps, windows) - fwd, 0.0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet20")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--windows", type=int, default=15)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.manual_seed(1)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model, shape = build(a.model)
    model = model.cuda()
    layers = layer_shapes(model, a.batch, shape)
    result = {"model": a.model, "batch": a.batch, "gpu": torch.cuda.get_device_name(),
              "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "layouts": {}}
    for name, (dtype, fmt) in LAYOUTS.items():
        per_layer, totals = [], {"conv_fwd": 0.0, "conv_dgrad": 0.0, "conv_wgrad": 0.0, "bn_fwd": 0.0, "bn_bwd": 0.0}
        for i, (kind, m, xshape) in enumerate(layers):
            if kind == "Conv2d":
                t = time_conv(m, xshape, dtype, fmt, a.reps, a.windows)
                for k in ("fwd", "dgrad", "wgrad"):
                    totals["conv_" + k] += t[k]
            else:
                t = time_bn(m, xshape, dtype, fmt, a.reps, a.windows)
                totals["bn_fwd"] += t["fwd"]
                totals["bn_bwd"] += t["bwd"]
            per_layer.append({"layer": i, "kind": kind, "input": list(xshape), **{k: round(v, 2) for k, v in t.items()}})
        totals["conv"] = totals["conv_fwd"] + totals["conv_dgrad"] + totals["conv_wgrad"]
        totals["bn"] = totals["bn_fwd"] + totals["bn_bwd"]
        result["layouts"][name] = {"totals_us": {k: round(v, 1) for k, v in totals.items()}, "layers": per_layer}
    base = result["layouts"]["fp32"]["totals_us"]
    print(f"{a.model}, batch {a.batch}, {result['gpu']}: GPU time a training step, summed over the layers (us)")
    print(f"{'layout':8} {'conv fwd':>9} {'dgrad':>8} {'wgrad':>8} {'conv':>8} {'BN+Relu':>8}  conv x  BN x")
    for name, r in result["layouts"].items():
        t = r["totals_us"]
        print(f"{name:8} {t['conv_fwd']:9.1f} {t['conv_dgrad']:8.1f} {t['conv_wgrad']:8.1f} {t['conv']:8.1f} "
              f"{t['bn']:8.1f}  {base['conv'] / t['conv']:5.2f}  {base['bn'] / t['bn']:4.2f}")
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
