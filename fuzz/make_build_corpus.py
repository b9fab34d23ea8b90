#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_build (fuzz/corpus/fuzz_build/): small CSVs with NULLs first
and last, empty strings, duplicates and each type's extremes, for every type and direction of
fuzz/fuzz_build.cc's byte 0, some long enough for several leaves. Run by hand when the input
format of fuzz_build changes; the output is committed.
Usage: fuzz/make_build_corpus.py [corpus dir] (default fuzz/corpus/fuzz_build)"""
import os
import random
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "fuzz_build")
TYPES = ["smallint", "integer", "bigint", "int128", "double", "numeric18", "varchar12", "varchar40"]


def value(kind, r):
    if kind.startswith("varchar"):
        n = 12 if kind == "varchar12" else 40
        return "".join(chr(r.randrange(0x61, 0x64)) for _ in range(r.randrange(0, n + 1)))
    if kind == "double":
        return str(r.randrange(-50, 50) * 0.375)
    if kind == "numeric18":
        return "%d.%03d" % (r.randrange(-10**12, 10**12), r.randrange(1000))
    return str(r.randrange(-300, 300) * {"smallint": 100, "integer": 7000000}.get(kind, 10**15))


def write(name, byte0, byte1, lines):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([byte0, byte1]) + "\n".join(lines).encode() + b"\n")


os.makedirs(OUT, exist_ok=True)
r = random.Random(30)
for t, kind in enumerate(TYPES):
    for desc in (0, 1):
        b0 = t | desc << 3
        empty = ['""'] if kind.startswith("varchar") else []
        write(f"{kind}_{desc}_null_first", b0, 0x83, ["", ""] + empty + ["1" if not kind.startswith("varchar") else "a"])
        write(f"{kind}_{desc}_null_last", b0, 0x42, [value(kind, r) for _ in range(20)] + empty + ["", ""])
        write(f"{kind}_{desc}_extremes", b0 | 0x10, 0x25, ["$", "^", "", "$", "^"] + [value(kind, r) for _ in range(10)])
        write(f"{kind}_{desc}_nulls_only", b0, 0x11, ["" for _ in range(30)])
    n = 300 if kind.startswith("varchar") else 1200
    rows = [value(kind, r) if i % 17 else "" for i in range(n)]
    write(f"{kind}_pages", t, 0x97, rows)
print(f"wrote {len(os.listdir(OUT))} files to {OUT}")
