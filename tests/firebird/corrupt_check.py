#!/usr/bin/env python3
"""Part of ctest firebird_stat_compare: damaged copies of a real Firebird database.

usage: corrupt_check.py PBTREE DB.fdb SCRATCH_DIR

Each copy is damaged one way (truncated, header ODS changed to 13, an index root page zeroed,
random bytes over b-tree, data and pointer pages; seeded, so every run tries the same copies).
`pbtree stat --firebird` (and --what-if on some) must then either succeed or exit 1 with one
line "pbtree: FILE: ..." naming the page and page type where a page is at fault, never
crash, hang or print a stack. Prints one line per copy; exit 1 on any bad outcome."""
import os
import random
import re
import shutil
import struct
import subprocess
import sys

pbtree, src, scratch = sys.argv[1:4]
os.makedirs(scratch, exist_ok=True)
data = open(src, "rb").read()
ps = struct.unpack_from("<H", data, 16)[0]
npages = len(data) // ps
types = [data[p * ps] for p in range(npages)]
# Data and pointer pages of the system relations 0..6 (the ones pbtree reads).
system = [p for p in range(npages)
          if (types[p] == 5 and struct.unpack_from("<H", data, p * ps + 20)[0] <= 6)
          or (types[p] == 4 and struct.unpack_from("<H", data, p * ps + 26)[0] <= 6)]
rng = random.Random(20261201)
failures = 0
page_msg = re.compile(r"^pbtree: \S+: (index \S+: )?page \d+ \([a-z -]+\): .+$")


def check(name, image, expect=None, what_if=False):
    global failures
    path = os.path.join(scratch, "damaged.fdb")
    with open(path, "wb") as f:
        f.write(image)
    args = [pbtree, "stat", "--firebird", path] + (["--what-if"] if what_if else [])
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        failures += 1
        print(f"FAIL {name}: timed out")
        return
    err = r.stderr.strip()
    ok = r.returncode == 0 or (r.returncode == 1 and err.startswith("pbtree: ") and "\n" not in err)
    if ok and expect is not None:
        ok = r.returncode == 1 and re.search(expect, err) is not None
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {r.returncode} {err[:150]}")
    if not ok:
        failures += 1


check("truncated to half", data[: len(data) // 2], r": page \d+ \([a-z -]+\): ")
check("truncated inside the header", data[:50], r"not a Firebird database")
ods14 = bytearray(data)
struct.pack_into("<H", ods14, 18, 0x800E)
check("ODS 14.0 header", bytes(ods14), r"ODS 14\.0 \(Firebird 6\) is not read: pbtree reads ODS 11\.0")
ods10 = bytearray(data)
struct.pack_into("<H", ods10, 18, 0x000A)
struct.pack_into("<H", ods10, 62, 0)  # hdr_ods_minor of ODS 10
check("ODS 10.0 header", bytes(ods10), r"an InterBase 6 / Firebird 1\.x database \(ODS 10\.0\)")
# An ODS 12 file whose header says 13.0: the system relations decode to nothing, which must
# be an error naming the file, not an empty catalog with exit 0.
ods13 = bytearray(data)
struct.pack_into("<H", ods13, 18, 0x800D)
struct.pack_into("<H", ods13, 64, 0)
check("ODS 12 file relabelled 13.0", bytes(ods13), r"^pbtree: \S+damaged\.fdb: catalog not found: ")
for kind, name in ((6, "index root"), (4, "pointer")):
    pages = [p for p in range(npages) if types[p] == kind]
    img = bytearray(data)
    p = pages[len(pages) - 1]
    img[p * ps + 16 : (p + 1) * ps] = bytes(ps - 16)
    check(f"{name} page {p} zeroed after its header", bytes(img))
for kind, name, count in ((7, "b-tree", 16), (5, "system data", 12), (4, "system pointer", 4),
                          (6, "index root", 6)):
    pages = [p for p in range(npages) if types[p] == kind and (kind in (6, 7) or p in system)]
    for i in range(count):
        p = rng.choice(pages)
        img = bytearray(data)
        off = rng.randrange(16, ps - 64)
        img[p * ps + off : p * ps + off + 64] = bytes(rng.randrange(256) for _ in range(64))
        check(f"{name} page {p}: 64 random bytes at {off}", bytes(img), what_if=(i % 6 == 0))
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
