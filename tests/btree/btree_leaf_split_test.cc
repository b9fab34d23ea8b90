// The one split (btree/split.cc) from its three sources: the leaf writer's rightmost append,
// split inside the leaf's frame; the leaf writer's over-full node bytes (any insert that does
// not fit); and the page image of the general path. Increasing inserts that split the cached
// rightmost leaf, and random inserts that split leaves of either layout, give every page the
// bytes the image source gives it, for unique, duplicate and descending indexes with keys of
// varying length.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "btree/leaf_writer.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree::testing {
namespace {

struct SplitCase {
  NodeLayout layout;
  uint16_t jump_interval;
  bool unique;
  bool descending;
  uint32_t depth;  ///< levels of the tree filled (inner pages split too from 3 on)
};

// The i-th key of an increasing run (bytewise increasing, which is index order on descending
// indexes too: their keys are stored inverted): 4 bytes of order, then 0..40 bytes of suffix,
// so node sizes, prefixes and jump keys vary.
std::vector<uint8_t> run_key(uint64_t i, std::mt19937_64& rng) {
  std::vector<uint8_t> k = be_key(i, 4);
  const size_t extra = rng() % 41;
  for (size_t j = 0; j < extra; ++j) k.push_back(static_cast<uint8_t>('a' + rng() % 4));
  return k;
}

// Fills a tree with `n` increasing inserts (each key twice on a duplicate index); with
// `general`, the rightmost-leaf cache is dropped before every insert and the leaf writer's
// splits are off, so each split starts from the general path's page image.
void fill(TreeEnv& env, const SplitCase& c, int n, bool general) {
  std::mt19937_64 rng(5);
  WriterCache& cache = LeafWriter::cache(*env.tree, env.pool.page_size());
  cache.leaf_splits = !general;
  uint64_t recno = 1;
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> k = run_key(static_cast<uint64_t>(i), rng);
    for (int d = 0; d < (c.unique ? 1 : 2); ++d) {
      if (general) cache.rm_leaf = 0;
      env.tree->insert(k, recno++);
    }
  }
}

void expect_same_pages_as_general_split(const SplitCase& c) {
  constexpr int kKeys = 15000;  // three levels: parents split too
  TreeEnv fast(c.unique, c.descending, 1024, 4096, c.jump_interval, c.layout);
  TreeEnv general(c.unique, c.descending, 1024, 4096, c.jump_interval, c.layout);
  fill(fast, c, kKeys, false);
  fill(general, c, kKeys, true);
  EXPECT_GT(LeafWriter::splits(*fast.tree), 10u);  // the fast path ran
  EXPECT_EQ(LeafWriter::splits(*general.tree), 0u);
  ASSERT_EQ(fast.alloc.in_use(), general.alloc.in_use());
  EXPECT_EQ(fast.tree->root(), general.tree->root());
  // Bytes 16.. of every page (0..15 are the page's generic header, set when written).
  const uint32_t ps = fast.pool.page_size();
  for (uint32_t p = 1; p <= fast.alloc.in_use(); ++p) {
    PageRef a = fast.pool.pin(p);
    PageRef b = general.pool.pin(p);
    ASSERT_EQ(std::memcmp(a.data() + 16, b.data() + 16, ps - 16), 0) << "page " << p;
  }
  const uint64_t entries = c.unique ? kKeys : 2 * kKeys;
  const TreeCheck check = fast.tree->verify();
  EXPECT_EQ(check.entries, entries);
  EXPECT_EQ(check.depth, c.depth);
}

TEST(BtreeLeafSplit, SameBytesAsGeneralSplitFirebirdUnique) {
  expect_same_pages_as_general_split({NodeLayout::Firebird, 128, true, false, 3});
}
TEST(BtreeLeafSplit, SameBytesAsGeneralSplitFirebirdDuplicates) {
  expect_same_pages_as_general_split({NodeLayout::Firebird, 200, false, false, 4});
}
TEST(BtreeLeafSplit, SameBytesAsGeneralSplitFirebirdDescending) {
  expect_same_pages_as_general_split({NodeLayout::Firebird, 128, true, true, 3});
}
TEST(BtreeLeafSplit, SameBytesAsGeneralSplitCompactUnique) {
  expect_same_pages_as_general_split({NodeLayout::Compact, 100, true, false, 3});
}
TEST(BtreeLeafSplit, SameBytesAsGeneralSplitCompactDuplicates) {
  expect_same_pages_as_general_split({NodeLayout::Compact, 0, false, false, 3});
}
TEST(BtreeLeafSplit, SameBytesAsGeneralSplitCompactDescending) {
  expect_same_pages_as_general_split({NodeLayout::Compact, 150, true, true, 3});
}

// Random inserts (keys of 4..44 bytes, each twice on a duplicate index) into a tree whose leaf
// splits start from the leaf's over-full bytes (LeafWriter::store_split) or, with `general`,
// from the general path's page image.
void fill_random(TreeEnv& env, bool unique, int n, bool general) {
  std::mt19937_64 rng(9);
  LeafWriter::cache(*env.tree, env.pool.page_size()).leaf_splits = !general;
  uint64_t recno = 1;
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> k = run_key(rng() % 100000000, rng);
    for (int d = 0; d < (unique ? 1 : 2); ++d) {
      try {
        env.tree->insert(k, recno++);
      } catch (const DuplicateKeyError&) {
      }
    }
  }
}

void expect_same_pages_after_random_inserts(uint32_t page_size, uint16_t jump_interval, bool unique,
                                            bool descending,
                                            NodeLayout layout = NodeLayout::Firebird) {
  constexpr int kKeys = 12000;
  TreeEnv fast(unique, descending, page_size, 4096, jump_interval, layout);
  TreeEnv general(unique, descending, page_size, 4096, jump_interval, layout);
  fill_random(fast, unique, kKeys, false);
  fill_random(general, unique, kKeys, true);
  EXPECT_GT(LeafWriter::cache(*fast.tree, page_size).byte_splits, 20u);  // the byte source ran
  EXPECT_EQ(LeafWriter::cache(*general.tree, page_size).byte_splits, 0u);
  ASSERT_EQ(fast.alloc.in_use(), general.alloc.in_use());
  EXPECT_EQ(fast.tree->root(), general.tree->root());
  for (uint32_t p = 1; p <= fast.alloc.in_use(); ++p) {
    PageRef a = fast.pool.pin(p);
    PageRef b = general.pool.pin(p);
    ASSERT_EQ(std::memcmp(a.data() + 16, b.data() + 16, page_size - 16), 0) << "page " << p;
  }
  EXPECT_EQ(fast.tree->verify().entries, general.tree->verify().entries);
}

TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitUnique) {
  expect_same_pages_after_random_inserts(1024, 128, true, false);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitDuplicates) {
  expect_same_pages_after_random_inserts(4096, 576, false, false);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitDescending) {
  expect_same_pages_after_random_inserts(1024, 200, true, true);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitNoJumpNodes) {
  expect_same_pages_after_random_inserts(4096, 0, false, false);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitCompactUnique) {
  expect_same_pages_after_random_inserts(1024, 32, true, false, NodeLayout::Compact);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitCompactDuplicates) {
  expect_same_pages_after_random_inserts(4096, 144, false, false, NodeLayout::Compact);
}
TEST(BtreeLeafSplit, MiddleSplitSameBytesAsGeneralSplitCompactDescending) {
  expect_same_pages_after_random_inserts(1024, 50, true, true, NodeLayout::Compact);
}

// A leaf split by the fast path leaves the new page as the cached rightmost leaf: the next
// increasing insert is an append through the cache.
TEST(BtreeLeafSplit, NewRightPageBecomesTheCachedLeaf) {
  TreeEnv env(true, false, 4096, 256, 576, NodeLayout::Firebird);
  uint64_t i = 0;
  while (LeafWriter::splits(*env.tree) == 0) {
    env.tree->insert(be_key(i), i);
    ++i;
  }
  const uint64_t appends = LeafWriter::appends(*env.tree);
  env.tree->insert(be_key(i), i);
  EXPECT_EQ(LeafWriter::appends(*env.tree), appends + 1);
  EXPECT_EQ(env.tree->verify().entries, i + 1);
}

}  // namespace
}  // namespace pbtree::testing
