#!/usr/bin/env python3
"""Check every models/**/*.onnx against its reference data with onnxruntime.

For each X.onnx it loads X.input.npy, runs onnxruntime (CPU) and compares the first
output with X.output.npy: the largest absolute difference must be at most
rtol * max(|reference|) with rtol = 1e-4 (a relative tolerance on the tensor's scale).
It also runs onnx.checker and verifies that no initializer uses external data.
Exit status is non-zero if any file fails or has no reference data.

    python3 models/check_references.py [--root models] [--rtol 1e-4] [--ops]
"""

import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx.external_data_helper import uses_external_data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--ops", action="store_true", help="print the op types of each file")
    args = ap.parse_args()

    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.root)
                   for f in fs if f.endswith(".onnx"))
    if not paths:
        print(f"no .onnx files under {args.root}")
        return 1
    bad = 0
    for path in paths:
        rel = os.path.relpath(path, args.root)
        stem = path[: -len(".onnx")]
        try:
            model = onnx.load(path, load_external_data=False)
            ext = [t.name for t in model.graph.initializer if uses_external_data(t)]
            if ext:
                raise RuntimeError(f"{len(ext)} initializers use external data")
            onnx.checker.check_model(model)
            x = np.load(stem + ".input.npy")
            ref = np.load(stem + ".output.npy")
            if x.dtype != np.float32 or not np.any(x):
                raise RuntimeError(f"input must be non-zero float32, is {x.dtype}")
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
            if got.shape != ref.shape:
                raise RuntimeError(f"shape {got.shape} != reference {ref.shape}")
            diff = float(np.max(np.abs(got.astype(np.float64) - ref)))
            scale = max(float(np.max(np.abs(ref))), 1e-12)
            ok = diff <= args.rtol * scale
            opset = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
            print(f"{'OK  ' if ok else 'FAIL'} {rel}: opset {opset.get('ai.onnx')}, "
                  f"input {x.shape}, max abs diff {diff:.2e} (rel {diff / scale:.2e})")
            if args.ops:
                print("       ops: " + " ".join(sorted({n.op_type for n in model.graph.node})))
            bad += not ok
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {rel}: {e!r}")
            bad += 1
    print(f"{len(paths) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
