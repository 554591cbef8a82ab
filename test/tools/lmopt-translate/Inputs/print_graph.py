"""Prints an ONNX model's nodes (op type, inputs, and the attributes that
say how a node reads its inputs) and its initializers (name, element type,
dims), one per line, for FileCheck."""

import sys

import onnx

model = onnx.load(sys.argv[1])
for init in model.graph.initializer:
    dims = "x".join(str(d) for d in init.dims) or "scalar"
    kind = onnx.TensorProto.DataType.Name(init.data_type)
    print(f"initializer {init.name}: {kind} {dims}")
for node in model.graph.node:
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute
             if a.name in ("axis", "block_size", "perm", "to")}
    print(f"node {node.op_type}({', '.join(node.input)}) {attrs}")
