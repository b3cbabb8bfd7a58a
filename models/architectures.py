#!/usr/bin/env python3
"""Small versions of well-known image classifiers, exported from PyTorch to ONNX, to survey which
architectures cbtrain imports, runs and trains (scripts/architecture_survey.sh drives it).

Run where torch (2.11 was used), onnx, onnxscript and onnxruntime are installed:

    python3 models/architectures.py --out /tmp/arch [--only vit convnext]

For every architecture <name> it writes into <out>/:
  <name>.ts17.onnx     TorchScript exporter, opset 17, dynamic batch
  <name>.dynamo.onnx   dynamo exporter, its default opset, dynamic batch
  <name>.dynamo_noopt.onnx  the same with optimize=False (no folding, no merging of equal
                       initializers, no BatchNorm folded into convolutions)
  swin.ts17_nofold.onnx  TorchScript exporter without constant folding
  <name>.op23.onnx     (transformers only) dynamo exporter at opset 23, where Attention and
                       RMSNormalization exist as ops
with <file>.input.npy / <file>.output.npy (batch 3, PyTorch's eval-mode output) beside each;
architectures.json: per file its opset, op types and onnxruntime's difference from PyTorch; and
PyTorch's training trajectory of each architecture: <name>.trajectory.loss.npy, the losses of 10 SGD
steps (lr 0.05, momentum 0.9, weight decay 5e-4, train mode, dropout off: the exported files hold
none) on the batches trajectory.x.npy (10, 8, 1, 28, 28) and trajectory.y.npy (10, 8).
Inputs are 1x28x28 (Fashion-MNIST), 10 classes; norm layers get random affine parameters and
running statistics so that the reference outputs test them.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torch as et  # noqa: E402  (the export and check helpers of the example models)

SEED = 4321


def conv_bn(cin, cout, k, stride=1, groups=1, act=nn.ReLU):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """MobileNetV2's block; with se=True MobileNetV3's (Hardswish, hard-sigmoid squeeze-excite)."""

    def __init__(self, cin, cout, stride, expand, v3=False):
        super().__init__()
        mid = cin * expand
        act = nn.Hardswish if v3 else nn.ReLU6
        self.body = nn.Sequential(conv_bn(cin, mid, 1, act=act), conv_bn(mid, mid, 3, stride, groups=mid, act=act))
        self.se = SqueezeExcite(mid, 4, nn.ReLU, nn.Hardsigmoid) if v3 else nn.Identity()
        self.project = conv_bn(mid, cout, 1, act=None)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.body(x)))
        return x + y if self.residual else y


class SqueezeExcite(nn.Module):
    def __init__(self, c, r, act=nn.SiLU, gate=nn.Sigmoid):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, c // r, 1), nn.Conv2d(c // r, c, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class MobileNet(nn.Module):
    def __init__(self, v3=False):
        super().__init__()
        act = nn.Hardswish if v3 else nn.ReLU6
        self.stem = conv_bn(1, 16, 3, act=act)
        cfg = [(16, 16, 1, 1), (16, 24, 2, 4), (24, 24, 1, 4), (24, 32, 2, 4), (32, 32, 1, 4)]
        self.blocks = nn.Sequential(*[InvertedResidual(a, b, s, e, v3) for a, b, s, e in cfg])
        self.head = conv_bn(32, 64, 1, act=act)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(self.drop(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)))


class MBConv(nn.Module):
    """EfficientNet's block: expansion, depthwise, SiLU squeeze-excite, projection."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.body = nn.Sequential(conv_bn(cin, mid, 1, act=nn.SiLU), conv_bn(mid, mid, 3, stride, mid, nn.SiLU),
                                  SqueezeExcite(mid, 4), conv_bn(mid, cout, 1, act=None))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class EfficientNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(1, 16, 3, act=nn.SiLU)
        cfg = [(16, 16, 1, 1), (16, 24, 2, 4), (24, 24, 1, 4), (24, 40, 2, 4)]
        self.blocks = nn.Sequential(*[MBConv(a, b, s, e) for a, b, s, e in cfg])
        self.fc = nn.Linear(40, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor, as ConvNeXt's downsampling layers do."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(0.5 * torch.ones(c))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 24, 2, 2), LayerNorm2d(24, eps=1e-6))
        self.stage1 = nn.Sequential(ConvNeXtBlock(24), ConvNeXtBlock(24))
        self.down = nn.Sequential(LayerNorm2d(24, eps=1e-6), nn.Conv2d(24, 48, 2, 2))
        self.stage2 = nn.Sequential(ConvNeXtBlock(48), ConvNeXtBlock(48))
        self.norm = nn.LayerNorm(48, eps=1e-6)
        self.fc = nn.Linear(48, 10)

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.fc(self.norm(x.mean((2, 3))))


class ViT(nn.Module):
    """Patches of 4x4, a class token, learned positions, PyTorch's pre-norm encoder layers."""

    def __init__(self, d=48, depth=2, heads=4):
        super().__init__()
        self.patch = nn.Conv2d(1, d, 4, 4)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos = nn.Parameter(0.02 * torch.randn(1, 50, d))
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)  # N,49,d
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        return self.fc(self.norm(self.encoder(t)[:, 0]))


class DecoderBlock(nn.Module):
    """A decoder-only language model's block: RMSNorm, causal scaled-dot-product attention with
    rotary-free heads, a SwiGLU feed-forward."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.RMSNorm(d, eps=1e-6), nn.RMSNorm(d, eps=1e-6)
        self.qkv, self.out = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.gate, self.up = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, -1)
        q, k, v = (z.view(n, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(n, t, d)
        x = x + self.out(a)
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class RowGPT(nn.Module):
    """The image's 28 rows as a sequence of 28 tokens; the last token's state classifies."""

    def __init__(self, d=48):
        super().__init__()
        self.embed = nn.Linear(28, d)
        self.blocks = nn.Sequential(DecoderBlock(d, 4), DecoderBlock(d, 4))
        self.norm = nn.RMSNorm(d, eps=1e-6)
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        h = self.blocks(self.embed(x[:, 0]))
        return self.fc(self.norm(h[:, -1]))


class DenseNet(nn.Module):
    def __init__(self, growth=12):
        super().__init__()
        self.stem = nn.Conv2d(1, 24, 3, padding=1, bias=False)
        c, blocks = 24, []
        for stage in range(2):
            layers = []
            for _ in range(3):
                layers.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, 4 * growth, 1, bias=False),
                                            nn.BatchNorm2d(4 * growth), nn.ReLU(),
                                            nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)))
                c += growth
            blocks.append(nn.ModuleList(layers))
            if stage == 0:
                blocks.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False),
                                            nn.AvgPool2d(2)))
                c //= 2
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            if isinstance(b, nn.ModuleList):
                for layer in b:
                    x = torch.cat([x, layer(x)], 1)
            else:
                x = b(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(F.relu(self.norm(x)), 1), 1))


def channel_shuffle(x, groups):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c // 2
        self.branch = nn.Sequential(conv_bn(h, h, 1), conv_bn(h, h, 3, groups=h, act=None), conv_bn(h, h, 1))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat([a, self.branch(b)], 1), 2)


class ShuffleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(1, 24, 3, 2), nn.MaxPool2d(3, 2, 1))
        self.units = nn.Sequential(ShuffleUnit(24), ShuffleUnit(24), conv_bn(24, 48, 3, 2), ShuffleUnit(48))
        self.fc = nn.Linear(48, 10)

    def forward(self, x):
        return self.fc(self.units(self.stem(x)).mean((2, 3)))


class Fire(nn.Module):
    def __init__(self, cin, s, e):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, s, 1)
        self.e1, self.e3 = nn.Conv2d(s, e, 1), nn.Conv2d(s, e, 3, padding=1)

    def forward(self, x):
        s = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.e1(s)), F.relu(self.e3(s))], 1)


class SqueezeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
                                      Fire(32, 8, 16), Fire(32, 8, 16), nn.MaxPool2d(3, 2, ceil_mode=True),
                                      Fire(32, 16, 32))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(64, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


class Inception(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.b1 = conv_bn(cin, 16, 1)
        self.b3 = nn.Sequential(conv_bn(cin, 12, 1), conv_bn(12, 16, 3))
        self.b5 = nn.Sequential(conv_bn(cin, 8, 1), conv_bn(8, 8, 5))
        self.bp = nn.Sequential(nn.MaxPool2d(3, 1, 1), conv_bn(cin, 8, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


class GoogLeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(1, 32, 3), nn.MaxPool2d(3, 2, 1))
        self.inc1, self.inc2 = Inception(32), Inception(48)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.fc = nn.Linear(48, 10)

    def forward(self, x):
        x = self.inc2(self.pool(self.inc1(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ResNeXtBlock(nn.Module):
    """A bottleneck of grouped 3x3 convolutions (cardinality 8) with squeeze-excite (SE-ResNeXt)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = cout // 2
        self.body = nn.Sequential(conv_bn(cin, mid, 1), conv_bn(mid, mid, 3, stride, groups=8),
                                  conv_bn(mid, cout, 1, act=None), SqueezeExcite(cout, 4, nn.ReLU))
        self.short = nn.Identity() if stride == 1 and cin == cout else conv_bn(cin, cout, 1, stride, act=None)

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class SEResNeXt(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(1, 32, 3)
        self.blocks = nn.Sequential(ResNeXtBlock(32, 64, 2), ResNeXtBlock(64, 64, 1), ResNeXtBlock(64, 128, 2))
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class MixerBlock(nn.Module):
    def __init__(self, tokens, d):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.tok = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.ch = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


class MLPMixer(nn.Module):
    def __init__(self, d=48):
        super().__init__()
        self.patch = nn.Conv2d(1, d, 4, 4)
        self.blocks = nn.Sequential(MixerBlock(49, d), MixerBlock(49, d))
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        t = self.blocks(self.patch(x).flatten(2).transpose(1, 2))
        return self.fc(self.norm(t).mean(1))


class WindowAttention(nn.Module):
    """Swin's attention in windows of 4x4 with a learned relative-position bias (a table gathered by a
    constant index), shifted windows by torch.roll and the mask that goes with them."""

    def __init__(self, d, heads, res, win=4, shift=0):
        super().__init__()
        self.d, self.heads, self.res, self.win, self.shift = d, heads, res, win, shift
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.table = nn.Parameter(0.02 * torch.randn((2 * win - 1) ** 2, heads))
        c = torch.stack(torch.meshgrid(torch.arange(win), torch.arange(win), indexing="ij")).flatten(1)
        rel = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + (win - 1)
        self.register_buffer("index", rel[..., 0] * (2 * win - 1) + rel[..., 1], persistent=False)
        mask = torch.zeros(1, res, res, 1)
        if shift:
            cnt = 0
            for hs in (slice(0, -win), slice(-win, -shift), slice(-shift, None)):
                for ws in (slice(0, -win), slice(-win, -shift), slice(-shift, None)):
                    mask[:, hs, ws, :] = cnt
                    cnt += 1
        mw = self.windows(mask).squeeze(-1)
        am = mw[:, None, :] - mw[:, :, None]
        self.register_buffer("mask", am.masked_fill(am != 0, -100.0).masked_fill(am == 0, 0.0), persistent=False)

    def windows(self, x):
        n, h, w, c = x.shape
        x = x.view(n, h // self.win, self.win, w // self.win, self.win, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(-1, self.win * self.win, c)

    def forward(self, x):  # x: N, H, W, C
        n, h, w, c = x.shape
        y = self.norm1(x)
        if self.shift:
            y = torch.roll(y, (-self.shift, -self.shift), (1, 2))
        t = self.windows(y)  # N*nW, 16, C
        b, m, _ = t.shape
        q, k, v = self.qkv(t).view(b, m, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        att = (q * (c // self.heads) ** -0.5) @ k.transpose(-2, -1)
        att = att + self.table[self.index.view(-1)].view(m, m, -1).permute(2, 0, 1)[None]
        nw = self.mask.shape[0]
        att = att.view(b // nw, nw, self.heads, m, m) + self.mask[None, :, None]
        o = (att.view(b, self.heads, m, m).softmax(-1) @ v).transpose(1, 2).reshape(b, m, c)
        o = self.proj(o).view(n, h // self.win, w // self.win, self.win, self.win, c)
        o = o.permute(0, 1, 3, 2, 4, 5).reshape(n, h, w, c)
        if self.shift:
            o = torch.roll(o, (self.shift, self.shift), (1, 2))
        x = x + o
        return x + self.mlp(self.norm2(x))


class Swin(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.patch = nn.Conv2d(1, d, 2, 2)  # 14x14, cropped to 12x12: 3x3 windows of 4x4
        self.blocks = nn.Sequential(WindowAttention(d, 4, 12, 4, 0), WindowAttention(d, 4, 12, 4, 2))
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        t = self.patch(x)[:, :, 1:13, 1:13].permute(0, 2, 3, 1)  # N,12,12,d
        return self.fc(self.norm(self.blocks(t)).mean((1, 2)))


class PoolFormerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n1, self.n2 = nn.GroupNorm(1, c), nn.GroupNorm(1, c)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(c, 2 * c, 1), nn.GELU(), nn.Conv2d(2 * c, c, 1))

    def forward(self, x):
        y = self.n1(x)
        x = x + (self.pool(y) - y)
        return x + self.mlp(self.n2(x))


class PoolFormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 32, 4, 4)
        self.blocks = nn.Sequential(PoolFormerBlock(32), PoolFormerBlock(32))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(conv_bn(1, 32, 3), conv_bn(32, 32, 3), nn.MaxPool2d(2), conv_bn(32, 64, 3),
                                      conv_bn(64, 64, 3), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.5),
                                        nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


ARCHITECTURES = {
    "mobilenetv2": MobileNet,
    "mobilenetv3": lambda: MobileNet(v3=True),
    "efficientnet": EfficientNet,
    "convnext": ConvNeXt,
    "vit": ViT,
    "rowgpt": RowGPT,
    "densenet": DenseNet,
    "shufflenet": ShuffleNet,
    "squeezenet": SqueezeNet,
    "googlenet": GoogLeNet,
    "seresnext": SEResNeXt,
    "mlpmixer": MLPMixer,
    "swin": Swin,
    "poolformer": PoolFormer,
    "vgg": VGG,
}
TRANSFORMERS = {"vit", "rowgpt"}


def export_ts_unfolded(model, x, path):
    """The TorchScript exporter at opset 17 without constant folding (which folds a gather from a
    parameter, or a buffer's arithmetic, into new initializers)."""
    torch.onnx.export(model, (torch.from_numpy(x),), path, dynamo=False, opset_version=17, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)


def export_op23(model, x, path):
    batch = torch.export.Dim("N", max=4096)
    prog = torch.onnx.export(model, (torch.from_numpy(x),), dynamo=True, opset_version=23, input_names=["input"],
                             output_names=["output"], dynamic_shapes=({0: batch},), external_data=False)
    prog.save(path, external_data=False)
    et.ensure_internal_weights(path)


def record_trajectory(name, model, out):
    """PyTorch's losses of 10 SGD steps of `model` (a copy, train mode, dropout off)."""
    import copy
    rng = np.random.default_rng(SEED + 99)
    path = os.path.join(out, "trajectory.x.npy")
    xs = rng.standard_normal((10, 8, 1, 28, 28)).astype(np.float32)
    ys = rng.integers(0, 10, size=(10, 8)).astype(np.int64)
    np.save(path, xs)
    np.save(os.path.join(out, "trajectory.y.npy"), ys)
    model = copy.deepcopy(model)
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
        if isinstance(m, nn.MultiheadAttention):  # its attention dropout is a float, not a module
            m.dropout = 0.0
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    losses = []
    for s in range(len(xs)):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(torch.from_numpy(xs[s])), torch.from_numpy(ys[s]))
        losses.append(float(loss.item()))
        loss.backward()
        opt.step()
    et.log(f"  {name} trajectory losses: {np.array2string(np.asarray(losses), precision=4)}")
    np.save(os.path.join(out, f"{name}.trajectory.loss.npy"), np.asarray(losses, np.float32))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(4)
    et.log(f"torch {torch.__version__}")
    summary = {}
    for idx, (name, ctor) in enumerate(ARCHITECTURES.items()):
        if args.only and name not in args.only:
            continue
        et.log(f"=== {name}")
        gen = torch.Generator().manual_seed(SEED + idx)
        torch.manual_seed(SEED + idx)
        model = ctor()
        et.randomize_norm_layers(model, gen)
        model.eval()
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        et.log(f"  parameters: {sum(p.numel() for p in model.parameters())}")
        x = np.random.default_rng(SEED + idx).standard_normal((3, 1, 28, 28)).astype(np.float32)
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy()
        variants = [("ts17", lambda p: et.export_ts(model, x, p, 17)), ("dynamo", lambda p: et.export_dynamo(model, x, p)),
                    ("dynamo_noopt", lambda p: et.export_dynamo(model, x, p, optimize=False))]
        if name == "swin":  # its relative-position bias is a gather from a parameter, folded by default
            variants.append(("ts17_nofold", lambda p: export_ts_unfolded(model, x, p)))
        if name in TRANSFORMERS:
            variants.append(("op23", lambda p: export_op23(model, x, p)))
        for tag, fn in variants:
            path = os.path.join(args.out, f"{name}.{tag}.onnx")
            try:
                fn(path)
                et.save_io(path, x, y)
                summary[os.path.basename(path)] = et.check_against_torch(model, path, state)
            except Exception as e:  # noqa: BLE001
                et.fail(f"export {name}.{tag}", e)
        record_trajectory(name, model, args.out)
    with open(os.path.join(args.out, "architectures.json"), "w") as f:
        json.dump({"torch": torch.__version__, "files": summary, "failures": et.FAILURES}, f, indent=1)
    et.log("=== failures" if et.FAILURES else "=== all exports OK")
    for f_ in et.FAILURES:
        et.log("  " + f_)


if __name__ == "__main__":
    main()
