// The writer's maintenance of leaf page directories (PageDirectory::note_insert, called by
// btree/leaf_writer.cc): after every in-place insert the directory of the changed leaf is
// current without a rebuild and equals one rebuilt from scratch from the page bytes at the
// same group starts (tests/support/directory_check.h); pages stay what the inserts make
// without a directory (verify).
#include <gtest/gtest.h>

#include <random>
#include <shared_mutex>

#include "node/page_directory.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/directory_check.h"

namespace pbtree::testing {
namespace {

struct Counts {
  uint64_t checked, maintained, builds;
};

// 4000 random inserts into a tree of `layout`, each followed by the directory check.
Counts random_inserts(NodeLayout layout, uint16_t jump_interval) {
  TreeEnv env(false, false, 4096, 256, jump_interval, layout);
  DirectoryCheck dirs(env.pool, false);
  std::mt19937_64 rng(11);
  for (uint64_t i = 0; i < 4000; ++i) {
    const std::vector<uint8_t> k = be_key(rng() % 1000000);
    env.tree->insert(k, i);
    dirs.check_after_change(k);
    if (::testing::Test::HasFatalFailure()) return {};
  }
  EXPECT_EQ(env.tree->verify().entries, 4000u);
  return {dirs.checked(), dirs.maintained(), env.pool.directory_stats().builds};
}

// Pages checked (changed since the last check), directories the writer had kept current,
// and directory builds in all (first builds after splits, the check's rebuilds included, and
// the route tables that descents build for non-leaf pages changed since their last build,
// node/route_table.h).
TEST(BtreeWriterDirectory, RandomInsertsKeepLeafDirectoriesFirebird) {
  const Counts c = random_inserts(NodeLayout::Firebird, 576);
  EXPECT_EQ(c.checked, 4018u);
  EXPECT_EQ(c.maintained, 3974u);
  EXPECT_EQ(c.builds, 52u);
}

// Compact pages are re-laid whole when due another jump target (their directory then goes
// stale and the check rebuilds it): fewer are kept current.
TEST(BtreeWriterDirectory, RandomInsertsKeepLeafDirectoriesCompact) {
  const Counts c = random_inserts(NodeLayout::Compact, 144);
  EXPECT_EQ(c.checked, 4012u);
  EXPECT_EQ(c.maintained, 3433u);
  EXPECT_EQ(c.builds, 584u);
}

// A directory that was current before an insert at a leaf's first position (no previous
// node) is left stale, and the next search rebuilds it.
TEST(BtreeWriterDirectory, NewFirstNodeLeavesTheDirectoryStale) {
  TreeEnv env(false, false, 4096, 256, 576, NodeLayout::Firebird);
  for (uint64_t i = 1; i <= 50; ++i) env.tree->insert(be_key(i * 10), i);
  env.tree->insert(be_key(255), 100);  // a search through the leaf's directory builds it
  const uint32_t leaf = env.tree->root();
  {
    PageRef ref = env.pool.pin(leaf);
    std::shared_lock lock(ref.latch());
    ASSERT_NE(current_directory(ref), nullptr);
  }
  env.tree->insert(be_key(256), 101);  // in place: kept current
  {
    PageRef ref = env.pool.pin(leaf);
    std::shared_lock lock(ref.latch());
    const PageDirectory* d = current_directory(ref);
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(d->rebuilt_equal(ref.data(), 4096));
  }
  env.tree->insert(be_key(1), 102);  // new first node
  PageRef ref = env.pool.pin(leaf);
  std::shared_lock lock(ref.latch());
  EXPECT_EQ(current_directory(ref), nullptr);
}

}  // namespace
}  // namespace pbtree::testing
