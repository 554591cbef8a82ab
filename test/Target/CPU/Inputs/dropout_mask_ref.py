"""Writes the inputs of dropout-mask.mlir and the outputs a correct
lmopt.dropout_mask gives, from a numpy Philox4x32-10 written from the paper
(Salmon et al., SC 2011) and checked here against Random123's known answers
before it is used.

Usage: dropout_mask_ref.py INPUTS.npz EXPECTED.npz SEED SHAPE RATIO STREAM
"""
import sys

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
LOW = np.uint64(0xFFFFFFFF)


def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on uint32 arrays (counters) and uint32 scalars (key)."""
    c = [np.asarray(v, np.uint32) for v in (c0, c1, c2, c3)]
    k0, k1 = np.uint32(k0), np.uint32(k1)
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = M0 * c[0].astype(np.uint64)
            p1 = M1 * c[2].astype(np.uint64)
            c = [
                (p1 >> np.uint64(32)).astype(np.uint32) ^ c[1] ^ k0,
                (p1 & LOW).astype(np.uint32),
                (p0 >> np.uint64(32)).astype(np.uint32) ^ c[3] ^ k1,
                (p0 & LOW).astype(np.uint32),
            ]
            k0, k1 = k0 + W0, k1 + W1
    return c


def check_known_answers():
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
         (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
         (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for counter, key, expected in cases:
        got = tuple(int(v) for v in philox(*counter, *key))
        assert got == expected, (counter, key, [hex(v) for v in got])


def keep_mask(seed, shape, ratio, stream):
    n = int(np.prod(shape))
    index = np.arange(n, dtype=np.uint64)
    seed = int(seed) % (1 << 64)
    out = philox(index & LOW, index >> np.uint64(32),
                 np.full(n, stream, np.uint32), np.zeros(n, np.uint32),
                 seed & 0xFFFFFFFF, seed >> 32)
    uniform = (out[0] >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)
    return (uniform >= np.float32(ratio)).reshape(shape)


def main():
    inputs, expected, seed, shape, ratio, stream = sys.argv[1:]
    check_known_answers()
    shape = tuple(int(d) for d in shape.split("x"))
    ratio, stream = float(ratio), int(stream)
    rng = np.random.default_rng(20261205)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = keep_mask(int(seed, 0), shape, ratio, stream)
    scale = np.float32(1.0 / (1.0 - ratio))
    np.savez(inputs, x=x, seed=np.array(int(seed, 0), np.uint64).astype(np.int64))
    np.savez(expected, kept=mask.astype(np.float32),
             out=(x * mask.astype(np.float32)) * scale)
    print(f"reference: {mask.size} elements, kept fraction {mask.mean():.4f}")


if __name__ == "__main__":
    main()
