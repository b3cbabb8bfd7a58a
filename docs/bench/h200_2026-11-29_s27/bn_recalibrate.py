#!/usr/bin/env python3
"""Diagnostic: does the central model's BatchNorm statistics (the learners' mean under SMA) cost
test accuracy? Loads a model cbtrain trained (ONNX) into the PyTorch ResNet-20 of bench/models.py,
measures test accuracy as exported, then recomputes every BatchNorm's running statistics from
the model's own activations on N training batches of 256 (cumulative averages, no gradient) and
measures again.

    python3 bn_recalibrate.py MODEL.onnx DATA_DIR [N ...]
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench"))
from idx_files import find, read_idx  # noqa: E402
from models import build, load_onnx_weights, set_precision  # noqa: E402

MEAN, STD = 0.2860, 0.3530


def split(folder, prefix):
    x = torch.from_numpy(read_idx(find(folder, f"{prefix}-images-idx3-ubyte")).astype(np.float32)).cuda()
    y = torch.from_numpy(read_idx(find(folder, f"{prefix}-labels-idx1-ubyte")).astype(np.int64)).cuda()
    return ((x / 255.0 - MEAN) / STD).unsqueeze(1), y


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return sum((model(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item() for i in range(0, len(x), 1000)) / len(x)


@torch.no_grad()
def recalibrate(model, x, batches):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches
    model.train()
    g = torch.Generator(device="cuda").manual_seed(0)
    order = torch.randperm(len(x), device="cuda", generator=g)
    for i in range(batches):
        model(x[order[i * 256:(i + 1) * 256]])


def main():
    path, data = sys.argv[1], sys.argv[2]
    counts = [int(n) for n in sys.argv[3:]] or [20, 234]
    set_precision("fp32")
    xtr, _ = split(data, "train")
    xte, yte = split(data, "t10k")
    model, _ = build("resnet20")
    model = model.cuda()
    missing = load_onnx_weights(model, path)
    base = accuracy(model, xte, yte)
    line = f"{os.path.basename(path)}: as exported {base * 100:.2f}%"
    for n in counts:
        load_onnx_weights(model, path)
        recalibrate(model, xtr, n)
        line += f", BN statistics of {n} batches {accuracy(model, xte, yte) * 100:.2f}%"
    print(line + (f" (missing: {missing})" if missing else ""), flush=True)


if __name__ == "__main__":
    main()
