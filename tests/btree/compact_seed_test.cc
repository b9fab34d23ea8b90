// The compact layout's size target (issue #6): the 10^6-row seed data (data/seed/t_int.csv.zst)
// bulk-loaded by FastLoader with NodeLayout::Compact at 8 KiB pages, 0-based row ordinals as
// record numbers and the decimal128 BIGINT key format. Bytes per entry = leaf buckets × page
// size / nodes: dense unique ID <= 3.0 at depth 2, COL with duplicates <= 4.5. Every page the
// loader writes is decoded again (decode_page) and the leaf entries compared with the input.
#include <gtest/gtest.h>
#include <pbtree/keys.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "btree/bulk_build.h"

namespace pbtree {
namespace {

// (id, col) of each seed row, in file order.
const std::vector<std::pair<int64_t, int64_t>>& seed_rows() {
  static const std::vector<std::pair<int64_t, int64_t>> rows = [] {
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
    std::vector<std::pair<int64_t, int64_t>> out;
    out.reserve(1000000);
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
      char* next;
      int64_t id = std::strtoll(p, &next, 10);
      int64_t col = std::strtoll(next + 1, &next, 10);
      out.emplace_back(id, col);
      p = next + 1;
    }
    return out;
  }();
  return rows;
}

struct Built {
  uint32_t depth = 0;
  uint64_t leaves = 0;
  uint64_t pages = 0;
  uint64_t nodes = 0;
  double bytes_per_entry = 0;
};

// Builds the BIGINT decimal128 index of column `col` (false: ID) in `layout`.
Built build(bool col, NodeLayout layout) {
  const auto& rows = seed_rows();
  EXPECT_EQ(rows.size(), 1000000u);
  std::vector<std::pair<int64_t, uint64_t>> items;  // (value, record number)
  items.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    items.emplace_back(col ? rows[i].second : rows[i].first, i);
  std::sort(items.begin(), items.end());
  TypeSpec type;
  type.type = ColumnType::Bigint;
  const uint32_t ps = 8192;
  FastLoader::Options opt;
  opt.page_size = ps;
  opt.first_page = 2;
  opt.jump_interval =
      layout_jump_interval(max_key_length(type, KeyFormat::Decimal128, false), false, layout);
  opt.layout = layout;
  Built b;
  std::map<uint32_t, std::vector<uint8_t>> pages;
  FastLoader loader(opt, [&](uint32_t no, uint8_t* page) { pages[no].assign(page, page + ps); });
  KeyBuffer key;
  for (const auto& [v, recno] : items) {
    build_key(type, KeyFormat::Decimal128, Value::exact(v), false, key);
    loader.add(key.bytes(), recno);
  }
  uint32_t root = loader.finish();
  EXPECT_EQ(pages.size(), loader.pages_allocated());
  // Walk the leaf level left to right and compare with the input.
  size_t next = 0;
  uint32_t page_no = root;
  for (;;) {
    BtreePageImage img = decode_page(pages.at(page_no).data(), ps);
    EXPECT_EQ(img.header.layout, layout);
    if (img.leaf()) break;
    page_no = img.entries.at(0).page_number;
  }
  bool same = true;
  while (page_no != 0) {
    BtreePageImage img = decode_page(pages.at(page_no).data(), ps);
    ++b.leaves;
    for (const PageEntry& e : img.entries) {
      build_key(type, KeyFormat::Decimal128, Value::exact(items[next].first), false, key);
      std::vector<uint8_t> want(key.bytes().begin(), key.bytes().end());
      if (e.key != want || e.recno != items[next].second) same = false;
      ++next;
    }
    page_no = img.header.sibling;
  }
  EXPECT_TRUE(same);
  b.nodes = next;
  b.depth = loader.depth();
  b.pages = pages.size();
  b.bytes_per_entry = static_cast<double>(b.leaves) * ps / static_cast<double>(b.nodes);
  std::printf("%s %s: depth %u, leaves %llu, pages %llu, nodes %llu, bytes/entry %.4f\n",
              col ? "COL" : "ID", layout == NodeLayout::Compact ? "compact" : "firebird", b.depth,
              (unsigned long long)b.leaves, (unsigned long long)b.pages,
              (unsigned long long)b.nodes, b.bytes_per_entry);
  return b;
}

TEST(BtreeCompactSeed, DenseUniqueBigintId) {
  Built b = build(false, NodeLayout::Compact);
  EXPECT_EQ(b.nodes, 1000000u);
  EXPECT_EQ(b.depth, 2u);
  EXPECT_EQ(b.leaves, 321u);  // 2.63 bytes per entry (Firebird 3: 12.07)
  EXPECT_LE(b.bytes_per_entry, 3.0);
}

TEST(BtreeCompactSeed, BigintColWithDuplicates) {
  Built b = build(true, NodeLayout::Compact);
  EXPECT_EQ(b.nodes, 1000000u);
  EXPECT_EQ(b.depth, 2u);
  EXPECT_EQ(b.leaves, 503u);  // 4.12 bytes per entry (Firebird 3: 9.47)
  EXPECT_LE(b.bytes_per_entry, 4.5);
}

}  // namespace
}  // namespace pbtree
