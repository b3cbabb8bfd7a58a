#!/usr/bin/env python3
"""Generates the malformed-model corpus of tests/onnx_import/corpus and its manifest expected.tsv.

Every file starts from one tiny valid model (Conv + Relu + Flatten + Gemm with initializers) and
breaks it in one way. expected.tsv lists, per file, a substring the error message must contain and
the command that must reject it with exit code 2: "inspect" (import and validation) or "plan"
(`inspect --plan`, which binds the graph and runs shape inference). corpus_test.cpp checks them.

The files are committed; rerun this script only when the corpus must change. With
--cbtrain PATH it also runs every case through cbtrain and reports the ones that do not fail as
expected (the bit flips are chosen in structural bytes so that their effect is deterministic).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# The side file of the external-data cases: 16 bytes, i.e. 4 floats (the Gemm bias is 3).
WEIGHTS_BIN = "weights.bin"


def base_model():
    """x (N, 1, 6, 6) -> Conv 3x3 (2 channels) -> Relu -> Flatten -> Gemm (32 -> 3) -> y (N, 3)."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "conv_w"),
        numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "conv_b"),
        numpy_helper.from_array(rng.standard_normal((3, 32)).astype(np.float32), "fc_w"),
        numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "fc_b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv", kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "corpus",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    m.producer_name = "make_corpus"
    m.producer_version = "1"
    return m


def init(m, name):
    return next(t for t in m.graph.initializer if t.name == name)


def node(m, name):
    return next(n for n in m.graph.node if n.name == name)


def external(m, location, offset=None, length=None):
    """Moves the Gemm bias (3 floats, 12 bytes) to external data at location."""
    t = init(m, "fc_b")
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return m


def flip(data, pattern, mask, at):
    """XORs mask into byte `at` of pattern, which must occur exactly once in data."""
    assert data.count(pattern) == 1, pattern
    pos = data.index(pattern) + at
    return data[:pos] + bytes([data[pos] ^ mask]) + data[pos + 1:]


CASES = []  # (file name, bytes, expected substring, command)


def case(name, model_or_bytes, expected, command="inspect"):
    data = model_or_bytes if isinstance(model_or_bytes, bytes) else model_or_bytes.SerializeToString()
    assert len(data) < 8192, name
    CASES.append((name + ".onnx", data, expected, command))


def build_cases():
    valid = base_model().SerializeToString()
    onnx.checker.check_model(base_model(), full_check=True)

    # Unreadable files.
    case("empty", b"", "the file is empty")
    case("garbage_text", b"this is not an ONNX model at all\n", "missing ir_version (not an ONNX model?)")
    case("garbage_ff", b"\xff" * 64, "protobuf parsing failed")
    # Zero bytes parse as an empty message (tag 0 ends it).
    case("garbage_zeros", b"\x00" * 64, "missing ir_version")
    # A cut just before the graph field leaves a well-formed message without a graph.
    case("truncated_before_graph", valid[:valid.index(b"\x3a\x81\x06")], "the model has no graph")
    # Truncations inside the graph field (length-delimited, so every cut is a parse error).
    for frac in (0.05, 0.25, 0.5, 0.75, 0.99):
        cut = max(1, int(len(valid) * frac))
        case(f"truncated_{int(frac * 100):02d}pct", valid[:cut], "protobuf parsing failed")
    case("truncated_last_byte", valid[:-1], "protobuf parsing failed")

    # Bit flips in structural bytes, each with a known effect.
    # The graph field's length varint (after tag 0x3a) gains a high bit: it runs past the file's end.
    case("flip_graph_length", flip(valid, b"\x3a\x81\x06", 0x10, 2), "protobuf parsing failed")
    # The ir_version tag 0x08 becomes 0x0f: wire type 7 does not exist.
    case("flip_ir_version_wiretype", flip(valid, b"\x08\x08", 0x07, 0), "protobuf parsing failed")
    # ir_version 8 becomes 0x48 = 72.
    case("flip_ir_version_value", flip(valid, b"\x08\x08", 0x40, 1), "IR version 72")
    # op_type "Relu" becomes "Rdlu".
    case("flip_op_type", flip(valid, b"\"\x04Relu", 0x01, 3), "unsupported on cpu: Rdlu")
    # The Relu's input "c" becomes "b": nothing produces it.
    case("flip_node_input", flip(valid, b"\n\x01c\x12\x01r", 0x01, 2), "input 'b' is not produced")
    # The opset version 17 becomes 17 ^ 0x20 = 49.
    case("flip_opset_version", flip(valid, b"\x42\x04\n\x00\x10\x11", 0x20, 5), "opset 49")
    # The conv weight's first dim 2 becomes 3: raw_data no longer matches.
    case("flip_initializer_dim", flip(valid, b"\x08\x02\x08\x01\x08\x03\x08\x03", 0x01, 1),
         "raw_data has 72 bytes, expected 108")
    # The conv weight's data_type FLOAT (1) becomes 1 ^ 0x08 = 9 (BOOL).
    case("flip_initializer_dtype", flip(valid, b"\x10\x01B\x06conv_w", 0x08, 1), "expected 18 for dims (2, 1, 3, 3) of bool")

    # Tensor data.
    m = base_model()
    init(m, "conv_w").dims[:] = [2, 1, 1 << 40, 1 << 40]
    case("huge_dims_overflow", m, "overflow")
    m = base_model()
    init(m, "conv_w").dims[:] = [1 << 20, 1 << 20, 1, 1]
    case("huge_dims_budget", m, "over the import budget")
    m = base_model()
    init(m, "conv_w").dims[:] = [2, 1, -3, -3]
    case("negative_dims_initializer", m, "negative dimension -3")
    m = base_model()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = -6
    case("negative_dims_input", m, "graph value 'x': negative dimension -6")
    m = base_model()
    init(m, "fc_b").raw_data = b"\x00" * 8
    case("raw_data_short", m, "raw_data has 8 bytes, expected 12")
    m = base_model()
    init(m, "fc_b").raw_data = b"\x00" * 20
    case("raw_data_long", m, "raw_data has 20 bytes, expected 12")
    m = base_model()
    init(m, "fc_b").float_data.extend([1.0, 2.0, 3.0])
    case("raw_data_and_float_data", m, "has both raw_data and 3 typed values")
    m = base_model()
    t = init(m, "fc_b")
    t.ClearField("raw_data")
    t.float_data[:] = [1.0]
    case("float_data_short", m, "float_data has 1 values, expected 3")
    m = base_model()
    t = init(m, "fc_b")
    t.ClearField("raw_data")
    t.int64_data[:] = [1, 2, 3]
    case("typed_field_int64_for_float", m, "float_data has 0 values, expected 3")
    m = base_model()
    init(m, "fc_b").data_type = TensorProto.STRING
    case("dtype_string", m, "string tensors are not supported")
    m = base_model()
    init(m, "fc_b").data_type = TensorProto.BFLOAT16
    case("dtype_bfloat16", m, "BFLOAT16")
    m = base_model()
    init(m, "fc_b").data_type = TensorProto.COMPLEX64
    case("dtype_complex64", m, "COMPLEX64")
    m = base_model()
    init(m, "fc_b").data_type = TensorProto.UNDEFINED
    case("dtype_undefined", m, "element type 0 (UNDEFINED)")

    # Graph structure.
    m = base_model()
    m.graph.node.append(m.graph.node[1])
    case("duplicate_node_output", m, "value 'r' is produced twice")
    m = base_model()
    m.graph.initializer.append(init(m, "fc_b"))
    case("duplicate_initializer", m, "duplicate initializer 'fc_b'")
    m = base_model()
    m.graph.input.append(m.graph.input[0])
    case("duplicate_graph_input", m, "graph input 'x' is listed twice")
    m = base_model()
    node(m, "fc").input[0] = "ghost"
    case("dangling_input", m, "input 'ghost' is not produced")
    m = base_model()
    m.graph.output[0].name = "z"
    case("output_never_produced", m, "graph output 'z' is never produced")
    m = base_model()
    node(m, "conv").input[0] = "r"  # conv -> relu -> conv
    case("cycle", m, "cycle")
    m = base_model()
    m.graph.node.append(helper.make_node("Constant", [], ["fc_b"], name="k", value_float=1.0))
    case("constant_shadows_initializer", m, "two producers")
    m = base_model()
    m.graph.node.append(helper.make_node("Constant", [], ["k"], name="k", value_string="hi"))
    case("constant_value_string", m, "Constant attribute 'value_string' is not supported")
    m = base_model()
    relu = node(m, "relu")
    relu.attribute.append(helper.make_attribute("body", helper.make_graph([], "sub", [], [])))
    case("subgraph_attribute", m, "sub-graph attributes")

    # Versions and domains.
    m = base_model()
    node(m, "relu").domain = "com.microsoft"
    case("unknown_domain", m, "unknown operator domain 'com.microsoft'")
    m = base_model()
    m.graph.node.append(helper.make_node("Normalizer", ["y"], ["yn"], name="norm", domain="ai.onnx.ml"))
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    case("onnx_ml_op", m, "ONNX-ML operators")
    m = base_model()
    m.opset_import[0].version = 26
    case("opset_too_new", m, "opset 26")
    m = base_model()
    m.opset_import[0].version = 6
    case("opset_too_old", m, "opset 6")
    m = base_model()
    m.ir_version = 99
    case("ir_version_too_new", m, "IR version 99")
    m = base_model()
    m.ClearField("ir_version")
    case("ir_version_missing", m, "ir_version")
    m = base_model()
    m.opset_import[0].domain = "com.example"
    case("no_default_opset", m, "default ONNX domain")

    # External data.
    case("external_dotdot", external(base_model(), "../" + WEIGHTS_BIN), "contains '..'")
    case("external_absolute", external(base_model(), "/etc/hostname"), "absolute path")
    case("external_missing_file", external(base_model(), "missing.bin"),
         "cannot open external data 'missing.bin'")
    case("external_offset_past_end", external(base_model(), WEIGHTS_BIN, offset=100), "beyond the end")
    case("external_length_mismatch", external(base_model(), WEIGHTS_BIN, offset=0, length=8),
         "does not match the tensor's size of 12")
    case("external_length_exceeds", external(base_model(), WEIGHTS_BIN, offset=8, length=12), "exceeds")
    m = external(base_model(), WEIGHTS_BIN)
    init(m, "fc_b").external_data[0].key = "where"
    case("external_no_location", m, "no location")

    # Operators the runtime does not have: all of them must be listed.
    m = base_model()
    m.graph.node[1].op_type = "LpNormalization"
    m.graph.node.append(helper.make_node("Hardmax", ["y"], ["h"], name="hm"))
    m.graph.node.append(helper.make_node("Det", ["h"], ["d"], name="det"))
    case("unsupported_ops", m, "unsupported on cpu: Det Hardmax LpNormalization")

    # Shape inference (inspect --plan binds the graph).
    m = base_model()
    a = next(a for a in node(m, "conv").attribute if a.name == "kernel_shape")
    a.CopyFrom(helper.make_attribute("kernel_shape", [3.0, 3.0]))
    case("attr_wrong_type_floats", m, "attribute 'kernel_shape' must be a list of integers", "plan")
    m = base_model()
    a = next(a for a in node(m, "fc").attribute if a.name == "transB")
    a.CopyFrom(helper.make_attribute("transB", "yes"))
    case("attr_wrong_type_string", m, "attribute 'transB' must be an integer", "plan")
    m = base_model()
    node(m, "flatten").attribute[0].CopyFrom(helper.make_attribute("axis", 7))
    case("attr_out_of_range", m, "axis 7 out of range for rank 4", "plan")
    m = base_model()
    w = np.ones((2, 3, 3, 3), np.float32)
    init(m, "conv_w").CopyFrom(numpy_helper.from_array(w, "conv_w"))
    case("conv_weight_channels", m, "weight (2, 3, 3, 3) do not agree", "plan")
    m = base_model()
    init(m, "fc_w").CopyFrom(numpy_helper.from_array(np.ones((3, 30), np.float32), "fc_w"))
    case("gemm_inner_dims", m, "inner dimensions differ", "plan")
    m = base_model()
    m.graph.initializer.append(numpy_helper.from_array(np.array([-1, -1], np.int64), "shape"))
    m.graph.node.insert(3, helper.make_node("Reshape", ["f", "shape"], ["f2"], name="reshape"))
    node(m, "fc").input[0] = "f2"
    case("reshape_two_minus_one", m, "has more than one -1", "plan")
    m = base_model()
    m.graph.initializer.append(numpy_helper.from_array(np.ones((1, 5), np.float32), "extra"))
    m.graph.node.insert(3, helper.make_node("Concat", ["f", "extra"], ["f2"], name="concat", axis=1))
    node(m, "fc").input[0] = "f2"
    case("concat_mismatched_dims", m, "input 1 has shape (1, 5), incompatible", "plan")


def write():
    for old in os.listdir(HERE):
        if old.endswith(".onnx"):
            os.remove(os.path.join(HERE, old))
    with open(os.path.join(HERE, WEIGHTS_BIN), "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    with open(os.path.join(HERE, "expected.tsv"), "w") as f:
        for name, data, expected, command in CASES:
            with open(os.path.join(HERE, name), "wb") as m:
                m.write(data)
            f.write(f"{name}\t{expected}\t{command}\n")


def check(cbtrain):
    bad = 0
    for name, _, expected, command in CASES:
        args = [cbtrain, "inspect", os.path.join(HERE, name)] + (["--plan"] if command == "plan" else [])
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        out = r.stdout + r.stderr
        if r.returncode != 2 or expected not in out:
            bad += 1
            print(f"--- {name} ({command}): exit {r.returncode}, expected '{expected}'\n{out.strip()}")
    print(f"{len(CASES)} cases, {bad} not as expected")
    return bad == 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cbtrain", help="check every case against this cbtrain binary")
    args = ap.parse_args()
    build_cases()
    write()
    sys.exit(0 if not args.cbtrain or check(args.cbtrain) else 1)
