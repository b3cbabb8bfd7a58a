#!/usr/bin/env python3
"""PyTorch eager time to accuracy on Fashion-MNIST (the baseline of cbtrain's training runs).

    python3 bench/torch_time_to_accuracy.py --model lenet5 --batch 32 --lr 0.02 \
        --target 0.90 --max-epochs 15 --seed 1 --data DIR --out tta.json \
        [--schedule constant|cosine] [--init-onnx lenet5.onnx] [--label-smoothing 0.1] \
        [--warm-libraries on|off]

The whole data set lives on the GPU (IDX .gz files read with gzip + numpy, normalised as
(x/255 - 0.2860)/0.3530); every epoch draws a permutation from a generator seeded with
--seed and trains on its full batches (the last partial batch is dropped, as cbtrain does).
SGD with momentum 0.9 and weight decay (--weight-decay, cbtrain's default 5e-4); the cosine
schedule goes per step from --lr to 0 over --max-epochs epochs (cbtrain's formula).
--label-smoothing smooths the cross-entropy's targets as cbtrain's flag of that name does.
After every epoch the test accuracy is measured; evaluation time is not on the training
clock. Training stops at the first epoch whose accuracy reaches --target, or at
--max-epochs. --init-onnx starts from the weights of an ONNX file (the one cbtrain trains),
so both systems start from the same model. cuDNN and cuBLAS are loaded before the clock
(--warm-libraries on, the default), as cbtrain loads them while it reads the data set.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idx_files import find, read_idx  # noqa: E402
from models import MODELS, add_precision_arg, build, load_onnx_weights, set_precision  # noqa: E402

MEAN, STD = 0.2860, 0.3530


def load_split(folder, prefix, device):
    x = read_idx(find(folder, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(find(folder, f"{prefix}-labels-idx1-ubyte"))
    x = torch.from_numpy(x.astype(np.float32)).to(device)
    x = ((x / 255.0 - MEAN) / STD).unsqueeze(1)  # N,1,28,28
    return x, torch.from_numpy(y.astype(np.int64)).to(device)


def warm_libraries(dev):
    """Has cuDNN and cuBLAS load what they load on first use, before the clock starts, as cbtrain
    does while it reads the data set: one convolution's forward and backward and one linear layer
    on small random inputs of shapes the models do not have (cudnn.benchmark still searches the
    model's own convolutions on the clock). Its own generator: the training's draws are unchanged."""
    g = torch.Generator(device=dev)
    g.manual_seed(0)
    x = torch.randn(8, 8, 12, 12, device=dev, generator=g, requires_grad=True)
    w = torch.randn(8, 8, 3, 3, device=dev, generator=g, requires_grad=True)
    m = torch.randn(10, 16, device=dev, generator=g, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    (y.square().mean() + F.linear(y.flatten(1)[:, :16], m).square().mean()).backward()
    torch.cuda.synchronize()


@torch.no_grad()
def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=x.device)
    loss = torch.zeros((), dtype=torch.float64, device=x.device)
    for i in range(0, x.shape[0], batch):
        out = model(x[i:i + batch])
        loss += F.cross_entropy(out, y[i:i + batch], reduction="sum").double()
        correct += (out.argmax(1) == y[i:i + batch]).sum()
    model.train()
    n = x.shape[0]
    return correct.item() / n, loss.item() / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--data", default=os.environ.get("CBT_DATA", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--batch", type=int, default=0, help="default: 32 for lenet5, 256 otherwise")
    ap.add_argument("--lr", type=float, default=0.0, help="default: 0.02 for lenet5, 0.1 otherwise")
    ap.add_argument("--schedule", choices=["constant", "cosine"], default="",
                    help="default: constant for lenet5, cosine otherwise")
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--label-smoothing", type=float, default=0.0,
                    help="label smoothing of the cross-entropy, in [0, 1) (cbtrain's flag)")
    ap.add_argument("--target", type=float, default=0.90)
    ap.add_argument("--max-epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--init-onnx", default="", help="start from this ONNX file's weights")
    add_precision_arg(ap)
    ap.add_argument("--warm-libraries", choices=["on", "off"], default="on",
                    help="load cuDNN and cuBLAS before the clock starts (warm_libraries), as cbtrain "
                         "loads them while it reads the data set")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    lenet = args.model == "lenet5"
    batch = args.batch or (32 if lenet else 256)
    lr = args.lr or (0.02 if lenet else 0.1)
    schedule = args.schedule or ("constant" if lenet else "cosine")
    if not 0.0 <= args.label_smoothing < 1.0:
        raise SystemExit(f"--label-smoothing must be in [0, 1), not {args.label_smoothing}")

    if not torch.cuda.is_available():
        raise SystemExit("torch_time_to_accuracy.py needs a CUDA GPU")
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    precision = set_precision(args.precision)
    torch.manual_seed(args.seed)
    if args.warm_libraries == "on":
        warm_libraries(dev)
    xtr, ytr = load_split(args.data, "train", dev)
    xte, yte = load_split(args.data, "t10k", dev)
    model, shape = build(args.model)
    if tuple(shape) != tuple(xtr.shape[1:]):
        raise SystemExit(f"{args.model} takes {shape}, the data set has {tuple(xtr.shape[1:])}")
    if args.init_onnx:
        missing = load_onnx_weights(model, args.init_onnx)
        if missing:
            raise SystemExit(f"{args.init_onnx}: no initializer for {missing}")
    model.to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=args.momentum,
                          weight_decay=args.weight_decay, foreach=True)
    n = xtr.shape[0]
    steps_per_epoch = n // batch
    total_steps = steps_per_epoch * args.max_epochs
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)

    history, train_seconds, step, reached = [], 0.0, 0, None
    for epoch in range(1, args.max_epochs + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev, generator=gen)
        loss_sum = torch.zeros((), device=dev)
        for s in range(steps_per_epoch):
            if schedule == "cosine":
                for g in opt.param_groups:
                    g["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * min(1.0, step / total_steps)))
            idx = perm[s * batch:(s + 1) * batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx], label_smoothing=args.label_smoothing)
            loss.backward()
            opt.step()
            loss_sum += loss.detach()
            step += 1
        torch.cuda.synchronize()
        train_seconds += time.perf_counter() - t0
        train_loss = loss_sum.item() / steps_per_epoch
        acc, test_loss = evaluate(model, xte, yte)
        history.append(dict(epoch=epoch, test_accuracy=acc, test_loss=test_loss,
                            train_loss=train_loss, elapsed_s=train_seconds))
        print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {100 * acc:.2f}%, "
              f"{train_seconds:.1f} s of training", flush=True)
        if not math.isfinite(train_loss):
            print("training diverged", flush=True)
            break
        if acc >= args.target:
            reached = epoch
            break

    doc = dict(tool="torch", model=args.model, batch=batch, learners=1, lr=lr,
               schedule=schedule, momentum=args.momentum, weight_decay=args.weight_decay,
               label_smoothing=args.label_smoothing, target=args.target,
               max_epochs=args.max_epochs, seed=args.seed,
               init_onnx=args.init_onnx or None, warm_libraries=args.warm_libraries, **precision,
               epochs=len(history), train_seconds=train_seconds,
               accuracy=[h["test_accuracy"] for h in history],
               elapsed_s=[h["elapsed_s"] for h in history],
               reached=reached is not None, epochs_to_target=reached,
               seconds_to_target=history[-1]["elapsed_s"] if reached else None,
               history=history, gpu=torch.cuda.get_device_name(0), torch=torch.__version__)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{'reached' if reached else 'did not reach'} {100 * args.target:.1f}% "
          f"after {len(history)} epochs, {train_seconds:.1f} s of training", flush=True)


if __name__ == "__main__":
    main()
