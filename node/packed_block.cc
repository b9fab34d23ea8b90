// The packed leaf block codec (node/packed_block.h, where the block is described byte by
// byte): mode choice by exact coded size, bit packing, and the checked decoder.
#include "node/packed_block.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "util/coding.h"

namespace pbtree {

namespace {

using u128 = unsigned __int128;

constexpr uint64_t kMaxRecno = (uint64_t{1} << 40) - 1;

uint32_t bit_width(u128 v) {
  uint32_t w = 0;
  while (v != 0) {
    ++w;
    v >>= 1;
  }
  return w;
}

size_t varint_bytes(u128 v) {
  return varint128_size(v);
}

void put_varint(std::vector<uint8_t>& out, u128 v) {
  uint8_t bytes[19];
  const uint32_t n = put_varint128(v, bytes);
  out.insert(out.end(), bytes, bytes + n);
}

size_t packed_bytes(size_t count, uint32_t width) {
  return (count * width + 7) / 8;
}

// Appends `values` at `width` bits each, least-significant bit first.
void put_bits(std::vector<uint8_t>& out, std::span<const u128> values, uint32_t width) {
  const size_t start = out.size();
  out.resize(start + packed_bytes(values.size(), width), 0);
  uint8_t* p = out.data() + start;
  size_t bit = 0;
  for (u128 v : values) {
    for (uint32_t b = 0; b < width; ++b, ++bit) {
      if ((v >> b) & 1) p[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
    }
  }
}

// The cheapest of CONSTANT_DELTA, DELTA_FOR and DELTA_PATCHED for `deltas`.
struct DeltaPlan {
  uint8_t mode = 0;
  u128 base = 0;
  uint32_t width = 0;
  size_t bytes = 0;
};

DeltaPlan plan_deltas(std::span<const u128> deltas) {
  const u128 lo = *std::min_element(deltas.begin(), deltas.end());
  const u128 hi = *std::max_element(deltas.begin(), deltas.end());
  if (lo == hi) return {0, lo, 0, varint_bytes(lo)};
  const uint32_t full = bit_width(hi - lo);
  DeltaPlan best{1, lo, full, varint_bytes(lo) + 1 + packed_bytes(deltas.size(), full)};
  for (uint32_t w = 0; w < full; ++w) {
    size_t patches = 0, exceptions = 0;
    for (u128 d : deltas) {
      if (bit_width(d - lo) > w) {
        ++exceptions;
        patches += 1 + varint_bytes(d - lo);
      }
    }
    if (exceptions > 255) continue;
    const size_t bytes = varint_bytes(lo) + 2 + packed_bytes(deltas.size(), w) + patches;
    if (bytes < best.bytes) best = {2, lo, w, bytes};
  }
  return best;
}

void put_deltas(std::vector<uint8_t>& out, const DeltaPlan& plan, std::span<const u128> deltas) {
  put_varint(out, plan.base);
  if (plan.mode == 0) return;
  out.push_back(static_cast<uint8_t>(plan.width));
  std::vector<u128> slots(deltas.size());
  std::vector<size_t> exceptions;
  for (size_t i = 0; i < deltas.size(); ++i) {
    const u128 v = deltas[i] - plan.base;
    if (plan.mode == 2 && bit_width(v) > plan.width) {
      exceptions.push_back(i);
    } else {
      slots[i] = v;
    }
  }
  if (plan.mode == 2) out.push_back(static_cast<uint8_t>(exceptions.size()));
  put_bits(out, slots, plan.width);
  for (size_t i : exceptions) {
    out.push_back(static_cast<uint8_t>(i + 1));
    put_varint(out, deltas[i] - plan.base);
  }
}

// The pad byte after a key's end: 0x00 ascending, 0xFF descending (a shorter key sorts last
// there, docs/FORMAT.md §1.1), so that padded keys in index order never decrease.
uint8_t pad_byte(bool descending) {
  return descending ? 0xFF : 0x00;
}

u128 key_value(std::span<const uint8_t> suffix, uint32_t width, uint8_t pad) {
  u128 v = 0;
  for (uint32_t i = 0; i < width; ++i) v = (v << 8) | (i < suffix.size() ? suffix[i] : pad);
  return v;
}

// Bytes of the W-byte big-endian `v` without trailing pad bytes.
uint32_t implied_length(u128 v, uint32_t width, uint8_t pad) {
  uint32_t len = width;
  while (len > 0 && static_cast<uint8_t>(v >> (8 * (width - len))) == pad) --len;
  return len;
}

// Reads the block, every read checked against the end of `in`.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  size_t pos() const { return pos_; }
  uint8_t byte() {
    need(1);
    return in_[pos_++];
  }
  const uint8_t* bytes(size_t n) {
    need(n);
    const uint8_t* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  u128 varint() {
    u128 v = 0;
    const uint32_t n = read_varint128(in_.data() + pos_, in_.size() - pos_, v);
    if (n == 0) fail("a varint past the block's end or over 128 bits");
    pos_ += n;
    return v;
  }
  // `count` values of `width` bits.
  void bits(size_t count, uint32_t width, std::vector<u128>& out) {
    const uint8_t* p = bytes(packed_bytes(count, width));
    out.assign(count, 0);
    size_t bit = 0;
    for (size_t i = 0; i < count; ++i) {
      for (uint32_t b = 0; b < width; ++b, ++bit) {
        if ((p[bit / 8] >> (bit % 8)) & 1) out[i] |= u128{1} << b;
      }
    }
  }
  [[noreturn]] static void fail(const std::string& why) {
    throw CorruptError(fmt::format("packed block: {}", why));
  }

 private:
  void need(size_t n) {
    if (in_.size() - pos_ < n) fail("runs past its end");
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

// The deltas of a stream in modes 0..2 (`count` of them), each at most `max_bits` wide.
void read_deltas(Reader& r, uint8_t mode, size_t count, uint32_t max_bits, std::vector<u128>& out) {
  const u128 base = r.varint();
  if (bit_width(base) > max_bits) Reader::fail("a delta base wider than its values");
  if (mode == 0) {
    out.assign(count, base);
    return;
  }
  const uint32_t width = r.byte();
  if (width > max_bits) Reader::fail(fmt::format("bit width {} over {}", width, max_bits));
  size_t exceptions = 0;
  if (mode == 2) exceptions = r.byte();
  r.bits(count, width, out);
  uint32_t last = 0;
  for (size_t e = 0; e < exceptions; ++e) {
    const uint32_t at = r.byte();
    if (at == 0 || at > count || at <= last) Reader::fail("exception positions out of order");
    last = at;
    const u128 v = r.varint();
    if (out[at - 1] != 0) Reader::fail("an exception's slot is not 0");
    out[at - 1] = v;
  }
  for (u128& d : out) {
    if (bit_width(d) > max_bits || bit_width(d + base) > max_bits || d + base < d) {
      Reader::fail("a delta wider than its values");
    }
    d += base;
  }
}

// The value-space key stream of `entries` (deltas of their exact values in index order), if
// every key is non-NULL and rebuilds exactly from its value; false otherwise.
bool value_deltas(std::span<const PackedEntry> entries, const PackedKeyType& kt,
                  std::vector<u128>& deltas) {
  if (kt.type.type == ColumnType::Double || kt.type.type == ColumnType::Varchar) return false;
  deltas.clear();
  std::string storage;
  KeyBuffer k;
  __int128 prev = 0;
  uint8_t scale = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    Value v;
    try {
      v = key_to_value(kt.type, kt.format, kt.descending, entries[i].key, storage);
      if (v.kind != Value::Kind::Exact) return false;
      build_key(kt.type, kt.format, v, kt.descending, k);
    } catch (const Error&) {
      return false;
    }
    if (!std::equal(k.bytes().begin(), k.bytes().end(), entries[i].key.begin(),
                    entries[i].key.end())) {
      return false;
    }
    if (i == 0) {
      scale = v.scale;
    } else {
      if (v.scale != scale) return false;
      __int128 d = 0;
      const bool over = kt.descending ? __builtin_sub_overflow(prev, v.coefficient, &d)
                                      : __builtin_sub_overflow(v.coefficient, prev, &d);
      if (over || d < 0) return false;
      deltas.push_back(static_cast<u128>(d));
    }
    prev = v.coefficient;
  }
  return true;
}

}  // namespace

size_t encode_packed_block(std::span<const PackedEntry> entries, uint32_t prefix, bool descending,
                           std::vector<uint8_t>& out, PackedBlockSizes* sizes,
                           const PackedKeyType* key_type) {
  const uint8_t pad = pad_byte(descending);
  if (key_type != nullptr && key_type->descending != descending) {
    throw UsageError("packed block: the key type's direction is not the block's");
  }
  const size_t n = entries.size();
  if (n == 0 || n > kPackedBlockMax) {
    throw UsageError(fmt::format("packed block: {} entries (1..{})", n, kPackedBlockMax));
  }
  uint32_t width = 0;
  for (size_t i = 0; i < n; ++i) {
    const PackedEntry& e = entries[i];
    if (e.recno > kMaxRecno) throw UsageError("packed block: a record number over 40 bits");
    if (e.key.size() < prefix || e.key.size() - prefix > 255 ||
        (i > 0 && prefix > 0 && std::memcmp(e.key.data(), entries[0].key.data(), prefix) != 0)) {
      throw UsageError("packed block: a key that does not share the prefix");
    }
    if (i > 0) {
      const int c = compare_keys(entries[i - 1].key, e.key, descending);
      if (c > 0 || (c == 0 && entries[i - 1].recno >= e.recno)) {
        throw UsageError("packed block: entries out of (key, record number) order");
      }
    }
    width = std::max<uint32_t>(width, static_cast<uint32_t>(e.key.size() - prefix));
  }
  const size_t start = out.size();
  const bool raw = width > 16;
  const std::span<const uint8_t> k0 = entries[0].key.subspan(prefix);
  out.push_back(static_cast<uint8_t>(n - 1));
  out.push_back(0);  // modes, set below
  out.push_back(raw ? 0xFF : static_cast<uint8_t>(width));
  out.push_back(static_cast<uint8_t>(k0.size()));
  out.insert(out.end(), k0.begin(), k0.end());
  for (int b = 0; b < 5; ++b) out.push_back(static_cast<uint8_t>(entries[0].recno >> (8 * b)));
  PackedBlockSizes part;
  part.head = out.size() - start;
  if (n == 1) {
    if (sizes != nullptr) *sizes = part;
    return out.size() - start;
  }

  uint8_t key_mode = 3, length_mode = 0;
  if (raw) {
    for (size_t i = 1; i < n; ++i) {
      const auto a = entries[i - 1].key.subspan(prefix), b = entries[i].key.subspan(prefix);
      size_t shared = 0;
      while (shared < a.size() && shared < b.size() && a[shared] == b[shared]) ++shared;
      out.push_back(static_cast<uint8_t>(shared));
      out.push_back(static_cast<uint8_t>(b.size() - shared));
      out.insert(out.end(), b.begin() + shared, b.end());
    }
  } else {
    std::vector<u128> deltas(n - 1);
    u128 prev = key_value(k0, width, pad);
    bool implied = implied_length(prev, width, pad) == k0.size();
    uint32_t lmin = 255, lmax = 0;
    for (size_t i = 1; i < n; ++i) {
      const auto s = entries[i].key.subspan(prefix);
      const u128 v = key_value(s, width, pad);
      deltas[i - 1] = v - prev;
      prev = v;
      implied = implied && implied_length(v, width, pad) == s.size();
      lmin = std::min<uint32_t>(lmin, static_cast<uint32_t>(s.size()));
      lmax = std::max<uint32_t>(lmax, static_cast<uint32_t>(s.size()));
    }
    const DeltaPlan plan = plan_deltas(deltas);
    key_mode = plan.mode;
    put_deltas(out, plan, deltas);
    part.keys = out.size() - start - part.head;
    if (!implied) {
      length_mode = 1;
      const uint32_t lw = bit_width(lmax - lmin);
      out.push_back(static_cast<uint8_t>(lmin));
      out.push_back(static_cast<uint8_t>(lw));
      std::vector<u128> lengths(n - 1);
      for (size_t i = 1; i < n; ++i) lengths[i - 1] = entries[i].key.size() - prefix - lmin;
      put_bits(out, lengths, lw);
    }
    part.lengths = out.size() - start - part.head - part.keys;
  }
  if (raw) part.keys = out.size() - start - part.head;
  std::vector<u128> vdeltas;
  bool value_space = false;
  if (key_type != nullptr && value_deltas(entries, *key_type, vdeltas)) {
    const DeltaPlan plan = plan_deltas(vdeltas);
    if (plan.bytes < part.keys + part.lengths) {
      value_space = true;
      out.resize(start + part.head);
      put_deltas(out, plan, vdeltas);
      key_mode = plan.mode;
      length_mode = 0;
      out[start + 2] = 0xFE;
      part.keys = out.size() - start - part.head;
      part.lengths = 0;
    }
  }

  // Record numbers: deltas when they never decrease (or, bit 6, never increase: a descending
  // index over rising record numbers), else FOR over the values.
  bool rising = true, falling = true;
  for (size_t i = 1; i < n; ++i) {
    rising = rising && entries[i].recno >= entries[i - 1].recno;
    falling = falling && entries[i].recno <= entries[i - 1].recno;
  }
  std::vector<u128> values(n - 1);
  u128 lo = ~u128{0}, hi = 0;
  for (size_t i = 1; i < n; ++i) {
    values[i - 1] = entries[i].recno;
    lo = std::min(lo, values[i - 1]);
    hi = std::max(hi, values[i - 1]);
  }
  const uint32_t fw = bit_width(hi - lo);
  const size_t for_bytes = varint_bytes(lo) + 1 + packed_bytes(n - 1, fw);
  uint8_t recno_mode = 3;
  bool recno_down = false;
  if (rising || falling) {
    std::vector<u128> deltas(n - 1);
    for (size_t i = 1; i < n; ++i) {
      deltas[i - 1] = rising ? entries[i].recno - entries[i - 1].recno
                             : entries[i - 1].recno - entries[i].recno;
    }
    const DeltaPlan plan = plan_deltas(deltas);
    if (plan.bytes <= for_bytes) {
      recno_mode = plan.mode;
      recno_down = !rising;
      put_deltas(out, plan, deltas);
    }
  }
  if (recno_mode == 3) {
    put_varint(out, lo);
    out.push_back(static_cast<uint8_t>(fw));
    for (u128& v : values) v -= lo;
    put_bits(out, values, fw);
  }
  out[start + 1] = static_cast<uint8_t>(key_mode | (recno_mode << 2) | (length_mode << 4) |
                                        (value_space ? 0x20 : 0) | (recno_down ? 0x40 : 0));
  part.recnos = out.size() - start - part.head - part.keys - part.lengths;
  if (sizes != nullptr) *sizes = part;
  return out.size() - start;
}

size_t decode_packed_block(std::span<const uint8_t> in, bool descending, PackedBlock& block,
                           const PackedKeyType* key_type, std::span<const uint8_t> prefix) {
  const uint8_t pad = pad_byte(descending);
  if (key_type != nullptr && key_type->descending != descending) {
    throw UsageError("packed block: the key type's direction is not the block's");
  }
  Reader r(in);
  const size_t n = size_t{r.byte()} + 1;
  if (n > kPackedBlockMax) Reader::fail(fmt::format("{} entries (most {})", n, kPackedBlockMax));
  const uint8_t modes = r.byte();
  if (modes >> 7) Reader::fail("unknown mode bits");
  PackedModes& m = block.modes;
  m.key = modes & 3;
  m.recno = (modes >> 2) & 3;
  m.length = (modes >> 4) & 1;
  m.recno_down = (modes & 0x40) != 0;
  if (m.recno_down && m.recno == 3) Reader::fail("falling record numbers in FOR");
  m.value_space = (modes & 0x20) != 0;
  m.width = r.byte();
  const bool raw = m.width == 0xFF;
  if (m.value_space != (m.width == 0xFE)) Reader::fail("value space without its key width");
  if (m.value_space && (m.key == 3 || m.length != 0)) Reader::fail("value space in raw mode");
  if (m.value_space && key_type == nullptr) Reader::fail("value space without the key type");
  if (!raw && !m.value_space && m.width > 16) {
    Reader::fail(fmt::format("key width {} (at most 16)", m.width));
  }
  if (n > 1 && raw != (m.key == 3)) Reader::fail("raw key width without raw key mode");
  if (raw && m.length != 0) Reader::fail("a length stream with raw keys");
  const uint32_t l0 = r.byte();
  if (!raw && !m.value_space && l0 > m.width) {
    Reader::fail("a first key longer than the key width");
  }
  const uint8_t* k0 = r.bytes(l0);
  block.keys.assign(k0, k0 + l0);
  block.key_end.assign(1, l0);
  const uint8_t* rb = r.bytes(5);
  uint64_t recno0 = 0;
  for (int b = 0; b < 5; ++b) recno0 |= uint64_t{rb[b]} << (8 * b);
  block.recnos.assign(1, recno0);
  if (n == 1) return r.pos();

  const uint32_t width = raw || m.value_space ? 0 : m.width;
  if (m.value_space) {
    std::vector<u128> deltas;
    read_deltas(r, m.key, n - 1, 128, deltas);
    const PackedKeyType& kt = *key_type;
    std::vector<uint8_t> full(prefix.begin(), prefix.end());
    full.insert(full.end(), block.keys.begin(), block.keys.end());
    std::string storage;
    KeyBuffer k;
    Value v;
    try {
      v = key_to_value(kt.type, kt.format, kt.descending, full, storage);
    } catch (const Error& e) {
      Reader::fail(fmt::format("value space: the first key: {}", e.what()));
    }
    if (v.kind != Value::Kind::Exact) Reader::fail("value space: a first key without a value");
    for (size_t i = 1; i < n; ++i) {
      const u128 d = deltas[i - 1];
      if (d > static_cast<u128>(~u128{0} >> 1)) Reader::fail("value space: a delta over 2^127");
      const __int128 sd = static_cast<__int128>(d);
      __int128 c = 0;
      const bool over = kt.descending ? __builtin_sub_overflow(v.coefficient, sd, &c)
                                      : __builtin_add_overflow(v.coefficient, sd, &c);
      if (over) Reader::fail("value space: a value past 128 bits");
      v.coefficient = c;
      try {
        build_key(kt.type, kt.format, v, kt.descending, k);
      } catch (const Error& e) {
        Reader::fail(fmt::format("value space: key {}: {}", i, e.what()));
      }
      const auto key = k.bytes();
      if (key.size() < prefix.size() || !std::equal(prefix.begin(), prefix.end(), key.begin()) ||
          key.size() - prefix.size() > 255) {
        Reader::fail(fmt::format("value space: key {} does not share the prefix", i));
      }
      block.keys.insert(block.keys.end(), key.begin() + prefix.size(), key.end());
      block.key_end.push_back(static_cast<uint32_t>(block.keys.size()));
    }
  } else if (raw) {
    for (size_t i = 1; i < n; ++i) {
      const uint32_t prev_start = i == 1 ? 0 : block.key_end[i - 2];
      const uint32_t prev_len = block.key_end[i - 1] - prev_start;
      const uint32_t shared = r.byte();
      const uint32_t rest = r.byte();
      if (shared > prev_len) Reader::fail("a raw key sharing more than its predecessor has");
      if (shared + rest > 255) Reader::fail("a raw key longer than 255 bytes");
      const uint8_t* p = r.bytes(rest);
      const size_t at = block.keys.size();
      block.keys.resize(at + shared + rest);
      std::copy_n(block.keys.begin() + prev_start, shared, block.keys.begin() + at);
      std::copy_n(p, rest, block.keys.begin() + at + shared);
      block.key_end.push_back(static_cast<uint32_t>(block.keys.size()));
    }
  } else {
    std::vector<u128> deltas;
    read_deltas(r, m.key, n - 1, width * 8, deltas);
    std::vector<u128> lengths;
    uint32_t lmin = 0;
    if (m.length == 1) {
      lmin = r.byte();
      const uint32_t lw = r.byte();
      if (lw > 5) Reader::fail(fmt::format("length width {} (at most 5)", lw));
      r.bits(n - 1, lw, lengths);
    }
    u128 v = key_value(std::span<const uint8_t>(block.keys.data(), l0), width, pad);
    if (m.length == 0 && implied_length(v, width, pad) != l0) {
      Reader::fail("the first key's length is not the implied one");
    }
    for (size_t i = 1; i < n; ++i) {
      const u128 next = v + deltas[i - 1];
      if (next < v || (width < 16 && bit_width(next) > width * 8)) {
        Reader::fail("a key past the key width");
      }
      v = next;
      const uint32_t len = m.length == 0 ? implied_length(v, width, pad)
                                         : lmin + static_cast<uint32_t>(lengths[i - 1]);
      if (len > width) Reader::fail("a key longer than the key width");
      for (uint32_t b = 0; b < len; ++b) {
        block.keys.push_back(static_cast<uint8_t>(v >> (8 * (width - 1 - b))));
      }
      // The bytes cut off must be pad bytes: they are part of the integer.
      for (uint32_t b = len; b < width; ++b) {
        if (static_cast<uint8_t>(v >> (8 * (width - 1 - b))) != pad) {
          Reader::fail("a key with bytes past its length");
        }
      }
      block.key_end.push_back(static_cast<uint32_t>(block.keys.size()));
    }
  }

  if (m.recno == 3) {
    const u128 lo = r.varint();
    const uint32_t w = r.byte();
    if (w > 40 || bit_width(lo) > 40) Reader::fail("record numbers over 40 bits");
    std::vector<u128> values;
    r.bits(n - 1, w, values);
    for (u128 v : values) {
      if (bit_width(v + lo) > 40) Reader::fail("record numbers over 40 bits");
      block.recnos.push_back(static_cast<uint64_t>(v + lo));
    }
  } else {
    std::vector<u128> deltas;
    read_deltas(r, m.recno, n - 1, 40, deltas);
    u128 v = recno0;
    for (u128 d : deltas) {
      if (m.recno_down && d > v) Reader::fail("record numbers below 0");
      v = m.recno_down ? v - d : v + d;
      if (bit_width(v) > 40) Reader::fail("record numbers over 40 bits");
      block.recnos.push_back(static_cast<uint64_t>(v));
    }
  }

  // Order: keys ascending in memcmp order, record numbers ascending among equal keys.
  for (size_t i = 1; i < n; ++i) {
    const auto a = block.key(i - 1), b = block.key(i);
    const int c = compare_keys(a, b, descending);
    if (c > 0 || (c == 0 && block.recnos[i - 1] >= block.recnos[i])) {
      Reader::fail(fmt::format("entries {} and {} out of order", i - 1, i));
    }
  }
  return r.pos();
}

}  // namespace pbtree
