"""Checks the outputs of a bundle run on random weights (lmopt-run
--random-weights): every output finite, with the expected shapes, equal
between two runs with one seed and different with another seed.

usage: compare_random_outputs.py SEED1.npz SEED1_AGAIN.npz SEED2.npz
       NAME=DxD... [NAME=DxD...]
"""

import sys

import numpy as np

a, again, other = (np.load(p) for p in sys.argv[1:4])
for spec in sys.argv[4:]:
    name, dims = spec.split("=")
    shape = tuple(int(d) for d in dims.split("x"))
    print(f"{name}: shape {a[name].shape == shape}"
          f" finite {bool(np.isfinite(a[name]).all())}"
          f" same seed equal {np.array_equal(a[name], again[name])}"
          f" other seed differs {not np.array_equal(a[name], other[name])}")
