"""Compares two .npz archives array by array, exactly: prints 'NAME: equal'
or 'NAME: N of M elements differ' for each array of the second, and exits
nonzero on any difference or missing array.

Usage: compare_npz.py GOT.npz EXPECTED.npz
"""
import sys

import numpy as np


def main():
    got, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
    status = 0
    for name in expected.files:
        if name not in got.files:
            print(f"{name}: missing")
            status = 1
            continue
        a, b = got[name], expected[name]
        if a.shape != b.shape:
            print(f"{name}: shape {a.shape} instead of {b.shape}")
            status = 1
            continue
        differ = int(np.count_nonzero(a != b))
        print(f"{name}: equal" if not differ else
              f"{name}: {differ} of {b.size} elements differ")
        status |= differ != 0
    return status


if __name__ == "__main__":
    sys.exit(main())
