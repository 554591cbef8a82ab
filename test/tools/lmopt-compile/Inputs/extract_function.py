"""Writes one function of an .mlir file as @main of a file of its own.

usage: extract_function.py SOURCE.mlir NAME OUT.mlir

lmopt-compile compiles @main; the e2e op tests keep several variants of an
op as functions of one file, so a test compiles each by extracting it.
"""
import re
import sys


def main():
    source, name, out = sys.argv[1:4]
    text = open(source).read()
    match = re.search(r"^func\.func @%s\(.*?^}\n" % re.escape(name), text,
                      re.S | re.M)
    if not match:
        sys.exit("extract_function.py: no function @%s in %s" % (name, source))
    body = match.group(0).replace("func.func @%s(" % name, "func.func @main(",
                                  1)
    with open(out, "w") as f:
        f.write(body)


if __name__ == "__main__":
    main()
