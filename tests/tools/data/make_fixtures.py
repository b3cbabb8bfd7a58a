"""Makes the small ONNX fixtures of the CLI tests (run once; outputs are committed).

unsupported_ops.onnx: a valid model that uses two ops cbtrain does not support (LpNormalization and
Hardmax), so the CLI must list both in one message.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 10])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])
w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((10, 10)).astype(np.float32), "w")
nodes = [
    helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
    helper.make_node("Hardmax", ["h"], ["hm"], name="hardmax"),
    helper.make_node("Mul", ["hm", "h"], ["y"], name="mul"),
    helper.make_node("LpNormalization", ["h"], ["vals"], name="lpnorm", axis=1, p=2),
]
vals = helper.make_tensor_value_info("vals", TensorProto.FLOAT, ["N", 10])
g = helper.make_graph(nodes, "unsupported", [x], [y, vals], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="cbtrain-tests", ir_version=8)
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "unsupported_ops.onnx"))
print("wrote unsupported_ops.onnx")
