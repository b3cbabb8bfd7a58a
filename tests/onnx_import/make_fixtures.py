#!/usr/bin/env python3
"""Generates the small ONNX fixtures of tests/onnx_import/data (run from anywhere).

The files are committed; rerun this script only when a fixture must change.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def save(model, name, ir_version=8):
    model.ir_version = ir_version
    model.producer_name = "make_fixtures"
    model.producer_version = "1"
    onnx.save(model, os.path.join(HERE, name))


def attrs_model():
    """One node carrying every attribute type the importer converts."""
    node = helper.make_node(
        "Identity", ["x"], ["y"], name="carrier",
        i=7, f=2.5, s="hello", ints=[1, -2, 3], floats=[0.5, -1.5],
        strings=["a", "bc"],
        t=numpy_helper.from_array(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32), "t"))
    g = helper.make_graph([node], "attrs",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "attrs.onnx")


def constants_model():
    """Constant nodes in every form, out of topological order, feeding one Sum."""
    consts = [
        helper.make_node("Constant", [], ["c_tensor"],
                         value=numpy_helper.from_array(np.array([1.0, 2.0], np.float32))),
        helper.make_node("Constant", [], ["c_float"], value_float=3.0),
        helper.make_node("Constant", [], ["c_floats"], value_floats=[4.0, 5.0]),
        helper.make_node("Constant", [], ["c_int"], value_int=6),
        helper.make_node("Constant", [], ["c_ints"], value_ints=[7, 8]),
    ]
    add = helper.make_node("Sum", ["x", "c_tensor", "c_float", "c_floats"], ["y"], name="sum")
    shape = helper.make_node("Reshape", ["y", "c_ints"], ["z"], name="reshape")
    g = helper.make_graph([shape, add] + consts + [
        helper.make_node("Cast", ["c_int"], ["k"], name="cast", to=TensorProto.FLOAT)], "consts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, None]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, [])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("ai.onnx", 13)]),
         "constants.onnx")


def legacy_mlp_model():
    """An old exporter's style: IR 3, opset 9, initializers listed as inputs, typed fields."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 2], [0.5, -1.0, 2.0, 0.25, -0.75, 1.5])
    b = helper.make_tensor("b", TensorProto.DOUBLE, [2], [0.125, -0.5])
    eps = helper.make_tensor("eps", TensorProto.FLOAT, [], [1e-5])
    idx = helper.make_tensor("idx", TensorProto.INT64, [2], [0, 1])
    i32 = helper.make_tensor("i32", TensorProto.INT32, [2], [-3, 4])
    i8 = helper.make_tensor("i8", TensorProto.INT8, [2], [-128, 127])
    u8 = numpy_helper.from_array(np.array([0, 255], np.uint8), "u8")  # raw_data
    flag = helper.make_tensor("flag", TensorProto.BOOL, [2], [True, False])
    f64raw = numpy_helper.from_array(np.array([1.5, -2.5], np.float64), "f64raw")
    gemm = helper.make_node("Gemm", ["x", "w"], ["h"], name="gemm", alpha=1.0)
    add = helper.make_node("Add", ["h", "eps"], ["y"], name="add")
    inits = [w, b, eps, idx, i32, i8, u8, flag, f64raw]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])]
    inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph([gemm, add], "legacy", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
                          initializer=inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)]), "legacy_mlp.onnx",
         ir_version=3)


def activations_model():
    """Every activation and elementwise op that cbtrain gained in one session: g = Gemm(x) feeds
    Elu, Selu, Softplus, Softsign, HardSigmoid, HardSwish, Log(Abs(g) + 1), Reciprocal(Exp(g / 4)
    + 1), PRelu (a trained slope a feature), Max(g, g / 4) and Min(g, g / 4), concatenated into a
    classifier's Gemm. The input and
    onnxruntime's output are saved beside it (`activations.input.npy`, `.output.npy`)."""
    import onnxruntime as ort
    rng = np.random.default_rng(2026)
    n_in, width, classes, batch = 12, 16, 10, 5
    w1 = numpy_helper.from_array(rng.normal(0, 0.8, (width, n_in)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.normal(0, 0.3, (width,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.normal(0, 0.2, (classes, 11 * width)).astype(np.float32), "w2")
    slope = numpy_helper.from_array(rng.uniform(0.05, 0.3, (width,)).astype(np.float32), "slope")
    b2 = numpy_helper.from_array(np.zeros(classes, np.float32), "b2")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    quarter = numpy_helper.from_array(np.array(0.25, np.float32), "quarter")
    n = helper.make_node
    nodes = [
        n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
        n("Elu", ["g"], ["a_elu"], alpha=0.8),
        n("Selu", ["g"], ["a_selu"]),
        n("Softplus", ["g"], ["a_softplus"]),
        n("Softsign", ["g"], ["a_softsign"]),
        n("HardSigmoid", ["g"], ["a_hardsigmoid"], alpha=0.25, beta=0.5),
        n("HardSwish", ["g"], ["a_hardswish"]),
        n("Abs", ["g"], ["abs"]),
        n("Add", ["abs", "one"], ["abs1"]),
        n("Log", ["abs1"], ["a_log"]),
        n("Mul", ["g", "quarter"], ["g4"]),
        n("Exp", ["g4"], ["exp"]),
        n("Add", ["exp", "one"], ["exp1"]),
        n("Reciprocal", ["exp1"], ["a_reciprocal"]),
        n("PRelu", ["g", "slope"], ["a_prelu"]),
        n("Max", ["g", "g4"], ["a_max"]),
        n("Min", ["g", "g4"], ["a_min"]),
        n("Concat", ["a_elu", "a_selu", "a_softplus", "a_softsign", "a_hardsigmoid", "a_hardswish",
                     "a_log", "a_reciprocal", "a_prelu", "a_max", "a_min"], ["h"], axis=1),
        n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1),
    ]
    g = helper.make_graph(nodes, "activations",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", n_in])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])],
                          initializer=[w1, b1, w2, b2, slope, one, quarter])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    save(model, "activations.onnx")
    x = rng.normal(0, 2.0, (batch, n_in)).astype(np.float32)
    sess = ort.InferenceSession(os.path.join(HERE, "activations.onnx"), providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, "activations.input.npy"), x)
    np.save(os.path.join(HERE, "activations.output.npy"), sess.run(None, {"x": x})[0])


def norms_model():
    """InstanceNormalization, GroupNormalization (opset 21: scale and bias per channel) and Resize
    in a small convolutional classifier: x (N, 1, 8, 8) -> Conv(4) -> InstanceNormalization ->
    Relu -> MaxPool(2) -> Resize(linear, x2) -> Conv(8) -> GroupNormalization(4 groups) -> Relu
    -> Flatten -> Gemm.
    The input and onnxruntime's output are saved beside it (`norms.input.npy`, `.output.npy`)."""
    import onnxruntime as ort
    rng = np.random.default_rng(2027)
    classes, batch = 10, 5
    init = [
        numpy_helper.from_array(rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, (4,)).astype(np.float32), "in_scale"),
        numpy_helper.from_array(rng.normal(0, 0.2, (4,)).astype(np.float32), "in_bias"),
        numpy_helper.from_array(rng.normal(0, 0.3, (8, 4, 3, 3)).astype(np.float32), "w2"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, (8,)).astype(np.float32), "gn_scale"),
        numpy_helper.from_array(rng.normal(0, 0.2, (8,)).astype(np.float32), "gn_bias"),
        numpy_helper.from_array(rng.normal(0, 0.05, (classes, 8 * 8 * 8)).astype(np.float32), "w3"),
        numpy_helper.from_array(np.zeros(classes, np.float32), "b3"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up2"),
    ]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("InstanceNormalization", ["c1", "in_scale", "in_bias"], ["n1"], epsilon=1e-4),
        n("Relu", ["n1"], ["r1"]),
        n("MaxPool", ["r1"], ["m1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Resize", ["m1", "", "up2"], ["u1"], mode="linear"),
        n("Conv", ["u1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        n("GroupNormalization", ["c2", "gn_scale", "gn_bias"], ["n2"], num_groups=4, epsilon=1e-5),
        n("Relu", ["n2"], ["r2"]),
        n("Flatten", ["r2"], ["f"]),
        n("Gemm", ["f", "w3", "b3"], ["logits"], transB=1),
    ]
    g = helper.make_graph(nodes, "norms",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])],
                          initializer=init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model)
    save(model, "norms.onnx", ir_version=10)
    x = rng.normal(0, 1.0, (batch, 1, 8, 8)).astype(np.float32)
    sess = ort.InferenceSession(os.path.join(HERE, "norms.onnx"), providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, "norms.input.npy"), x)
    np.save(os.path.join(HERE, "norms.output.npy"), sess.run(None, {"x": x})[0])


def resize_model():
    """Resize in each mode cbtrain takes, on one input x (2, 3, 5, 6), and SpaceToDepth and
    DepthToSpace (DCR, CRD) of the first: every branch flattened and concatenated. onnxruntime's output is saved beside it (`resize.input.npy`,
    `.output.npy`)."""
    import onnxruntime as ort
    rng = np.random.default_rng(2028)
    init, nodes, outs = [], [], []
    n = helper.make_node
    branches = [
        # (mode, coordinate mode, nearest mode, scales or None, sizes or None, axes or None)
        ("nearest", "asymmetric", "floor", [1, 1, 2, 2], None, None),
        ("linear", "pytorch_half_pixel", None, [1, 1, 2, 2], None, None),
        ("linear", "align_corners", None, None, [2, 3, 9, 4], None),
        ("nearest", "half_pixel", "round_prefer_floor", [1, 1, 0.5, 0.7], None, None),
        ("linear", "half_pixel", None, [1, 1, 1.5, 0.8], None, None),
        ("nearest", "tf_half_pixel_for_nn", "floor", None, [2, 3, 7, 11], None),
        ("linear", "asymmetric", None, [1, 1, 2.5, 1], None, None),
        ("linear", "half_pixel_symmetric", None, None, [2, 3, 8, 4], None),
        ("nearest", "half_pixel", "ceil", [2, 3], None, [2, 3]),
    ]
    for k, (mode, coord, nearest, scales, sizes, axes) in enumerate(branches):
        inputs = ["x", ""]
        if scales is not None:
            init.append(numpy_helper.from_array(np.array(scales, np.float32), f"scales{k}"))
            inputs.append(f"scales{k}")
        else:
            init.append(numpy_helper.from_array(np.array(sizes, np.int64), f"sizes{k}"))
            inputs += ["", f"sizes{k}"]
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if nearest:
            attrs["nearest_mode"] = nearest
        if axes:
            attrs["axes"] = axes
        nodes.append(n("Resize", inputs, [f"r{k}"], **attrs))
        nodes.append(n("Flatten", [f"r{k}"], [f"f{k}"]))
        outs.append(f"f{k}")
    # Branch 0's (2, 3, 10, 12) through SpaceToDepth and both DepthToSpace modes.
    nodes.append(n("SpaceToDepth", ["r0"], ["s2d"], blocksize=2))
    nodes.append(n("DepthToSpace", ["s2d"], ["d2s_dcr"], blocksize=2, mode="DCR"))
    nodes.append(n("DepthToSpace", ["s2d"], ["d2s_crd"], blocksize=2, mode="CRD"))
    for name in ["s2d", "d2s_dcr", "d2s_crd"]:
        nodes.append(n("Flatten", [name], [f"f_{name}"]))
        outs.append(f"f_{name}")
    nodes.append(n("Concat", outs, ["y"], axis=1))
    g = helper.make_graph(nodes, "resize",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])],
                          initializer=init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    onnx.checker.check_model(model)
    save(model, "resize.onnx", ir_version=9)
    x = rng.normal(0, 1.0, (2, 3, 5, 6)).astype(np.float32)
    sess = ort.InferenceSession(os.path.join(HERE, "resize.onnx"), providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, "resize.input.npy"), x)
    np.save(os.path.join(HERE, "resize.output.npy"), sess.run(None, {"x": x})[0])


def unary_model():
    """Sin, Cos, Floor, Ceil, Round, Sign, Mish, Celu, ThresholdedRelu and ArgMax/ArgMin (cast to
    float), CumSum (exclusive, reverse) and Trilu (lower, k = 2) of one input x (N, 12), Sum and
    Mean of three inputs (one broadcast), concatenated;
    the input holds exact halves for Round. The input and onnxruntime's output are saved
    beside it (`unary.input.npy`, `.output.npy`)."""
    import onnxruntime as ort
    rng = np.random.default_rng(2029)
    n = helper.make_node
    ops = [("Sin", {}), ("Cos", {}), ("Floor", {}), ("Ceil", {}), ("Round", {}), ("Sign", {}),
           ("Mish", {}), ("Celu", {"alpha": 0.6}), ("ThresholdedRelu", {"alpha": 0.4})]
    nodes = [n(op, ["x"], [f"y{k}"], **a) for k, (op, a) in enumerate(ops)]
    init_ints = []
    outs = [f"y{k}" for k in range(len(ops))]
    for k, (op, a) in enumerate([("ArgMax", {"axis": 1}), ("ArgMin", {"axis": 1, "select_last_index": 1})]):
        nodes.append(n(op, ["x"], [f"i{k}"], **a))
        nodes.append(n("Cast", [f"i{k}"], [f"c{k}"], to=TensorProto.FLOAT))
        outs.append(f"c{k}")
    for name, value in [("axis1", 1), ("k2", 2)]:
        init_ints.append(numpy_helper.from_array(np.array(value, np.int64), name))
    nodes.append(n("CumSum", ["x", "axis1"], ["cumsum"], exclusive=1, reverse=1))
    nodes.append(n("Trilu", ["x", "k2"], ["lower"], upper=0))
    outs += ["cumsum", "lower"]
    row = numpy_helper.from_array(rng.normal(0, 1.0, (12,)).astype(np.float32), "row")
    nodes.append(n("Sum", ["x", "y0", "row"], ["sum3"]))
    nodes.append(n("Mean", ["x", "y1", "row"], ["mean3"]))
    outs += ["sum3", "mean3"]
    nodes.append(n("Concat", outs, ["y"], axis=1))
    g = helper.make_graph(nodes, "unary",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", None])],
                          initializer=[row] + init_ints)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    save(model, "unary.onnx")
    x = rng.normal(0, 2.0, (4, 12)).astype(np.float32)
    x[0, :6] = [-2.5, -1.5, -0.5, 0.5, 1.5, 0.0]
    x[1, :4] = [3.0, 3.0, -3.0, -3.0]  # ties for ArgMax and ArgMin
    sess = ort.InferenceSession(os.path.join(HERE, "unary.onnx"), providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, "unary.input.npy"), x)
    np.save(os.path.join(HERE, "unary.output.npy"), sess.run(None, {"x": x})[0])


def legacy_upsample_models():
    """Upsample at opset 7 (scales an attribute) and 9 (an input) and Resize at opset 10, each
    nearest and linear, enlarging and shrinking, on one input x (2, 3, 5, 6), flattened and
    concatenated: `upsample7`, `upsample9` and `resize10` (`.onnx`, `.input.npy`,
    `.output.npy`, onnxruntime's output)."""
    import onnxruntime as ort
    rng = np.random.default_rng(2030)
    x = rng.normal(0, 1.0, (2, 3, 5, 6)).astype(np.float32)
    n = helper.make_node
    for name, op, opset in [("upsample7", "Upsample", 7), ("upsample9", "Upsample", 9), ("resize10", "Resize", 10)]:
        init, nodes, outs = [], [], []
        for k, (mode, scales) in enumerate([("nearest", [1, 1, 2, 3]), ("linear", [1, 1, 2, 1.5]),
                                            ("nearest", [1, 1, 0.6, 0.5]), ("linear", [1, 1, 0.6, 0.5])]):
            if op == "Upsample" and min(scales) < 1:
                continue  # Upsample enlarges only
            if opset < 9:
                nodes.append(n(op, ["x"], [f"r{k}"], mode=mode, scales=[float(v) for v in scales]))
            else:
                init.append(numpy_helper.from_array(np.array(scales, np.float32), f"scales{k}"))
                nodes.append(n(op, ["x", f"scales{k}"], [f"r{k}"], mode=mode))
            nodes.append(n("Flatten", [f"r{k}"], [f"f{k}"]))
            outs.append(f"f{k}")
        nodes.append(n("Concat", outs, ["y"], axis=1))
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])], initializer=init)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        onnx.checker.check_model(model)
        save(model, f"{name}.onnx", ir_version=5)
        sess = ort.InferenceSession(os.path.join(HERE, f"{name}.onnx"), providers=["CPUExecutionProvider"])
        np.save(os.path.join(HERE, f"{name}.input.npy"), x)
        np.save(os.path.join(HERE, f"{name}.output.npy"), sess.run(None, {"x": x})[0])


def normal_initializer(rng, name, shape, scale=0.4):
    """An initializer `name` of normal float32 values (mean 0, standard deviation `scale`)."""
    return numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name)


def save_classifier(nodes, init, name, opset, x, classes, ir_version=8):
    """Saves the graph x (N, features) -> logits (N, classes) as `name`.onnx with x and
    onnxruntime's output beside it (`.input.npy`, `.output.npy`)."""
    import onnxruntime as ort
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", x.shape[1]])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])],
                          initializer=init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    onnx.checker.check_model(model)
    save(model, f"{name}.onnx", ir_version)
    sess = ort.InferenceSession(os.path.join(HERE, f"{name}.onnx"), providers=["CPUExecutionProvider"])
    np.save(os.path.join(HERE, f"{name}.input.npy"), x)
    np.save(os.path.join(HERE, f"{name}.output.npy"), sess.run(None, {"x": x})[0])


def reductions_models():
    """ReduceL2, ReduceL1 and ReduceSumSquare (which cbtrain expands into the ops they are made
    of) in a trainable classifier, at opset 13 (axes an attribute) and 18 (an input):
    g = Gemm(x) (N, 16); g / ReduceL2(g) (F.normalize's form), g / ReduceL1(g) and
    ReduceSumSquare(g) / 16 over axis 1, concatenated into a classifier's Gemm:
    `reductions13`, `reductions18` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's
    output)."""
    rng = np.random.default_rng(2031)
    n_in, width, classes, batch = 12, 16, 10, 5
    w1 = rng.normal(0, 0.8, (width, n_in)).astype(np.float32)
    b1 = rng.normal(0, 0.3, (width,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (classes, 2 * width + 1)).astype(np.float32)
    x = rng.normal(0, 2.0, (batch, n_in)).astype(np.float32)
    for opset in (13, 18):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array(1.0 / width, np.float32), "inv_width")]
        n = helper.make_node

        def reduce(op, out):
            if opset >= 18:
                return n(op, ["g", "axis1"], [out], keepdims=1)
            return n(op, ["g"], [out], axes=[1], keepdims=1)

        if opset >= 18:
            init.append(numpy_helper.from_array(np.array([1], np.int64), "axis1"))
        nodes = [
            n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
            reduce("ReduceL2", "l2"), n("Div", ["g", "l2"], ["g_l2"]),
            reduce("ReduceL1", "l1"), n("Div", ["g", "l1"], ["g_l1"]),
            reduce("ReduceSumSquare", "sq"), n("Mul", ["sq", "inv_width"], ["sq_mean"]),
            n("Concat", ["g_l2", "g_l1", "sq_mean"], ["h"], axis=1),
            n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1),
        ]
        name = f"reductions{opset}"
        save_classifier(nodes, init, name, opset, x, classes)


def composites_models():
    """ReduceLogSumExp, ReduceLogSum and Max/Min of one, three and four inputs (which cbtrain
    expands at load into the ops they are made of) in a trainable classifier, at opset 13 (the
    reductions' axes an attribute) and 18 (an input): g = Gemm(x) (N, 16) split into four
    (N, 4); ReduceLogSumExp over axis 1 kept and dropped (of g * 40, where a plain exp would
    overflow), ReduceLogSum of exp(g) (positive), Max(a, b, c), Min(a, b, c, d), Max(a),
    concatenated into a classifier's Gemm: `composites13`, `composites18` (`.onnx`,
    `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2061)
    n_in, width, classes, batch = 12, 16, 10, 5
    w1 = rng.normal(0, 0.8, (width, n_in)).astype(np.float32)
    b1 = rng.normal(0, 0.3, (width,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (classes, 4 * 4 + 4)).astype(np.float32)
    x = rng.normal(0, 2.0, (batch, n_in)).astype(np.float32)
    for opset in (13, 18):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array(40.0, np.float32), "forty"),
                numpy_helper.from_array(np.array([4, 4, 4, 4], np.int64), "quarters"),
                numpy_helper.from_array(np.array([-1, 1], np.int64), "col")]
        n = helper.make_node

        def reduce(op, src, out, keepdims):
            if opset >= 18:
                return n(op, [src, "axis1"], [out], keepdims=keepdims)
            return n(op, [src], [out], axes=[1], keepdims=keepdims)

        if opset >= 18:
            init.append(numpy_helper.from_array(np.array([1], np.int64), "axis1"))
        nodes = [
            n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
            n("Split", ["g", "quarters"], ["a", "b", "c", "d"], axis=1),
            n("Mul", ["g", "forty"], ["big"]),
            reduce("ReduceLogSumExp", "big", "lse_kept", 1),
            reduce("ReduceLogSumExp", "g", "lse_flat", 0),
            n("Reshape", ["lse_flat", "col"], ["lse_col"]),
            n("Exp", ["g"], ["pos"]),
            reduce("ReduceLogSum", "pos", "ls", 1),
            n("Max", ["a", "b", "c"], ["max3"]),
            n("Min", ["a", "b", "c", "d"], ["min4"]),
            n("Max", ["d"], ["max1"]),
            n("Div", ["lse_kept", "forty"], ["lse_scaled"]),
            n("Concat", ["max3", "min4", "max1", "a", "lse_scaled", "lse_col", "ls", "ls"], ["h"], axis=1),
            n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1),
        ]
        name = f"composites{opset}"
        save_classifier(nodes, init, name, opset, x, classes)


def einsum_models():
    """Einsum (which cbtrain rewrites into Transpose, Reshape, MatMul and ReduceSum when it binds
    the graph) in a trainable classifier, at opsets 12 (ReduceSum's axes an attribute) and 17:
    g = Gemm(x) (N, 24) viewed as (N, 2, 3, 4), (N, 4, 6) and (N, 6, 4); attention scores
    bhqd,bhkd->bhqk, a batched product, an ellipsis transpose, a row dot product, a sum and an
    outer product, three operands, the implicit output of ...ij,...jk, and ...ij,jk->...ik with a
    trained (6, 5) weight; flattened and concatenated into a classifier's Gemm:
    `einsum12`, `einsum17` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2077)
    n_in, width, classes, batch = 12, 24, 10, 5
    w1 = rng.normal(0, 0.15, (width, n_in)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (width,)).astype(np.float32)
    we = rng.normal(0, 0.5, (6, 5)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    e = [("att", "bhqd,bhkd->bhqk", ["A", "A"]), ("bmm", "bij,bjk->bik", ["P", "Q"]),
         ("tr", "...ij->...ji", ["P"]), ("dot", "bi,bi->b", ["g", "g"]), ("colsum", "bij->bj", ["Q"]),
         ("three", "bij,bjk,bkl->bil", ["P", "Q", "P"]), ("implicit", "...ij,...jk", ["P", "Q"]),
         ("weighted", "...ij,jk->...ik", ["P", "we"])]
    feats = ["att", "bmm", "tr", "dot", "colsum", "three", "implicit", "weighted", "outer"]
    sizes = {"att": 18, "bmm": 16, "tr": 24, "dot": 1, "colsum": 4, "three": 24, "implicit": 16, "weighted": 20,
             "outer": 16}
    w2 = rng.normal(0, 0.2, (classes, sum(sizes.values()))).astype(np.float32)
    for opset in (12, 17):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                numpy_helper.from_array(we, "we"), numpy_helper.from_array(w2, "w2"),
                numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array([0, 2, 3, 4], np.int64), "s_A"),
                numpy_helper.from_array(np.array([0, 4, 6], np.int64), "s_P"),
                numpy_helper.from_array(np.array([0, 6, 4], np.int64), "s_Q"),
                numpy_helper.from_array(np.array([0, -1], np.int64), "flat")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
                 n("Reshape", ["g", "s_A"], ["A"]), n("Reshape", ["g", "s_P"], ["P"]),
                 n("Reshape", ["g", "s_Q"], ["Q"])]
        nodes += [n("Einsum", ins, [out], equation=eq) for out, eq, ins in e]
        nodes.append(n("Einsum", ["colsum", "colsum"], ["outer"], equation="bi,bj->bij"))
        nodes += [n("Reshape", [f, "flat"], [f + "_flat"]) for f in feats]
        nodes += [n("Concat", [f + "_flat" for f in feats], ["h"], axis=1),
                  n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"einsum{opset}", opset, x, classes)


def onehot_models():
    """OneHot (which cbtrain rewrites into Equal against a range and Where when it binds the
    graph) in a classifier, at opsets 11 and 17: g = Gemm(x) (N, 10), a = ArgMax(g) (int64);
    OneHot(a) on the last axis with float values (0, 1); of a - 10 (negative indices, counted
    from the end) on axis 0 with values (-1, 2); of a + 5 as float indices with a float depth,
    where indices past the depth give rows of the off value; of a as (N, 1) on axis 1:
    `onehot11`, `onehot17` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2083)
    n_in, width, classes, batch = 12, 10, 10, 6
    w1 = rng.normal(0, 0.5, (width, n_in)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (classes, width + 4 * width)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    for opset in (11, 17):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array(10, np.int64), "depth"),
                numpy_helper.from_array(np.array([10.0], np.float32), "depth_f"),
                numpy_helper.from_array(np.array(10, np.int64), "ten"),
                numpy_helper.from_array(np.array(5, np.int64), "five"),
                numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "v01"),
                numpy_helper.from_array(np.array([-1.0, 2.0], np.float32), "v12"),
                numpy_helper.from_array(np.array([0, 1], np.int64), "col"),
                numpy_helper.from_array(np.array([0, -1], np.int64), "flat")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
                 n("ArgMax", ["g"], ["a"], axis=1, keepdims=0),
                 n("OneHot", ["a", "depth", "v01"], ["oh_last"]),
                 n("Sub", ["a", "ten"], ["neg"]),
                 n("OneHot", ["neg", "depth", "v12"], ["oh_first"], axis=0),
                 n("Transpose", ["oh_first"], ["oh_first_t"], perm=[1, 0]),
                 n("Add", ["a", "five"], ["past"]),
                 n("Cast", ["past"], ["past_f"], to=TensorProto.FLOAT),
                 n("OneHot", ["past_f", "depth_f", "v01"], ["oh_past"]),
                 n("Reshape", ["a", "col"], ["a_col"]),
                 n("OneHot", ["a_col", "depth", "v12"], ["oh_mid"], axis=1),
                 n("Reshape", ["oh_mid", "flat"], ["oh_mid_flat"]),
                 n("Concat", ["g", "oh_last", "oh_first_t", "oh_past", "oh_mid_flat"], ["h"], axis=1),
                 n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"onehot{opset}", opset, x, classes)


def gather_elements_models():
    """GatherElements (which cbtrain rewrites into a one-hot selection when it binds the graph)
    in a classifier, at opsets 11 and 17: g = Gemm(x) (N, 10); the score at ArgMin(g) (axis 1,
    as torch.gather of a label's logit); along axis 2 of g viewed as (N, 2, 5) at indices with
    negative ones, and (int32) at indices narrower than the data along axis 1; along axis 1 of
    a (N, 5, 2) view (constant indices expanded to the batch): `gather11`, `gather17` (`.onnx`,
    `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2089)
    n_in, width, classes, batch = 12, 10, 10, 6
    w1 = rng.normal(0, 0.5, (width, n_in)).astype(np.float32)
    idx = {"neg": (rng.integers(-5, 5, (1, 2, 5)).astype(np.int64), "g25", 2),
           "narrow": (rng.integers(-5, 5, (1, 1, 4)).astype(np.int32), "g25", 2),
           "mid": (rng.integers(0, 5, (1, 3, 2)).astype(np.int64), "g52", 1)}
    w2 = rng.normal(0, 0.3, (classes, width + 1 + 10 + 4 + 6)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    for opset in (11, 17):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array([0, 2, 5], np.int64), "s_25"),
                numpy_helper.from_array(np.array([0, 5, 2], np.int64), "s_52"),
                numpy_helper.from_array(np.array([0, -1], np.int64), "flat")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
                 n("ArgMin", ["g"], ["lo"], axis=1, keepdims=1),
                 n("GatherElements", ["g", "lo"], ["at_lo"], axis=1),
                 n("Reshape", ["g", "s_25"], ["g25"]), n("Reshape", ["g", "s_52"], ["g52"]),
                 n("Shape", ["g"], ["g_shape"]),
                 n("Slice", ["g_shape", "zero1", "one1"] if opset >= 10 else ["g_shape"], ["n_batch"])]
        init += [numpy_helper.from_array(np.array([0], np.int64), "zero1"),
                 numpy_helper.from_array(np.array([1], np.int64), "one1")]
        for name, (values, data, axis) in idx.items():
            init += [numpy_helper.from_array(values, f"{name}_idx"),
                     numpy_helper.from_array(np.array(values.shape[1:], np.int64), f"{name}_rest")]
            nodes += [n("Concat", ["n_batch", f"{name}_rest"], [f"{name}_shape"], axis=0),
                      n("Expand", [f"{name}_idx", f"{name}_shape"], [f"{name}_full"]),
                      n("GatherElements", [data, f"{name}_full"], [name], axis=axis),
                      n("Reshape", [name, "flat"], [name + "_flat"])]
        nodes += [n("Concat", ["g", "at_lo", "neg_flat", "narrow_flat", "mid_flat"], ["h"], axis=1),
                  n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"gather{opset}", opset, x, classes)

def recurrent_models():
    """LSTM, GRU and RNN (which cbtrain unrolls over the sequence when it binds the graph) in
    every form it takes, feeding one classifier, on x (N, 6, 5):
    `recurrent14` (opset 14): a bidirectional batch-first LSTM with biases, peepholes and
    initial states (Y, Y_h, Y_c all used); a GRU with linear_before_reset over the
    time-major sequence; a reverse GRU without it, with an initial state and clip; a
    bidirectional RNN of Relu without biases; an LSTM with constant full sequence_lens.
    `recurrent9` (opset 9: Split's sizes and Clip's bounds are attributes there): an LSTM with
    clip and a GRU with Softsign/Tanh.
    Each `.onnx` with `.input.npy` and onnxruntime's `.output.npy`. onnxruntime refuses layout 1,
    so its output comes from the same model with that LSTM time-major between transposes."""
    import onnxruntime as ort
    rng = np.random.default_rng(2045)
    batch, steps, n_in, classes = 4, 6, 5, 10
    x = rng.normal(0, 1.0, (batch, steps, n_in)).astype(np.float32)

    n = helper.make_node
    weights = {}

    def w(name, shape, scale=0.4):  # the same values in the model and its reference
        if name not in weights:
            weights[name] = rng.normal(0, scale, shape).astype(np.float32)
        return numpy_helper.from_array(weights[name], name)

    for opset, reference in ((14, False), (14, True), (9, False)):
        init, nodes, feats = [], [], []
        if not reference:
            weights.clear()  # shared by a model and its reference only

        def const_i64(name, values):
            init.append(numpy_helper.from_array(np.array(values, np.int64), name))
            return name

        def const_i32(name, values):
            init.append(numpy_helper.from_array(np.array(values, np.int32), name))
            return name

        def flatten(value, perm=None):
            src = value
            if perm is not None:
                nodes.append(n("Transpose", [value], [value + "_t"], perm=perm))
                src = value + "_t"
            nodes.append(n("Flatten", [src], [value + "_flat"], axis=1))
            feats.append(value + "_flat")

        nodes.append(n("Transpose", ["x"], ["xt"], perm=[1, 0, 2]))  # (T, N, I)
        if opset == 14:
            h = 3
            init += [w("l1_W", (2, 4 * h, n_in)), w("l1_R", (2, 4 * h, h)), w("l1_B", (2, 8 * h), 0.2),
                     w("l1_P", (2, 3 * h), 0.3)]
            # Initial states made from the data (so any batch size works): Tanh of the mean
            # step times a matrix, (N, 2, h) batch-first, (2, N, h) for the reference.
            init.append(w("s_W", (n_in, 4 * h), 0.5))
            const_i64("s_shape", [0, 4, h])
            nodes += [n("ReduceMean", ["x"], ["x_mean"], axes=[1], keepdims=0),
                      n("MatMul", ["x_mean", "s_W"], ["s_lin"]), n("Tanh", ["s_lin"], ["s_tanh"]),
                      n("Reshape", ["s_tanh", "s_shape"], ["s_all"]),  # (N, 4, h): h0 of both, c0 of both
                      n("Split", ["s_all", const_i64("s_split", [2, 2])], ["l1_h0bf", "l1_c0bf"], axis=1)]
            if not reference:
                nodes.append(n("LSTM", ["x", "l1_W", "l1_R", "l1_B", "", "l1_h0bf", "l1_c0bf", "l1_P"],
                               ["l1_Y", "l1_Yh", "l1_Yc"], hidden_size=h, direction="bidirectional", layout=1))
            else:
                nodes += [n("Transpose", ["l1_h0bf"], ["l1_h0"], perm=[1, 0, 2]),
                          n("Transpose", ["l1_c0bf"], ["l1_c0"], perm=[1, 0, 2])]
                nodes.append(n("LSTM", ["xt", "l1_W", "l1_R", "l1_B", "", "l1_h0", "l1_c0", "l1_P"],
                               ["l1_Ytm", "l1_Yhtm", "l1_Yctm"], hidden_size=h, direction="bidirectional"))
                nodes += [n("Transpose", ["l1_Ytm"], ["l1_Y"], perm=[2, 0, 1, 3]),
                          n("Transpose", ["l1_Yhtm"], ["l1_Yh"], perm=[1, 0, 2]),
                          n("Transpose", ["l1_Yctm"], ["l1_Yc"], perm=[1, 0, 2])]
            flatten("l1_Y"), flatten("l1_Yh"), flatten("l1_Yc")
            g = 4
            init += [w("g1_W", (1, 3 * g, n_in)), w("g1_R", (1, 3 * g, g)), w("g1_B", (1, 6 * g), 0.2)]
            nodes.append(n("GRU", ["xt", "g1_W", "g1_R", "g1_B"], ["g1_Y", "g1_Yh"], hidden_size=g,
                           linear_before_reset=1))
            flatten("g1_Y", [2, 0, 1, 3]), flatten("g1_Yh", [1, 0, 2])
            init += [w("g2_W", (1, 3 * g, n_in)), w("g2_R", (1, 3 * g, g)), w("g2_B", (1, 6 * g), 0.2),
                     w("g2_sW", (n_in, g), 0.5)]
            const_i64("g2_shape", [1, -1, g])
            nodes += [n("MatMul", ["x_mean", "g2_sW"], ["g2_lin"]), n("Reshape", ["g2_lin", "g2_shape"], ["g2_h0"])]
            nodes.append(n("GRU", ["xt", "g2_W", "g2_R", "g2_B", "", "g2_h0"], ["", "g2_Yh"], hidden_size=g,
                           direction="reverse", clip=0.8))
            flatten("g2_Yh", [1, 0, 2])
            r = 3
            init += [w("r1_W", (2, r, n_in)), w("r1_R", (2, r, r))]
            nodes.append(n("RNN", ["xt", "r1_W", "r1_R"], ["r1_Y"], hidden_size=r, direction="bidirectional",
                           activations=["Relu", "Relu"]))
            flatten("r1_Y", [2, 0, 1, 3])
            init += [w("l2_W", (1, 4 * h, n_in)), w("l2_R", (1, 4 * h, h)), w("l2_B", (1, 8 * h), 0.2)]
            # sequence_lens as exporters write it: the full length for each sample of the batch.
            nodes += [n("Shape", ["x"], ["x_shape"]),
                      n("Slice", ["x_shape", const_i64("zero", [0]), const_i64("one", [1])], ["n_batch"]),
                      n("Expand", [const_i32("full_len", [steps]), "n_batch"], ["l2_lens"])]
            nodes.append(n("LSTM", ["xt", "l2_W", "l2_R", "l2_B", "l2_lens"], ["l2_Y"], hidden_size=h))
            flatten("l2_Y", [2, 0, 1, 3])
        else:
            h = 4
            init += [w("l1_W", (1, 4 * h, n_in)), w("l1_R", (1, 4 * h, h)), w("l1_B", (1, 8 * h), 0.2)]
            nodes.append(n("LSTM", ["xt", "l1_W", "l1_R", "l1_B"], ["l1_Y", "l1_Yh"], hidden_size=h, clip=0.7))
            flatten("l1_Y", [2, 0, 1, 3]), flatten("l1_Yh", [1, 0, 2])
            init += [w("g1_W", (2, 3 * h, n_in)), w("g1_R", (2, 3 * h, h))]
            nodes.append(n("GRU", ["xt", "g1_W", "g1_R"], ["g1_Y"], hidden_size=h, direction="bidirectional",
                           activations=["Softsign", "Tanh", "Softsign", "Tanh"]))
            flatten("g1_Y", [2, 0, 1, 3])
        nodes.append(n("Concat", feats, ["feats"], axis=1))
        name = f"recurrent{opset}" + ("_reference" if reference else "")
        # The head's width: the features' total, from ONNX's shape inference of the model without it.
        probe = onnx.shape_inference.infer_shapes(helper.make_model(
            helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", steps, n_in])],
                              [helper.make_tensor_value_info("feats", TensorProto.FLOAT, None)], initializer=init),
            opset_imports=[helper.make_opsetid("", opset)]))
        width = probe.graph.output[0].type.tensor_type.shape.dim[1].dim_value
        assert width > 0, "shape inference did not find the features' width"
        init += [w(f"head_W{opset}", (classes, width), 0.3),
                 numpy_helper.from_array(np.zeros(classes, np.float32), "head_b")]
        nodes.append(n("Gemm", ["feats", f"head_W{opset}", "head_b"], ["logits"], transB=1))
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", steps, n_in])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])],
                              initializer=init)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        onnx.checker.check_model(model)
        if not reference:
            save(model, f"{name}.onnx")
            np.save(os.path.join(HERE, f"{name}.input.npy"), x)
        if opset == 9 or reference:
            model.ir_version = 8
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            np.save(os.path.join(HERE, f"recurrent{opset}.output.npy"), sess.run(None, {"x": x})[0])


def top_k_models():
    """TopK in a classifier at opsets 10 (K an input, always the largest) and 11 (largest and
    smallest): g = Gemm(x) (N, 24); the 6 largest of g along axis 1 and their indices (cast to
    float, scaled); g viewed as (N, 4, 6), its 2 largest along the middle axis; at opset 11 the 4
    smallest of g (its indices unused): `topk10`, `topk11` (`.onnx`,
    `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2111)
    n_in, width, classes, batch = 12, 24, 10, 6
    w1 = rng.normal(0, 0.5, (width, n_in)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    for opset in (10, 11):
        features = 6 + 6 + 12 + (4 if opset >= 11 else 0)
        w2 = rng.normal(0, 0.3, (classes, features)).astype(np.float32)
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array([6], np.int64), "k6"),
                numpy_helper.from_array(np.array([2], np.int64), "k2"),
                numpy_helper.from_array(np.array([0, 4, 6], np.int64), "s_46"),
                numpy_helper.from_array(np.array([0, -1], np.int64), "flat"),
                numpy_helper.from_array(np.array(0.05, np.float32), "tenth")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
                 n("TopK", ["g", "k6"], ["top6", "top6_at"], axis=1),
                 n("Cast", ["top6_at"], ["top6_atf"], to=TensorProto.FLOAT),
                 n("Mul", ["top6_atf", "tenth"], ["top6_pos"]),
                 n("Reshape", ["g", "s_46"], ["g46"]),
                 n("TopK", ["g46", "k2"], ["mid2", "mid2_at"], axis=-2),
                 n("Reshape", ["mid2", "flat"], ["mid2_flat"])]
        parts = ["top6", "top6_pos", "mid2_flat"]
        if opset >= 11:
            init.append(numpy_helper.from_array(np.array([4], np.int64), "k4"))
            nodes.append(n("TopK", ["g", "k4"], ["low4", "low4_at"], axis=1, largest=0, sorted=1))
            parts.append("low4")
        nodes += [n("Concat", parts, ["h"], axis=1), n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"topk{opset}", opset, x, classes)


def scatter_elements_models():
    """ScatterElements in a classifier: g = Gemm(x) (N, 10), u = Gemm(x) (N, 4); g with u written
    at columns (7, 2, -1, 4) (constant indices expanded to the batch) at opsets 9 (as Scatter) and
    11; at opset 16 also g with u added at columns (1, 1, 3, -7) (reduction add, a repeated
    column): `scatter9`, `scatter11`, `scatter16` (`.onnx`, `.input.npy`, `.output.npy`,
    onnxruntime's output)."""
    rng = np.random.default_rng(2137)
    n_in, width, classes, batch = 12, 10, 10, 6
    w1 = rng.normal(0, 0.5, (width, n_in)).astype(np.float32)
    wu = rng.normal(0, 0.5, (4, n_in)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    for opset in (9, 11, 16):
        w2 = rng.normal(0, 0.3, (classes, width * (2 if opset >= 16 else 1))).astype(np.float32)
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
                numpy_helper.from_array(wu, "wu"), numpy_helper.from_array(np.zeros(4, np.float32), "bu"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array([[7, 2, -1, 4]], np.int64), "cols")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1), n("Gemm", ["x", "wu", "bu"], ["u"], transB=1),
                 n("Shape", ["u"], ["u_shape"]), n("Expand", ["cols", "u_shape"], ["cols_full"]),
                 n("Scatter" if opset < 11 else "ScatterElements", ["g", "cols_full", "u"], ["written"], axis=1)]
        parts = ["written"]
        if opset >= 16:
            init.append(numpy_helper.from_array(np.array([[1, 1, 3, -7]], np.int64), "cols_rep"))
            nodes += [n("Expand", ["cols_rep", "u_shape"], ["cols_rep_full"]),
                      n("ScatterElements", ["g", "cols_rep_full", "u"], ["added"], axis=1, reduction="add")]
            parts.append("added")
        nodes += [n("Concat", parts, ["h"], axis=1), n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"scatter{opset}", opset, x, classes)


def gather_scatter_nd_models():
    """GatherND and ScatterND in a classifier, on the features-major view of Gemm outputs
    (g (N, 10) and u (N, 4) transposed): rows (7, -3, 2) of g^T gathered (GatherND, k = 1);
    u^T written at rows (7, 2, -1, 4) of g^T (ScatterND); at opset 16 also u^T added at rows
    (1, 1, 3, -7) (reduction add, a repeated row) and g viewed as (N, 2, 5) gathered at (0, 4),
    (1, 1), (0, 0) of each sample (batch_dims 1, constant indices expanded to the batch):
    `nd11`, `nd16` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2153)
    n_in, width, classes, batch = 12, 10, 10, 6
    w1 = rng.normal(0, 0.5, (width, n_in)).astype(np.float32)
    wu = rng.normal(0, 0.5, (4, n_in)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    for opset in (11, 16):
        features = 3 + width + (width + 3 if opset >= 16 else 0)
        w2 = rng.normal(0, 0.3, (classes, features)).astype(np.float32)
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
                numpy_helper.from_array(wu, "wu"), numpy_helper.from_array(np.zeros(4, np.float32), "bu"),
                numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
                numpy_helper.from_array(np.array([[7], [-3], [2]], np.int64), "rows3"),
                numpy_helper.from_array(np.array([[7], [2], [-1], [4]], np.int64), "rows4")]
        nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1), n("Gemm", ["x", "wu", "bu"], ["u"], transB=1),
                 n("Transpose", ["g"], ["gT"], perm=[1, 0]), n("Transpose", ["u"], ["uT"], perm=[1, 0]),
                 n("GatherND", ["gT", "rows3"], ["picked"]), n("Transpose", ["picked"], ["picked_T"], perm=[1, 0]),
                 n("ScatterND", ["gT", "rows4", "uT"], ["written"]),
                 n("Transpose", ["written"], ["written_T"], perm=[1, 0])]
        parts = ["picked_T", "written_T"]
        if opset >= 16:
            init += [numpy_helper.from_array(np.array([[1], [1], [3], [-7]], np.int64), "rows_rep"),
                     numpy_helper.from_array(np.array([[[0, 4], [1, 1], [0, 0]]], np.int64), "pairs"),
                     numpy_helper.from_array(np.array([0, 2, 5], np.int64), "s_25"),
                     numpy_helper.from_array(np.array([3, 2], np.int64), "pairs_rest"),
                     numpy_helper.from_array(np.array([0], np.int64), "zero1"),
                     numpy_helper.from_array(np.array([1], np.int64), "one1")]
            nodes += [n("ScatterND", ["gT", "rows_rep", "uT"], ["added"], reduction="add"),
                      n("Transpose", ["added"], ["added_T"], perm=[1, 0]),
                      n("Reshape", ["g", "s_25"], ["g25"]), n("Shape", ["g"], ["g_shape"]),
                      n("Slice", ["g_shape", "zero1", "one1"], ["n_batch"]),
                      n("Concat", ["n_batch", "pairs_rest"], ["pairs_shape"], axis=0),
                      n("Expand", ["pairs", "pairs_shape"], ["pairs_full"]),
                      n("GatherND", ["g25", "pairs_full"], ["per_sample"], batch_dims=1)]
            parts += ["added_T", "per_sample"]
        nodes += [n("Concat", parts, ["h"], axis=1), n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
        save_classifier(nodes, init, f"nd{opset}", opset, x, classes)


def scatter_reduction_models():
    """ScatterElements and ScatterND with reductions max, min and mul in a classifier at opset 18:
    g = Gemm(x) (N, 10), u = Gemm(x) (N, 4), t = (g[:, 1], u[:, :3]) (N, 4) (its first column is
    g's column 1: a tie with data wherever it wins). ScatterElements at columns (1, 1, 3, -7)
    (repeated; -7 is 3): max and min of t into g, mul of Relu(u) (zeros) into g; ScatterND on the
    features-major views at rows (1, 1, 3, -7): max and min of t^T, mul of u^T into g^T:
    `scatter_reduce18` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2357)
    n_in, width, classes, batch = 12, 10, 10, 6
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node

    def ints(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    init = [normal_initializer(rng, "w1", (width, n_in), 0.4), numpy_helper.from_array(np.zeros(width, np.float32), "b1"),
            normal_initializer(rng, "wu", (4, n_in), 0.4), numpy_helper.from_array(np.zeros(4, np.float32), "bu"),
            normal_initializer(rng, "w2", (classes, 6 * width), 0.2),
            numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
            ints("cols", [[1, 1, 3, -7]]), ints("rows", [[1], [1], [3], [-7]]), ints("zero1", [0]),
            ints("one1", [1]), ints("two1", [2]), ints("three1", [3])]
    nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1), n("Gemm", ["x", "wu", "bu"], ["u"], transB=1),
             n("Slice", ["g", "one1", "two1", "one1"], ["g1"]), n("Slice", ["u", "zero1", "three1", "one1"], ["u3"]),
             n("Concat", ["g1", "u3"], ["t"], axis=1), n("Relu", ["u"], ["u_relu"]),
             n("Shape", ["u"], ["u_shape"]), n("Expand", ["cols", "u_shape"], ["cols_full"]),
             n("Transpose", ["g"], ["gT"], perm=[1, 0]), n("Transpose", ["t"], ["tT"], perm=[1, 0]),
             n("Transpose", ["u"], ["uT"], perm=[1, 0])]
    parts = []
    for r in ("max", "min", "mul"):
        nodes.append(n("ScatterElements", ["g", "cols_full", "u_relu" if r == "mul" else "t"], [f"se_{r}"], axis=1,
                       reduction=r))
        nodes += [n("ScatterND", ["gT", "rows", "uT" if r == "mul" else "tT"], [f"nd_{r}"], reduction=r),
                  n("Transpose", [f"nd_{r}"], [f"nd_{r}_T"], perm=[1, 0])]
        parts += [f"se_{r}", f"nd_{r}_T"]
    nodes += [n("Concat", parts, ["h"], axis=1), n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "scatter_reduce18", 18, x, classes)


def recurrent_lengths_model():
    """LSTM, GRU and RNN over sequences of different lengths, the lengths from the data: x (N, 30)
    viewed as 6 steps of 5 features; a sample's length is the number of its steps whose first
    feature exceeds -0.5 (sequence_lens, int32). A bidirectional LSTM (Y summed over time, Y_h),
    a GRU with linear_before_reset and an initial state (Y_h), a reverse RNN (Y_h), all with
    sequence_lens, feed a classifier: `recurrent_lens` (opset 14; `.onnx`, `.input.npy`,
    `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2203)
    batch, steps, n_in, hidden, classes = 6, 6, 5, 4, 10
    x = rng.normal(0, 1.0, (batch, steps * n_in)).astype(np.float32)
    n = helper.make_node

    def w(name, shape, scale=0.4):
        return normal_initializer(rng, name, shape, scale)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, np.int64), name)

    init = [ints("s_tn", [0, steps, n_in]), ints("zero1", [0]), ints("time_axis", [1]), ints("minus1", [-1]),
            ints("flat", [0, -1]), ints("rows_h", [-1, hidden]), ints("one1", [1]), ints("two1", [2]),
            ints("hid", [hidden]),
            numpy_helper.from_array(np.array([-0.5], np.float32), "threshold"),
            w("lW", (2, 4 * hidden, n_in)), w("lR", (2, 4 * hidden, hidden)), w("lB", (2, 8 * hidden), 0.1),
            w("gW", (1, 3 * hidden, n_in)), w("gR", (1, 3 * hidden, hidden)), w("gB", (1, 6 * hidden), 0.1),
            w("gh0", (1, 1, hidden), 0.3), w("rW", (1, hidden, n_in)), w("rR", (1, hidden, hidden)),
            w("w2", (classes, 6 * hidden), 0.3), numpy_helper.from_array(np.zeros(classes, np.float32), "b2")]
    nodes = [n("Reshape", ["x", "s_tn"], ["xs"]),                                   # (N, T, I)
             n("Transpose", ["xs"], ["xt"], perm=[1, 0, 2]),                       # (T, N, I)
             n("Gather", ["xs", "zero1"], ["first_feature"], axis=2),              # (N, T, 1)
             n("Greater", ["first_feature", "threshold"], ["valid"]),
             n("Cast", ["valid"], ["valid_f"], to=TensorProto.FLOAT),
             n("ReduceSum", ["valid_f", "time_axis"], ["len_f"], keepdims=0),      # (N, 1)
             n("Cast", ["len_f"], ["len_i"], to=TensorProto.INT32),
             n("Reshape", ["len_i", "minus1"], ["lens"]),                           # (N,)
             n("LSTM", ["xt", "lW", "lR", "lB", "lens"], ["lY", "lYh"], hidden_size=hidden, direction="bidirectional"),
             n("ReduceSum", ["lY", "zero1"], ["lY_sum"], keepdims=0),              # (2, N, H)
             n("Transpose", ["lY_sum"], ["lY_n"], perm=[1, 0, 2]), n("Reshape", ["lY_n", "flat"], ["lY_flat"]),
             n("Transpose", ["lYh"], ["lYh_n"], perm=[1, 0, 2]), n("Reshape", ["lYh_n", "flat"], ["lYh_flat"]),
             n("Shape", ["xt"], ["xt_shape"]), n("Slice", ["xt_shape", "one1", "two1"], ["n_batch"]),
             n("Concat", ["one1", "n_batch", "hid"], ["h0_shape"], axis=0),
             n("Expand", ["gh0", "h0_shape"], ["gh0_full"]),
             n("GRU", ["xt", "gW", "gR", "gB", "lens", "gh0_full"], ["", "gYh"], hidden_size=hidden,
               linear_before_reset=1),
             n("Reshape", ["gYh", "rows_h"], ["gYh_flat"]),
             n("RNN", ["xt", "rW", "rR", "", "lens"], ["", "rYh"], hidden_size=hidden, direction="reverse"),
             n("Reshape", ["rYh", "rows_h"], ["rYh_flat"]),
             n("Concat", ["lY_flat", "lYh_flat", "gYh_flat", "rYh_flat"], ["h"], axis=1),
             n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "recurrent_lens", 14, x, classes)

def recurrent_activations_model():
    """LSTM, GRU and RNN with the activations that take parameters and LSTM's input_forget
    (Keras's older LSTM: HardSigmoid gates), feeding a classifier: x (N, 30) viewed as 6 steps of
    5 features, time-major; an LSTM with input_forget and HardSigmoid (0.2, 0.5), Tanh, Tanh; a
    GRU with LeakyRelu (0.1) and ScaledTanh (0.8, 1.3); a bidirectional RNN with Elu (0.9)
    forward and Affine (0.7, 0.1) backward: `recurrent_acts` (opset 14; `.onnx`, `.input.npy`,
    `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2239)
    batch, steps, n_in, hidden, classes = 6, 6, 5, 4, 10
    x = rng.normal(0, 1.0, (batch, steps * n_in)).astype(np.float32)
    n = helper.make_node

    def w(name, shape, scale=0.4):
        return normal_initializer(rng, name, shape, scale)

    init = [numpy_helper.from_array(np.array([0, steps, n_in], np.int64), "s_tn"),
            numpy_helper.from_array(np.array([-1, hidden], np.int64), "rows_h"),
            numpy_helper.from_array(np.array([0, -1], np.int64), "flat"),
            w("lW", (1, 4 * hidden, n_in)), w("lR", (1, 4 * hidden, hidden)), w("lB", (1, 8 * hidden), 0.1),
            w("gW", (1, 3 * hidden, n_in)), w("gR", (1, 3 * hidden, hidden)), w("gB", (1, 6 * hidden), 0.1),
            w("rW", (2, hidden, n_in)), w("rR", (2, hidden, hidden)), w("rB", (2, 2 * hidden), 0.1),
            w("w2", (classes, 4 * hidden), 0.3), numpy_helper.from_array(np.zeros(classes, np.float32), "b2")]
    nodes = [n("Reshape", ["x", "s_tn"], ["xs"]), n("Transpose", ["xs"], ["xt"], perm=[1, 0, 2]),
             n("LSTM", ["xt", "lW", "lR", "lB"], ["", "lYh"], hidden_size=hidden, input_forget=1,
               activations=["HardSigmoid", "Tanh", "Tanh"], activation_alpha=[0.2], activation_beta=[0.5]),
             n("Reshape", ["lYh", "rows_h"], ["lYh_flat"]),
             n("GRU", ["xt", "gW", "gR", "gB"], ["", "gYh"], hidden_size=hidden,
               activations=["LeakyRelu", "ScaledTanh"], activation_alpha=[0.1, 0.8], activation_beta=[1.3]),
             n("Reshape", ["gYh", "rows_h"], ["gYh_flat"]),
             n("RNN", ["xt", "rW", "rR", "rB"], ["", "rYh"], hidden_size=hidden, direction="bidirectional",
               activations=["Elu", "Affine"], activation_alpha=[0.9, 0.7], activation_beta=[0.1]),
             n("Transpose", ["rYh"], ["rYh_n"], perm=[1, 0, 2]), n("Reshape", ["rYh_n", "flat"], ["rYh_flat"]),
             n("Concat", ["lYh_flat", "gYh_flat", "rYh_flat"], ["h"], axis=1),
             n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "recurrent_acts", 14, x, classes)


def einsum_diagonal_model():
    """Einsum with labels repeated within an operand (diagonals, numpy's einsum) in a classifier
    at opset 13: g = Gemm(x) viewed as (N, 3, 3); its diagonals (bii->bi), traces (bii->b, as
    (N, 1)) and a product with the diagonal of a trained (3, 3) weight (bij,jj->bi):
    `einsum_diag` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2251)
    n_in, classes, batch = 12, 10, 6
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node
    init = [normal_initializer(rng, "w1", (9, n_in), 0.5),
            numpy_helper.from_array(np.zeros(9, np.float32), "b1"),
            normal_initializer(rng, "wd", (3, 3), 0.5),
            normal_initializer(rng, "w2", (classes, 3 + 1 + 3), 0.3),
            numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
            numpy_helper.from_array(np.array([0, 3, 3], np.int64), "s_33"),
            numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1), n("Reshape", ["g", "s_33"], ["g33"]),
             n("Einsum", ["g33"], ["diag"], equation="bii->bi"),
             n("Einsum", ["g33"], ["trace"], equation="bii->b"),
             n("Unsqueeze", ["trace", "axis1"], ["trace_col"]),
             n("Einsum", ["g33", "wd"], ["mixed"], equation="bij,jj->bi"),
             n("Concat", ["diag", "trace_col", "mixed"], ["h"], axis=1),
             n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "einsum_diag", 13, x, classes)


def transformer_ops_models():
    """Attention (opsets 23 and 25), RMSNormalization (23) and Swish (24) in classifiers: x (N, 24)
    viewed as 4 tokens of 6 features. `attention23`: a 3-D grouped-query Attention (2 query heads,
    1 key/value head, value heads of 3, causal, softcap 2.5); a 4-D one with a bool mask computed
    from the data (some rows of some samples wholly false: zeros, ONNX's rule) that also gives its
    probabilities (qk_matmul_output_mode 3); a 4-D one whose float mask is a trained initializer
    (scale 0.3); RMSNormalization over the last axis and over the last two. `swish24`: Swish
    (alpha 1 and 1.7) around a causal Attention. `attention25`: sliding windows (left 1, right 0;
    left 0, right 1) and a causal cross attention of 4 queries over 3 keys. (`.onnx`, `.input.npy`,
    `.output.npy`, onnxruntime's output.)"""
    rng = np.random.default_rng(2297)
    batch, tokens, feat, classes = 6, 4, 6, 10
    x = rng.normal(0, 1.0, (batch, tokens * feat)).astype(np.float32)
    n = helper.make_node

    def w(name, shape, scale=0.5):
        return normal_initializer(rng, name, shape, scale)

    def ints(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    def heads4(src, wname, out, h, d):  # (N, T, F) @ W (F, h*d) -> (N, h, T, d)
        return [n("MatMul", [src, wname], [out + "_p"]), n("Reshape", [out + "_p", f"s_{h}_{d}"], [out + "_r"]),
                n("Transpose", [out + "_r"], [out], perm=[0, 2, 1, 3])]

    common = [ints("s_tok", [0, tokens, feat]), ints("flat", [0, -1])]
    for opset in (23, 24, 25):
        name = {23: "attention23", 24: "swish24", 25: "attention25"}[opset]
        init = list(common)
        nodes = [n("Reshape", ["x", "s_tok"], ["t"])]
        feats = []
        if opset == 23:
            init += [w("wq", (feat, 8)), w("wk", (feat, 4)), w("wv", (feat, 3)),
                     w("wq2", (feat, 6)), w("wk2", (feat, 6)), w("wv2", (feat, 6)), w("wm", (feat, 1)),
                     w("bias_mask", (tokens, tokens), 0.7), w("rms_scale", (6,), 0.3), w("rms_scale2", (tokens, 6), 0.3),
                     ints("s_2_3", [0, tokens, 2, 3])]
            nodes += [n("MatMul", ["t", "wq"], ["q3"]), n("MatMul", ["t", "wk"], ["k3"]), n("MatMul", ["t", "wv"], ["v3"]),
                      n("Attention", ["q3", "k3", "v3"], ["a1"], q_num_heads=2, kv_num_heads=1, is_causal=1,
                        softcap=2.5)]
            nodes += heads4("t", "wq2", "q4", 2, 3) + heads4("t", "wk2", "k4", 2, 3) + heads4("t", "wv2", "v4", 2, 3)
            # mask (N, 1, T, T): key j visible to query i where m[n, j] + 0.3 * i > 0 (some rows empty)
            init += [numpy_helper.from_array(np.arange(tokens, dtype=np.float32).reshape(tokens, 1) * 0.3, "rowoff")]
            nodes += [n("MatMul", ["t", "wm"], ["m"]), n("Transpose", ["m"], ["mt"], perm=[0, 2, 1]),
                      n("Unsqueeze", ["mt", "ax1"], ["mu"]), n("Add", ["mu", "rowoff"], ["ms"]),
                      n("Greater", ["ms", "zero_f"], ["mask"]),
                      n("Attention", ["q4", "k4", "v4", "mask"], ["a2", "", "", "p2"], qk_matmul_output_mode=3),
                      n("Attention", ["q4", "k4", "v4", "bias_mask"], ["a3"], scale=0.3),
                      n("Transpose", ["a2"], ["a2t"], perm=[0, 2, 1, 3]), n("Reshape", ["a2t", "flat"], ["a2f"]),
                      n("Reshape", ["p2", "flat"], ["p2f"]),
                      n("Transpose", ["a3"], ["a3t"], perm=[0, 2, 1, 3]), n("Reshape", ["a3t", "s_tok"], ["a3r"]),
                      n("RMSNormalization", ["a3r", "rms_scale"], ["r1"], epsilon=1e-3),
                      n("RMSNormalization", ["a1", "rms_scale2"], ["r2"], axis=1),
                      n("Reshape", ["r1", "flat"], ["r1f"]), n("Reshape", ["r2", "flat"], ["r2f"])]
            init += [ints("ax1", [1]), numpy_helper.from_array(np.array(0.0, np.float32), "zero_f")]
            feats = ["a2f", "p2f", "r1f", "r2f"]
        elif opset == 24:
            init += [w("wq", (feat, 6)), w("wk", (feat, 6)), w("wv", (feat, 6))]
            nodes += [n("Swish", ["t"], ["sw"]), n("MatMul", ["sw", "wq"], ["q"]), n("MatMul", ["sw", "wk"], ["k"]),
                      n("MatMul", ["sw", "wv"], ["v"]),
                      n("Attention", ["q", "k", "v"], ["a"], q_num_heads=3, kv_num_heads=3, is_causal=1),
                      n("Swish", ["a"], ["as"], alpha=1.7), n("Reshape", ["as", "flat"], ["af"])]
            feats = ["af"]
        else:
            init += [w("wq", (feat, 6)), w("wk", (feat, 6)), w("wv", (feat, 6)), ints("first3", [0]),
                     ints("end3", [3]), ints("ax1", [1])]
            nodes += [n("MatMul", ["t", "wq"], ["q"]), n("MatMul", ["t", "wk"], ["k"]), n("MatMul", ["t", "wv"], ["v"]),
                      n("Attention", ["q", "k", "v"], ["a1"], q_num_heads=2, kv_num_heads=2, left_window_size=1,
                        right_window_size=0),
                      n("Attention", ["q", "k", "v"], ["a2"], q_num_heads=3, kv_num_heads=3, left_window_size=0,
                        right_window_size=1),
                      n("Slice", ["k", "first3", "end3", "ax1"], ["k3"]), n("Slice", ["v", "first3", "end3", "ax1"], ["v3"]),
                      n("Attention", ["q", "k3", "v3"], ["a3"], q_num_heads=2, kv_num_heads=2, is_causal=1),
                      n("Reshape", ["a1", "flat"], ["a1f"]), n("Reshape", ["a2", "flat"], ["a2f"]),
                      n("Reshape", ["a3", "flat"], ["a3f"])]
            feats = ["a1f", "a2f", "a3f"]
        nodes += [n("Concat", feats, ["h"], axis=1)]
        width = {23: 24 + 2 * tokens * tokens + 24 + 24, 24: 24, 25: 72}[opset]
        init += [w("w_out", (classes, width), 0.3), numpy_helper.from_array(np.zeros(classes, np.float32), "b_out")]
        nodes += [n("Gemm", ["h", "w_out", "b_out"], ["logits"], transB=1)]
        save_classifier(nodes, init, name, opset, x, classes, ir_version=10 + opset - 22 if opset > 22 else 8)


def sequence_split_model():
    """SplitToSequence read only by SequenceAt at constant positions (the dynamo exporter's
    torch.split and torch.chunk without its optimiser) in a classifier at opset 20: g = Gemm(x)
    (N, 12) split by a chunk size of 5 (pieces 5, 5, 2; positions 0 and -1), into pieces of one
    without keeping the axis (position 3), and by sizes 4 and 8 (position 1): `sequence_split`
    (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2311)
    n_in, classes, batch = 10, 10, 6
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node

    def ints(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    init = [normal_initializer(rng, "w1", (12, n_in), 0.5), numpy_helper.from_array(np.zeros(12, np.float32), "b1"),
            normal_initializer(rng, "w2", (classes, 5 + 2 + 1 + 8), 0.3),
            numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
            ints("five", 5), ints("sizes", [4, 8]), ints("p0", 0), ints("p1", 1), ints("p3", 3), ints("last", -1),
            ints("axis1", [1])]
    nodes = [n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
             n("SplitToSequence", ["g", "five"], ["chunks"], axis=1),
             n("SequenceAt", ["chunks", "p0"], ["c0"]), n("SequenceAt", ["chunks", "last"], ["c_last"]),
             n("SplitToSequence", ["g"], ["ones"], axis=1, keepdims=0),
             n("SequenceAt", ["ones", "p3"], ["o3"]), n("Unsqueeze", ["o3", "axis1"], ["o3u"]),
             n("SplitToSequence", ["g", "sizes"], ["parts"], axis=-1), n("SequenceAt", ["parts", "p1"], ["s1"]),
             n("Concat", ["c0", "c_last", "o3u", "s1"], ["h"], axis=1),
             n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "sequence_split", 20, x, classes, ir_version=9)


def rotary_embedding_model():
    """RotaryEmbedding (opset 23) in a classifier: g = Gemm(x) (N, 32) viewed as 4 tokens of 8;
    position_ids computed from the data (floor(2|x[:, :4]|) mod 6); constant caches of 6
    positions. A 3-D form (num_heads 2, halves, the whole head of 4 turned) and a 4-D form (2 heads
    of 4, interleaved, rotary_embedding_dim 2): `rotary23` (`.onnx`, `.input.npy`,
    `.output.npy`, onnxruntime's output)."""
    rng = np.random.default_rng(2333)
    n_in, classes, batch, positions = 10, 10, 6, 6
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    n = helper.make_node

    def ints(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    def caches(dim, tag):
        angle = np.arange(positions)[:, None] / (10000.0 ** (np.arange(dim) / dim))[None, :]
        return [n("Constant", [], [f"cos{tag}"], value=numpy_helper.from_array(np.cos(angle).astype(np.float32))),
                n("Constant", [], [f"sin{tag}"], value=numpy_helper.from_array(np.sin(angle).astype(np.float32)))]

    init = [normal_initializer(rng, "w1", (32, n_in), 0.5), numpy_helper.from_array(np.zeros(32, np.float32), "b1"),
            normal_initializer(rng, "w2", (classes, 64), 0.3), numpy_helper.from_array(np.zeros(classes, np.float32), "b2"),
            ints("s_tok", [0, 4, 8]), ints("s_heads", [0, 4, 2, 4]), ints("flat", [0, -1]), ints("zero", [0]),
            ints("four", [4]), ints("one", [1]), ints("six", 6), numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    nodes = caches(2, "2") + caches(1, "1") + [
        n("Gemm", ["x", "w1", "b1"], ["g"], transB=1), n("Reshape", ["g", "s_tok"], ["t"]),
        n("Slice", ["x", "zero", "four", "one"], ["xp"]), n("Abs", ["xp"], ["xa"]), n("Mul", ["xa", "two"], ["x2"]),
        n("Floor", ["x2"], ["xf"]), n("Cast", ["xf"], ["xi"], to=TensorProto.INT64), n("Mod", ["xi", "six"], ["pos"]),
        n("RotaryEmbedding", ["t", "cos2", "sin2", "pos"], ["r3"], num_heads=2),
        n("Reshape", ["t", "s_heads"], ["th"]), n("Transpose", ["th"], ["t4"], perm=[0, 2, 1, 3]),
        n("RotaryEmbedding", ["t4", "cos1", "sin1", "pos"], ["r4"], interleaved=1, rotary_embedding_dim=2),
        n("Reshape", ["r3", "flat"], ["r3f"]), n("Reshape", ["r4", "flat"], ["r4f"]),
        n("Concat", ["r3f", "r4f"], ["h"], axis=1), n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1)]
    save_classifier(nodes, init, "rotary23", 23, x, classes, ir_version=11)

def lrn_models():
    """LRN (which cbtrain expands at load into Mul, Unsqueeze, Reshape, AveragePool, Shape, Add,
    Pow and Div) in a small convolutional classifier, at opset 11 (Unsqueeze's axes an
    attribute) and 13 (an input): x (N, 36) viewed as 1x6x6, Conv to 4 channels, LRN (size 3,
    the defaults), Relu, Conv to 6, LRN (size 5, alpha 0.01, beta 0.5, bias 2), Flatten, Gemm: `lrn11`, `lrn13` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's output;
    onnxruntime takes odd sizes only, the C++ tests check an even one against the formula)."""
    rng = np.random.default_rng(2311)
    classes, batch = 10, 5
    w1 = rng.normal(0, 0.6, (4, 1, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.4, (6, 4, 3, 3)).astype(np.float32)
    w3 = rng.normal(0, 0.1, (classes, 6 * 36)).astype(np.float32)
    x = rng.normal(0, 1.5, (batch, 36)).astype(np.float32)
    for opset in (11, 13):
        init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
                numpy_helper.from_array(w3, "w3"), numpy_helper.from_array(np.zeros(classes, np.float32), "b3"),
                numpy_helper.from_array(np.array([-1, 1, 6, 6], np.int64), "image")]
        n = helper.make_node
        nodes = [
            n("Reshape", ["x", "image"], ["img"]),
            n("Conv", ["img", "w1"], ["c1"], pads=[1, 1, 1, 1]),
            n("LRN", ["c1"], ["n1"], size=3),
            n("Relu", ["n1"], ["r1"]),
            n("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
            n("LRN", ["c2"], ["n2"], size=5, alpha=0.01, beta=0.5, bias=2.0),
            n("Flatten", ["n2"], ["flat"]),
            n("Gemm", ["flat", "w3", "b3"], ["logits"], transB=1),
        ]
        save_classifier(nodes, init, f"lrn{opset}", opset, x, classes)


def shrink_model():
    """Shrink (which cbtrain expands at load into Less, Greater, Add, Sub and Where) in a
    classifier, at opset 9 where it came: g = Gemm(x) (N, 16), Shrink with the defaults (lambd
    0.5, bias 0: PyTorch's Hardshrink) and with lambd 0.3, bias 0.3 (Softshrink), concatenated
    into a classifier's Gemm: `shrink9` (`.onnx`, `.input.npy`, `.output.npy`, onnxruntime's
    output)."""
    rng = np.random.default_rng(2333)
    n_in, width, classes, batch = 12, 16, 10, 5
    w1 = rng.normal(0, 0.8, (width, n_in)).astype(np.float32)
    b1 = rng.normal(0, 0.3, (width,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (classes, 2 * width)).astype(np.float32)
    x = rng.normal(0, 1.0, (batch, n_in)).astype(np.float32)
    init = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
            numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(classes, np.float32), "b2")]
    n = helper.make_node
    nodes = [
        n("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
        n("Shrink", ["g"], ["hard"]),
        n("Shrink", ["g"], ["soft"], lambd=0.3, bias=0.3),
        n("Concat", ["hard", "soft"], ["h"], axis=1),
        n("Gemm", ["h", "w2", "b2"], ["logits"], transB=1),
    ]
    save_classifier(nodes, init, "shrink9", 9, x, classes)


if __name__ == "__main__":
    # Every fixture, or those named (python3 make_fixtures.py lrn_models ...).
    os.makedirs(HERE, exist_ok=True)
    makers = [
        attrs_model, constants_model, legacy_mlp_model, activations_model, norms_model, resize_model, unary_model,
        legacy_upsample_models, reductions_models, recurrent_models, composites_models, einsum_models, onehot_models,
        gather_elements_models, top_k_models, scatter_elements_models, gather_scatter_nd_models,
        scatter_reduction_models, recurrent_lengths_model, recurrent_activations_model, einsum_diagonal_model,
        transformer_ops_models, sequence_split_model, rotary_embedding_model, lrn_models, shrink_model
    ]
    wanted = set(sys.argv[1:])
    for make in makers:
        if not wanted or make.__name__ in wanted:
            make()
