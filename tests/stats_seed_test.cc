// The seed check: the 10^6-row seed data (data/seed/t_int.csv.zst) bulk-loaded into INTEGER
// and BIGINT indexes at 8 KiB pages with Firebird's record numbers must give the figures real
// Firebird 3.0.11's gstat printed (firebird-format.md §3.6): depth, nodes, dup, key, prefix,
// data and ratio exactly to two decimals, leaf buckets within 1 %, average node within 0.03.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "btree/index_file.h"

namespace pbtree {
namespace {

struct SeedRow {
  int64_t id;
  int64_t col;
};

const std::vector<SeedRow>& seed_rows() {
  static const std::vector<SeedRow> rows = [] {
    std::string path = std::string(PBTREE_SOURCE_DIR) + "/../shared/data/seed/t_int.csv.zst";
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    EXPECT_TRUE(in.good()) << "cannot open " << path;
    std::string packed(static_cast<size_t>(in.tellg()), '\0');
    in.seekg(0);
    in.read(packed.data(), static_cast<std::streamsize>(packed.size()));
    unsigned long long raw = ZSTD_getFrameContentSize(packed.data(), packed.size());
    std::string text;
    if (raw != ZSTD_CONTENTSIZE_ERROR && raw != ZSTD_CONTENTSIZE_UNKNOWN) {
      text.resize(raw);
      size_t n = ZSTD_decompress(text.data(), text.size(), packed.data(), packed.size());
      EXPECT_FALSE(ZSTD_isError(n));
      text.resize(ZSTD_isError(n) ? 0 : n);
    }
    std::vector<SeedRow> out;
    out.reserve(1000000);
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
      char* next;
      SeedRow r;
      r.id = std::strtoll(p, &next, 10);
      r.col = std::strtoll(next + 1, &next, 10);
      out.push_back(r);
      p = next + 1;
    }
    return out;
  }();
  return rows;
}

// Firebird idx_numeric key (§1.3) of an integer value.
std::vector<uint8_t> double_key(int64_t v) {
  double d = static_cast<double>(v);
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  if (d < 0) {
    bits = ~bits;
  } else {
    bits ^= uint64_t{1} << 63;
  }
  std::vector<uint8_t> k(8);
  for (int i = 0; i < 8; ++i) k[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  while (k.size() > 1 && k.back() == 0) k.pop_back();
  return k;
}

// Firebird idx_numeric2 key (§1.4) of a scale-0 int64 value.
std::vector<uint8_t> rescaled_double_key(int64_t q0) {
  static const int64_t limits[] = {922337203685470000LL,
                                   92233720368547000LL,
                                   9223372036854700LL,
                                   922337203685470LL,
                                   92233720368548LL,
                                   9223372036855LL,
                                   922337203686LL,
                                   92233720369LL,
                                   9223372035LL,
                                   922337204LL,
                                   92233721LL,
                                   9223373LL,
                                   922338LL,
                                   92234LL,
                                   9224LL,
                                   923LL,
                                   93LL,
                                   10LL,
                                   1LL};
  static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
  int64_t a = q0 < 0 ? -q0 : q0;
  int n = 0;
  while (n < 19 && a < limits[n]) ++n;
  int64_t q = 0;
  int change = 0;
  if (n < 19) {
    int64_t factor = 1;
    for (int i = 0; i < n; ++i) factor *= 10;
    q = q0 * factor;
    change = n;
  }
  double d = static_cast<double>(q / 10000) / pow10[change];
  int16_t s = static_cast<int16_t>(q % 10000);
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  if (d < 0) {
    bits = ~bits;
  } else {
    bits ^= uint64_t{1} << 63;
  }
  std::vector<uint8_t> k(10);
  for (int i = 0; i < 8; ++i) k[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  k[8] = static_cast<uint8_t>((static_cast<uint16_t>(s) >> 8) ^ 0x80);
  k[9] = static_cast<uint8_t>(static_cast<uint16_t>(s) & 0xFF);
  while (k.size() > 1 && k.back() == 0) k.pop_back();
  return k;
}

TEST(StatsSeedKeys, KeyVectors) {
  EXPECT_EQ(double_key(1000000), (std::vector<uint8_t>{0xC1, 0x2E, 0x84, 0x80}));
  EXPECT_EQ(rescaled_double_key(1000000),
            (std::vector<uint8_t>{0xC0, 0x59, 0, 0, 0, 0, 0, 0, 0x80}));
  EXPECT_EQ(rescaled_double_key(9007199254740993LL),
            (std::vector<uint8_t>{0xC2, 0x6A, 0x36, 0xE2, 0xEB, 0x1C, 0x43, 0x2B, 0x8B, 0xB8}));
}

struct Expected {
  uint32_t depth;
  uint64_t leaves;
  double node;
  uint64_t dup, max_dup;
  double key, ratio, prefix, data;
};

std::string round2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

IndexStats build_seed_index(bool bigint, bool by_id, bool unique) {
  const auto& rows = seed_rows();
  EXPECT_EQ(rows.size(), 1000000u);
  char tmpl[] = "/tmp/pbtree-seed-XXXXXX";
  EXPECT_NE(::mkdtemp(tmpl), nullptr);
  std::string path = std::string(tmpl) + "/seed.pbt";
  IndexStats st;
  {
    auto f = IndexFile::open_or_create(path, 8192);
    EntryBatch batch;
    batch.reserve(rows.size(), rows.size() * (bigint ? 9 : 4));
    for (size_t i = 0; i < rows.size(); ++i) {
      int64_t v = by_id ? rows[i].id : rows[i].col;
      std::vector<uint8_t> k = bigint ? rescaled_double_key(v) : double_key(v);
      batch.add(k, (i / 151) * 480 + (i % 151), i);
    }
    IndexDefinition def;
    def.name = "I_SEED";
    def.type.type = bigint ? ColumnType::Bigint : ColumnType::Integer;
    def.format = bigint ? KeyFormat::RescaledDouble : KeyFormat::Double;
    def.unique = unique;
    f->bulk_load(def, batch);
    st = f->analyze("I_SEED");
  }
  std::remove(path.c_str());
  ::rmdir(tmpl);
  std::printf(
      "depth %u, leaves %llu, nodes %llu, avg node %.4f, dup %llu/%llu, key %.4f, "
      "ratio %.4f, prefix %.4f, data %.4f, pages %llu, clustering %llu\n",
      st.depth, (unsigned long long)st.leaf_buckets, (unsigned long long)st.nodes,
      st.avg_node_length, (unsigned long long)st.total_dup, (unsigned long long)st.max_dup,
      st.avg_key_length, st.compression_ratio, st.avg_prefix_length, st.avg_data_length,
      (unsigned long long)st.index_pages, (unsigned long long)st.clustering_factor);
  return st;
}

void expect_firebird(const IndexStats& st, const Expected& e) {
  EXPECT_EQ(st.depth, e.depth);
  EXPECT_EQ(st.nodes, 1000000u);
  EXPECT_EQ(st.total_dup, e.dup);
  EXPECT_EQ(st.max_dup, e.max_dup);
  EXPECT_EQ(round2(st.avg_key_length), round2(e.key));
  EXPECT_EQ(round2(st.compression_ratio), round2(e.ratio));
  EXPECT_EQ(round2(st.avg_prefix_length), round2(e.prefix));
  EXPECT_EQ(round2(st.avg_data_length), round2(e.data));
  EXPECT_NEAR(static_cast<double>(st.leaf_buckets), static_cast<double>(e.leaves), 0.01 * e.leaves);
  EXPECT_NEAR(st.avg_node_length, e.node, 0.03 + 1e-9);
}

TEST(StatsSeed, IntegerId) {
  expect_firebird(build_seed_index(false, true, true),
                  {2, 724, 5.84, 0, 0, 3.00, 1.32, 2.96, 1.00});
}

TEST(StatsSeed, IntegerCol) {
  expect_firebird(build_seed_index(false, false, false),
                  {2, 681, 5.49, 367816, 8, 2.65, 1.49, 3.32, 0.64});
}

TEST(StatsSeed, BigintId) {
  expect_firebird(build_seed_index(true, true, true),
                  {3, 1474, 11.88, 0, 0, 9.04, 1.00, 2.96, 6.04});
}

TEST(StatsSeed, BigintCol) {
  expect_firebird(build_seed_index(true, false, false),
                  {3, 1156, 9.30, 367816, 8, 6.46, 1.39, 5.17, 3.83});
}

}  // namespace
}  // namespace pbtree
