#!/usr/bin/env python3
"""LeNet-5 on Fashion-MNIST, one training epoch on the CPU: cbtrain against PyTorch (CPU)
and onnxruntime-training, side by side in one call on the same cores.

Every system trains the same ONNX model (models/lenet5/lenet5.ts17.onnx, whose weights the
PyTorch run loads too) for one epoch of 60,000 images at batch 32 with SGD (momentum 0.9,
learning rate 0.02, no weight decay), on the first THREADS cores of the machine (pinned with
sched_setaffinity; OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and torch.set_num_threads set to
THREADS; cbtrain's kernels use THREADS threads; "cbtrain-sma" trains THREADS learners of one
thread each instead, kept together by SMA). Timed: the training steps of the epoch after 20
warm-up steps, evaluation excluded.

    python3 bench/cpu_epoch.py --data DIR --cbtrain build/tools/cbtrain [--threads 2]
        [--systems cbtrain,cbtrain-sma,torch,ort] [--out results.jsonl]

A system whose Python package is missing (torch, onnxruntime-training) is reported as not
available and the others still run. Prints one JSON line per system and a Markdown table
with every system's epoch time over cbtrain's.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idx_files import find, read_idx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "models", "lenet5", "lenet5.ts17.onnx")
MEAN, STD = 0.2860, 0.3530  # the normalisation cbtrain applies to Fashion-MNIST
BATCH, LR, MOMENTUM, WARMUP = 32, 0.02, 0.9, 20


def load_train(folder):
    x = read_idx(find(folder, "train-images-idx3-ubyte")).astype(np.float32)
    y = read_idx(find(folder, "train-labels-idx1-ubyte")).astype(np.int64)
    x = ((x / 255.0 - MEAN) / STD)[:, None, :, :].astype(np.float32)
    return np.ascontiguousarray(x), y


def batches(n, seed=1):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i * BATCH:(i + 1) * BATCH] for i in range(n // BATCH)]


def timed_epoch(step, x, y):
    """Runs step(xb, yb) -> loss over one epoch; the seconds after WARMUP steps, scaled to
    the whole epoch, and the mean loss of the epoch (what cbtrain reports as train_loss)."""
    idx = batches(len(x))
    losses = []
    t0 = None
    for i, b in enumerate(idx):
        if i == WARMUP:
            t0 = time.perf_counter()
        losses.append(float(step(x[b], y[b])))
    seconds = (time.perf_counter() - t0) * len(idx) / (len(idx) - WARMUP)
    return seconds, float(np.mean(losses))


def run_torch(args, x, y):
    import torch
    import onnx
    from onnx import numpy_helper
    sys.path.insert(0, HERE)
    from models import LeNet5
    torch.set_num_threads(args.threads)
    model = LeNet5()
    weights = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
               for t in onnx.load(MODEL).graph.initializer}
    model.load_state_dict(weights)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(torch.from_numpy(xb)), torch.from_numpy(yb))
        loss.backward()
        opt.step()
        return loss.item()
    s, loss = timed_epoch(step, x, y)
    return {"version": torch.__version__, "epoch_s": s, "loss": loss}


def run_ort(args, x, y):
    import types
    import onnx
    import onnxruntime
    # onnxruntime.training's __init__ imports its PyTorch front end (ORTModule, amp), which
    # on-device training does not use: the package is entered without it.
    pkg = types.ModuleType("onnxruntime.training")
    pkg.__path__ = [os.path.join(os.path.dirname(onnxruntime.__file__), "training")]
    sys.modules.setdefault("onnxruntime.training", pkg)
    from onnxruntime.training import artifacts
    from onnxruntime.training.api import CheckpointState, Module, Optimizer
    model = onnx.load(MODEL)
    params = [t.name for t in model.graph.initializer]
    with tempfile.TemporaryDirectory() as d:
        artifacts.generate_artifacts(model, requires_grad=params, frozen_params=[],
                                     loss=artifacts.LossType.CrossEntropyLoss,
                                     optimizer=artifacts.OptimType.SGD, artifact_directory=d)
        state = CheckpointState.load_checkpoint(os.path.join(d, "checkpoint"))
        module = Module(os.path.join(d, "training_model.onnx"), state,
                        os.path.join(d, "eval_model.onnx"), device="cpu")
        opt = Optimizer(os.path.join(d, "optimizer_model.onnx"), module)
        opt.set_learning_rate(LR)
        module.train()

        def step(xb, yb):
            loss = module(xb, yb)
            opt.step()
            module.lazy_reset_grad()
            return loss
        s, loss = timed_epoch(step, x, y)
    # onnxruntime-training's SGD has no momentum: the step is cheaper than the others'.
    return {"version": onnxruntime.__version__, "epoch_s": s, "loss": loss,
            "note": "SGD without momentum (the only SGD of its artifacts)"}


def run_cbtrain(args, x, y, extra=None):
    with tempfile.TemporaryDirectory() as d:
        metrics = os.path.join(d, "m.jsonl")
        cmd = [args.cbtrain, MODEL, "--device", "cpu", "--data", args.data, "--epochs", "1",
               "--batch-size", str(BATCH), "--lr", str(LR), "--momentum", str(MOMENTUM),
               "--weight-decay", "0", "--log-every", "0", "--progress", "off",
               "--metrics", metrics, *(extra or ["--threads", str(args.threads)])]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr[-400:]}")
        m = json.loads(open(metrics).read().splitlines()[-1])
        version = subprocess.run([args.cbtrain, "--version"], capture_output=True, text=True)
    # images_per_sec covers the epoch's training rounds, evaluation excluded.
    return {"version": version.stdout.strip(), "epoch_s": len(x) // BATCH * BATCH / m["images_per_sec"],
            "loss": m["train_loss"], "command": " ".join(cmd)}


def run_cbtrain_sma(args, x, y):
    """cbtrain's own way to use the cores: one learner (batch 32) per core, kept together by
    model averaging; an epoch is still 60,000 images."""
    return run_cbtrain(args, x, y, ["--learners", str(args.threads), "--threads", "1"])


RUNNERS = {"cbtrain": run_cbtrain, "cbtrain-sma": run_cbtrain_sma, "torch": run_torch, "ort": run_ort}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="folder of the Fashion-MNIST IDX files")
    p.add_argument("--cbtrain", default=os.path.join(ROOT, "build", "tools", "cbtrain"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--systems", default="cbtrain,torch,ort")
    p.add_argument("--out", help="also append the JSON lines here")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one system in this process
    args = p.parse_args()
    cpus = sorted(os.sched_getaffinity(0))[:args.threads]
    if len(cpus) < args.threads:
        raise SystemExit(f"--threads {args.threads}: only {len(cpus)} cores available")
    os.sched_setaffinity(0, cpus)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(args.threads)

    if args.one:
        x, y = load_train(args.data)
        try:
            res = RUNNERS[args.one](args, x, y)
        except ImportError as e:
            res = {"error": f"not available: {e}"}
        print(json.dumps(res))
        return

    rows = []
    for name in args.systems.split(","):
        if name not in RUNNERS:
            raise SystemExit(f"unknown system '{name}' ({', '.join(RUNNERS)})")
        # Each system in a process of its own: thread pools and allocators do not mix.
        r = subprocess.run([sys.executable, __file__, "--data", args.data, "--cbtrain", args.cbtrain,
                            "--threads", str(args.threads), "--one", name],
                           capture_output=True, text=True)
        try:
            res = json.loads(r.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            res = {"error": f"exit {r.returncode}: {r.stderr.strip()[-300:]}"}
        res.update(system=name, threads=args.threads, cpus=cpus, batch=BATCH)
        rows.append(res)
        print(json.dumps(res), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(res) + "\n")

    base = next((r for r in rows if r["system"] == "cbtrain" and "epoch_s" in r), None)
    print(f"\n| system | version | epoch (s) | images/s | over cbtrain | epoch-mean train loss |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "epoch_s" not in r:
            print(f"| {r['system']} | — | {r['error']} | | | |")
            continue
        ratio = f"{r['epoch_s'] / base['epoch_s']:.2f}×" if base else "—"
        print(f"| {r['system']} | {r['version']} | {r['epoch_s']:.1f} | {60000 / r['epoch_s']:,.0f} | "
              f"{ratio} | {r['loss']:.3f} |")


if __name__ == "__main__":
    main()
