#!/usr/bin/env python3
"""Export a Keras LeNet-style CNN (NHWC input N x 28 x 28 x 1) to ONNX with tf2onnx.

Versions used: tensorflow-cpu 2.15.1 (Keras 2.15), tf2onnx 1.16.1, protobuf 3.20.3,
numpy 1.26.4, onnx 1.17.0 (see models/README.md for the venv recipe).

    python models/export_keras.py --out models

writes into <out>/keras_lenet/:
  keras_lenet.op13.onnx / keras_lenet.op17.onnx                  logits (Dense(10), no activation)
  keras_lenet_softmax.op13.onnx / keras_lenet_softmax.op17.onnx  same weights, softmax output
  <file>.input.npy (3,28,28,1) float32 and <file>.output.npy (3,10) float32 from Keras predict
The batch dimension is dynamic in every file.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402
import onnx  # noqa: E402

SEED = 4321


def build(final_activation=None):
    # non-zero bias initialisation so that every bias is visible in the exported graph
    b = dict(bias_initializer=tf.keras.initializers.RandomNormal(stddev=0.05, seed=SEED))
    return tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28, 1), name="input"),
        tf.keras.layers.Conv2D(6, 5, padding="same", activation="relu", name="conv1", **b),
        tf.keras.layers.MaxPooling2D(2, name="pool1"),
        tf.keras.layers.Conv2D(16, 5, padding="valid", activation="relu", name="conv2", **b),
        tf.keras.layers.MaxPooling2D(2, name="pool2"),
        tf.keras.layers.Flatten(name="flatten"),
        tf.keras.layers.Dense(120, activation="relu", name="fc1", **b),
        tf.keras.layers.Dense(84, activation="relu", name="fc2", **b),
        tf.keras.layers.Dense(10, activation=final_activation, name="fc3", **b),
    ], name="keras_lenet" if final_activation is None else "keras_lenet_" + final_activation)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    tf.keras.utils.set_random_seed(SEED)
    outdir = os.path.join(args.out, "keras_lenet")
    os.makedirs(outdir, exist_ok=True)

    logits_model = build(None)
    softmax_model = build("softmax")
    softmax_model.set_weights(logits_model.get_weights())
    x = np.random.default_rng(SEED).standard_normal((3, 28, 28, 1)).astype(np.float32)
    print(f"tensorflow {tf.__version__}, tf2onnx {tf2onnx.__version__}, onnx {onnx.__version__}")

    failures, summary = [], {}
    for model, stem in ((logits_model, "keras_lenet"), (softmax_model, "keras_lenet_softmax")):
        y = model.predict(x, verbose=0).astype(np.float32)
        for opset in (13, 17):
            path = os.path.join(outdir, f"{stem}.op{opset}.onnx")
            spec = (tf.TensorSpec((None, 28, 28, 1), tf.float32, name="input"),)
            proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset)
            onnx.save_model(proto, path, save_as_external_data=False)
            np.save(path[:-5] + ".input.npy", x)
            np.save(path[:-5] + ".output.npy", y)
            m = onnx.load(path)
            onnx.checker.check_model(m, full_check=True)
            ops = sorted({n.op_type for n in m.graph.node})
            opsets = {(o.domain or "ai.onnx"): o.version for o in m.graph.opset_import} \
                if hasattr(m.graph, "opset_import") else \
                {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
            ins = [(i.name, [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim])
                   for i in m.graph.input]
            outs = [(o.name, [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim])
                    for o in m.graph.output]
            print(f"{os.path.basename(path)}: opset {opsets}, inputs {ins}, outputs {outs}, "
                  f"{os.path.getsize(path)} bytes")
            print(f"  ops: {' '.join(ops)}")
            entry = {"opset": opsets, "op_types": ops, "inputs": ins, "outputs": outs}
            try:
                import onnxruntime as ort
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                iname = sess.get_inputs()[0].name
                got = sess.run(None, {iname: x})[0]
                d = float(np.max(np.abs(got - y)))
                print(f"  onnxruntime vs keras: max abs diff {d:.3e}")
                x5 = np.random.default_rng(5).standard_normal((5, 28, 28, 1)).astype(np.float32)
                d5 = float(np.max(np.abs(sess.run(None, {iname: x5})[0]
                                         - model.predict(x5, verbose=0))))
                print(f"  dynamic batch (5): max abs diff {d5:.3e}")
                entry["ort_max_abs_diff"] = d
                if d > 1e-4 * max(1.0, float(np.max(np.abs(y)))) or d5 > 1e-4 * max(1.0, float(np.max(np.abs(y)))):
                    failures.append(f"{path}: onnxruntime differs from keras")
            except ImportError:
                print("  (onnxruntime not installed, skipped)")
            summary[os.path.basename(path)] = entry
    with open(os.path.join(outdir, "export_keras_summary.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__,
                   "files": summary, "failures": failures}, f, indent=1)
    if failures:
        print("FAILURES:", *failures, sep="\n  ")
        sys.exit(1)
    print("all keras exports OK")


if __name__ == "__main__":
    main()
