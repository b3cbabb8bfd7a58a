#!/usr/bin/env python3
"""Export the cbtrain example models from PyTorch to ONNX, with reference data.

Run where torch (2.11 was used), onnx, onnxscript and onnxruntime are installed:

    python3 models/export_torch.py --out models

For every model <name> it writes into <out>/<name>/:
  <name>.ts17.onnx      TorchScript exporter (dynamo=False), opset 17, dynamic batch
  <name>.dynamo.onnx    dynamo exporter (dynamo=True), its default opset, dynamic batch
  (lenet5 also: lenet5.ts13.onnx, TorchScript exporter at opset 13)
  <file>.input.npy / <file>.output.npy next to each .onnx (batch 3, float32;
                        output computed by PyTorch in eval mode)
and for lenet5, mlp, resnet20 a reference SGD training trajectory
  trajectory.x.npy (20,8,1,28,28) float32, trajectory.y.npy (20,8) int64,
  trajectory.loss.npy (20,) float32, trajectory.final_params.npz,
  trajectory.json (and resnet20/trajectory.running_stats.npz).

Everything is computed on the CPU in float32 so that it is reproducible.
"""

import argparse
import copy
import json
import os
import sys
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 1234
FAILURES = []


# --------------------------------------------------------------------------- models


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)   # N,6,14,14
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)   # N,16,5,5
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = self.flatten(x)
        x = F.relu(self.fc1(x))
        x = self.gelu(self.fc2(x))
        return self.fc3(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        if stride != 1 or cin != cout:
            # option B: projection shortcut (1x1 conv + BN)
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    """CIFAR-style ResNet-20 (3 stages x 3 basic blocks, 16/32/64 channels) for 1x28x28."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            blocks = []
            for i in range(3):
                blocks.append(BasicBlock(cin, cout, stride if i == 0 else 1))
                cin = cout
            layers.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3 = layers
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))   # N,16,28,28
        x = self.layer1(x)                    # N,16,28,28
        x = self.layer2(x)                    # N,32,14,14
        x = self.layer3(x)                    # N,64,7,7
        x = F.adaptive_avg_pool2d(x, 1)       # N,64,1,1
        x = torch.flatten(x, 1)
        return self.fc(x)


class OpZoo(nn.Module):
    """A small 1x28x28 -> 10 model that touches many ONNX op types.

    The output is log-probabilities (LogSoftmax). nn.Dropout is in the module but both
    exporters drop it from an eval-mode export (it is the identity at inference).
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)      # N,8,14,14
        self.bn1 = nn.BatchNorm2d(8)
        self.deconv = nn.ConvTranspose2d(8, 4, 2, stride=2)       # N,4,28,28
        self.pool = nn.AvgPool2d(2)                               # N,4,14,14
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)                # N,8,14,14
        self.pool2 = nn.AvgPool2d(2)                              # N,8,7,7
        self.ln = nn.LayerNorm(8)
        self.q = nn.Linear(8, 16)
        self.k = nn.Linear(8, 16)
        self.v = nn.Linear(8, 16)
        self.gelu = nn.GELU()
        self.drop = nn.Dropout(0.25)
        self.head = nn.Linear(16 + 8 + 16, 10)

    def forward(self, x):
        h = F.leaky_relu(self.bn1(self.conv1(x)), 0.1)            # Conv, BatchNorm, LeakyRelu
        u = torch.sigmoid(self.deconv(h))                         # ConvTranspose, Sigmoid
        u = self.pool(u)                                          # AveragePool -> N,4,14,14
        a, b = torch.split(h, 4, dim=1)                           # Split
        c = torch.cat([u * a, torch.tanh(b)], dim=1)              # Mul, Tanh, Concat
        c = F.pad(c, (1, 1, 2, 0), mode="constant", value=0.5)    # Pad -> N,8,16,16
        c = c[:, :, 1:15, 2:16]                                   # Slice -> N,8,14,14
        g = F.adaptive_avg_pool2d(c, 1)                           # GlobalAveragePool N,8,1,1
        g = g.squeeze(3).squeeze(2)                               # Squeeze -> N,8
        c = self.pool2(F.relu(self.conv2(c)))                     # N,8,7,7
        t = c.reshape(-1, 8, 49).permute(0, 2, 1)                 # Reshape(-1), Transpose N,49,8
        t = self.ln(t)                                            # LayerNormalization
        q, k, v = self.q(t), self.k(t), self.v(t)                 # MatMul + Add
        s = torch.matmul(q, k.transpose(1, 2)) / 4.0              # MatMul, Div
        p = torch.softmax(s, dim=-1)                              # Softmax
        o = self.gelu(torch.matmul(p, v))                         # Gelu (or Erf) N,49,16
        mu = o.mean(dim=-1, keepdim=True)                         # ReduceMean
        d = o - mu                                                # Sub
        var = (d ** 2).mean(dim=-1, keepdim=True)                 # Pow
        o = d / torch.sqrt(var + 1e-5)                            # Add, Sqrt, Div
        pooled = o.sum(dim=1) / 49.0                              # ReduceSum -> N,16
        m = torch.clamp(-pooled, -2.0, 2.0)                       # Neg, Clip
        e = torch.tanh(o).mean(dim=1)                             # N,16
        feat = self.drop(torch.cat([m, g, e], dim=1))             # Dropout (eval: identity)
        z = self.head(feat).unsqueeze(1)                          # Gemm, Unsqueeze N,1,10
        return F.log_softmax(z, dim=-1).squeeze(1)                # LogSoftmax, Squeeze


class UpNet(nn.Module):
    """A small 1x28x28 -> 10 encoder-decoder with the ops of image-to-image models:
    InstanceNorm2d (InstanceNormalization), GroupNorm, nearest and bilinear upsampling
    (Resize), PixelShuffle (DepthToSpace), Mish, sin, cumsum (CumSum) and an upper
    triangle (Trilu). The output is logits."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)      # N,8,14,14
        self.inorm = nn.InstanceNorm2d(8, affine=True)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)     # N,16,7,7
        self.gn = nn.GroupNorm(4, 16)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")     # N,16,14,14
        self.conv3 = nn.Conv2d(24, 16, 3, padding=1)              # N,16,14,14
        self.shuffle = nn.PixelShuffle(2)                         # N,4,28,28
        self.conv4 = nn.Conv2d(4, 8, 3, stride=2, padding=1)      # N,8,14,14
        self.head = nn.Linear(8 * 7 * 7 + 8 * 8, 10)

    def forward(self, x):
        h1 = F.mish(self.inorm(self.conv1(x)))                    # InstanceNormalization, Mish
        h2 = F.relu(self.gn(self.conv2(h1)))                      # GroupNorm
        u = torch.cat([self.up(h2), h1], dim=1)                   # Resize (nearest), Concat
        u = self.shuffle(F.relu(self.conv3(u)))                   # DepthToSpace -> N,4,28,28
        v = self.conv4(u + 0.1 * torch.sin(u))                    # Sin -> N,8,14,14
        v = F.interpolate(v, size=(7, 7), mode="bilinear", align_corners=False)  # Resize (linear)
        c = torch.cumsum(v, dim=3) / 7.0                          # CumSum
        g = v.flatten(2)                                          # N,8,49
        gram = torch.triu(torch.matmul(g, g.transpose(1, 2)) / 49.0)  # Trilu -> N,8,8
        return self.head(torch.cat([c.flatten(1), gram.flatten(1)], dim=1))


class SeqNet(nn.Module):
    """A 1x28x28 -> 10 sequence model with PyTorch's recurrent layers: the image's rows as 28
    steps through a two-layer bidirectional LSTM (batch-first) and a GRU over its outputs, the
    columns through an Elman RNN of ReLU (time-major). The output is logits."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(28, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(32, 16, batch_first=True)
        self.rnn = nn.RNN(28, 12, nonlinearity="relu")
        self.head = nn.Linear(32 + 16 + 12, 10)

    def forward(self, x):
        rows = x.squeeze(1)                                       # N,28,28: 28 steps of 28
        y, _ = self.lstm(rows)                                    # LSTM x2 -> N,28,32
        g, _ = self.gru(y)                                        # GRU -> N,28,16
        _, h = self.rnn(rows.permute(2, 0, 1))                    # RNN over columns -> 1,N,12
        return self.head(torch.cat([y.mean(1), g[:, -1], h[0]], dim=1))


def randomize_norm_layers(model, gen):
    """Give BatchNorm/LayerNorm/InstanceNorm/GroupNorm non-trivial affine parameters, BatchNorm
    running statistics."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm, nn.InstanceNorm2d, nn.GroupNorm)):
                m.weight.copy_(1.0 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.75 + 0.5 * torch.rand(m.running_var.shape, generator=gen))


MODELS = {
    # name: (constructor, input shape without batch, trajectory?)
    "lenet5": (LeNet5, (1, 28, 28), True),
    "mlp": (MLP, (1, 28, 28), True),
    "resnet20": (ResNet20, (1, 28, 28), True),
    "opzoo": (OpZoo, (1, 28, 28), False),
    "upnet": (UpNet, (1, 28, 28), True),
    "seqnet": (SeqNet, (1, 28, 28), True),
}


# --------------------------------------------------------------------------- helpers


def log(*a):
    print(*a, flush=True)


def fail(what, exc):
    log(f"FAILED: {what}: {exc!r}")
    traceback.print_exc()
    FAILURES.append(f"{what}: {exc!r}")


def op_types(model_proto):
    return sorted({n.op_type for n in model_proto.graph.node})


def opset_of(model_proto):
    return {(o.domain or "ai.onnx"): o.version for o in model_proto.opset_import}


def ensure_internal_weights(path):
    """Re-save the file with every tensor inside the .onnx (no external data)."""
    import onnx
    from onnx.external_data_helper import uses_external_data
    m = onnx.load(path, load_external_data=True)
    ext = [t.name for t in m.graph.initializer if uses_external_data(t)]
    if ext:
        log(f"  {path}: {len(ext)} initializers were external, re-saving inline")
    onnx.save_model(m, path, save_as_external_data=False)
    base = os.path.dirname(path)
    for f in os.listdir(base):  # remove stray external data files next to it
        if f.endswith(".data") and f.startswith(os.path.basename(path)):
            os.remove(os.path.join(base, f))
    return onnx.load(path)


def check_against_torch(model, path, state):
    """onnx.checker, onnxruntime at batch 3 (reference) and batch 5 (dynamic batch),
    and a comparison of the initializers with the torch state_dict by name."""
    import onnx
    import onnx.numpy_helper as nh
    m = ensure_internal_weights(path)
    try:
        onnx.checker.check_model(m, full_check=True)
        log(f"  onnx.checker.check_model(full_check=True) OK: {os.path.basename(path)}")
    except Exception as e:  # noqa: BLE001
        log(f"  WARNING full_check failed ({e!r}); plain check_model:")
        onnx.checker.check_model(m)
    inits = {t.name: nh.to_array(t) for t in m.graph.initializer}
    same = [k for k, v in state.items() if k in inits and inits[k].shape == tuple(v.shape)
            and np.array_equal(inits[k], v.numpy())]
    float_keys = [k for k, v in state.items() if v.is_floating_point()]
    info = {
        "file": os.path.basename(path),
        "opset": opset_of(m),
        "op_types": op_types(m),
        "n_nodes": len(m.graph.node),
        "n_initializers": len(m.graph.initializer),
        "state_dict_float_tensors": len(float_keys),
        "state_dict_tensors_found_by_name_and_equal": len(same),
        "inputs": [(i.name, [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim])
                   for i in m.graph.input if i.name not in inits],
        "outputs": [(o.name, [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim])
                    for o in m.graph.output],
        "bytes": os.path.getsize(path),
    }
    log(f"  {info['file']}: opset {info['opset']}, {info['n_nodes']} nodes, "
        f"{info['bytes']} bytes, inputs {info['inputs']}, outputs {info['outputs']}")
    log(f"    ops: {' '.join(info['op_types'])}")
    log(f"    state_dict float tensors {len(float_keys)}, found by name & equal in onnx: {len(same)}")
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        iname = sess.get_inputs()[0].name
        x = np.load(path[:-5] + ".input.npy")
        ref = np.load(path[:-5] + ".output.npy")
        got = sess.run(None, {iname: x})[0]
        d = float(np.max(np.abs(got - ref)))
        rel = d / max(float(np.max(np.abs(ref))), 1e-12)
        log(f"    onnxruntime vs torch (batch {x.shape[0]}): max abs diff {d:.3e}, rel {rel:.3e}")
        info["ort_max_abs_diff"] = d
        if rel > 1e-4:
            FAILURES.append(f"{path}: onnxruntime differs from torch (rel {rel:.3e})")
        x5 = np.random.default_rng(7).standard_normal((5,) + x.shape[1:]).astype(np.float32)
        with torch.no_grad():
            ref5 = model(torch.from_numpy(x5)).numpy()
        got5 = sess.run(None, {iname: x5})[0]
        d5 = float(np.max(np.abs(got5 - ref5)))
        log(f"    dynamic batch check (batch 5): max abs diff {d5:.3e}")
        info["ort_batch5_max_abs_diff"] = d5
        if d5 / max(float(np.max(np.abs(ref5))), 1e-12) > 1e-4:
            FAILURES.append(f"{path}: batch-5 run differs from torch")
    except Exception as e:  # noqa: BLE001
        fail(f"onnxruntime check of {path}", e)
    return info


def save_io(path, x, y):
    np.save(path[:-5] + ".input.npy", x)
    np.save(path[:-5] + ".output.npy", y)


def export_ts(model, x, path, opset):
    torch.onnx.export(
        model, (torch.from_numpy(x),), path,
        dynamo=False,
        opset_version=opset,
        input_names=["input"], output_names=["output"],
        dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
        # PRESERVE with the model in eval mode exports inference semantics, but skips the
        # eval-mode peephole pass that would fold BatchNormalization into Conv weights.
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=True,
    )


def export_dynamo(model, x, path, optimize=True):
    batch = torch.export.Dim("N", max=4096)
    kwargs = dict(dynamo=True, input_names=["input"], output_names=["output"],
                  dynamic_shapes=({0: batch},), optimize=optimize)
    try:
        prog = torch.onnx.export(model, (torch.from_numpy(x),), external_data=False, **kwargs)
    except TypeError:
        prog = torch.onnx.export(model, (torch.from_numpy(x),), **kwargs)
    except Exception as e:  # noqa: BLE001
        log(f"  dynamo export with Dim('N') failed ({e!r}); retrying with Dim.DYNAMIC")
        kwargs["dynamic_shapes"] = ({0: torch.export.Dim.DYNAMIC},)
        prog = torch.onnx.export(model, (torch.from_numpy(x),), **kwargs)
    try:
        prog.save(path, external_data=False)
    except TypeError:
        prog.save(path)
    ensure_internal_weights(path)


def count_bn(path):
    import onnx
    return sum(n.op_type == "BatchNormalization" for n in onnx.load(path).graph.node)


def load_onnx_weights_into(model, path):
    """Copy every initializer whose name is a state_dict key into the model."""
    import onnx
    import onnx.numpy_helper as nh
    inits = {t.name: nh.to_array(t) for t in onnx.load(path).graph.initializer}
    sd = model.state_dict()
    loaded, missing = [], []
    with torch.no_grad():
        for k, v in sd.items():
            if not v.is_floating_point():
                continue
            if k in inits and inits[k].shape == tuple(v.shape):
                v.copy_(torch.from_numpy(inits[k].copy()))
                loaded.append(k)
            else:
                missing.append(k)
    return loaded, missing


def trajectory(name, model_ctor, export_path, outdir, state):
    rng = np.random.default_rng(SEED + 99)
    steps, batch = 20, 8
    xs = rng.standard_normal((steps, batch, 1, 28, 28)).astype(np.float32)
    ys = rng.integers(0, 10, size=(steps, batch)).astype(np.int64)
    hp = dict(lr=0.05, momentum=0.9, weight_decay=5e-4, dampening=0.0, nesterov=False)

    # The exported state first: an exporter may rename tensors (the TorchScript exporter's
    # GroupNorm becomes an InstanceNormalization and a Mul and Add of renamed copies), and those
    # hold the state's values in the file too.
    model = model_ctor()
    model.load_state_dict(state)
    loaded, missing = load_onnx_weights_into(model, export_path)
    if missing:
        log(f"  {name} trajectory: renamed in {os.path.basename(export_path)}, taken from the state: {missing}")
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=hp["lr"], momentum=hp["momentum"],
                          weight_decay=hp["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for s in range(steps):
        opt.zero_grad(set_to_none=True)
        out = model(torch.from_numpy(xs[s]))
        loss = loss_fn(out, torch.from_numpy(ys[s]))
        losses.append(float(loss.item()))
        loss.backward()
        opt.step()
    losses = np.asarray(losses, dtype=np.float32)
    log(f"  {name} trajectory losses: {np.array2string(losses, precision=4)}")

    np.save(os.path.join(outdir, "trajectory.x.npy"), xs)
    np.save(os.path.join(outdir, "trajectory.y.npy"), ys)
    np.save(os.path.join(outdir, "trajectory.loss.npy"), losses)
    final = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    np.savez(os.path.join(outdir, "trajectory.final_params.npz"), **final)
    stats = {k: v for k, v in final.items()
             if k.endswith("running_mean") or k.endswith("running_var")
             or k.endswith("num_batches_tracked")}
    if stats:
        np.savez(os.path.join(outdir, "trajectory.running_stats.npz"), **stats)

    meta = {
        "model": name,
        "start_onnx": os.path.basename(export_path),
        "start_weights_note": (("weights loaded by initializer name from start_onnx (every float "
                               "state_dict tensor was found there); the TorchScript exports and "
                               "<name>.dynamo_noopt.onnx hold the same tensors under the same names; "
                               "the default dynamo export may have folded BatchNormalization into Conv")),
        "tensors_loaded_from_onnx": len(loaded),
        "steps": steps,
        "batch_size": batch,
        "x_file": "trajectory.x.npy", "x_shape": list(xs.shape), "x_dtype": "float32",
        "y_file": "trajectory.y.npy", "y_shape": list(ys.shape), "y_dtype": "int64",
        "loss_file": "trajectory.loss.npy",
        "loss_meaning": "loss[s] = loss of step s on batch s, before step s's update",
        "loss": "torch.nn.CrossEntropyLoss() on the model output (logits), mean over batch",
        "optimizer": "torch.optim.SGD",
        **hp,
        "update_rule": ("g = grad + weight_decay*w; v = g if step==0 else momentum*v + g; "
                        "w = w - lr*v  (weight decay on every parameter, biases and "
                        "BatchNorm gamma/beta included)"),
        "mode": "model.train(): BatchNorm uses batch statistics (biased variance) and updates "
                "running stats with momentum 0.1 using the unbiased batch variance",
        "final_params_file": "trajectory.final_params.npz (state_dict after the 20 updates)",
        "running_stats_file": "trajectory.running_stats.npz" if stats else None,
        "seed_numpy_data": SEED + 99,
        "device": "cpu", "dtype": "float32",
        "torch_version": torch.__version__,
    }
    with open(os.path.join(outdir, "trajectory.json"), "w") as f:
        json.dump(meta, f, indent=2)


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    log(f"torch {torch.__version__}")
    try:
        import onnx
        import onnxruntime
        import onnxscript
        log(f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}, "
            f"onnxscript {onnxscript.__version__}, numpy {np.__version__}")
    except Exception as e:  # noqa: BLE001
        log(f"import problem: {e!r}")

    summary = {}
    for idx, (name, (ctor, shape, traj)) in enumerate(MODELS.items()):
        if args.only and name not in args.only:
            continue
        log(f"=== {name}")
        outdir = os.path.join(args.out, name)
        os.makedirs(outdir, exist_ok=True)
        gen = torch.Generator().manual_seed(SEED + idx)
        torch.manual_seed(SEED + idx)
        model = ctor()
        randomize_norm_layers(model, gen)
        model.eval()
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        nparams = sum(p.numel() for p in model.parameters())
        log(f"  parameters: {nparams}")

        x = np.random.default_rng(SEED + idx).standard_normal((3,) + shape).astype(np.float32)
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy()

        variants = [("ts17", lambda p: export_ts(model, x, p, 17))]
        if name == "lenet5":
            variants.append(("ts13", lambda p: export_ts(model, x, p, 13)))
        variants.append(("dynamo", lambda p: export_dynamo(model, x, p)))
        files = []
        for tag, fn in variants:
            path = os.path.join(outdir, f"{name}.{tag}.onnx")
            try:
                fn(path)
                save_io(path, x, y)
                files.append(path)
            except Exception as e:  # noqa: BLE001
                fail(f"export {name}.{tag}", e)
        # The dynamo exporter's optimizer may fold BatchNormalization into Conv; keep an
        # unoptimized export as well in that case so a BN-trainable dynamo graph exists.
        nbn = sum(isinstance(m, nn.BatchNorm2d) for m in model.modules())
        dpath = os.path.join(outdir, f"{name}.dynamo.onnx")
        if nbn and os.path.exists(dpath) and count_bn(dpath) < nbn:
            log(f"  dynamo export has {count_bn(dpath)} of {nbn} BatchNormalization nodes; "
                f"also writing {name}.dynamo_noopt.onnx (optimize=False)")
            path = os.path.join(outdir, f"{name}.dynamo_noopt.onnx")
            try:
                export_dynamo(model, x, path, optimize=False)
                save_io(path, x, y)
                files.append(path)
            except Exception as e:  # noqa: BLE001
                fail(f"export {name}.dynamo_noopt", e)
        for path in files:
            try:
                summary[os.path.relpath(path, args.out)] = check_against_torch(model, path, state)
            except Exception as e:  # noqa: BLE001
                fail(f"check {path}", e)
        if traj:
            start = os.path.join(outdir, f"{name}.ts17.onnx")
            if not os.path.exists(start):
                start = dpath
            try:
                trajectory(name, ctor, start, outdir, state)
            except Exception as e:  # noqa: BLE001
                fail(f"trajectory {name}", e)

    with open(os.path.join(args.out, "export_torch_summary.json"), "w") as f:
        json.dump({"torch": torch.__version__, "files": summary, "failures": FAILURES}, f,
                  indent=1)
    log("=== summary")
    for k, v in summary.items():
        log(f"{k}: opset {v['opset']} ops {','.join(v['op_types'])}")
    if FAILURES:
        log("FAILURES:")
        for f_ in FAILURES:
            log("  " + f_)
        sys.exit(1)
    log("all exports OK")


if __name__ == "__main__":
    main()
