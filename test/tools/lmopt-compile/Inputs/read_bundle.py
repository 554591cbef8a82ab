"""Prints a .lmopt bundle's sections and meta JSON, read with the standard
library only (docs/bundle-format.md), for FileCheck.

One line per section: `section <name> kind <n> size <bytes> align <n>`,
then `plan magic <8 bytes>`, `meta <compact JSON, keys sorted>` and, when
the bundle has one, `requires <its lines>`.
"""

import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
assert data[:8] == b"LMOPTBND", data[:8]
count, entry_size = struct.unpack_from("<II", data, 16)
file_size, table = struct.unpack_from("<QQ", data, 24)
assert file_size == len(data), (file_size, len(data))
sections = {}
for i in range(count):
    entry = data[table + i * entry_size:table + (i + 1) * entry_size]
    name = entry[:32].rstrip(b"\0").decode()
    kind, _flags, offset, size, align = struct.unpack_from("<IIQQQ", entry, 32)
    print(f"section {name} kind {kind} size {size} align {align}")
    sections[name] = data[offset:offset + size]
print("plan magic", sections["plan"][:8].decode())
print("meta", json.dumps(json.loads(sections["meta"]), sort_keys=True))
if "requires" in sections:
    print("requires", sections["requires"].decode().replace("\n", " ").strip())
