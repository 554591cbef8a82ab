"""Writes deterministic random kernel inputs to an .npz archive.

Usage: make-inputs.py OUT.npz NAME=DIMS:DTYPE[:LO:HI] ...
DIMS is 'x'-separated ('' for a scalar); floats are normal(0, 1) scaled by 2,
integers and booleans are 0 or 1 (attention masks), or uniform in [LO, HI]
when given (quantized storage).
"""
import sys

import numpy as np


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    rng = np.random.default_rng(20261202)
    arrays = {}
    for spec in specs:
        name, rest = spec.split("=")
        dims, dtype, *bounds = rest.split(":")
        shape = tuple(int(d) for d in dims.split("x")) if dims else ()
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            arrays[name] = (2 * rng.standard_normal(shape)).astype(dtype)
        elif bounds:
            lo, hi = (int(b) for b in bounds)
            arrays[name] = rng.integers(lo, hi + 1, shape).astype(dtype)
        else:
            arrays[name] = rng.integers(0, 2, shape).astype(dtype)
    np.savez(out, **arrays)


if __name__ == "__main__":
    main()
