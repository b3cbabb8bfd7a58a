#!/usr/bin/env python3
"""Train the Keras twin of models/keras_lenet/keras_lenet.op13.onnx on Fashion-MNIST.

The twin is the Keras model export_keras.py builds (same seed, hence the same initial
weights as the committed ONNX file), trained with the recipe cbtrain is given in
scripts/keras_twin_check.sh: SGD with momentum 0.9, batch 32, no weight decay, the same
learning rate, pixels scaled to [0, 1] then normalised with Fashion-MNIST's mean and standard
deviation. It prints and writes the test accuracy after every epoch as JSON, e.g.

    /tmp/kerasenv/bin/python models/keras_twin.py --epochs 3 --lr 0.01 \
        --out models/keras_lenet/keras_twin.json

Versions: the venv of models/README.md (tensorflow-cpu 2.15.1).
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_keras import SEED, build  # noqa: E402

MEAN, STD = 0.2860, 0.3530  # cbtrain's defaults for IDX data (runtime/dataset.h)


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(folder, stem):
    for name in (stem, stem + ".gz"):
        p = os.path.join(folder, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"missing {stem}(.gz) in {folder}")


def load(folder, split):
    x = read_idx(find(folder, f"{split}-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = read_idx(find(folder, f"{split}-labels-idx1-ubyte")).astype(np.int64)
    return ((x - MEAN) / STD)[..., None], y


def check_same_start(model, onnx_path):
    """The twin starts from the ONNX file's weights (compared as sorted values, since the
    exporter transposes kernels)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(onnx_path)
    ours = np.sort(np.concatenate([w.ravel() for w in model.get_weights()]))
    theirs = np.sort(np.concatenate([numpy_helper.to_array(t).ravel()
                                     for t in m.graph.initializer if t.data_type == 1
                                     and numpy_helper.to_array(t).size > 1]))
    if ours.shape != theirs.shape or not np.allclose(ours, theirs, rtol=0, atol=1e-7):
        raise SystemExit(f"the Keras model's initial weights differ from {onnx_path}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", default="")
    ap.add_argument("--onnx", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "keras_lenet", "keras_lenet.op13.onnx"))
    args = ap.parse_args()
    tf.keras.utils.set_random_seed(SEED)
    model = build(None)
    check_same_start(model, args.onnx)
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=args.lr, momentum=0.9),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    xtr, ytr = load(args.data, "train")
    xte, yte = load(args.data, "t10k")
    acc, seconds = [], []
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        model.fit(xtr, ytr, batch_size=args.batch_size, epochs=1, shuffle=True, verbose=0)
        seconds.append(time.time() - t0)
        _, a = model.evaluate(xte, yte, batch_size=1000, verbose=0)
        acc.append(float(a))
        print(f"keras epoch {epoch}: test accuracy {100 * a:.2f}% ({seconds[-1]:.1f} s)", flush=True)
    result = {"framework": f"tensorflow {tf.__version__}", "epochs": args.epochs, "lr": args.lr,
              "batch_size": args.batch_size, "momentum": 0.9, "test_accuracy": acc,
              "epoch_seconds": seconds}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
