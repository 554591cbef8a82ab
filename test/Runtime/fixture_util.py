"""Shared by the step fixture scripts (make_linear_fixtures.py,
make_attention_fixtures.py): the counter hash that the C++ tests evaluate
bit for bit the same way (TestUtil.cpp's hashValues), the sampled output
positions, and writing the fixtures."""

import argparse
import os

import numpy as np

SAMPLES_PER_ROW = 8
FULL_LIMIT = 4096

M32 = 0xFFFFFFFF


def hash_values(seed, count, scale):
    """float32((fmix32(i * 0x9E3779B9 + seed * 0x632BE5AB) / 2^32 - 0.5) * scale)."""
    h = (np.arange(count, dtype=np.uint64) * 0x9E3779B9 +
         seed * 0x632BE5AB) & M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return ((h.astype(np.float64) / 4294967296.0 - 0.5) * scale).astype(
        np.float32)


def sample_positions(rows, cols, rng):
    """Flat positions to check: all of a small output, else SAMPLES_PER_ROW
    columns of every row plus the corners."""
    if rows * cols <= FULL_LIMIT:
        return np.arange(rows * cols, dtype=np.int64)
    flat = []
    for row in range(rows):
        picked = rng.choice(cols, SAMPLES_PER_ROW, replace=False)
        flat.extend(row * cols + int(col) for col in picked)
    flat.extend([0, cols - 1, (rows - 1) * cols, rows * cols - 1])
    return np.unique(np.array(flat, dtype=np.int64))


def write_fixtures(description, fixtures):
    """Parses --out (default: Inputs next to this file) and writes each
    (file name, make arrays) of `fixtures` there, compressed."""
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=os.path.join(here, "Inputs"))
    args = parser.parse_args()
    total = 0
    for name, make in fixtures:
        path = os.path.join(args.out, name)
        np.savez_compressed(path, **make())
        size = os.path.getsize(path)
        total += size
        print(f"{os.path.relpath(path, here)}: {size} bytes")
    print(f"total {total} bytes")
