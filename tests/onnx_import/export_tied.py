"""How PyTorch 2.11's exporters write a deliberately tied parameter (one nn.Parameter used by two
layers) next to two equal but separate ones: which nodes read which initializer, and whether
Identity nodes appear. Run where torch is installed (2.11 on the GPU machine made the committed files):
    python3 tests/onnx_import/export_tied.py tests/onnx_import/data"""
import sys

import onnx
import torch
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)
        self.b.weight = self.a.weight  # tied: one parameter
        self.c, self.d = nn.Linear(8, 8), nn.Linear(8, 8)
        with torch.no_grad():
            self.d.weight.copy_(self.c.weight)  # equal values, two parameters
            self.d.bias.copy_(self.c.bias)

    def forward(self, x):
        return self.d(self.c(self.b(self.a(x))))


m = Tied().eval()
x = torch.randn(2, 8)
for tag, kw in (("ts", dict(dynamo=False, opset_version=17)), ("dynamo", dict(dynamo=True)),
                ("dynamo_noopt", dict(dynamo=True, optimize=False))):
    path = f"{sys.argv[1]}/tied.{tag}.onnx"
    torch.onnx.export(m, (x,), path, input_names=["x"], output_names=["y"], **kw)
    g = onnx.load(path).graph
    print("==", tag, "initializers:", [(t.name, list(t.dims)) for t in g.initializer])
    for n in g.node:
        print("  ", n.op_type, list(n.input), "->", list(n.output))
