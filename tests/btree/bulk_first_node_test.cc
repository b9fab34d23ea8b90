// Issue 30 item 1: a compact-layout bulk build whose first key is empty (the NULL key of an
// ascending index) coded that first node relative to "an empty key and record number 0", a
// node no reader can decode ("relative node (code 0x00) without a predecessor"). The first
// node of every page is explicit now (node/page_builder.cc), in the serial and parallel
// builders, IndexFile::bulk_load, `load` and its spilled runs; PageBuilder::close refuses a page
// whose first node is relative.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <string>
#include <vector>

#include "btree/btree.h"
#include "btree/bulk_build.h"
#include "file/index_file_access.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_builder.h"
#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using tools::testing::ScratchDir;

// Every node of every page decodes from the page start (first node without a predecessor).
void expect_pages_decode(const std::vector<std::vector<uint8_t>>& pages) {
  for (const auto& page : pages) {
    const BtreeHeader h = read_btree_header(page.data());
    const IndexNode first =
        decode_node(page.data(), h.length, BtreePage(page.data()).first_node(), h.level == 0);
    EXPECT_TRUE(first.absolute) << "level " << int{h.level};
  }
}

std::vector<std::vector<uint8_t>> build_compact(const std::vector<std::vector<uint8_t>>& keys,
                                                uint32_t threads) {
  FastLoader::Options o;
  o.page_size = 4096;
  o.first_page = 3;
  o.layout = NodeLayout::Compact;
  o.jump_interval = layout_jump_interval(8, false, NodeLayout::Compact);
  o.threads = threads;
  std::vector<std::vector<uint8_t>> pages;
  FastLoader loader(o, [&](uint32_t, uint8_t* page) { pages.emplace_back(page, page + 4096); });
  EntryBatch batch;
  for (size_t i = 0; i < keys.size(); ++i) batch.add(keys[i], i, i);
  loader.build(batch);
  return pages;
}

TEST(BtreeBulkFirstNode, CompactEmptyFirstKeyIsExplicitSerial) {
  const std::vector<std::vector<uint8_t>> keys{{}, {}, {0xC1, 0x01}};
  const auto pages = build_compact(keys, 1);
  ASSERT_EQ(pages.size(), 1u);
  // Byte 0 of the first node: 0xC0 | record number 0 (explicit), then prefix 0, length 0.
  const uint32_t first = BtreePage(pages[0].data()).first_node();
  EXPECT_EQ(pages[0][first], 0xC0);
  EXPECT_EQ(pages[0][first + 1], 0x00);
  expect_pages_decode(pages);
}

TEST(BtreeBulkFirstNode, CompactEmptyFirstKeyIsExplicitParallel) {
  // Enough NULLs for several leaves, so the parallel builder breaks pages.
  std::vector<std::vector<uint8_t>> keys(3000);
  for (int i = 0; i < 50; ++i) keys.push_back({0xC1, static_cast<uint8_t>(i)});
  const auto serial = build_compact(keys, 1);
  const auto parallel = build_compact(keys, 2);
  EXPECT_EQ(serial, parallel);
  expect_pages_decode(parallel);
}

TEST(BtreeBulkFirstNode, PageBuilderNeverCodesTheFirstNodeRelative) {
  PageBuilder b(4096, 0, NodeLayout::Compact, true);
  std::vector<uint8_t> page(4096);
  b.start(page.data());
  b.place({}, 5, 0, 0, b.fit_size({}, 5, 0, 0), true);
  b.append_end_level();
  const BtreeHeader h = b.close(page.data(), BtreeHeader{});
  const IndexNode n = decode_node(page.data(), h.length, kBtreeHeaderSize, true);
  EXPECT_TRUE(n.absolute);
  EXPECT_EQ(n.recno, 5u);
  EXPECT_EQ(n.length, 0u);
}

IndexDefinition integer_compact(bool descending) {
  IndexDefinition def;
  def.name = "X";
  def.type = TypeSpec::parse("integer");
  def.layout = NodeLayout::Compact;
  def.descending = descending;
  return def;
}

TEST(BtreeBulkFirstNode, IndexFileBulkLoadNullFirst) {
  for (uint32_t threads : {1u, 2u}) {
    ScratchDir dir("first-node-lib-" + std::to_string(threads));
    const std::string path = dir.file("m.pbt");
    {
      auto file = IndexFile::open_or_create(path, 4096);
      file->set_build_threads(threads);
      EntryBatch batch;
      batch.add(null_key(false), 0, 0);
      KeyBuffer k;
      const IndexDefinition def = integer_compact(false);
      build_key(def.type, default_key_format(def.type), parse_value(def.type, "1"), false, k);
      batch.add(k.bytes(), 1, 1);
      file->bulk_load(def, batch);
      file->commit();
      file->close();
    }
    auto file = IndexFile::open(path);
    BTree& t = btree_of(*file, "X");
    EXPECT_EQ(t.verify().entries, 2u);
    EXPECT_EQ(t.find(null_key(false)), std::vector<uint64_t>{0});
  }
}

}  // namespace
}  // namespace pbtree
