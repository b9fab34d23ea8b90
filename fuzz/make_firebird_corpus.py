#!/usr/bin/env python3
"""Writes fuzz/corpus/fuzz_firebird/ seeds from a real Firebird database with 4 KiB pages
(run by hand; output committed): tests/firebird/make_dbs.sh /tmp/fb 2000 4096, then
fuzz/make_firebird_corpus.py /tmp/fb/db4096.fdb fuzz/corpus/fuzz_firebird; ODS 13.1 seeds
(name prefix ods131_, committed) from fb5_small_4096.fdb of ../shared/data/firebird5 (zstd -d
first); ODS 11.2 and 13.0 seeds (ods11_, ods13_) are made by fuzz/run.sh at run time from
../shared/data/firebird-real (Andrew-6676__chickenPrinter__DATABASE.FDB,
Lurbano1995__Api__DATABASE.FDB), files other people made, so not committed.
Seeds of ODS 11 and 13 end with one byte that makes fuzz_firebird.cc write that ODS's header
(1: 11.2, 2: 13.0, 3: 13.1).

Each seed is the pages 1..n that fuzz/fuzz_firebird.cc puts after its header page:
  rdb_pages      RDB$PAGES' pointer page (its data page slots renumbered to 2..) + its data pages
  relations      the same for RDB$RELATIONS (relation 6), as if it were RDB$PAGES
  leaf_<p>       single-page indexes (root = leaf, no siblings) of the database
  tree_<p>       a two-level index: the root and its first leaves, page numbers renumbered"""
import os
import struct
import sys

src, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
data = open(src, "rb").read()
ps = struct.unpack_from("<H", data, 16)[0]
assert ps == 4096
major = struct.unpack_from("<H", data, 18)[0] & 0x7FFF
minor = struct.unpack_from("<H", data, 62 if major <= 11 else 64)[0]
selector = {11: b"\x01", 12: b"", 13: b"\x03" if minor >= 1 else b"\x02"}[major]
prefix = {11: "ods11_", 12: "", 13: "ods131_" if minor >= 1 else "ods13_"}[major]
_open = open


def open(path, mode="r"):
    """Seed files: the prefix on the name and the ODS selector byte after the pages."""
    if "w" not in mode:
        return _open(path, mode)
    f = _open(os.path.join(os.path.dirname(path), prefix + os.path.basename(path)), mode)
    write = f.write
    f.write = lambda b: write(bytes(b) + selector)
    return f

page = lambda p: bytearray(data[p * ps:(p + 1) * ps])
n = len(data) // ps


def relation_seed(relation):
    ppgs = [p for p in range(n) if data[p * ps] == 4 and struct.unpack_from("<H", data, p * ps + 26)[0] == relation]
    ppg = page(ppgs[0])
    count = struct.unpack_from("<H", ppg, 24)[0]
    dps = [struct.unpack_from("<I", ppg, 32 + 4 * i)[0] for i in range(count)][:14]
    struct.pack_into("<H", ppg, 24, len(dps))
    struct.pack_into("<H", ppg, 26, 0)
    struct.pack_into("<I", ppg, 20, 0)
    pages = [ppg]
    for i, dp in enumerate(dps):
        struct.pack_into("<I", ppg, 32 + 4 * i, 2 + i)
        d = page(dp)
        struct.pack_into("<H", d, 20, 0)
        pages.append(d)
    return b"".join(pages)


open(os.path.join(out, "rdb_pages"), "wb").write(relation_seed(0))
open(os.path.join(out, "relations"), "wb").write(relation_seed(6))
leaves = [p for p in range(n) if data[p * ps] == 7 and data[p * ps + 33] == 0
          and struct.unpack_from("<II", data, p * ps + 16) == (0, 0)]
for p in leaves[:6]:
    open(os.path.join(out, f"leaf_{p}"), "wb").write(bytes(page(p)))
roots = [p for p in range(n) if data[p * ps] == 7 and data[p * ps + 33] == 1
         and struct.unpack_from("<II", data, p * ps + 16) == (0, 0)]
if roots:
    # Root at page 1 pointing at up to 3 leaves renumbered 2..4 (their sibling chain cut).
    root = page(roots[0])
    # Node 1 of the root: the degenerate node; follow the leftmost chain of leaves.
    first = None
    nodes = (struct.unpack_from("<H", root, 34)[0] if major == 11
             else 39 + struct.unpack_from("<H", root, 36)[0])
    b = root[nodes]
    # Decode the first node's page number: flag byte, recno varint, page varint.
    i = nodes + 1
    while root[i] & 0x80:
        i += 1
    i += 1
    v, shift = 0, 0
    while True:
        v |= (root[i] & 0x7F) << shift
        shift += 7
        if not root[i] & 0x80:
            break
        i += 1
    chain = [v]
    while len(chain) < 3:
        nxt = struct.unpack_from("<I", data, chain[-1] * ps + 16)[0]
        if nxt == 0:
            break
        chain.append(nxt)
    pages = [root]
    for k, lp in enumerate(chain):
        leaf = page(lp)
        struct.pack_into("<I", leaf, 20, 0 if k == 0 else 2 + k - 1)
        struct.pack_into("<I", leaf, 16, 0 if k == len(chain) - 1 else 2 + k + 1)
        pages.append(leaf)
    open(os.path.join(out, f"tree_{roots[0]}"), "wb").write(b"".join(pages))
print(f"wrote seeds to {out}")
