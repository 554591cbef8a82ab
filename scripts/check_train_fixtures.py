#!/usr/bin/env python3
"""Check the committed training reference data in test/models/train.

For every NAME.adamw.json: NAME.onnx is the model the curves were made on
(SHA-256); ONNX Runtime on its data reproduces the stored losses (the
gradient batch's, every run's first step, the validation set's before
training); every float initializer has a gradient and a final value of its
shape; the data, curves and decay groups are what their hyper-parameters say.
Needs only numpy and onnxruntime (the initializers are read from the ONNX
protobuf directly).

    python3 scripts/check_train_fixtures.py [--dir test/models/train] [NAME ...]

Exits 1 and names every mismatch when something does not match.
"""

import argparse
import fnmatch
import glob
import hashlib
import json
import os
import sys

import numpy as np
import onnxruntime as ort

DEFAULT_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "train"
)
# As in make_train_fixtures.py.
GRAD_BATCH = 8
LOSS_KEY = "loss"
NON_PARAMETER_KEY = "non_parameter_initializers"
# ONNX Runtime in float32 against the float32-stored PyTorch losses.
LOSS_TOLERANCE = 1e-5

# TensorProto.DataType codes of floating-point tensors.
FLOAT_TYPES = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}


# --------------------------------------------------------------------------
# Just enough of the protobuf wire format to list a model's initializers.
# --------------------------------------------------------------------------


def varint(buf: bytes, pos: int) -> tuple:
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def fields(buf: bytes):
    """Yields (field number, wire type, value) of one message; a value is an
    int for varints and fixed-size fields, bytes for length-delimited ones."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == 2:
            size, pos = varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def initializers(path: str) -> dict:
    """name -> (TensorProto data type, shape) of the main graph's initializers
    (ModelProto.graph = 7, GraphProto.initializer = 5; TensorProto dims = 1,
    data_type = 2, name = 8)."""
    with open(path, "rb") as fh:
        model = fh.read()
    graphs = [v for n, w, v in fields(model) if n == 7 and w == 2]
    if len(graphs) != 1:
        raise ValueError(f"{len(graphs)} graphs")
    out = {}
    for number, wire, tensor in fields(graphs[0]):
        if number != 5 or wire != 2:
            continue
        dims, data_type, name = [], 0, None
        for n, w, v in fields(tensor):
            if n == 1 and w == 0:
                dims.append(v)
            elif n == 1 and w == 2:  # packed
                pos = 0
                while pos < len(v):
                    d, pos = varint(v, pos)
                    dims.append(d)
            elif n == 2:
                data_type = v
            elif n == 8:
                name = v.decode()
        out[name] = (data_type, tuple(dims))
    return out


# --------------------------------------------------------------------------
# Checks.
# --------------------------------------------------------------------------


def session(path: str) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def load_npz(path: str) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def loss_of(kind: str, out: np.ndarray, target: np.ndarray) -> float:
    out = out.astype(np.float64)
    if kind == "cross_entropy":
        shifted = out - out.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(target)), target].mean())
    if kind == "mse":
        return float(np.mean((out - target.astype(np.float64)) ** 2))
    raise ValueError(f"unknown loss '{kind}'")


def lr_factor(h: dict, step: int) -> float:
    if h["schedule"] == "constant":
        return 1.0
    if step < h["warmup_steps"]:
        return float(step) / float(max(1, h["warmup_steps"]))
    return max(
        0.0,
        float(h["schedule_steps"] - step)
        / float(max(1, h["schedule_steps"] - h["warmup_steps"])),
    )


def check_tensors(what: str, arrays: dict, want: dict) -> list:
    """`arrays` holds exactly `want`'s names, float32 and finite, of its shapes."""
    problems = []
    if set(arrays) != set(want):
        missing = sorted(set(want) - set(arrays))
        extra = sorted(set(arrays) - set(want))
        problems.append(f"{what}: missing {missing}, unexpected {extra}")
    for name in sorted(set(arrays) & set(want)):
        a = arrays[name]
        if a.dtype != np.float32 or a.shape != want[name]:
            problems.append(
                f"{what}: '{name}' is {a.dtype}{list(a.shape)}, the initializer "
                f"float32{list(want[name])}"
            )
        elif not np.all(np.isfinite(a)):
            problems.append(f"{what}: '{name}' is not finite")
    return problems


def check_data(what: str, data: dict, meta: dict, outputs: int) -> list:
    names = meta["inputs"] + [meta["target"]]
    if list(data) != names:
        return [f"{what}: arrays {list(data)}, expected {names}"]
    problems = []
    rows = {len(v) for v in data.values()}
    if len(rows) != 1:
        problems.append(f"{what}: arrays of different lengths {sorted(rows)}")
    for name, value in data.items():
        if value.dtype not in (np.int64, np.float32):
            problems.append(f"{what}: '{name}' is {value.dtype}, want int64 or float32")
    mask = data.get("attention_mask")
    if mask is not None:
        # 1s then 0s, at least one real token: padding only at the end.
        if not (np.all(np.diff(mask, axis=1) <= 0) and np.all(mask[:, 0] == 1)
                and set(np.unique(mask)) <= {0, 1}):
            problems.append(f"{what}: attention_mask is not real tokens then padding")
    target = data[meta["target"]]
    if meta["loss"] == "cross_entropy" and not (
        target.dtype == np.int64 and target.min() >= 0 and target.max() < outputs
    ):
        problems.append(f"{what}: labels outside [0, {outputs})")
    return problems


def check_runs(name: str, meta: dict, params: list) -> list:
    problems = []
    for run, r in meta["runs"].items():
        h, c = r["hyperparameters"], r["curve"]
        what = f"{name} run {run}"
        lengths = {k: len(v) for k, v in c.items()}
        if set(lengths.values()) != {h["steps"]}:
            problems.append(f"{what}: curve lengths {lengths}, {h['steps']} steps")
            continue
        if c["step"] != list(range(1, h["steps"] + 1)):
            problems.append(f"{what}: steps are not 1..{h['steps']}")
        want_lr = [h["lr"] * lr_factor(h, k) for k in range(h["steps"])]
        if c["lr"] != want_lr:
            problems.append(f"{what}: lr differs from the schedule its hyper-parameters give")
        if not np.all(np.isfinite(c["loss"] + c["grad_norm"])):
            problems.append(f"{what}: loss or grad_norm not finite")
        no_decay = [
            p for p in params
            if h["weight_decay"] and any(fnmatch.fnmatchcase(p, g) for g in h["no_decay"])
        ]
        if r["no_decay_initializers"] != no_decay:
            problems.append(f"{what}: no_decay_initializers are not what the patterns select")
    return problems


def check_model(directory: str, name: str) -> list:
    stem = os.path.join(directory, name)
    files = [stem + s for s in (".onnx", ".data.npz", ".val.npz", ".grads.npz",
                                ".adamw.json", ".adamw_c.final.npz")]
    missing = [os.path.basename(p) for p in files if not os.path.isfile(p)]
    if missing:
        return [f"{name}: missing {', '.join(missing)}"]
    with open(stem + ".adamw.json") as fh:
        meta = json.load(fh)
    with open(stem + ".onnx", "rb") as fh:
        if hashlib.sha256(fh.read()).hexdigest() != meta["model_sha256"]:
            return [f"{name}: {name}.onnx is not the model the references were made on"]

    inits = initializers(stem + ".onnx")
    floats = {n: shape for n, (t, shape) in inits.items() if t in FLOAT_TYPES}
    grads = load_npz(stem + ".grads.npz")
    non_params = [str(n) for n in grads.pop(NON_PARAMETER_KEY, np.array([]))]
    loss = grads.pop(LOSS_KEY, None)
    problems = [] if loss is not None else [f"{name}: grads has no '{LOSS_KEY}'"]
    problems += [
        f"{name}: non-parameter '{n}' is not a float initializer"
        for n in non_params if n not in floats
    ]
    params = {n: s for n, s in floats.items() if n not in non_params}
    problems += check_tensors(f"{name}.grads.npz", grads, params)
    problems += check_tensors(
        f"{name}.adamw_c.final.npz", load_npz(stem + ".adamw_c.final.npz"), params
    )

    sess = session(stem + ".onnx")
    outputs = sess.get_outputs()
    if len(outputs) != 1:
        return problems + [f"{name}: {len(outputs)} outputs, want 1"]
    width = outputs[0].shape[-1]
    data, val = load_npz(stem + ".data.npz"), load_npz(stem + ".val.npz")
    problems += check_data(f"{name}.data.npz", data, meta, width)
    problems += check_data(f"{name}.val.npz", val, meta, width)
    problems += check_runs(name, meta, list(params))
    if problems:
        return problems

    def ort_loss(arrays: dict, count: int) -> float:
        feed = {k: arrays[k][:count] for k in meta["inputs"]}
        (out,) = sess.run(None, feed)
        return loss_of(meta["loss"], out, arrays[meta["target"]][:count])

    first = ort_loss(data, GRAD_BATCH)
    stored = {f"{name}.grads.npz '{LOSS_KEY}'": float(loss)}
    stored.update({f"{name} run {r} step 1": v["curve"]["loss"][0]
                   for r, v in meta["runs"].items()})
    stored_val = {f"{name} val_loss_before": meta["val_loss_before"]}
    for what, want, got in [(k, v, first) for k, v in stored.items()] + [
        (k, v, ort_loss(val, len(val[meta["target"]]))) for k, v in stored_val.items()
    ]:
        if abs(got - want) > LOSS_TOLERANCE * max(1.0, abs(want)):
            problems.append(f"{what} is {want}, ONNX Runtime gives {got}")
    print(f"{name}: {len(params)} parameter initializers, ORT loss {first:.6f} "
          f"(stored {float(loss):.6f}), {len(meta['runs'])} runs")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.normpath(DEFAULT_DIR))
    parser.add_argument("names", nargs="*", help="models to check (default: all)")
    args = parser.parse_args()
    names = args.names or sorted(
        os.path.basename(p)[: -len(".adamw.json")]
        for p in glob.glob(os.path.join(args.dir, "*.adamw.json"))
    )
    if not names:
        print(f"no *.adamw.json in {args.dir}", file=sys.stderr)
        return 1
    problems = []
    for name in names:
        with open(os.path.join(args.dir, name + ".adamw.json")) as fh:
            if "grad_seed" in json.load(fh):
                # Dropout references (make_dropout_fixtures.py): their masks
                # are not onnxruntime's, test/Training/mlp_dropout.test
                # checks them.
                print(f"{name}: dropout reference, not rerun here")
                continue
        try:
            problems += check_model(args.dir, name)
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
