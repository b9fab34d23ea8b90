// The seed check: the 10^6-row seed data (data/seed/t_int.csv.zst) bulk-loaded into INTEGER
// and BIGINT indexes at 8 KiB pages with Firebird's record numbers must give the figures real
// Firebird 3.0.11's gstat printed (data/seed/README.md): depth, nodes, dup, key, prefix,
// data and ratio exactly to two decimals, leaf buckets within 1 %, average node within 0.03.
// Keys come from the keys layer (build_key, Firebird 5's default formats: INTEGER -> double,
// BIGINT -> rescaled double).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace pbtree {
namespace {

struct SeedRow {
  int64_t id;
  int64_t col;
};

const std::vector<SeedRow>& seed_rows() {
  static const std::vector<SeedRow> rows = [] {
    // The copy the project ships (data/seed/, from ../shared/data/seed/).
    std::string path = std::string(PBTREE_SOURCE_DIR) + "/data/seed/t_int.csv.zst";
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
    TypeSpec type;
    type.type = bigint ? ColumnType::Bigint : ColumnType::Integer;
    const KeyFormat format = default_key_format(type);
    auto key = std::make_unique<KeyBuffer>();
    EntryBatch batch;
    batch.reserve(rows.size(), rows.size() * (bigint ? 9 : 4));
    for (size_t i = 0; i < rows.size(); ++i) {
      int64_t v = by_id ? rows[i].id : rows[i].col;
      build_key(type, format, Value::exact(v), false, *key);
      batch.add(key->bytes(), (i / 151) * 480 + (i % 151), i);
    }
    IndexDefinition def;
    def.name = "I_SEED";
    def.type = type;
    def.format = format;
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

TEST(BtreeStatsSeed, IntegerId) {
  expect_firebird(build_seed_index(false, true, true),
                  {2, 724, 5.84, 0, 0, 3.00, 1.32, 2.96, 1.00});
}

TEST(BtreeStatsSeed, IntegerCol) {
  expect_firebird(build_seed_index(false, false, false),
                  {2, 681, 5.49, 367816, 8, 2.65, 1.49, 3.32, 0.64});
}

TEST(BtreeStatsSeed, BigintId) {
  expect_firebird(build_seed_index(true, true, true),
                  {3, 1474, 11.88, 0, 0, 9.04, 1.00, 2.96, 6.04});
}

TEST(BtreeStatsSeed, BigintCol) {
  expect_firebird(build_seed_index(true, false, false),
                  {3, 1156, 9.30, 367816, 8, 6.46, 1.39, 5.17, 3.83});
}

}  // namespace
}  // namespace pbtree
