"""Checks a bundle compiled with --omit-weights against the same model's
full bundle, reading both with the standard library only
(docs/bundle-format.md, "The `omitted-weights` section"): the section's
layout, that each range is an f32/f16/bf16 run of at least 1024 elements
inside the full weights, and that the full weights without those ranges are
exactly the kept weights section. Prints one line per fact for FileCheck.

usage: omitted_weights.py FULL.lmopt OMITTED.lmopt
"""

import json
import struct
import sys


def sections(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"LMOPTBND", data[:8]
    count, entry_size = struct.unpack_from("<II", data, 16)
    table = struct.unpack_from("<Q", data, 32)[0]
    out = {}
    for i in range(count):
        entry = data[table + i * entry_size:table + (i + 1) * entry_size]
        name = entry[:32].rstrip(b"\0").decode()
        kind, _flags, offset, size = struct.unpack_from("<IIQQ", entry, 32)
        out[name] = (kind, data[offset:offset + size])
    return len(data), out


full_size, full = sections(sys.argv[1])
omit_size, omit = sections(sys.argv[2])
print(f"smaller: {omit_size * 10 < full_size}")
print("full has omitted-weights:", "omitted-weights" in full)
print("meta weights_omitted:", json.loads(omit["meta"][1]).get("weights_omitted"))
print("full meta weights_omitted:",
      json.loads(full["meta"][1]).get("weights_omitted"))
kind, section = omit["omitted-weights"]
print("kind", kind)
magic = section[:8].decode()
major, minor, layout, count = struct.unpack_from("<IIQI", section, 8)
print(f"magic {magic} version {major}.{minor}")
assert len(section) == 28 + 20 * count, (len(section), count)
weights = full["weights"][1]
print("layout is the full weights:", layout == len(weights))
element = {1: 4, 3: 2, 4: 2}
kept, pos, bad = b"", 0, 0
for i in range(count):
    offset, size, dtype = struct.unpack_from("<QQI", section, 28 + 20 * i)
    if dtype not in element or size < 1024 * element[dtype] or offset < pos:
        bad += 1
    kept += weights[pos:offset]
    pos = offset + size
kept += weights[pos:]
print("ranges:", count, "bad:", bad)
print("kept bytes equal:", kept == omit["weights"][1])
print(f"plan equal: {full['plan'][1] == omit['plan'][1]}")
