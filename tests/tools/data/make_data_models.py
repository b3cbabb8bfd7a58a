"""Makes the small RGB models of the data-format tests (run once; outputs are committed).

tiny_rgb.onnx: input (N, 3, 32, 32) -> Conv 3->16 (3x3, stride 2) -> Relu ->
GlobalAveragePool -> Flatten -> Gemm -> 10 logits, as PyTorch exports it (channels first).
tiny_rgb_nhwc.onnx: the same behind a Transpose from (N, 32, 32, 3), as tf2onnx exports a
Keras model (channels last).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)
w = (rng.standard_normal((16, 3, 3, 3)) * np.sqrt(2 / 27)).astype(np.float32)
b = np.zeros(16, np.float32)
fw = (rng.standard_normal((10, 16)) * np.sqrt(1 / 16)).astype(np.float32)
fb = np.zeros(10, np.float32)


def model(nhwc):
    shape = ["N", 32, 32, 3] if nhwc else ["N", 3, 32, 32]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])
    nodes = []
    first = "x"
    if nhwc:
        nodes.append(helper.make_node("Transpose", ["x"], ["x_nchw"], perm=[0, 3, 1, 2], name="to_nchw"))
        first = "x_nchw"
    nodes += [
        helper.make_node("Conv", [first, "conv.weight", "conv.bias"], ["c"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], transB=1, name="fc"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w, "conv.weight"), (b, "conv.bias"), (fw, "fc.weight"), (fb, "fc.bias")]]
    g = helper.make_graph(nodes, "tiny_rgb_nhwc" if nhwc else "tiny_rgb", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="cbtrain-tests",
                          ir_version=8)
    onnx.checker.check_model(m)
    return m


for nhwc, name in [(False, "tiny_rgb.onnx"), (True, "tiny_rgb_nhwc.onnx")]:
    onnx.save(model(nhwc), os.path.join(here, name))
    print("wrote", name)
