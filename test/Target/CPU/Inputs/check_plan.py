"""Checks the invariants of a plan printed by `lmopt-compile --dump-plan`.

Reads the listing on stdin and fails (exit 1, naming the tensors) unless:
every weight and arena offset is a multiple of 64 and inside its region; no
two arena buffers that are alive at the same step overlap in bytes (a buffer
is a tensor and its aliases, alive from the first step that touches it to the
last, outputs to the end); and, with --expect-reuse, the arena is smaller than
the naive sum. Prints one summary line for FileCheck.
"""

import re
import sys

SIZES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i16": 2,
         "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8, "bool": 1}

HEADER = re.compile(r"plan: \d+ tensors, (\d+) steps, arena (\d+) bytes "
                    r"\(naive (\d+)\), weights (\d+) bytes")
TENSOR = re.compile(r"tensor %(\d+) = (input|weight|arena) @?(\d+) '.*' "
                    r"(\w+) \[([0-9, ]*)\]( alias of %(\d+))?$")
OUTPUT = re.compile(r"output '.*' = %(\d+)$")
STEP = re.compile(r"step (\d+): \w+ '.*' \(([%0-9, ]*)\) -> \(([%0-9, ]*)\)")


def ids(text):
    return [int(t.strip()[1:]) for t in text.split(",") if t.strip()]


def main():
    header = None
    tensors, outputs, steps = {}, [], []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if m := HEADER.match(line):
            header = tuple(int(g) for g in m.groups())
        elif m := TENSOR.match(line):
            dims = [int(d) for d in m.group(5).split(",") if d.strip()]
            size = SIZES[m.group(4)]
            for d in dims:
                size *= d
            root = int(m.group(7)) if m.group(7) else int(m.group(1))
            tensors[int(m.group(1))] = (m.group(2), int(m.group(3)), size,
                                        root)
        elif m := OUTPUT.match(line):
            outputs.append(int(m.group(1)))
        elif m := STEP.match(line):
            steps.append(ids(m.group(2)) + ids(m.group(3)))
    if header is None:
        sys.exit("no plan header in the input")
    num_steps, arena, naive, weights = header
    errors = []
    ranges = {}
    for index, used in enumerate(steps):
        for t in used:
            root = tensors[t][3]
            lo, hi = ranges.get(root, (index, index))
            ranges[root] = (min(lo, index), max(hi, index))
    for t in outputs:
        root = tensors[t][3]
        lo, _ = ranges.get(root, (num_steps, num_steps))
        ranges[root] = (lo, num_steps)
    for t, (storage, offset, size, root) in tensors.items():
        if storage == "input":
            continue
        region = arena if storage == "arena" else weights
        if offset % 64:
            errors.append(f"tensor %{t} has offset {offset}, not 64-aligned")
        if offset + size > region:
            errors.append(f"tensor %{t} ends at {offset + size}, past the "
                          f"{region}-byte {storage}")
    buffers = {}
    for t, (storage, offset, size, root) in tensors.items():
        if storage == "arena" and size:
            lo, hi = buffers.get(root, (offset, offset))
            buffers[root] = (offset, max(hi, offset + size))
    roots = sorted(buffers)
    for i, a in enumerate(roots):
        for b in roots[i + 1:]:
            if a not in ranges or b not in ranges:
                continue
            (alo, ahi), (blo, bhi) = ranges[a], ranges[b]
            if alo > bhi or blo > ahi:
                continue
            (aoff, aend), (boff, bend) = buffers[a], buffers[b]
            if aoff < bend and boff < aend:
                errors.append(f"tensors %{a} and %{b} are both alive at "
                              f"steps [{max(alo, blo)}, {min(ahi, bhi)}] and "
                              f"overlap in bytes")
    if "--expect-reuse" in sys.argv and not arena < naive:
        errors.append(f"arena {arena} is not smaller than naive {naive}")
    if errors:
        sys.exit("\n".join(errors))
    smaller = "<" if arena < naive else ">="
    print(f"plan ok: {len(tensors)} tensors, {num_steps} steps, "
          f"arena {smaller} naive")


main()
