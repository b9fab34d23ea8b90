// The block codec of the packed leaf layout (issue 29; docs/FORMAT.md "Packed leaf blocks"):
// up to 128 sorted (normalized key, record number) entries whose keys share a prefix, coded as
// a head (the first key in full, the first record number) and bit-packed streams of key deltas,
// key lengths and record numbers, each stream in the smallest of a few modes (as DuckDB's
// bitpacking picks CONSTANT_DELTA, DELTA_FOR or FOR per group). The codec only: no page or
// tree uses it yet; perf/packed_size/packed_size.cc measures what it would take on real key sets.
//
// Block, byte by byte (every multi-byte integer little-endian; bit fields least-significant
// bit first, each packed run starting on a byte boundary):
//   0      count - 1 (count 1..128)
//   1      modes: bits 0-1 key mode, bits 2-3 record-number mode, bit 4 length mode, bit 5
//          value space, bit 6 record-number deltas downward, bit 7 zero
//   2      W: key width in bytes after the prefix (0..16; 0xFF in raw key mode, 0xFE in
//          value space)
//   3      L0: the first key's length after the prefix, then its L0 bytes
//   +L0    the first record number, 5 bytes (40 bits)
//   then, for count > 1, the key stream, the length stream, the record-number stream.
// Keys after the prefix are read as W-byte big-endian integers, pad bytes appended: 0x00 on an
// ascending page, 0xFF on a descending one, where a shorter key sorts last (docs/FORMAT.md
// §1.1). Index order is then integer order, so key deltas are never negative:
//   key mode 0 CONSTANT_DELTA  varint d: key i = key 0 + i * d (0 bits per entry)
//   key mode 1 DELTA_FOR       varint base, u8 width, (count-1) * width bits of delta - base
//   key mode 2 DELTA_PATCHED   as 1, then u8 exceptions, each u8 position (1..count-1) and
//                              varint delta - base; the packed slot of an exception holds 0
//   key mode 3 RAW             per key i >= 1: u8 bytes shared with key i-1, u8 rest length,
//                              the rest (keys wider than 16 bytes after the prefix); no W, no
//                              length stream
// Value space (modes bit 5, W = 0xFE; only with the index's key type, PackedKeyType): the key
// stream, in modes 0-2, holds the deltas of the keys' exact values (the integer, or NUMERIC's
// coefficient, that key_to_value gives; key 0's value from the head key), taken in index order
// (descending: value i-1 - value i); each key is build_key of its value; no length stream.
// The encoder takes it when every key is non-NULL, rebuilds exactly from its value, and the
// block comes out smaller.
// Varints here are 7-bit groups, least significant first (up to 128 bits).
//   length mode 0 IMPLIED      a key's length is its W-byte value without trailing pad bytes
//                              (used when that gives every key's length back)
//   length mode 1 FOR          u8 base, u8 width, (count-1) * width bits of length - base
// Record numbers (40 bits):
//   modes 0-2 as the key modes, on the deltas: recno i - recno i-1 when record numbers never
//                              decrease, recno i-1 - recno i (bit 6) when they never increase
//   mode 3 FOR                 varint base, u8 width, (count-1) * width bits of recno - base
#pragma once

#include <pbtree/keys.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pbtree {

/// One entry to pack: its normalized key (in full, prefix included) and record number.
struct PackedEntry {
  std::span<const uint8_t> key;
  uint64_t recno = 0;
};

/// Most entries in one block.
constexpr size_t kPackedBlockMax = 128;

/// The modes a block was coded in (bytes 1 and 2 of the block, decoded).
struct PackedModes {
  uint8_t key = 0;     ///< 0 CONSTANT_DELTA, 1 DELTA_FOR, 2 DELTA_PATCHED, 3 RAW
  uint8_t recno = 0;   ///< 0 CONSTANT_DELTA, 1 DELTA_FOR, 2 DELTA_PATCHED, 3 FOR
  uint8_t length = 0;  ///< 0 IMPLIED, 1 FOR
  uint8_t width = 0;   ///< W, key bytes after the prefix (0xFF: raw, 0xFE: value space)
  bool value_space = false;
  bool recno_down = false;  ///< record-number deltas taken downward (modes bit 6)
};

/// The key type of an index, for value-space blocks: keys of an exact type (smallint, integer,
/// bigint, int128, numeric) in any key format.
struct PackedKeyType {
  TypeSpec type;
  KeyFormat format = KeyFormat::TypeDefault;
  bool descending = false;
};

/// A decoded block: the keys after the prefix, concatenated (key i is
/// keys[key_end[i-1] .. key_end[i])), and the record numbers.
struct PackedBlock {
  std::vector<uint8_t> keys;
  std::vector<uint32_t> key_end;
  std::vector<uint64_t> recnos;
  PackedModes modes;
  size_t size() const { return recnos.size(); }
  std::span<const uint8_t> key(size_t i) const {
    const uint32_t from = i == 0 ? 0 : key_end[i - 1];
    return std::span<const uint8_t>(keys).subspan(from, key_end[i] - from);
  }
};

/// Bytes of each part of an encoded block (encode_packed_block fills it when asked).
struct PackedBlockSizes {
  size_t head = 0;     ///< bytes 0..2, the first key and the first record number
  size_t keys = 0;     ///< the key stream
  size_t lengths = 0;  ///< the length stream
  size_t recnos = 0;   ///< the record-number stream
};

/// Appends the block of `entries` (1..kPackedBlockMax, in the index's (key, recno) order for
/// `descending` (compare_keys), every key at
/// least `prefix` bytes long and sharing its first `prefix` bytes) to `out`; returns its size
/// in bytes. Throws UsageError on an empty or too long run, a record number over 40 bits, or
/// entries out of order. `sizes`, if given, receives the bytes of each part. With `key_type`
/// the block may be coded in value space (see the top of this file).
size_t encode_packed_block(std::span<const PackedEntry> entries, uint32_t prefix, bool descending,
                           std::vector<uint8_t>& out, PackedBlockSizes* sizes = nullptr,
                           const PackedKeyType* key_type = nullptr);

/// Decodes the block at the start of `in` into `block`, reading no byte past `in`; returns
/// the bytes it took. Throws CorruptError on a block that no encoder writes (bad count, mode,
/// width, lengths or positions, a run past the end, keys or record numbers out of order), and
/// on a value-space block without `key_type` or whose values it cannot hold. A value-space
/// block needs `key_type` and the `prefix` bytes its keys were coded after.
size_t decode_packed_block(std::span<const uint8_t> in, bool descending, PackedBlock& block,
                           const PackedKeyType* key_type = nullptr,
                           std::span<const uint8_t> prefix = {});

}  // namespace pbtree
