"""Reference for the SMA and SSGD tests: DESIGN.md's equations in NumPy on a softmax
regression (Gemm + cross-entropy), whose gradient is written out by hand.

Writes sma_model.onnx (the starting model), sma_batches_{x,y}.npy (rounds, K, B, ...), and
{sma,ssgd}_{replicas,z}.npy after ROUNDS rounds. Run once; outputs are committed.
"""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
K, B, D, C, ROUNDS = 3, 4, 8, 5, 50
LR, MU, WD, MU_Z = 0.1, 0.9, 1e-3, 0.9
ALPHA = 1.0 / K

rng = np.random.default_rng(2024)
W0 = (0.3 * rng.standard_normal((C, D))).astype(np.float32)
b0 = (0.1 * rng.standard_normal(C)).astype(np.float32)
xs = rng.standard_normal((ROUNDS, K, B, D)).astype(np.float32)
ys = rng.integers(0, C, (ROUNDS, K, B)).astype(np.int64)

x_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", D])
y_out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", C])
node = helper.make_node("Gemm", ["x", "W", "b"], ["logits"], transB=1, name="fc")
g = helper.make_graph([node], "softmax_regression", [x_in], [y_out],
                      [numpy_helper.from_array(W0, "W"), numpy_helper.from_array(b0, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "sma_model.onnx"))
np.save(os.path.join(here, "sma_batches_x.npy"), xs)
np.save(os.path.join(here, "sma_batches_y.npy"), ys)


def grad(params, x, y):
    """Mean softmax cross-entropy over the batch; returns dW, db (float64)."""
    W, b = params
    logits = x @ W.T + b
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1.0
    p /= len(y)
    return [p.T @ x, p.sum(axis=0)]


def flat(params):
    return np.concatenate([params[0].ravel(), params[1].ravel()])


def sma():
    start = [W0.astype(np.float64), b0.astype(np.float64)]
    x = [[t.copy() for t in start] for _ in range(K)]
    v = [[np.zeros_like(t) for t in start] for _ in range(K)]
    z = [t.copy() for t in start]
    z_prev = [t.copy() for t in start]
    for r in range(ROUNDS):
        sum_c = [np.zeros_like(t) for t in start]
        for j in range(K):
            g = grad(x[j], xs[r, j].astype(np.float64), ys[r, j])
            for i in range(2):
                g_i = g[i] + WD * x[j][i]
                c = ALPHA * (x[j][i] - z[i])
                v[j][i] = MU * v[j][i] - LR * g_i
                x[j][i] = x[j][i] + v[j][i] - c
                sum_c[i] += c
        for i in range(2):
            z_new = z[i] + sum_c[i] + MU_Z * (z[i] - z_prev[i])
            z_prev[i], z[i] = z[i], z_new
    return np.stack([flat(p) for p in x]), flat(z)


def ssgd():
    w = [W0.astype(np.float64), b0.astype(np.float64)]
    v = [np.zeros_like(t) for t in w]
    for r in range(ROUNDS):
        gs = [grad(w, xs[r, j].astype(np.float64), ys[r, j]) for j in range(K)]
        for i in range(2):
            g = sum(gj[i] for gj in gs) / K + WD * w[i]
            v[i] = MU * v[i] - LR * g
            w[i] = w[i] + v[i]
    return np.stack([flat(w)] * K), flat(w)


for name, fn in (("sma", sma), ("ssgd", ssgd)):
    reps, z = fn()
    np.save(os.path.join(here, f"{name}_replicas.npy"), reps.astype(np.float32))
    np.save(os.path.join(here, f"{name}_z.npy"), z.astype(np.float32))
with open(os.path.join(here, "sma_reference.json"), "w") as f:
    json.dump({"K": K, "batch": B, "rounds": ROUNDS, "lr": LR, "momentum": MU, "weight_decay": WD,
               "sma_momentum": MU_Z, "alpha": ALPHA,
               "layout": "flat = W (C x D, row-major) then b (C)"}, f, indent=2)
print("wrote the SMA/SSGD references")
