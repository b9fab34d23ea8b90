// The route table of a non-leaf page (node/route_table.h): its latch-free search picks the
// same child (or right sibling) as BTree::descend does from find_in_page on random pages of
// both layouts (duplicates, long shared prefixes, descending, END_BUCKET, degenerate first
// node); it refuses a stale version, a leaf and a damaged page; and the descent builds one per
// non-leaf page, counted in the pool's directory counters, then routes through them without
// a latch.
#include "node/route_table.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "node/btree_page.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/random_pages.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::make_page;
using testing::random_entries;

// What BTree::descend takes from find_in_page on a non-leaf page; false for a page without
// entries (corrupt).
bool expected_step(const Bytes& page, uint32_t ps, const Bytes& key, bool descending,
                   uint64_t recno, RouteStep& out) {
  const PageFind f = find_in_page(page.data(), ps, key, descending, recno, FindMode::UpperBound);
  const BtreePage bp(page.data());
  out.level = bp.level();
  out.sibling = false;
  if (f.beyond_end_bucket) {
    out.sibling = true;
    out.next = bp.sibling();
    return true;
  }
  const bool at_prev = f.prev_offset != 0;
  const IndexNode n = decode_node(page.data(), bp.length(), at_prev ? f.prev_offset : f.offset,
                                  false, at_prev ? f.prev_context() : f.offset_context());
  if (n.is_end_level()) return false;
  if (n.is_end_bucket()) {
    out.sibling = true;
    out.next = bp.sibling();
    return true;
  }
  out.next = n.page_number;
  return true;
}

struct RouteCase {
  NodeLayout layout;
  uint32_t left_sibling;
  size_t max_len;
  size_t dups;
  bool descending;
  bool end_bucket;
  size_t prefix = 0;  ///< bytes every key starts with (the page prefix; not on leftmost pages)
};

class NodeRouteTable : public ::testing::TestWithParam<RouteCase> {};

TEST_P(NodeRouteTable, AgreesWithTheDescentOverFindInPage) {
  const RouteCase rc = GetParam();
  const uint32_t ps = 8192;
  std::mt19937_64 rng(91 + rc.max_len + rc.dups * 10 + (rc.end_bucket ? 5 : 0) + rc.prefix);
  for (int round = 0; round < 6; ++round) {
    std::vector<PageEntry> entries = random_entries(rng, 3000, rc.max_len, rc.dups, rc.descending);
    for (PageEntry& e : entries) e.key.insert(e.key.begin(), rc.prefix, uint8_t{0x41});
    std::optional<PageEntry> eb;
    if (rc.end_bucket) {
      // END_BUCKET: a copy of the right sibling's first entry, taken from the middle so that
      // keys beyond it exist among the probes.
      const size_t cut = entries.size() / 2;
      eb = entries[cut];
      entries.resize(cut);
    }
    Bytes page = make_page(entries, rc.layout, 2, rc.left_sibling, ps, eb, eb ? 4242 : 0);
    RouteTable t;
    t.build(page.data(), ps, 8);
    ASSERT_EQ(t.version(), 8u);
    std::vector<PageEntry> probes = entries;
    if (eb) probes.push_back(*eb);
    for (int i = 0; i < 1200; ++i) {
      Bytes key = probes[rng() % probes.size()].key;
      if (i % 3 == 1 && !key.empty()) key.back() ^= 1;
      if (i % 7 == 2) key.resize(rng() % (key.size() + 1));
      if (i % 11 == 3) key.push_back(0x42);
      if (i % 13 == 4) key.assign(1, static_cast<uint8_t>(rng()));
      if (i % 17 == 5 && key.size() > 2) key[1] ^= 0x10;  // leaves the page prefix, if any
      const uint64_t recno = rng() % 80;
      RouteStep want, got;
      ASSERT_TRUE(expected_step(page, ps, key, rc.descending, recno, want));
      ASSERT_TRUE(t.route(8, key, rc.descending, recno, got))
          << "round " << round << " probe " << i;
      ASSERT_EQ(got.next, want.next) << "round " << round << " probe " << i;
      ASSERT_EQ(got.sibling, want.sibling) << "round " << round << " probe " << i;
      ASSERT_EQ(got.level, 2);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Pages, NodeRouteTable,
    ::testing::Values(RouteCase{NodeLayout::Firebird, 0, 6, 1, false, false},
                      RouteCase{NodeLayout::Firebird, 7, 3, 20, false, true},
                      RouteCase{NodeLayout::Firebird, 7, 40, 2, true, false},
                      RouteCase{NodeLayout::Firebird, 0, 12, 3, true, true},
                      RouteCase{NodeLayout::Compact, 0, 6, 1, false, true},
                      RouteCase{NodeLayout::Compact, 7, 3, 20, false, false},
                      RouteCase{NodeLayout::Compact, 7, 40, 2, true, true},
                      RouteCase{NodeLayout::Compact, 0, 12, 3, true, false},
                      RouteCase{NodeLayout::Firebird, 7, 12, 2, false, true, 11},
                      RouteCase{NodeLayout::Compact, 7, 6, 3, true, false, 9}),
    // Named by their fields: gtest's default name prints the struct's bytes, padding included,
    // so the name ctest discovered could differ from the one it then ran.
    [](const ::testing::TestParamInfo<RouteCase>& info) {
      const RouteCase& c = info.param;
      return std::string(c.layout == NodeLayout::Compact ? "Compact" : "Firebird") + "_left" +
             std::to_string(c.left_sibling) + "_len" + std::to_string(c.max_len) + "_dups" +
             std::to_string(c.dups) + (c.descending ? "_desc" : "_asc") +
             (c.end_bucket ? "_endbucket" : "") + "_prefix" + std::to_string(c.prefix);
    });

Bytes inner_page(uint32_t ps) {
  std::vector<PageEntry> entries;
  for (uint64_t r = 0; r < 50; ++r) {
    entries.push_back(PageEntry{testing::be_key(r * 7, 8), r, static_cast<uint32_t>(10 + r)});
  }
  return make_page(entries, NodeLayout::Firebird, 1, 3, ps);
}

TEST(NodeRouteTableState, RefusesAnotherVersion) {
  Bytes page = inner_page(4096);
  RouteTable t;
  t.build(page.data(), 4096, 4);
  RouteStep s;
  ASSERT_TRUE(t.route(4, testing::be_key(70, 8), false, 100, s));
  EXPECT_EQ(s.next, 20u);  // key 70 = entry 10 (record number 10 <= 100)
  EXPECT_FALSE(s.sibling);
  EXPECT_EQ(s.level, 1);
  EXPECT_FALSE(t.route(5, testing::be_key(70, 8), false, 100, s));
}

TEST(NodeRouteTableState, RefusesALeaf) {
  std::vector<PageEntry> entries;
  for (uint64_t r = 0; r < 50; ++r) entries.push_back(PageEntry{testing::be_key(r, 8), r, 0});
  Bytes page = make_page(entries, NodeLayout::Firebird, 0, 0, 4096);
  RouteTable t;
  t.build(page.data(), 4096, 1);
  RouteStep s;
  EXPECT_FALSE(t.route(1, testing::be_key(3, 8), false, 0, s));
}

TEST(NodeRouteTableState, RefusesADamagedPage) {
  Bytes page = inner_page(4096);
  page[BtreePage(page.data()).length() - 1] = 0xE0;  // END_LEVEL becomes a reserved flag
  RouteTable t;
  t.build(page.data(), 4096, 1);
  RouteStep s;
  EXPECT_FALSE(t.route(1, testing::be_key(70, 8), false, 0, s));
}

TEST(NodeRouteTableState, RebuildOfALargerPageKeepsTheOldBlock) {
  RouteTable t;
  Bytes small = inner_page(4096);
  const int64_t first = t.build(small.data(), 4096, 1);
  std::mt19937_64 rng(5);
  Bytes big = make_page(random_entries(rng, 3000, 30, 1, false), NodeLayout::Firebird, 1, 3, 32768);
  const int64_t grown = t.build(big.data(), 32768, 2);
  EXPECT_GT(first, 0);
  EXPECT_GT(grown, 0);
  // Both blocks are held: bytes() counts the object and every block.
  EXPECT_EQ(t.bytes(), sizeof(RouteTable) + static_cast<size_t>(first + grown));
  EXPECT_EQ(t.build(small.data(), 4096, 3), 0);  // fits the current block
}

// A tree of three levels: 200-byte keys in 4 KiB pages.
Bytes long_key(uint64_t v) {
  Bytes k(200, 'x');
  for (int i = 7; i >= 0; --i, v >>= 8) k[i] = static_cast<uint8_t>(v & 0xFF);
  return k;
}

TEST(BtreeOptimisticDescent, RoutesNonLeafPagesWithoutALatch) {
  testing::TreeEnv env(true, false, 4096, 4096);
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(long_key(i), i);
  PageRef root = env.pool.pin(env.tree->root());
  const int levels = BtreePage(root.data()).level() + 1;
  ASSERT_GE(levels, 3);
  root.reset();
  // The first lookups latch the non-leaf pages and build their route tables.
  for (uint64_t i = 0; i < 3000; ++i)
    ASSERT_EQ(env.tree->find(long_key(i)), (std::vector<uint64_t>{i}));
  const uint64_t builds = env.pool.aux_builds.load();
  const uint64_t before = optimistic_descent_steps();
  for (uint64_t i = 0; i < 3000; ++i)
    ASSERT_EQ(env.tree->find(long_key(i)), (std::vector<uint64_t>{i}));
  // Every non-leaf page of every descent was routed through its table, none rebuilt.
  EXPECT_EQ(optimistic_descent_steps() - before, 3000u * static_cast<uint64_t>(levels - 1));
  EXPECT_EQ(env.pool.aux_builds.load(), builds);
  PageRef r = env.pool.pin(env.tree->root());
  const RouteTable* t = frame_route_table(r.frame());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->version(), r.version());
}

TEST(BtreeOptimisticDescent, ChangedNonLeafPageIsRebuiltOnTheNextDescent) {
  testing::TreeEnv env(true, false, 4096, 4096);
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(long_key(2 * i), i);
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_EQ(env.tree->find(long_key(2 * i)).size(), 1u);
  // Odd keys split leaves and change their parents; every lookup still finds its key.
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(long_key(2 * i + 1), 3000 + i);
  for (uint64_t i = 0; i < 6000; ++i) {
    const uint64_t want = i % 2 == 0 ? i / 2 : 3000 + i / 2;
    ASSERT_EQ(env.tree->find(long_key(i)), (std::vector<uint64_t>{want})) << i;
  }
}

}  // namespace
}  // namespace pbtree
