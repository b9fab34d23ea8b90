// The per-frame page directory (node/page_directory.h): its search agrees with find_in_page
// on random pages of both layouts (leaf and non-leaf, duplicates, long shared prefixes,
// descending), it stays within a quarter of the page, falls back on damaged nodes, and the
// buffer pool counts its bytes and builds.
#include "node/page_directory.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/random_pages.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::make_page;
using testing::random_entries;

// Every field of the two finds agrees, and their contexts decode the same nodes.
void expect_same_find(const Bytes& page, const PageFind& a, const PageFind& b, bool leaf) {
  ASSERT_EQ(a.offset, b.offset);
  ASSERT_EQ(a.prev_offset, b.prev_offset);
  ASSERT_EQ(a.matched, b.matched);
  ASSERT_EQ(a.at_marker, b.at_marker);
  ASSERT_EQ(a.beyond_end_bucket, b.beyond_end_bucket);
  const uint32_t limit = get_u16(page.data() + 30);
  const IndexNode x = decode_node(page.data(), limit, a.offset, leaf);
  const IndexNode y = decode_node(page.data(), limit, b.offset, leaf, b.offset_context());
  ASSERT_EQ(x.recno, y.recno);
  ASSERT_EQ(x.prefix, y.prefix);
  if (b.prev_offset != 0) {
    const IndexNode p = decode_node(page.data(), limit, b.prev_offset, leaf);
    const IndexNode q = decode_node(page.data(), limit, b.prev_offset, leaf, b.prev_context());
    ASSERT_EQ(p.recno, q.recno);
    ASSERT_EQ(p.page_number, q.page_number);
  }
}

struct PageCase {
  NodeLayout layout;
  uint8_t level;
  uint32_t left_sibling;
  size_t max_len;
  size_t dups;
  bool descending;
};

class NodeDirectoryFind : public ::testing::TestWithParam<PageCase> {};

TEST_P(NodeDirectoryFind, AgreesWithFindInPage) {
  const PageCase pc = GetParam();
  const uint32_t ps = 8192;
  std::mt19937_64 rng(77 + pc.max_len + pc.dups * 10 + pc.level);
  for (int round = 0; round < 6; ++round) {
    std::vector<PageEntry> entries = random_entries(rng, 3000, pc.max_len, pc.dups, pc.descending);
    Bytes page = make_page(entries, pc.layout, pc.level, pc.left_sibling, ps);
    PageDirectory dir;
    dir.build(page.data(), ps, 5);
    ASSERT_TRUE(dir.usable());
    ASSERT_EQ(dir.version(), 5u);
    ASSERT_LE(dir.bytes(), ps / 4);
    const bool leaf = pc.level == 0;
    for (int t = 0; t < 600; ++t) {
      Bytes key = entries[rng() % entries.size()].key;
      if (t % 3 == 1) key.back() ^= 1;
      if (t % 7 == 2) key.resize(rng() % (key.size() + 1));
      if (t % 11 == 3) key.push_back(0x42);
      std::optional<uint64_t> recno;
      if (t % 2 == 0) recno = rng() % 80;
      for (FindMode mode : {FindMode::LowerBound, FindMode::UpperBound}) {
        PageFind want = find_in_page(page.data(), ps, key, pc.descending, recno, mode);
        PageFind got = dir.find(page.data(), key, pc.descending, recno, mode);
        expect_same_find(page, want, got, leaf);
        if (::testing::Test::HasFatalFailure()) {
          FAIL() << "round " << round << " probe " << t;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Pages, NodeDirectoryFind,
                         ::testing::Values(PageCase{NodeLayout::Firebird, 0, 0, 6, 1, false},
                                           PageCase{NodeLayout::Firebird, 0, 0, 3, 20, false},
                                           PageCase{NodeLayout::Firebird, 0, 0, 40, 2, true},
                                           PageCase{NodeLayout::Firebird, 1, 0, 6, 1, false},
                                           PageCase{NodeLayout::Firebird, 1, 7, 12, 3, false},
                                           PageCase{NodeLayout::Compact, 0, 0, 6, 1, false},
                                           PageCase{NodeLayout::Compact, 0, 0, 3, 20, false},
                                           PageCase{NodeLayout::Compact, 0, 0, 40, 2, true},
                                           PageCase{NodeLayout::Compact, 1, 0, 6, 1, false},
                                           PageCase{NodeLayout::Compact, 1, 7, 12, 3, true}),
                         // Named by position: the default name prints the struct's bytes,
                         // padding included, which differ from run to run.
                         [](const auto& info) { return "Case" + std::to_string(info.index); });

TEST(NodePageDirectory, GroupsGrowToFitAQuarterOfThePage) {
  // 1-byte duplicate keys: compact nodes of 1 byte, about 4000 per page.
  std::vector<PageEntry> entries;
  for (uint64_t r = 0; r < 5000; ++r) entries.push_back(PageEntry{Bytes{0x41}, r, 0});
  Bytes page = make_page(entries, NodeLayout::Compact, 0, 0, 4096);
  PageDirectory dir;
  dir.build(page.data(), 4096, 1);
  ASSERT_TRUE(dir.usable());
  EXPECT_GT(dir.group_size(), PageDirectory::kMinGroup);
  EXPECT_LE(dir.bytes(), 4096u / 4);
}

// The group size is the least one whose groups fit the budget, not the next power of two:
// on compact leaves of ~3,000 entries, doubling gave 64 where 38 fits.
TEST(NodePageDirectory, GroupSizeIsTheLeastThatFits) {
  std::vector<PageEntry> entries;
  for (uint64_t r = 0; r < 5000; ++r) entries.push_back(PageEntry{Bytes{0x41}, r, 0});
  Bytes page = make_page(entries, NodeLayout::Compact, 0, 0, 4096);
  const size_t n = decode_page(page.data(), 4096).entries.size();
  PageDirectory dir;
  dir.build(page.data(), 4096, 1);
  ASSERT_TRUE(dir.usable());
  // Per group: the 8-byte head, the previous record number and the 8-byte Group; the
  // page-wide common prefix (the one key byte all duplicates share) takes 1 byte.
  const size_t per_group = 24;
  const size_t max_groups = (4096 / 4 - sizeof(PageDirectory) - 1) / per_group;
  const size_t k = dir.group_size();
  EXPECT_EQ(k, (n + max_groups - 1) / max_groups);
  EXPECT_EQ(dir.groups(), (n + k - 1) / k);
}

TEST(NodePageDirectory, DamagedNodeMakesItUnusable) {
  std::vector<PageEntry> entries;
  for (uint64_t r = 0; r < 50; ++r) entries.push_back(PageEntry{testing::be_key(r * 7, 8), r, 0});
  Bytes page = make_page(entries, NodeLayout::Firebird, 0, 0, 4096);
  const uint32_t limit = get_u16(page.data() + 30);
  page[limit - 1] = 0xE0;  // the END_LEVEL byte becomes a reserved flag
  PageDirectory dir;
  dir.build(page.data(), 4096, 1);
  EXPECT_FALSE(dir.usable());
  EXPECT_EQ(dir.version(), 1u);
}

TEST(NodePageDirectory, RebuiltFromScratchIsTheSame) {
  std::mt19937_64 rng(3);
  std::vector<PageEntry> entries = random_entries(rng, 2000, 30, 4, false);
  Bytes page = make_page(entries, NodeLayout::Compact, 0, 0, 8192);
  PageDirectory a, b;
  a.build(page.data(), 8192, 1);
  b.build(page.data(), 8192, 2);
  EXPECT_TRUE(a.same_as(b));
  page[get_u16(page.data() + 30) - 1] = 0xE0;
  b.build(page.data(), 8192, 3);
  EXPECT_FALSE(a.same_as(b));
}

TEST(NodePageDirectory, PoolCountsBytesAndBuilds) {
  testing::TreeEnv env(false, false, 4096, 16);
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(testing::be_key(i * 3, 8), i);
  const uint64_t builds = env.pool.aux_builds.load();
  EXPECT_EQ(env.tree->find(testing::be_key(300, 8)), (std::vector<uint64_t>{100}));
  const uint64_t after_first = env.pool.aux_builds.load();
  EXPECT_GT(after_first, builds);
  EXPECT_GT(env.pool.aux_bytes.load(), 0);
  EXPECT_LE(env.pool.aux_bytes.load(), static_cast<int64_t>(16 * 4096 / 4));
  EXPECT_EQ(env.tree->find(testing::be_key(300, 8)), (std::vector<uint64_t>{100}));
  EXPECT_EQ(env.pool.aux_builds.load(), after_first);  // unchanged pages: no rebuild
  env.tree->insert(testing::be_key(301, 8), 7000);
  EXPECT_EQ(env.tree->find(testing::be_key(301, 8)), (std::vector<uint64_t>{7000}));
  // The writer kept the changed leaf's directory current (PageDirectory::note_insert).
  EXPECT_EQ(env.pool.aux_builds.load(), after_first);
}

}  // namespace
}  // namespace pbtree
