#!/usr/bin/env python3
"""Fixtures for the runtime's unit tests, written by NumPy itself.

    make_npy_fixtures.py                   regenerate test/Runtime/Inputs/
    make_npy_fixtures.py --check-written D check files the tests wrote into D

The first form writes small .npy/.npz files with np.save, np.savez and
np.savez_compressed (plus a few deliberately broken ones) and expected.json,
which holds what NumPy reads back from each file: dtype, shape, every value
(floats as exact hex strings) and the float64 sum. It also records XXH64 test
vectors computed by the reference xxHash library (Debian libxxhash0). The unit
tests compare lmopt's readers with these values, never with their own output.

The second form is run by the lit test after lmopt-runtime-tests has re-written
every fixture with lmopt's writers: NumPy must read each one back bit for bit.
"""

import ctypes
import ctypes.util
import io
import json
import os
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs")

DTYPE_NAMES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8",
    "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
    "uint32": "u32", "int64": "i64", "uint64": "u64", "bool": "bool",
}


def describe(a):
    """What a reader must find in `a`: lmopt dtype name, shape, values."""
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        values = [float(v).hex() for v in flat.astype(np.float64)]
    else:
        values = [str(int(v)) for v in flat]
    return {
        "dtype": DTYPE_NAMES[a.dtype.name],
        "shape": list(a.shape),
        "values": values,
        "sum": float(np.sum(a, dtype=np.float64)).hex(),
    }


def arrays():
    """One small array per supported dtype, with edge values."""
    rng = np.random.default_rng(20261202)
    out = {
        "f32": rng.standard_normal((2, 3, 4)).astype(np.float32),
        "f64": np.array([[0.1, -2.5e300, 5e-324], [np.inf, -0.0, 1.0]]),
        "f16": np.array([1.0, -65504.0, 6e-8, 0.333, np.nan], np.float16),
        "i8": np.array([[-128, 127], [0, -1]], np.int8),
        "u8": np.arange(250, 256, dtype=np.uint8),
        "i16": np.array([-32768, 32767, 12345], np.int16),
        "u16": np.array([[65535], [1]], np.uint16),
        "i32": np.array([-2**31, 2**31 - 1, 7, -7], np.int32),
        "u32": np.array([2**32 - 1, 0, 3], np.uint32),
        "i64": np.array([-2**63, 2**63 - 1, 1 << 40], np.int64),
        "u64": np.array([2**64 - 1, 1 << 63, 9], np.uint64),
        "bool": np.array([[True, False, True], [False, False, True]]),
    }
    return out


def xxh64_vectors():
    name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
    lib = ctypes.CDLL(name)
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    inputs = [b"", b"a", b"abc", bytes(range(31)), bytes(range(32)),
              bytes(range(33)), bytes(range(256)) * 5 + b"tail"]
    vectors = []
    for data in inputs:
        for seed in (0, 0x9E3779B97F4A7C15):
            vectors.append({"data": data.hex(), "seed": hex(seed),
                            "hash": hex(lib.XXH64(data, len(data), seed))})
    return vectors


def save(name, writer):
    path = os.path.join(INPUTS, name)
    with open(path, "wb") as f:
        writer(f)
    return path


def generate():
    os.makedirs(INPUTS, exist_ok=True)
    expected = {"npy": {}, "npz": {}, "xxh64": xxh64_vectors()}
    for name, a in arrays().items():
        save(name + ".npy", lambda f, a=a: np.save(f, a))
        expected["npy"][name + ".npy"] = describe(np.load(
            os.path.join(INPUTS, name + ".npy")))
    extra = {
        "scalar_f64.npy": np.float64(3.25),
        "empty_f32.npy": np.zeros((0, 3), np.float32),
    }
    for name, a in extra.items():
        save(name, lambda f, a=a: np.save(f, a))
        expected["npy"][name] = describe(np.load(os.path.join(INPUTS, name)))
    for version in ((2, 0), (3, 0)):
        name = "v%d_i32.npy" % version[0]
        a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
        save(name, lambda f, a=a, v=version:
             np.lib.format.write_array(f, a, version=v))
        expected["npy"][name] = describe(np.load(os.path.join(INPUTS, name)))

    members = {"ids": np.arange(12, dtype=np.int64).reshape(3, 4),
               "mask": np.array([True, False]),
               "x": arrays()["f32"]}
    save("stored.npz", lambda f: np.savez(f, **members))
    save("compressed.npz", lambda f: np.savez_compressed(f, **members))
    for name in ("stored.npz", "compressed.npz"):
        with np.load(os.path.join(INPUTS, name)) as z:
            expected["npz"][name] = [dict(describe(z[k]), name=k)
                                     for k in z.files]

    # Files a reader must refuse.
    save("fortran_f32.npy", lambda f: np.save(
        f, np.asfortranarray(np.ones((2, 3), np.float32))))
    save("bigendian_f32.npy", lambda f: np.save(
        f, np.ones((2, 2), ">f4")))
    save("complex64.npy", lambda f: np.save(f, np.ones(2, np.complex64)))
    good = io.BytesIO()
    np.save(good, np.ones((4, 4), np.float32))
    good = good.getvalue()
    save("truncated_data.npy", lambda f: f.write(good[:-5]))
    save("truncated_header.npy", lambda f: f.write(good[:40]))
    stored = open(os.path.join(INPUTS, "stored.npz"), "rb").read()
    bad = bytearray(stored)
    bad[200] ^= 0x01  # inside the first member's array data
    save("bad_crc.npz", lambda f: f.write(bytes(bad)))
    compressed = open(os.path.join(INPUTS, "compressed.npz"), "rb").read()
    save("truncated.npz", lambda f: f.write(compressed[:len(compressed) // 2]))

    def not_npy(f):
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("readme.txt", "not an array")
    save("not_npy_member.npz", not_npy)

    with open(os.path.join(INPUTS, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


def same(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape and
            a.tobytes() == b.tobytes())


def check_written(folder):
    """NumPy reads back what lmopt wrote, bit for bit, for every fixture."""
    failures, checked = [], 0
    expected = json.load(open(os.path.join(INPUTS, "expected.json")))
    for name in expected["npy"]:
        ours = os.path.join(folder, name)
        if not os.path.exists(ours):
            failures.append("%s: lmopt wrote no file" % name)
            continue
        a = np.load(os.path.join(INPUTS, name))
        b = np.load(ours, allow_pickle=False)
        checked += 1
        if not same(a, b):
            failures.append("%s: numpy reads %s %s, expected %s %s"
                            % (name, b.dtype, b.shape, a.dtype, a.shape))
    for name in expected["npz"]:
        ours = os.path.join(folder, name)
        if not os.path.exists(ours):
            failures.append("%s: lmopt wrote no file" % name)
            continue
        with np.load(os.path.join(INPUTS, name)) as za, \
                np.load(ours, allow_pickle=False) as zb:
            checked += 1
            if list(za.files) != list(zb.files):
                failures.append("%s: members %s, expected %s"
                                % (name, zb.files, za.files))
                continue
            for k in za.files:
                if not same(za[k], zb[k]):
                    failures.append("%s: member %s differs" % (name, k))
    for f in failures:
        print("error: " + f)
    print("numpy read back %d files written by lmopt: %d failures"
          % (checked, len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-written":
        sys.exit(check_written(sys.argv[2]))
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    generate()
