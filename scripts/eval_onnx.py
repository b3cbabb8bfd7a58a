"""Accuracy of an ONNX classifier on the Fashion-MNIST test set, run by onnxruntime.

Used to check that a model exported by cbtrain gives the accuracy cbtrain reported.
Normalisation matches cbtrain's default: (x/255 - 0.2860) / 0.3530.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from idx_files import find, read_idx  # noqa: E402  (the data files raw or gzipped, as cbtrain reads them)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--json", action="store_true", help="print {\"accuracy\": ...}")
    a = ap.parse_args()
    onnx.checker.check_model(a.model, full_check=True)  # raises on an invalid model
    x = read_idx(find(a.data, "t10k-images-idx3-ubyte")).astype(np.float32)
    y = read_idx(find(a.data, "t10k-labels-idx1-ubyte")).astype(np.int64)
    x = (x / 255.0 - 0.2860) / 0.3530
    sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [d if isinstance(d, int) else -1 for d in inp.shape]
    correct = 0
    for s in range(0, len(x), 1000):
        xb = x[s:s + 1000].reshape([len(x[s:s + 1000])] + shape[1:])
        out = sess.run(None, {inp.name: xb})[0]
        correct += int((out.argmax(axis=1) == y[s:s + 1000]).sum())
    acc = correct / len(x)
    if a.json:
        print(json.dumps({"accuracy": acc}))
    else:
        print(f"onnxruntime: {a.model} test accuracy {100 * acc:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
