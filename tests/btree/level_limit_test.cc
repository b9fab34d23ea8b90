// Issue 30 item 3: the level limit and the depth of trees of long keys.
// - An insert that would add a level beyond the limit is refused before any page changes
//   (it used to split the leaf and every level up to the root, put the key in, and only then
//   fail in TreeWriter::new_root, leaving a corrupt tree that close() committed).
// - Non-leaf pages split in the middle except at their level's right end, so random inserts
//   of long keys no longer leave about half the non-leaf pages with a single child.
// - Real Firebird 3 is the oracle for the depth: the same random 1000-byte keys inserted one
//   by one into a VARCHAR(1000) CHARACTER SET OCTETS index at 4 KiB pages
//   (tests/firebird/insert_depth.sh); pbtree's tree is no deeper than fbstat reports.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "node/page_image.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TreeEnv;

std::vector<std::vector<uint8_t>> random_long_keys(size_t n, size_t length, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0x21, 0xFE);  // no pad byte (space) and no NUL
  std::vector<std::vector<uint8_t>> keys(n, std::vector<uint8_t>(length));
  for (auto& k : keys) {
    for (auto& b : k) b = static_cast<uint8_t>(byte(rng));
  }
  return keys;
}

std::vector<std::vector<uint8_t>> snapshot(TreeEnv& env) {
  std::vector<std::vector<uint8_t>> pages;
  for (uint32_t p = 1; p <= env.alloc.in_use(); ++p) {
    PageRef ref = env.pool.pin(p);
    pages.emplace_back(ref.data(), ref.data() + env.pool.page_size());
  }
  return pages;
}

TEST(BtreeLevelLimit, InsertBeyondTheLimitChangesNothing) {
  TreeEnv env(false, false, 4096, 4096);
  env.tree->set_level_limit(4);
  const auto keys = random_long_keys(2000, 1000, 30);
  size_t refused_at = keys.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto before = snapshot(env);
    const uint32_t root = env.tree->root();
    try {
      env.tree->insert(keys[i], i);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "index T: the insert would exceed 4 levels (nothing changed)");
      EXPECT_EQ(env.tree->root(), root);
      EXPECT_EQ(snapshot(env), before);
      EXPECT_TRUE(env.tree->find(keys[i]).empty());
      refused_at = i;
      break;
    }
  }
  ASSERT_LT(refused_at, keys.size());
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 4u);
  EXPECT_EQ(c.entries, refused_at);
}

TEST(BtreeLevelLimit, InsertsThatDoNotSplitTheRootStillGoIn) {
  TreeEnv env(false, false, 4096, 4096);
  env.tree->set_level_limit(4);
  const auto keys = random_long_keys(2000, 1000, 31);
  size_t taken = 0, refused = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    try {
      env.tree->insert(keys[i], i);
      ++taken;
    } catch (const UsageError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 4u);
  EXPECT_EQ(c.entries, taken);
  // Once at the limit, more keys still fit below a root that does not split.
  EXPECT_GT(taken, 100u);
}

// The batch path (BTree::insert_batch, btree/batch_insert.cc): a batch that would add a
// level beyond the limit is refused before any page changes (it used to rewrite the leaves
// and the levels below the root, then throw in BatchMerge::grow, and that tree was committed).
TEST(BtreeLevelLimit, BatchBeyondTheLimitChangesNothing) {
  TreeEnv env(false, false, 4096, 4096);
  env.tree->set_level_limit(4);
  const auto keys = random_long_keys(2300, 1000, 34);
  size_t taken = 0;
  for (; taken < 2000; ++taken) {
    try {
      env.tree->insert(keys[taken], taken);
    } catch (const UsageError&) {
      break;  // the root is at the top level and full
    }
  }
  ASSERT_LT(taken, 2000u);
  const auto before = snapshot(env);
  const uint32_t root = env.tree->root();
  EntryBatch batch;
  for (size_t i = 2000; i < keys.size(); ++i) batch.add(keys[i], i, i);
  try {
    env.tree->insert_batch(batch);
    FAIL() << "the batch went in";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "index T: the batch would exceed 4 levels (nothing changed)");
  }
  EXPECT_EQ(env.tree->root(), root);
  EXPECT_EQ(snapshot(env), before);
  for (size_t i = 2000; i < keys.size(); ++i) EXPECT_TRUE(env.tree->find(keys[i]).empty());
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 4u);
  EXPECT_EQ(c.entries, taken);
}

// A batch whose changes stay below a root that does not split still goes in at the limit.
TEST(BtreeLevelLimit, BatchThatDoesNotSplitTheRootStillGoesIn) {
  TreeEnv env(false, false, 4096, 4096);
  env.tree->set_level_limit(3);
  const auto keys = random_long_keys(400, 1000, 35);
  size_t taken = 0;
  for (; taken < 300; ++taken) {
    try {
      env.tree->insert(keys[taken], taken);
    } catch (const UsageError&) {
      break;
    }
  }
  ASSERT_LT(taken, 300u);
  // One key into the leaf of the smallest key: a leaf with room takes it, no split.
  size_t added = 0;
  for (size_t i = 300; i < keys.size() && added == 0; ++i) {
    EntryBatch batch;
    batch.add(keys[i], i, i);
    try {
      added += env.tree->insert_batch(batch);
    } catch (const UsageError&) {
    }
  }
  EXPECT_EQ(added, 1u);
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 3u);
  EXPECT_EQ(c.entries, taken + 1);
}

// A compact-layout tree of random 1000-byte keys at 4 KiB pages, filled until the root at
// level limit - 1 refuses a split; returns the entries in it. Its separators are cut short
// (suffix truncation), so the root holds hundreds of them.
size_t fill_compact_to_the_limit(TreeEnv& env, uint32_t limit,
                                 const std::vector<std::vector<uint8_t>>& keys) {
  env.tree->set_level_limit(limit);
  for (size_t i = 0; i < keys.size(); ++i) {
    try {
      env.tree->insert(keys[i], i);
    } catch (const UsageError&) {
      return i;
    }
  }
  return keys.size();
}

// A non-leftmost leaf under the root holding `entries` entries or fewer whose separator is
// cut short: its page number, separator and first entry.
struct CutLeaf {
  uint32_t page = 0;
  PageEntry separator, first;
};
CutLeaf find_cut_leaf(TreeEnv& env, size_t min_entries, size_t max_entries) {
  BtreePageImage root;
  {
    PageRef ref = env.pool.pin(env.tree->root());
    root = decode_page(ref.data(), env.pool.page_size());
  }
  for (size_t i = 1; i < root.entries.size(); ++i) {
    BtreePageImage leaf;
    {
      PageRef ref = env.pool.pin(root.entries[i].page_number);
      leaf = decode_page(ref.data(), env.pool.page_size());
    }
    if (leaf.entries.size() >= min_entries && leaf.entries.size() <= max_entries &&
        root.entries[i].key.size() < 8) {
      return CutLeaf{root.entries[i].page_number, root.entries[i], leaf.entries[0]};
    }
  }
  return {};
}

// Compact layout: a key below a leaf's first entry but above its cut separator becomes the
// leaf's first entry, and its full key the separator: the root no longer fits. Refused
// before any page changes (the leaf and its left sibling were written, then the root split
// failed).
TEST(BtreeLevelLimit, CompactNewFirstEntryThatSplitsTheRootChangesNothing) {
  TreeEnv env(false, false, 4096, 4096, 576, NodeLayout::Compact);
  const auto keys = random_long_keys(3000, 1000, 36);
  const size_t taken = fill_compact_to_the_limit(env, 2, keys);
  ASSERT_LT(taken, keys.size());
  const CutLeaf leaf = find_cut_leaf(env, 1, 2);
  ASSERT_NE(leaf.page, 0u);
  // The separator, one byte below the first entry's next one, then 'z' up to 1020 bytes
  // (the root, a quarter free at most, cannot take that as a separator).
  std::vector<uint8_t> key = leaf.separator.key;
  key.push_back(static_cast<uint8_t>(leaf.first.key[key.size()] - 1));
  key.resize(1020, 'z');
  const auto before = snapshot(env);
  const uint32_t root = env.tree->root();
  try {
    env.tree->insert(key, 999999);
    FAIL() << "the insert went in";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "index T: the insert would exceed 2 levels (nothing changed)");
  }
  EXPECT_EQ(env.tree->root(), root);
  EXPECT_EQ(snapshot(env), before);
  EXPECT_TRUE(env.tree->find(key).empty());
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 2u);
  EXPECT_EQ(c.entries, taken);
}

// A remove of a leaf's first entry under a cut separator: the next entry's full key becomes
// the separator and the root no longer fits. Refused before any page changes.
TEST(BtreeLevelLimit, RemoveThatSplitsTheRootChangesNothing) {
  TreeEnv env(false, false, 4096, 4096, 576, NodeLayout::Compact);
  const auto keys = random_long_keys(3000, 1000, 37);
  const size_t taken = fill_compact_to_the_limit(env, 2, keys);
  ASSERT_LT(taken, keys.size());
  const CutLeaf leaf = find_cut_leaf(env, 2, 3);
  ASSERT_NE(leaf.page, 0u);
  const auto before = snapshot(env);
  const uint32_t root = env.tree->root();
  try {
    env.tree->remove(leaf.first.key, leaf.first.recno);
    FAIL() << "the remove went through";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "index T: the remove would exceed 2 levels (nothing changed)");
  }
  EXPECT_EQ(env.tree->root(), root);
  EXPECT_EQ(snapshot(env), before);
  EXPECT_TRUE(env.tree->contains(leaf.first.key, leaf.first.recno));
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 2u);
  EXPECT_EQ(c.entries, taken);
}

// Pages per level of a tree of random 1000-byte keys at 4 KiB pages (3 entries and an
// END_BUCKET at most per page): every non-leaf page but its level's rightmost holds two
// children or more, so level L has at least 2 * (pages of L + 1) - 1 pages.
TEST(BtreeNonLeafSplit, RandomLongKeysLeaveTwoChildrenPerNonLeafPage) {
  TreeEnv env(false, false, 4096, 4096);
  const auto keys = random_long_keys(3000, 1000, 32);
  for (size_t i = 0; i < keys.size(); ++i) env.tree->insert(keys[i], i);
  const TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.entries, keys.size());
  for (size_t level = 1; level < c.level_pages.size(); ++level) {
    EXPECT_GE(c.level_pages[level - 1] + 1, 2 * c.level_pages[level]) << "level " << level;
  }
  // Before: 13 levels (as Firebird 3's for these keys); now 10.
  EXPECT_LE(c.depth, 10u);
}

// The Firebird 3 oracle: the same keys in the same order, fbstat's depth.
TEST(BtreeNonLeafSplit, NoDeeperThanFirebird3ForRandomLongKeys) {
  const auto keys = random_long_keys(3000, 1000, 33);
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("pbtree-fb-depth-" + std::to_string(::getpid()));
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  {
    std::ofstream out(scratch / "keys.txt");
    static const char* hex = "0123456789abcdef";
    for (const auto& k : keys) {
      std::string line;
      for (uint8_t b : k) {
        line += hex[b >> 4];
        line += hex[b & 15];
      }
      out << line << '\n';
    }
  }
  const std::string cmd = std::string("bash ") + PBTREE_SOURCE_DIR +
                          "/tests/firebird/insert_depth.sh " + (scratch / "keys.txt").string() +
                          " 1000 4096 " + (scratch / "fb").string() + " 2>" +
                          (scratch / "fb.log").string();
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[64] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  const int rc = ::pclose(p);
  std::filesystem::remove_all(scratch);
  ASSERT_TRUE(got && rc == 0) << "Firebird 3 (isql-fb, fbstat) failed: exit " << rc
                              << " (scripts/install-deps.sh installs it)";
  const uint32_t firebird_depth = static_cast<uint32_t>(std::stoul(buf));
  EXPECT_GE(firebird_depth, 10u);  // 13 with Firebird 3.0.11

  TreeEnv env(false, false, 4096, 4096);
  for (size_t i = 0; i < keys.size(); ++i) env.tree->insert(keys[i], i);
  const TreeCheck c = env.tree->verify();
  EXPECT_LE(c.depth, firebird_depth);
  std::cout << "pbtree depth " << c.depth << ", Firebird 3 depth " << firebird_depth << "\n";
}

}  // namespace
}  // namespace pbtree
