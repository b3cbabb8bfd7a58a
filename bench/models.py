#!/usr/bin/env python3
"""PyTorch models of the benchmark (LeNet-5, ResNet-20, ResNet-32, SeqNet) and their ONNX export.

LeNet-5 and the basic block are those of models/export_torch.py (the bundled models/lenet5
and models/resnet20), imported from there; ResNet-20 and ResNet-32 are the CIFAR-style
network of those blocks with 3 and 5 blocks per stage, for 1x28x28 and 3x32x32 inputs.

    python3 bench/models.py --out DIR [--models lenet5,resnet32,resnet20] [--seed 1234]

writes DIR/<name>.onnx (TorchScript exporter, opset 17, dynamic batch, BatchNorm kept,
weights inside the file) for each model and checks it with onnxruntime when available.
"""

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from export_torch import BasicBlock, LeNet5, SeqNet  # noqa: E402  (the bundled models' own classes)


class CifarResNet(nn.Module):
    """CIFAR-style ResNet-(6n+2): 3 stages of n basic blocks, 16/32/64 channels."""

    def __init__(self, blocks_per_stage, in_channels, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            blocks = []
            for i in range(blocks_per_stage):
                blocks.append(BasicBlock(cin, cout, stride if i == 0 else 1))
                cin = cout
            layers.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3 = layers
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = torch.flatten(x, 1)
        return self.fc(x)


def ResNet20():
    """3 blocks per stage, 1x28x28 input (same as models/resnet20)."""
    return CifarResNet(3, 1)


def ResNet32():
    """5 blocks per stage, 3x32x32 input (CIFAR-10 shape)."""
    return CifarResNet(5, 3)


def architecture(name):
    """A constructor of models/architectures.py's `name` (its ONNX exports are in models/architectures)."""
    def make():
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
        import architectures
        return architectures.ARCHITECTURES[name]()
    return make


# name: (constructor, input shape without the batch dimension)
MODELS = {
    "lenet5": (LeNet5, (1, 28, 28)),
    "resnet20": (ResNet20, (1, 28, 28)),
    "resnet32": (ResNet32, (3, 32, 32)),
    "seqnet": (SeqNet, (1, 28, 28)),  # LSTM, GRU and RNN over 28 steps (models/seqnet)
    # well-known architectures, small (models/architectures.py)
    **{name: (architecture(name), (1, 28, 28)) for name in (
        "mobilenetv2", "mobilenetv3", "efficientnet", "convnext", "vit", "rowgpt", "densenet",
        "shufflenet", "squeezenet", "googlenet", "seresnext", "mlpmixer", "swin", "poolformer",
        "vgg")},
}


def set_precision(precision):
    """fp32: convolutions and matrix products in full float32, as cbtrain's default (PyTorch's
    own default lets cuDNN use TF32 tensor cores for convolutions); tf32: both may use TF32.
    Returns the settings, for the result files."""
    tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    return dict(precision=precision, cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32)


def add_precision_arg(parser):
    parser.add_argument("--precision", default="fp32", choices=["fp32", "tf32"],
                        help="fp32 (TF32 off, as cbtrain's default) or tf32 (as --precision tf32)")


def build(name):
    """A fresh model (PyTorch default initialisation from the global seed) and its input shape."""
    if name not in MODELS:
        raise SystemExit(f"unknown model '{name}' (known: {', '.join(MODELS)})")
    ctor, shape = MODELS[name]
    return ctor(), shape


def export_onnx(model, path, input_shape):
    """Export with the TorchScript exporter at opset 17 with a dynamic batch axis.

    The model is exported in eval mode with TrainingMode.PRESERVE, which keeps
    BatchNormalization nodes (no folding into Conv); weights stay inside the file.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    x = torch.randn((2,) + tuple(input_shape), device=device)
    torch.onnx.export(
        model, (x,), path,
        dynamo=False,
        opset_version=17,
        input_names=["input"], output_names=["output"],
        dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=True,
    )
    model.train(was_training)


def load_onnx_weights(model, path):
    """Copy every ONNX initializer whose name is a float state_dict key into the model.

    Returns the state_dict keys that were not found (an empty list means all were)."""
    import onnx
    import onnx.numpy_helper as nh
    inits = {t.name: nh.to_array(t) for t in onnx.load(path).graph.initializer}
    missing = []
    with torch.no_grad():
        for k, v in model.state_dict().items():
            if not v.is_floating_point():
                continue
            if k in inits and tuple(inits[k].shape) == tuple(v.shape):
                v.copy_(torch.from_numpy(inits[k].copy()).to(v.device))
            else:
                missing.append(k)
    return missing


def check_with_onnxruntime(model, path, input_shape):
    """Max abs difference between onnxruntime and PyTorch (eval mode) at batch 5."""
    import numpy as np
    import onnxruntime as ort
    x = np.random.default_rng(7).standard_normal((5,) + tuple(input_shape)).astype(np.float32)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    model.eval()
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    return float(np.max(np.abs(got - ref)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for <name>.onnx")
    ap.add_argument("--models", default="lenet5,resnet32,resnet20")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}", flush=True)
    failed = []
    for i, name in enumerate(args.models.split(",")):
        torch.manual_seed(args.seed + i)
        model, shape = build(name)
        path = os.path.join(args.out, f"{name}.onnx")
        try:
            export_onnx(model, path, shape)
            nparams = sum(p.numel() for p in model.parameters())
            print(f"{name}: {nparams} parameters, input {list(shape)} -> {path} "
                  f"({os.path.getsize(path)} bytes)", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on with the other models
            print(f"{name}: export FAILED: {e!r}", flush=True)
            failed.append(name)
            continue
        try:
            d = check_with_onnxruntime(model, path, shape)
            print(f"  onnxruntime vs torch (batch 5): max abs diff {d:.3e}", flush=True)
            if d > 1e-3:
                failed.append(name)
        except ImportError:
            print("  onnxruntime not available: not checked", flush=True)
    if failed:
        print(f"FAILED: {' '.join(failed)}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
