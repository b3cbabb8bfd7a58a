#!/usr/bin/env python3
"""Record Keras's own SGD trajectory of models/keras_lenet/keras_lenet.op17.onnx's model.

The model is the one export_keras.py builds (the same seed, hence the ONNX files' initial
weights; checked against their recorded output). Twenty steps of SGD with momentum 0.9, lr 0.05,
no weight decay, on random batches of 8 (NHWC, as the Keras model takes them), the loss of each
step recorded before its update. tests/runtime/trajectory_test.cpp trains the ONNX exports with
cbtrain on the same batches and compares the losses, as it does PyTorch's.

Keras's SGD keeps v = momentum * v - lr * g and adds v to w; cbtrain (as PyTorch) keeps
v = momentum * v + g and subtracts lr * v: the same steps at a constant rate, up to rounding.

    /tmp/kerasenv/bin/python models/keras_trajectory.py     # the venv of models/README.md

writes models/keras_lenet/trajectory.{x,y,loss}.npy and trajectory.json.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_keras import SEED, build  # noqa: E402

STEPS, BATCH, LR, MOMENTUM = 20, 8, 0.05, 0.9


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_lenet")
    tf.keras.utils.set_random_seed(SEED)
    model = build(None)
    # The committed exports' initial weights: their recorded Keras output is reproduced.
    x0 = np.load(os.path.join(out, "keras_lenet.op17.input.npy"))
    y0 = np.load(os.path.join(out, "keras_lenet.op17.output.npy"))
    d = float(np.max(np.abs(model.predict(x0, verbose=0) - y0)))
    if d > 1e-5:
        sys.exit(f"the rebuilt model's output is {d:.3e} off the exports' recorded one: not their weights")

    rng = np.random.default_rng(1333)
    xs = rng.standard_normal((STEPS, BATCH, 28, 28, 1)).astype(np.float32)
    ys = rng.integers(0, 10, size=(STEPS, BATCH)).astype(np.int64)
    opt = tf.keras.optimizers.SGD(learning_rate=LR, momentum=MOMENTUM)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for s in range(STEPS):
        with tf.GradientTape() as tape:
            loss = loss_fn(ys[s], model(xs[s], training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    losses = np.array(losses, dtype=np.float32)
    print("keras losses:", np.array2string(losses, precision=4))
    np.save(os.path.join(out, "trajectory.x.npy"), xs)
    np.save(os.path.join(out, "trajectory.y.npy"), ys)
    np.save(os.path.join(out, "trajectory.loss.npy"), losses)
    with open(os.path.join(out, "trajectory.json"), "w") as f:
        json.dump({
            "model": "keras_lenet", "start_onnx": "keras_lenet.op17.onnx (and .op13: the same weights)",
            "steps": STEPS, "batch_size": BATCH, "x_shape": list(xs.shape), "x_layout": "NHWC, as the model's input",
            "y_shape": list(ys.shape), "loss_file": "trajectory.loss.npy",
            "loss_meaning": "loss[s] = loss of step s on batch s, before step s's update",
            "loss": "tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), mean over the batch",
            "optimizer": "tf.keras.optimizers.SGD", "lr": LR, "momentum": MOMENTUM, "weight_decay": 0.0,
            "update_rule": "v = momentum*v - lr*g; w = w + v",
            "seed_numpy_data": 1333, "tensorflow_version": tf.__version__,
        }, f, indent=2)


if __name__ == "__main__":
    main()
