"""Counts the linear and matmul steps of each entry of a plan printed by
`lmopt-compile --dump-plan` (stdin) by their operand and result dtypes:
one line per entry and form, e.g.
'train_step: linear bf16 x bf16 -> f32: 56'.
"""

import collections
import re
import sys

ENTRY = re.compile(r"^entry '(\w+)':")
TENSOR = re.compile(r"^tensor %(\d+) = .* (\w+) \[[0-9, ]*\]( alias of %\d+)?$")
STEP = re.compile(r"^step \d+: (linear|matmul) '.*' \(([%0-9, ]*)\) -> \(([%0-9, ]*)\)")


def main():
    entry, dtypes = "main", {}
    counts = collections.OrderedDict()
    for line in sys.stdin:
        line = line.rstrip("\n")
        if m := ENTRY.match(line):
            entry, dtypes = m.group(1), {}
        elif m := TENSOR.match(line):
            dtypes[int(m.group(1))] = m.group(2)
        elif m := STEP.match(line):
            operands = [int(t.strip()[1:]) for t in m.group(2).split(",")]
            result = int(m.group(3).strip()[1:])
            form = (f"{m.group(1)} {dtypes[operands[0]]} x "
                    f"{dtypes[operands[1]]} -> {dtypes[result]}")
            key = (entry, form)
            counts[key] = counts.get(key, 0) + 1
    for (entry, form), count in counts.items():
        print(f"{entry}: {form}: {count}")


if __name__ == "__main__":
    main()
