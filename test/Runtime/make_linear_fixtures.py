#!/usr/bin/env python3
"""Writes the expected outputs of the runtime's LinearStep tests.

For each shape M x K x N, every combination of transpose_weight, bias,
activation and residual is computed with NumPy in float64 from float32
inputs. The inputs are not stored: they come from a counter hash
(fixture_util.py) that LinearStepTest.cpp evaluates bit for bit the same way (values are exact
functions of the index, rounded once to float32), so BERT-sized weights need
no megabytes in the repository. Each fixture holds, per case, the expected
values at sampled positions (every row, several columns, the corners; all
positions for small outputs) and every row's sum.

    python3 test/Runtime/make_linear_fixtures.py [--out test/Runtime/Inputs]
"""

import math

import numpy as np

from fixture_util import hash_values, sample_positions, write_fixtures

# (M, K, N): small, batch-1 decode, BERT-base attention output / FFN in / out.
SHAPES = [(7, 64, 64), (1, 768, 768), (128, 768, 768), (128, 768, 3072),
          (128, 3072, 768)]
ACTIVATIONS = ["none", "relu", "gelu", "gelu_tanh"]
# Hash seeds and scales of input, weight, bias and residual. The input is
# uniform in [-3, 3) and the weight in [-1/sqrt(K), 1/sqrt(K)), so the
# products have a standard deviation near 1 and reach into every part of the
# activations.
SEEDS = [1, 2, 3, 4]
def scales(k):
    return np.array([6.0, 2.0 / math.sqrt(k), 1.0, 2.0], dtype=np.float64)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def activate(y, name):
    if name == "none":
        return y
    if name == "relu":
        return np.maximum(y, 0.0)
    if name == "gelu":
        return 0.5 * y * (1.0 + _erf(y / math.sqrt(2.0)))
    # oneDNN's eltwise_gelu_tanh is this same approximation.
    return 0.5 * y * (1.0 + np.tanh(
        math.sqrt(2.0 / math.pi) * (y + 0.044715 * y ** 3)))


def make_shape(m, k, n):
    sc = scales(k)
    x = hash_values(SEEDS[0], m * k, sc[0]).astype(np.float64).reshape(m, k)
    w_flat = hash_values(SEEDS[1], k * n, sc[1]).astype(np.float64)
    b = hash_values(SEEDS[2], n, sc[2]).astype(np.float64)
    r = hash_values(SEEDS[3], m * n, sc[3]).astype(np.float64).reshape(m, n)
    rng = np.random.default_rng(m * 1000003 + k * 1009 + n)
    idx = sample_positions(m, n, rng)

    cases, wants, rowsums = [], [], []
    for transpose in (0, 1):
        # The stored weight holds the hash values in its own layout: [K, N],
        # or [N, K] read transposed.
        w = w_flat.reshape(n, k).T if transpose else w_flat.reshape(k, n)
        xw = x @ w
        for has_bias in (0, 1):
            pre = xw + b if has_bias else xw
            for act_index, act in enumerate(ACTIVATIONS):
                y = activate(pre, act)
                for has_residual in (0, 1):
                    out = y + r if has_residual else y
                    cases.append([transpose, has_bias, act_index, has_residual])
                    wants.append(out.reshape(-1)[idx])
                    rowsums.append(out.sum(axis=1))
    return {
        "dims": np.array([m, k, n], dtype=np.int64),
        "seeds": np.array(SEEDS, dtype=np.int64),
        "scales": sc,
        "cases": np.array(cases, dtype=np.int64),
        "index": idx,
        "want": np.array(wants, dtype=np.float64),
        "rowsum": np.array(rowsums, dtype=np.float64),
    }


def main():
    write_fixtures(__doc__.split("\n")[0],
                   ((f"linear_{m}x{k}x{n}.npz",
                     lambda m=m, k=k, n=n: make_shape(m, k, n))
                    for m, k, n in SHAPES))


if __name__ == "__main__":
    main()
