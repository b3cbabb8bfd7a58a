"""Test accuracy of a trained model with its BatchNorm statistics as stored, and recomputed.

Under SMA the central model's BatchNorm statistics are the mean of the learners' running
statistics, which the learners gathered with their own weights, not with the central model's.
This tool measures what that costs: it loads an ONNX model that cbtrain wrote (`cbtrain ... -o
model.onnx`) into the PyTorch twin of bench/models.py, evaluates it on the test split, then
recomputes every BatchNorm's statistics as a plain average over N training batches (what
torch.optim.swa_utils.update_bn does for averaged weights) and evaluates again, for each N.

    python3 bench/bn_recalibration.py --model resnet20 --onnx trained.onnx --batches 4 16 64 \
        --data /usr/share/datasets/fashion-mnist --out recal.json
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import build, load_onnx_weights  # noqa: E402
from torch_time_to_accuracy import evaluate, load_split  # noqa: E402


@torch.no_grad()
def recalibrate(model, x, batches, batch, seed):
    """BatchNorm statistics as the average over `batches` random training batches."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average
    g = torch.Generator(device="cpu").manual_seed(seed)
    order = torch.randperm(x.shape[0], generator=g)
    model.train()
    for i in range(batches):
        idx = order[i * batch:(i + 1) * batch].to(x.device)
        model(x[idx])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--onnx", required=True, help="the trained model, written by cbtrain -o")
    ap.add_argument("--data", default=os.environ.get("CBT_DATA", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--batches", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    xtr, _ = load_split(a.data, "train", dev)
    xte, yte = load_split(a.data, "t10k", dev)
    model, _ = build(a.model)
    model = model.to(dev)
    missing = load_onnx_weights(model, a.onnx)
    if missing:
        raise SystemExit(f"{a.onnx}: no initializer for {missing}")
    acc, loss = evaluate(model, xte, yte)
    doc = {"onnx": a.onnx, "stored": {"accuracy": acc, "loss": loss}, "recalibrated": []}
    for n in a.batches:
        load_onnx_weights(model, a.onnx)  # the stored statistics again, then recomputed over n batches
        recalibrate(model, xtr, n, a.batch, a.seed)
        acc_n, loss_n = evaluate(model, xte, yte)
        doc["recalibrated"].append({"batches": n, "batch": a.batch, "accuracy": acc_n, "loss": loss_n})
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{os.path.basename(a.onnx)}: stored {acc:.4f}; " +
          ", ".join(f"{r['batches']}x{r['batch']} {r['accuracy']:.4f}" for r in doc["recalibrated"]))


if __name__ == "__main__":
    main()
