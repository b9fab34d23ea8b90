// The packed leaf block codec (node/packed_block.h): every mode round-trips, with the mode and
// size it is chosen for, at the edges (one entry, 128 entries, a 2^64 - 1 delta on 16-byte
// keys, all equal keys, empty keys first and last, raw keys), and malformed blocks are refused.
#include "node/packed_block.h"

#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace pbtree {
namespace {

using Keys = std::vector<std::vector<uint8_t>>;

// Entries (keys[i], recnos[i]) packed after `prefix` bytes, decoded again.
struct RoundTrip {
  std::vector<uint8_t> bytes;
  PackedBlock block;
};

RoundTrip round_trip(const Keys& keys, const std::vector<uint64_t>& recnos, uint32_t prefix,
                     bool descending = false, const PackedKeyType* key_type = nullptr) {
  std::vector<PackedEntry> entries;
  for (size_t i = 0; i < keys.size(); ++i) entries.push_back({keys[i], recnos[i]});
  RoundTrip r;
  const size_t size = encode_packed_block(entries, prefix, descending, r.bytes, nullptr, key_type);
  EXPECT_EQ(size, r.bytes.size());
  const std::span<const uint8_t> pre =
      keys.empty() ? std::span<const uint8_t>() : std::span<const uint8_t>(keys[0]).first(prefix);
  EXPECT_EQ(decode_packed_block(r.bytes, descending, r.block, key_type, pre), r.bytes.size());
  EXPECT_EQ(r.block.size(), keys.size());
  for (size_t i = 0; i < keys.size() && i < r.block.size(); ++i) {
    const auto k = r.block.key(i);
    EXPECT_EQ(std::vector<uint8_t>(k.begin(), k.end()),
              std::vector<uint8_t>(keys[i].begin() + prefix, keys[i].end()))
        << "key " << i;
    EXPECT_EQ(r.block.recnos[i], recnos[i]) << "record number " << i;
  }
  return r;
}

std::vector<uint8_t> be64(uint64_t v) {
  std::vector<uint8_t> k(8);
  for (int i = 0; i < 8; ++i) k[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
  return k;
}

std::vector<uint64_t> iota(size_t n, uint64_t from, uint64_t step) {
  std::vector<uint64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + i * step;
  return v;
}

// A block whose keys and record numbers are both CONSTANT_DELTA with implied lengths: its key
// width and size in bytes.
void expect_constant_block(const RoundTrip& r, uint8_t width, size_t bytes) {
  EXPECT_EQ(r.block.modes.key, 0);
  EXPECT_EQ(r.block.modes.recno, 0);
  EXPECT_EQ(r.block.modes.length, 0);
  EXPECT_EQ(r.block.modes.width, width);
  EXPECT_EQ(r.bytes.size(), bytes);
}

TEST(PackedBlock, OneEntryIsTheHeadAlone) {
  const RoundTrip r = round_trip({{0xC0, 0x2A, 0x01}}, {77}, 1);
  // count, modes, W, L0, 2 key bytes, 5 record-number bytes.
  EXPECT_EQ(r.bytes, (std::vector<uint8_t>{0, 0, 2, 2, 0x2A, 0x01, 77, 0, 0, 0, 0}));
}

TEST(PackedBlock, ConstantKeyAndRecordDeltasTakeNoBitsPerEntry) {
  Keys keys;
  // 0x1000 + 3i: the first key ends in a zero byte, so the lengths go in a FOR stream.
  for (uint64_t i = 0; i < 128; ++i) keys.push_back(be64(0x1000 + 3 * i));
  const RoundTrip r = round_trip(keys, iota(128, 5, 1), 0);
  EXPECT_EQ(r.block.modes.key, 0);
  EXPECT_EQ(r.block.modes.recno, 0);
  EXPECT_EQ(r.block.modes.length, 1);
}

TEST(PackedBlock, ImpliedLengthsWhenNoKeyEndsInAZeroByte) {
  Keys keys;
  for (uint64_t i = 0; i < 100; ++i) keys.push_back({0x40, static_cast<uint8_t>(2 * i + 1)});
  // head 3 + 1 + 2 + 5, key delta varint 2, record delta varint 7.
  expect_constant_block(round_trip(keys, iota(100, 1000, 7), 0), 2, 13);
}

TEST(PackedBlock, PartSizesAddUpToTheBlock) {
  Keys keys;
  for (uint64_t i = 0; i < 100; ++i) keys.push_back({0x40, static_cast<uint8_t>(2 * i)});
  std::vector<PackedEntry> entries;
  for (size_t i = 0; i < keys.size(); ++i) entries.push_back({keys[i], 1000 + 7 * i});
  std::vector<uint8_t> out;
  PackedBlockSizes sizes;
  EXPECT_EQ(encode_packed_block(entries, 0, false, out, &sizes), 15u);
  EXPECT_EQ(sizes.head, 11u);    // 3 + 1 + 2 + 5
  EXPECT_EQ(sizes.keys, 1u);     // varint 2
  EXPECT_EQ(sizes.lengths, 2u);  // key 0 ends in 0x00: FOR, base 2, width 0, no bits
  EXPECT_EQ(sizes.recnos, 1u);   // varint 7
}

TEST(PackedBlock, DeltaForPacksVaryingKeyDeltas) {
  Keys keys;
  uint64_t v = 0x0101010101010101;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 128; ++i) {
    v += 2 * (4 + rng() % 4);  // odd keys (no trailing zero byte), deltas 8..14
    keys.push_back(be64(v));
  }
  const RoundTrip r = round_trip(keys, iota(128, 1, 1), 0);
  EXPECT_EQ(r.block.modes.key, 1);
  EXPECT_EQ(r.block.modes.length, 0);
  // head 3 + 1 + 8 + 5, key base 1 + width 1 + 127 * 3 bits (48 bytes), record delta 1.
  EXPECT_EQ(r.bytes.size(), 68u);
}

TEST(PackedBlock, PatchedExceptionsCarryRecordNumberJumps) {
  Keys keys;
  std::vector<uint64_t> recnos;
  uint64_t rec = 10;
  for (int i = 0; i < 128; ++i) {
    keys.push_back(be64(0x3F00000000000001 + 2 * uint64_t(i)));
    rec += (i % 50 == 49) ? 100000 : 1;  // a data page boundary every 50 records
    recnos.push_back(rec);
  }
  const RoundTrip r = round_trip(keys, recnos, 0);
  EXPECT_EQ(r.block.modes.recno, 2);
}

TEST(PackedBlock, FallingRecordNumbersAreDeltasDownward) {
  // A descending index over a column that rises with its record numbers.
  Keys keys;
  for (int i = 0; i < 128; ++i) keys.push_back({0x7F, static_cast<uint8_t>(2 * i + 1)});
  std::vector<uint64_t> recnos(128);
  for (int i = 0; i < 128; ++i) recnos[i] = 5000 - 3 * uint64_t(i);
  const RoundTrip down = round_trip(keys, recnos, 0);
  EXPECT_TRUE(down.block.modes.recno_down);
  EXPECT_EQ(down.block.modes.recno, 0);
  // head 3 + 1 + 2 + 5, key delta 2, record delta 3.
  EXPECT_EQ(down.bytes.size(), 13u);
}

TEST(PackedBlock, RandomRecordNumbersUseFrameOfReference) {
  Keys keys;
  std::vector<uint64_t> recnos;
  std::mt19937_64 rng(2);
  for (int i = 0; i < 128; ++i) {
    keys.push_back(be64(0x3F00000000000001 + 2 * uint64_t(i / 2)));  // each key twice
    recnos.push_back(i % 2 == 0 ? rng() % 4000000 : recnos.back() + 1);
  }
  const RoundTrip r = round_trip(keys, recnos, 0);
  EXPECT_EQ(r.block.modes.recno, 3);
}

TEST(PackedBlock, AllEqualKeysWithAscendingRecordNumbers) {
  const Keys keys(128, std::vector<uint8_t>{0xAB, 0xCD});
  // head 3 + 1 + 0 + 5, key delta 0, record delta 2.
  expect_constant_block(round_trip(keys, iota(128, 3, 2), 2), 0, 11);
}

TEST(PackedBlock, EmptyKeysFirstAndLast) {
  // The NULL key of an ascending index is empty and sorts first; a descending index's is the
  // byte FF (null_key) and sorts last; a block of NULLs alone has no key bytes.
  const RoundTrip first = round_trip({{}, {}, {0x10}, {0x20, 0x01}}, {1, 2, 3, 4}, 0);
  EXPECT_EQ(first.block.key(0).size(), 0u);
  EXPECT_EQ(first.block.key(1).size(), 0u);
  const RoundTrip last =
      round_trip({{0x10}, {0x20, 0x01}, null_key(true), null_key(true)}, {1, 2, 3, 4}, 0, true);
  EXPECT_EQ(last.block.key(3).size(), 1u);
  const RoundTrip only = round_trip({{}, {}, {}}, {5, 9, 11}, 0);
  EXPECT_EQ(only.block.modes.width, 0);
}

TEST(PackedBlock, SixteenByteKeysWithADeltaOf2To64Minus1) {
  std::vector<uint8_t> a(16, 0), b(16, 0);
  a[0] = 0x20;
  a[15] = 0x01;
  b = a;
  // b = a + (2^64 - 1): the low 8 bytes of a are ...01; adding 2^64 - 1 carries into byte 7.
  b[7] = 0x01;
  b[15] = 0x00;
  b[14] = 0x00;
  // a = 0x20 00.. 00 | 00.. 01, b = 0x20 00.. 01 | 00.. 00: b - a = 2^64 - 1.
  Keys keys{a, b};
  const RoundTrip r = round_trip(keys, {1, 2}, 0);
  EXPECT_EQ(r.block.modes.width, 16);
  EXPECT_EQ(r.block.modes.length, 1);  // b ends in zero bytes
}

TEST(PackedBlock, KeysWiderThan16BytesAreRaw) {
  Keys keys;
  for (int i = 0; i < 5; ++i) {
    std::vector<uint8_t> k(19, 0x11);
    k[18] = static_cast<uint8_t>(i + 1);
    keys.push_back(k);
  }
  const RoundTrip r = round_trip(keys, {9, 8, 7, 6, 5}, 0);
  EXPECT_EQ(r.block.modes.key, 3);
  EXPECT_EQ(r.block.modes.width, 0xFF);
  EXPECT_EQ(r.block.modes.recno, 0);  // 9, 8, 7, 6, 5: a constant delta downward
  EXPECT_TRUE(r.block.modes.recno_down);
}

// Keys of `type` for the values v * step, v in [from, from + count), with record number
// v - from, in index order.
struct KeyRun {
  Keys keys;
  std::vector<uint64_t> recnos;
};
KeyRun key_run(const TypeSpec& type, KeyFormat format, bool descending, int64_t from, int count,
               int64_t step) {
  std::vector<std::pair<std::vector<uint8_t>, uint64_t>> entries;
  for (int64_t v = from; v < from + count; ++v) {
    KeyBuffer k;
    build_key(type, format, parse_value(type, std::to_string(v * step)), descending, k);
    entries.push_back({{k.bytes().begin(), k.bytes().end()}, uint64_t(v - from)});
  }
  std::sort(entries.begin(), entries.end(), [&](const auto& x, const auto& y) {
    const int c = compare_keys(x.first, y.first, descending);
    return c != 0 ? c < 0 : x.second < y.second;
  });
  KeyRun r;
  for (auto& [k, recno] : entries) {
    r.keys.push_back(k);
    r.recnos.push_back(recno);
  }
  return r;
}

TEST(PackedBlock, RealBigintKeysRoundTripInEveryFormatAndDirection) {
  const TypeSpec bigint = TypeSpec::parse("bigint");
  for (const char* format : {"rescaled-double", "decimal128", "bcd"}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::string(format) + (descending ? " descending" : ""));
      const KeyRun run = key_run(bigint, parse_key_format(format), descending, -60, 128, 977);
      const RoundTrip r = round_trip(run.keys, run.recnos, 0, descending);
      EXPECT_FALSE(r.block.modes.value_space);
    }
  }
}

TEST(PackedBlock, ConsecutiveIntegersTakeOneByteOfKeyStream) {
  // In key space (descending: FF padding) or in value space, whichever is smaller: either way
  // a constant delta, one varint byte, and no length stream.
  const TypeSpec bigint = TypeSpec::parse("bigint");
  for (const char* format : {"rescaled-double", "decimal128", "bcd"}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::string(format) + (descending ? " descending" : ""));
      const KeyFormat f = parse_key_format(format);
      const PackedKeyType kt{bigint, f, descending};
      const KeyRun run = key_run(bigint, f, descending, 500000, 128, 1);
      std::vector<PackedEntry> entries;
      for (size_t i = 0; i < run.keys.size(); ++i) entries.push_back({run.keys[i], i});
      std::vector<uint8_t> out;
      PackedBlockSizes sizes;
      encode_packed_block(entries, 0, descending, out, &sizes, &kt);
      EXPECT_EQ(out[1] & 3, 0);  // CONSTANT_DELTA keys
      EXPECT_EQ(sizes.keys, 1u);
      EXPECT_EQ(sizes.lengths, 0u);
      EXPECT_EQ(sizes.recnos, 1u);
      round_trip(run.keys, std::vector<uint64_t>(iota(128, 0, 1)), 0, descending, &kt);
    }
  }
}

TEST(PackedBlock, IrregularDigitKeysAreCodedInValueSpace) {
  // decimal128 keys of 1000 + 3i: digit-shaped key deltas, a constant value delta.
  const TypeSpec bigint = TypeSpec::parse("bigint");
  const PackedKeyType kt{bigint, KeyFormat::Decimal128, false};
  const KeyRun run = key_run(bigint, KeyFormat::Decimal128, false, 1000, 50, 3);
  const RoundTrip key_space = round_trip(run.keys, run.recnos, 0);
  const RoundTrip value_space = round_trip(run.keys, run.recnos, 0, false, &kt);
  EXPECT_FALSE(key_space.block.modes.value_space);
  EXPECT_TRUE(value_space.block.modes.value_space);
  EXPECT_EQ(value_space.block.modes.key, 0);
  EXPECT_LT(value_space.bytes.size(), key_space.bytes.size());
}

TEST(PackedBlock, Int128ValuesWhoseGapPasses127BitsStayInKeySpace) {
  // -10^38 and 10^38: the gap between them does not fit a signed 128-bit delta.
  const TypeSpec int128 = TypeSpec::parse("int128");
  const PackedKeyType kt{int128, KeyFormat::Bcd, false};
  Keys keys;
  for (const char* v :
       {"-100000000000000000000000000000000000000", "100000000000000000000000000000000000000"}) {
    KeyBuffer k;
    build_key(int128, KeyFormat::Bcd, parse_value(int128, v), false, k);
    keys.push_back({k.bytes().begin(), k.bytes().end()});
  }
  const RoundTrip r = round_trip(keys, {1, 2}, 0, false, &kt);
  EXPECT_FALSE(r.block.modes.value_space);
}

TEST(PackedBlock, ValueSpaceBlockWithoutTheKeyTypeIsCorrupt) {
  const TypeSpec bigint = TypeSpec::parse("bigint");
  const PackedKeyType kt{bigint, KeyFormat::Decimal128, false};
  const KeyRun run = key_run(bigint, KeyFormat::Decimal128, false, 1000, 50, 3);
  const RoundTrip r = round_trip(run.keys, run.recnos, 0, false, &kt);
  ASSERT_TRUE(r.block.modes.value_space);
  PackedBlock b;
  EXPECT_THROW(decode_packed_block(r.bytes, false, b), CorruptError);
}

TEST(PackedBlock, NullKeysKeepABlockInKeySpace) {
  const TypeSpec bigint = TypeSpec::parse("bigint");
  const PackedKeyType kt{bigint, KeyFormat::Decimal128, false};
  KeyRun run = key_run(bigint, KeyFormat::Decimal128, false, 1000, 50, 1);
  run.keys.insert(run.keys.begin(), null_key(false));
  run.recnos.insert(run.recnos.begin(), 999);
  const RoundTrip r = round_trip(run.keys, run.recnos, 0, false, &kt);
  EXPECT_FALSE(r.block.modes.value_space);
  EXPECT_EQ(r.block.key(0).size(), 0u);
}

TEST(PackedBlock, DescendingKeysPadWithFF) {
  // Descending order: a key sorts before its own prefix; FF padding keeps the deltas >= 0 and
  // the implied lengths (no descending key ends in FF).
  const RoundTrip r = round_trip({{0x7F, 0x12}, {0x7F}, {0x80, 0x01}}, {1, 2, 3}, 0, true);
  EXPECT_EQ(r.block.modes.length, 0);
  EXPECT_EQ(r.block.modes.width, 2);
}

TEST(PackedBlock, EntriesOutOfOrderAreRefused) {
  const std::vector<uint8_t> a{0x20}, b{0x10};
  const std::vector<PackedEntry> entries{{a, 1}, {b, 2}};
  std::vector<uint8_t> out;
  EXPECT_THROW(encode_packed_block(entries, 0, false, out), UsageError);
}

TEST(PackedBlock, DuplicateEntryIsRefused) {
  const std::vector<uint8_t> a{0x20};
  const std::vector<PackedEntry> entries{{a, 1}, {a, 1}};
  std::vector<uint8_t> out;
  EXPECT_THROW(encode_packed_block(entries, 0, false, out), UsageError);
}

TEST(PackedBlock, TruncatedBlockIsCorruptAtEveryLength) {
  Keys keys;
  for (uint64_t i = 0; i < 40; ++i) keys.push_back(be64(0x4000000000000001 + 6 * i * i));
  const RoundTrip r = round_trip(keys, iota(40, 1, 3), 0);
  PackedBlock b;
  for (size_t len = 0; len < r.bytes.size(); ++len) {
    EXPECT_THROW(decode_packed_block(std::span<const uint8_t>(r.bytes).first(len), false, b),
                 CorruptError)
        << "length " << len;
  }
}

TEST(PackedBlock, UnknownModeBitsAreCorrupt) {
  std::vector<uint8_t> bytes{0, 0x20, 0, 0, 1, 0, 0, 0, 0};
  PackedBlock b;
  EXPECT_THROW(decode_packed_block(bytes, false, b), CorruptError);
}

TEST(PackedBlock, KeyWidthOver16IsCorrupt) {
  std::vector<uint8_t> bytes{0, 0, 17, 0, 1, 0, 0, 0, 0};
  PackedBlock b;
  EXPECT_THROW(decode_packed_block(bytes, false, b), CorruptError);
}

}  // namespace
}  // namespace pbtree
