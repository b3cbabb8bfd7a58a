#!/usr/bin/env python3
"""A wider network than the benchmark's, for the convolution searches' start-up cost: a CIFAR-style
ResNet of 2 basic blocks a stage and 64/128/256 channels (3x32x32 input), exported as bench/models.py
exports its models.

    python3 wide_resnet.py OUT.onnx
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "models"))
from export_torch import BasicBlock  # noqa: E402
from models import export_onnx  # noqa: E402


class WideResNet(nn.Module):
    def __init__(self, widths=(64, 128, 256), blocks=2, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        layers, cin = [], widths[0]
        for i, cout in enumerate(widths):
            for b in range(blocks):
                layers.append(BasicBlock(cin, cout, 2 if (i > 0 and b == 0) else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


if __name__ == "__main__":
    torch.manual_seed(1)
    export_onnx(WideResNet(), sys.argv[1], (3, 32, 32))
    print("wrote", sys.argv[1])
