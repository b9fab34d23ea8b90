// Differential tests of sort_entry_batch (btree/radix_sort.h) against the order today's
// bulk-load sort defines: std::sort by (compare_keys, record number, tag), on every type and
// allowed key format, with NULLs, duplicates, extreme values, ascending and descending.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "btree/radix_sort.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

struct Flat {
  Bytes key;
  uint64_t recno;
  uint64_t tag;
  bool operator==(const Flat&) const = default;
};

std::vector<Flat> flat(const EntryBatch& b) {
  std::vector<Flat> out;
  for (const auto& it : b.items()) {
    auto k = b.key(it);
    out.push_back(Flat{Bytes(k.begin(), k.end()), it.recno, it.tag});
  }
  return out;
}

std::vector<Flat> reference_order(const EntryBatch& b, bool descending) {
  std::vector<Flat> v = flat(b);
  std::sort(v.begin(), v.end(), [&](const Flat& x, const Flat& y) {
    int c = compare_keys(x.key, y.key, descending);
    if (c != 0) return c < 0;
    if (x.recno != y.recno) return x.recno < y.recno;
    return x.tag < y.tag;
  });
  return v;
}

std::string random_value_text(const TypeSpec& t, std::mt19937_64& rng) {
  switch (t.type) {
    case ColumnType::Varchar: {
      std::string s;
      const size_t n = rng() % (t.length + 1);
      for (size_t i = 0; i < n; ++i) s += "ab \x01\xFF"[rng() % 5];
      return s;
    }
    case ColumnType::Double: {
      const double mags[] = {1e-300, 1e-5, 1.0, 1e5, 1e15, 1e300};
      double v = std::ldexp(static_cast<double>(rng() >> 11), -53) * mags[rng() % 6];
      if (rng() % 2) v = -v;
      if (rng() % 16 == 0) v = 0;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      return buf;
    }
    default: {
      const int bits = t.storage_bits();
      // Edges of the storage type (huge int64: the legacy rescaled-double key merges them),
      // small values, and random values of every magnitude.
      switch (rng() % 4) {
        case 0:
          return bits >= 64 ? (rng() % 2 ? "9223372036854775807" : "-9223372036854775807")
                            : std::to_string(rng() % 2 ? (int64_t{1} << (bits - 1)) - 1
                                                       : -(int64_t{1} << (bits - 1)) + 1);
        case 1:
          return std::to_string(static_cast<int64_t>(rng() % 21) - 10);
        default: {
          const int b = static_cast<int>(rng() % static_cast<uint64_t>(std::min(bits, 64) - 1));
          int64_t v = static_cast<int64_t>(rng() & ((uint64_t{1} << b) - 1));
          if (rng() % 2) v = -v;
          if (bits >= 64 && rng() % 4 == 0) v = INT64_MAX - static_cast<int64_t>(rng() % 4096);
          return std::to_string(v);
        }
      }
    }
  }
}

void check_sort(const TypeSpec& type, KeyFormat format, bool descending, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << type.name() << " " << key_format_name(format)
                                    << (descending ? " desc" : " asc") << " seed " << seed);
  std::mt19937_64 rng(seed);
  EntryBatch batch;
  std::vector<Bytes> pool;  // earlier keys, drawn again for duplicates
  for (uint64_t i = 0; i < 3000; ++i) {
    Bytes key;
    if (!pool.empty() && rng() % 5 == 0) {
      key = pool[rng() % pool.size()];
    } else {
      KeyBuffer buf;
      try {
        const std::string text = random_value_text(type, rng);
        const Value v = rng() % 20 == 0 ? Value::null() : parse_value(type, text);
        build_key(type, format, v, descending, buf);
      } catch (const KeyError&) {
        continue;  // a value this type or format cannot hold
      }
      key.assign(buf.data, buf.data + buf.length);
      pool.push_back(key);
    }
    batch.add(key, rng() % 400, i);  // repeated record numbers: ties go to the tag
  }
  ASSERT_GT(batch.size(), 1000u);
  const std::vector<Flat> expect = reference_order(batch, descending);
  sort_entry_batch(batch, descending);
  EXPECT_EQ(flat(batch), expect);
}

TEST(BtreeEntrySort, MatchesTodaysOrderOnEveryFormatWithNullsAscendingAndDescending) {
  const char* types[] = {"smallint",      "integer",      "bigint",       "int128",
                         "double",        "numeric(4,1)", "numeric(9,2)", "numeric(18,4)",
                         "numeric(30,5)", "varchar(3)",   "varchar(40)"};
  const KeyFormat formats[] = {KeyFormat::Double, KeyFormat::Text, KeyFormat::RescaledDouble,
                               KeyFormat::Decimal128, KeyFormat::Bcd};
  uint64_t seed = 20261201;
  int combos = 0;
  for (const char* t : types) {
    const TypeSpec type = TypeSpec::parse(t);
    for (KeyFormat f : formats) {
      if (!key_format_allowed(type, f)) continue;
      for (bool desc : {false, true}) check_sort(type, f, desc, seed++);
      ++combos;
    }
  }
  EXPECT_GE(combos, 15);
}

TEST(BtreeEntrySort, LongKeysWithLongCommonPrefixesGoThroughTheNextWords) {
  for (bool desc : {false, true}) {
    std::mt19937_64 rng(7 + desc);
    EntryBatch batch;
    for (uint64_t i = 0; i < 20000; ++i) {
      Bytes k(8 + rng() % 24, 0x41);  // "AAAAAAAA..." then a few varying bytes, pad-like ones too
      for (size_t j = 8; j < k.size(); ++j) {
        if (rng() % 3 == 0)
          k[j] = static_cast<uint8_t>(rng() % 3 == 0 ? (desc ? 0xFF : 0x00) : rng());
      }
      batch.add(k, rng() % 50, i);
    }
    const std::vector<Flat> expect = reference_order(batch, desc);
    sort_entry_batch(batch, desc);
    EXPECT_EQ(flat(batch), expect) << "descending " << desc;
  }
}

TEST(BtreeEntrySort, EqualKeysComeOutInRecordNumberOrder) {
  EntryBatch batch;
  const Bytes k = {0xC0, 0x01};
  const uint64_t recnos[] = {9, 3, 7, 1, 8, 2};
  for (uint64_t i = 0; i < 6; ++i) batch.add(k, recnos[i], i);
  for (uint64_t i = 0; i < 100; ++i) batch.add(Bytes{0xC0, static_cast<uint8_t>(2 + i)}, 0, 0);
  sort_entry_batch(batch, false);
  std::vector<uint64_t> got;
  for (size_t i = 0; i < 6; ++i) got.push_back(batch.items()[i].recno);
  EXPECT_EQ(got, (std::vector<uint64_t>{1, 2, 3, 7, 8, 9}));
}

}  // namespace
}  // namespace pbtree
