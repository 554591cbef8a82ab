"""Counts the steps of each entry of a plan printed by `lmopt-compile
--dump-plan` (stdin) by kind, and the kernel steps that update a state in
place (attribute in_place): one line per entry,
'train_step: 12 kernel, 28 linear, ...; 41 in place'.
"""

import collections
import re
import sys

ENTRY = re.compile(r"^entry '(\w+)':")
STEP = re.compile(r"^step \d+: (\w+) ")


def main():
    entries = collections.OrderedDict()
    entry = "main"
    for line in sys.stdin:
        if m := ENTRY.match(line):
            entry = m.group(1)
        elif m := STEP.match(line):
            kinds, in_place = entries.setdefault(
                entry, (collections.Counter(), [0]))
            kinds[m.group(1)] += 1
            if "in_place = " in line:
                in_place[0] += len(re.search(r'in_place = "([^"]*)"',
                                             line).group(1).split(","))
    for entry, (kinds, in_place) in entries.items():
        listed = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        print(f"{entry}: {listed}; {in_place[0]} in place")


if __name__ == "__main__":
    main()
