#!/usr/bin/env python3
"""Runs the ONNX backend node tests through lmopt and reports pass counts
per operator.

The test cases come from the installed `onnx` package
(`onnx.backend.test.case.node`, the definitions the ONNX backend test data is
generated from). For each case the model is written to a temporary folder
and imported with `lmopt-translate --import-onnx` (which verifies every op).
With `--interpret`, the imported model is also run on the case's inputs by
`lmopt-interpret` and its outputs compared with the case's expected outputs.
With `--cpu`, each case of a supported operator is compiled by
`lmopt-compile` (every input pinned to the shape of the case's data) and run
by `lmopt-run`, and its outputs compared with the expected ones: floats
within the tolerances, booleans and integers exactly.

usage: scripts/onnx_node_tests.py [--build build] [--interpret] [--cpu]
           [--filter REGEX] [--markdown docs/onnx-node-tests.md] [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def collect():
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return collect_testcases()


def onnx_version():
    import onnx

    return onnx.__version__


def importer_ops():
    """Operator types in the importer's converter table (lib/Importer/ONNX)."""
    folder = os.path.join(ROOT, "lib", "Importer", "ONNX")
    ops = set()
    for name in os.listdir(folder):
        if name.endswith(".cpp"):
            with open(os.path.join(folder, name)) as f:
                ops.update(re.findall(r'\{"[\w.]*",\s*"(\w+)",\s*\d+', f.read()))
    return ops


def primary_op(case):
    """The operator a case tests: its single node's op type, or for expanded
    (function body) cases the op named in the test."""
    ops = [n.op_type for n in case.model.graph.node]
    if len(set(ops)) == 1 and not case.name.endswith("_expanded"):
        return ops[0]
    name = case.name[len("test_"):].replace("_expanded", "")
    known = {n.op_type.lower(): n.op_type for n in case.model.graph.node}
    for key in sorted(known, key=len, reverse=True):
        if name.startswith(key):
            return known[key]
    return ops[-1] if ops else "?"


def first_error(text, returncode):
    """The line of a tool's output that says what went wrong: a failed
    comparison, else a diagnostic, else the first line."""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    for pattern in (r"FAIL", r"error:", r"error"):
        bad = [l for l in lines if re.search(pattern, l)]
        if bad:
            return bad[0]
    return (lines or [f"exit {returncode}"])[0]


def to_array(value):
    """A case value as a C-ordered array (0-d kept 0-d), or None for a
    sequence, an optional or a map."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        value = numpy_helper.to_array(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        return None
    return np.array(value, order="C")


def case_data(case):
    """The case's inputs and expected outputs by graph name, or None when
    one is not a tensor."""
    if not case.data_sets:
        return None
    inputs, outputs = case.data_sets[0]
    graph = case.model.graph
    feeds = {i.name: to_array(v) for i, v in zip(graph.input, inputs)}
    refs = {o.name: to_array(v) for o, v in zip(graph.output, outputs)}
    if any(a is None for a in [*feeds.values(), *refs.values()]):
        return None
    return feeds, refs


def storable(data):
    """Whether lmopt's tools can read the case's data from .npz: bfloat16
    and the float8 types have no NumPy dtype, strings no lmopt one."""
    return data is not None and all(
        a.dtype.kind not in "VOSU" for d in data for a in d.values())


def tolerances(feeds, refs, rtol, atol):
    # Half precision gets a tolerance of its own: the reference computes in
    # fp16 step by step, lmopt rounds once per op.
    if any(a.dtype == np.float16 for a in [*feeds.values(), *refs.values()]):
        return max(rtol, 2e-3), max(atol, 2e-3)
    return rtol, atol


def run_interpret(build, tmp, feeds, refs, rtol, atol, timeout):
    rtol, atol = tolerances(feeds, refs, rtol, atol)
    ran = subprocess.run(
        [os.path.join(build, "bin", "lmopt-interpret"), "model.onnx",
         "--inputs", "in.npz", "--compare", "ref.npz",
         f"--rtol={rtol}", f"--atol={atol}"],
        cwd=tmp, capture_output=True, text=True, timeout=timeout)
    if crash := crashed("lmopt-interpret", ran):
        return "numerics", crash
    if ran.returncode != 0:
        return "numerics", first_error(ran.stderr + ran.stdout, ran.returncode)
    return "passed", ""


def crashed(tool, ran):
    """A tool killed by a signal or stopped by a fatal error (a crash, not a
    diagnostic)."""
    fatal = [l for l in ran.stderr.splitlines() if "LLVM ERROR" in l]
    if ran.returncode >= 0 and not fatal and "Stack dump:" not in ran.stderr:
        return None
    if ran.returncode >= 0:
        how = f"exit {ran.returncode}"
    else:
        try:
            how = signal.Signals(-ran.returncode).name
        except ValueError:
            how = f"signal {-ran.returncode}"
    detail = fatal[0].strip() if fatal else first_error(ran.stderr,
                                                        ran.returncode)
    return f"{tool} crashed ({how}): {detail}"


# Inputs whose contents lmopt needs at compile time, by operator and input
# index: those that set a result's shape or axes, and quantization
# parameters (TensorRT likewise needs shape tensors' values and Q/DQ scales
# at build time). A case that feeds one from a graph input gets its data
# bound with --input-value, as a model's constant would be.
COMPILE_TIME_INPUTS = {
    **{op: (1,) for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
        "ReduceSumSquare", "Unsqueeze", "Squeeze", "Split", "CumSum",
        "Reshape", "Expand", "Tile", "TopK")},
    "Slice": (1, 2, 3, 4),
    "Range": (0, 1, 2),
    "ConstantOfShape": (0,),
    "Pad": (1, 3),
    "Trilu": (1,),
    "Dropout": (1, 2),
    "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2),
}


def compile_time_inputs(model, feeds):
    """The graph inputs of `model` that COMPILE_TIME_INPUTS binds."""
    bound = set()
    for node in model.graph.node:
        for index in COMPILE_TIME_INPUTS.get(node.op_type, ()):
            if index < len(node.input) and node.input[index] in feeds:
                bound.add(node.input[index])
    return bound


def value_spec(name, array):
    flat = array.reshape(-1)
    if array.dtype.kind in "biu":
        numbers = [str(int(v)) for v in flat]
    else:
        numbers = [repr(float(v)) for v in flat]
    return f"--input-value={name}:{','.join(numbers)}"


def shape_spec(name, array):
    dims = "x".join(str(d) for d in array.shape) if array.ndim else "scalar"
    return f"--input-shape={name}:{dims}"


def compare_outputs(outputs, refs, rtol, atol):
    """The first output that differs from its reference, or None."""
    for name, want in refs.items():
        if name not in outputs:
            return f"output '{name}' is missing from lmopt-run's outputs"
        got = outputs[name]
        if got.dtype != want.dtype:
            return f"output '{name}' has dtype {got.dtype}, expected {want.dtype}"
        if got.shape != want.shape:
            return (f"output '{name}' has shape {list(got.shape)}, expected "
                    f"{list(want.shape)}")
        if want.dtype.kind in "biu":
            differ = got != want
        else:
            differ = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if differ.any():
            where = np.flatnonzero(differ)
            first = where[0]
            return (f"output '{name}': {len(where)} of {want.size} elements "
                    f"differ (first at {first}: {got.flat[first]} vs "
                    f"{want.flat[first]})")
    return None


def run_cpu(build, tmp, model, data, rtol, atol, timeout):
    feeds = data[0] if data else {}
    bound = compile_time_inputs(model, feeds)
    compile_cmd = [os.path.join(build, "bin", "lmopt-compile"), "model.onnx",
                   *(shape_spec(n, a) for n, a in feeds.items()),
                   *(value_spec(n, feeds[n]) for n in sorted(bound)),
                   "-o", "case.lmopt"]
    compiled = subprocess.run(compile_cmd, cwd=tmp, capture_output=True,
                              text=True, timeout=timeout)
    if crash := crashed("lmopt-compile", compiled):
        return "compile", crash
    if compiled.returncode != 0:
        return "compile", first_error(compiled.stderr, compiled.returncode)
    if not storable(data):
        return "run", ("compiled, not run: the case's data has no .npz form "
                       "(bfloat16, float8, string, sequence or optional)")
    np.savez(os.path.join(tmp, "run.npz"),
             **{n: a for n, a in feeds.items() if n not in bound})
    ran = subprocess.run(
        [os.path.join(build, "bin", "lmopt-run"), "case.lmopt",
         "--inputs", "run.npz", "--output", "out.npz", "--threads", "1"],
        cwd=tmp, capture_output=True, text=True, timeout=timeout)
    if crash := crashed("lmopt-run", ran):
        return "run", crash
    if ran.returncode != 0:
        return "run", first_error(ran.stderr, ran.returncode)
    with np.load(os.path.join(tmp, "out.npz")) as out:
        outputs = {name: out[name] for name in out.files}
    refs = data[1]
    mismatch = compare_outputs(outputs, refs,
                               *tolerances(feeds, refs, rtol, atol))
    return ("mismatch", mismatch) if mismatch else ("passed", "")


def run_import(build, tmp, timeout):
    imported = subprocess.run(
        [os.path.join(build, "bin", "lmopt-translate"), "--import-onnx",
         "model.onnx", "-o", os.devnull],
        cwd=tmp, capture_output=True, text=True, timeout=timeout)
    if crash := crashed("lmopt-translate", imported):
        return "import", crash
    if imported.returncode != 0:
        message = imported.stderr.strip().splitlines()
        first = message[0] if message else f"exit {imported.returncode}"
        kind = "unsupported" if "unsupported ONNX operator" in first else "import"
        return kind, first
    return "imported", ""


def run_case(case, args, cpu):
    """The case's result through the importer (and the interpreter with
    --interpret), and through the CPU backend when `cpu` (else None)."""
    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(case.model, os.path.join(tmp, "model.onnx"))
        try:
            result = run_import(args.build, tmp, args.timeout)
        except subprocess.TimeoutExpired:
            result = ("import", f"lmopt-translate timed out after "
                                f"{args.timeout} s")
        data = case_data(case)
        if storable(data):
            np.savez(os.path.join(tmp, "in.npz"), **data[0])
            np.savez(os.path.join(tmp, "ref.npz"), **data[1])
        if args.interpret and result[0] == "imported" and storable(data):
            try:
                result = run_interpret(args.build, tmp, *data, args.rtol,
                                       args.atol, args.timeout)
            except subprocess.TimeoutExpired:
                result = ("numerics", f"lmopt-interpret timed out after "
                                      f"{args.timeout} s")
        if not cpu:
            return result, None
        try:
            return result, run_cpu(args.build, tmp, case.model, data,
                                   args.rtol, args.atol, args.timeout)
        except subprocess.TimeoutExpired as expired:
            tool = os.path.basename(expired.cmd[0])
            return result, ("compile" if tool == "lmopt-compile" else "run",
                            f"{tool} timed out after {args.timeout} s")


def reason(detail):
    """A CPU failure's message without what names the case (file, node,
    kernel, shapes, opset), to group failures by."""
    for pattern, repl in (
            (r"^[\w.]*:\d+:\d+: ", ""),
            (r" \((node|in node) '[^']*'\)", ""),
            (r" (in |at )?(node|kernel) '[^']*'", ""),
            (r"tensor<[^>]*>", "tensor<...>"),
            (r"opset \d+", "opset N"),
            (r"\d+ of \d+ elements differ.*", "elements differ"),
            (r"(output|input) '[^']*'", r"\1 '...'"),
            (r"\[[\d, ]*\]", "[...]"),
            (r"offset \d+ is out-of-bounds: \d+ >= \d+",
             "offset N is out-of-bounds")):
        detail = re.sub(pattern, repl, detail)
    return detail


def escape(text):
    """`text` as one Markdown table cell."""
    return text.replace("|", "\\|")


def command_line(args):
    """The options that shaped the results, as the doc quotes them."""
    words = ["scripts/onnx_node_tests.py"]
    words += ["--interpret"] if args.interpret else []
    words += ["--cpu"] if args.cpu else []
    words += [f"--filter '{args.filter}'"] if args.filter else []
    words += ["--markdown", os.path.relpath(args.markdown, ROOT)] \
        if args.markdown else []
    return " ".join(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--interpret", action="store_true",
                        help="also compare outputs through lmopt-interpret")
    parser.add_argument("--cpu", action="store_true",
                        help="also compile and run each case of a supported "
                             "operator through lmopt-compile and lmopt-run")
    parser.add_argument("--filter", default="", help="regex on test names")
    parser.add_argument("--markdown", help="write the per-op table here")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="cases run at once (each runs one tool at a time)")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds each tool may take on one case")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    table = importer_ops()
    cases = [c for c in collect() if re.search(args.filter, c.name)]
    by_op = collections.defaultdict(collections.Counter)
    cpu_by_op = collections.defaultdict(collections.Counter)
    failures, cpu_failures = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_case, c, args,
                               args.cpu and primary_op(c) in table): c
                   for c in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            op = primary_op(case)
            (kind, detail), cpu = future.result()
            by_op[op][kind] += 1
            if kind not in ("imported", "passed", "unsupported"):
                failures.append((op, case.name, kind, detail))
            if cpu:
                cpu_by_op[op][cpu[0]] += 1
                if cpu[0] != "passed":
                    cpu_failures.append((op, case.name, *cpu))

    ok = "passed" if args.interpret else "imported"
    supported = {op: c for op, c in by_op.items() if op in table}
    header = ("| op | tests | " + ("import + numerics pass" if args.interpret
                                   else "import + verify pass")
              + " | import fails |" + (" numerics fail |" if args.interpret else ""))
    rule = "|---|---|---|---|" + ("---|" if args.interpret else "")
    if args.cpu:
        header += " CPU pass | CPU compile fails | CPU run fails |"
        rule += "---|---|---|"
    rows = []
    for op, c in sorted(supported.items()):
        cpu = cpu_by_op[op]
        rows.append(f"| {op} | {sum(c.values())} | {c[ok]} | {c['import']} |"
                    + (f" {c['numerics']} |" if args.interpret else "")
                    + (f" {cpu['passed']} | {cpu['compile']} |"
                       f" {sum(cpu.values()) - cpu['passed'] - cpu['compile']} |"
                       if args.cpu else ""))
    total = sum(sum(c.values()) for c in supported.values())
    passed = sum(c[ok] for c in supported.values())
    unsupported = sorted(op for op in by_op if op not in supported)
    summary = (f"{passed} of {total} node tests of {len(supported)} supported "
               f"operators pass ({'import, verification and numerics' if args.interpret else 'import and verification'}); "
               f"{len(unsupported)} operators are not supported.")
    cpu_passed = sum(c["passed"] for c in cpu_by_op.values())
    cpu_summary = (f"{cpu_passed} of {total} cases pass through the CPU "
                   f"backend (lmopt-compile + lmopt-run)")
    reasons = collections.Counter(reason(d) for *_, d in cpu_failures)
    crashes = sorted(f"`{n}` ({d})" for _, n, _, d in cpu_failures
                     if " crashed (" in d)
    crash_line = (f"{len(crashes)} cases crash lmopt-compile or lmopt-run"
                  + (": " + ", ".join(crashes) if crashes else "") + ".")
    if args.cpu:
        print(cpu_summary)
        print(crash_line)
    print(summary)
    failures = [f for f in failures if f[0] in supported]
    if args.verbose:
        for _, name, kind, detail in sorted(failures):
            print(f"  {kind}: {name}: {detail}")
        for _, name, kind, detail in sorted(cpu_failures):
            print(f"  cpu {kind}: {name}: {detail}")
    if args.markdown:
        command = command_line(args)
        text = "# ONNX backend node tests\n\n"
        if args.cpu:
            text += f"{cpu_summary}: `{command}`. {crash_line}\n\n"
        text += ("Generated "
                 + ("by that command" if args.cpu else f"by `{command}`")
                 + " from the node test cases of the installed `onnx` "
                 f"package ({onnx_version()}). Only operators the importer "
                 "supports are listed; a test of a supported operator can "
                 "still fail when it uses an attribute value, type or opset "
                 "outside what is supported.\n\n")
        if args.cpu:
            text += ("The CPU columns compile each case with `lmopt-compile` "
                     "(every input pinned to the shape of the case's data "
                     "with `--input-shape`; inputs that set a shape or axes, "
                     "and quantization parameters, bound to the case's data "
                     "with `--input-value`, as a model's constants would be: "
                     "`COMPILE_TIME_INPUTS` in the script lists them) and "
                     "run the bundle with "
                     "`lmopt-run --output`; floating-point outputs must "
                     f"match within rtol {args.rtol} and atol {args.atol} "
                     "(2e-3 for both when the case has fp16 data), booleans "
                     "and integers exactly. *compile fails* are cases "
                     "`lmopt-compile` rejects (at import, for want of a CPU "
                     "lowering, or while generating kernels); *run fails* are those that compile but "
                     "fail in `lmopt-run`, give other outputs, or cannot be "
                     "run (bfloat16, float8 and string data, sequences and "
                     "optionals have no .npz form lmopt reads).\n\n")
        text += summary + "\n\n" + header + "\n" + rule + "\n" \
            + "\n".join(rows) + "\n"
        if args.cpu:
            text += ("\n## CPU backend failures by reason\n\n"
                     "| cases | first line of the error |\n|---|---|\n"
                     + "".join(f"| {n} | {escape(r)} |\n"
                               for r, n in sorted(reasons.items(),
                                                  key=lambda x: (-x[1], x[0]))))
        text += ("\n## Failures\n\n"
                 + "\n".join(f"- `{n}` ({k}): {d}"
                              for _, n, k, d in sorted(failures)) + "\n")
        if args.cpu:
            text += ("\n## CPU backend failures\n\n"
                     + "\n".join(f"- `{n}` ({k}): {d}"
                                  for _, n, k, d in sorted(cpu_failures))
                     + "\n")
        with open(args.markdown, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
