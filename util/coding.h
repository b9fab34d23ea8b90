// Byte coding of on-disk integers, the one home of every fixed-width and varint codec:
// little-endian fields of pages (native on x86-64, as Firebird's), big-endian words of
// normalized keys, and the 7-bit varints of B-tree nodes (least-significant group first, 0x80
// = another byte follows) with an inline unchecked fast path, and their 128-bit form (the packed
// leaf blocks' streams, node/packed_block.h). Depends on nothing of pbtree.
#pragma once

#include <cstdint>
#include <cstring>

namespace pbtree {

/// Little-endian field access on page bytes.
inline uint16_t get_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t get_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void put_u16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}
inline void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline void put_u64(uint8_t* p, uint64_t v) {
  std::memcpy(p, &v, 8);
}

/// Big-endian 8-byte store (normalized key words).
inline void store_be64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

/// Bytes of a 7-bit varint of the unsigned `value` (64 bits: 1..10; 128 bits: 1..19).
template <class U>
inline uint32_t varint_size_of(U value) {
  uint32_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

/// Writes the unsigned `value` as a 7-bit varint at `out`; returns the bytes written.
template <class U>
inline uint32_t put_varint_of(U value, uint8_t* out) {
  uint32_t n = 0;
  do {
    uint8_t b = value & 0x7F;
    value >>= 7;
    if (value != 0) b |= 0x80;
    out[n++] = b;
  } while (value != 0);
  return n;
}

/// Bytes of a 7-bit varint of `value` (1..10).
inline uint32_t varint_size(uint64_t value) {
  return varint_size_of(value);
}

/// Writes `value` as a 7-bit varint at `out`; returns the bytes written (varint_size()).
inline uint32_t put_varint(uint64_t value, uint8_t* out) {
  return put_varint_of(value, out);
}

/// A varint of at most `max_bytes` bytes at p, no bounds checks (the caller made sure they are
/// readable); false if it is longer. Advances p past the bytes read.
[[gnu::always_inline]] inline bool quick_varint(const uint8_t*& p, int max_bytes, uint64_t& value) {
  uint8_t b = *p++;
  value = b & 0x7Fu;
  if ((b & 0x80) == 0) return true;
  for (int i = 1; i < max_bytes; ++i) {
    b = *p++;
    value |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

/// Bytes of a 7-bit varint of the 128-bit `value` (1..19).
inline uint32_t varint128_size(unsigned __int128 value) {
  return varint_size_of(value);
}

/// Writes the 128-bit `value` as a 7-bit varint at `out`; returns the bytes written.
inline uint32_t put_varint128(unsigned __int128 value, uint8_t* out) {
  return put_varint_of(value, out);
}

/// Reads a 128-bit varint from the `available` bytes at `p`; returns the bytes it took, or 0
/// when it runs past them or holds more than 128 bits.
inline uint32_t read_varint128(const uint8_t* p, size_t available, unsigned __int128& value) {
  value = 0;
  for (uint32_t i = 0; i < 19 && i < available; ++i) {
    const uint8_t b = p[i];
    if (i == 18 && (b & 0x7C) != 0) return 0;  // bits past 2^128
    value |= static_cast<unsigned __int128>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) return i + 1;
  }
  return 0;
}

}  // namespace pbtree
