// BTree behaviours one at a time: inserts, duplicates, unique checks, removes, splits, merges,
// cursors (ranges, direction, prefixes), descending indexes.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::be_key;
using testing::bytes_of;
using testing::collect;
using testing::TreeEnv;

std::vector<uint64_t> recnos(const std::vector<std::pair<std::vector<uint8_t>, uint64_t>>& v) {
  std::vector<uint64_t> out;
  for (auto& e : v) out.push_back(e.second);
  return out;
}

TEST(BtreeTreeBasic, EmptyTreeFindsNothing) {
  TreeEnv env;
  EXPECT_EQ(env.tree->find(be_key(1)), std::vector<uint64_t>{});
  EXPECT_FALSE(env.tree->scan().valid());
  TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 1u);
  EXPECT_EQ(c.entries, 0u);
}

TEST(BtreeTreeBasic, DuplicatesComeBackByRecordNumber) {
  TreeEnv env;
  for (uint64_t r : {5, 1, 3}) env.tree->insert(bytes_of("AB"), r);
  env.tree->insert(bytes_of("AA"), 9);
  EXPECT_EQ(env.tree->find(bytes_of("AB")), (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_EQ(env.tree->find(bytes_of("AA")), (std::vector<uint64_t>{9}));
  EXPECT_EQ(env.tree->find(bytes_of("A")), std::vector<uint64_t>{});
}

TEST(BtreeTreeBasic, ExactPairIsRefusedAndTreeUnchanged) {
  TreeEnv env;
  env.tree->insert(bytes_of("K"), 7);
  EXPECT_THROW(env.tree->insert(bytes_of("K"), 7), UsageError);
  EXPECT_EQ(env.tree->verify().entries, 1u);
}

TEST(BtreeTreeBasic, UniqueIndexRefusesSecondEqualKey) {
  TreeEnv env(/*unique=*/true);
  env.tree->insert(bytes_of("K"), 1);
  try {
    env.tree->insert(bytes_of("K"), 2);
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unique index T: value -2.0880974297595276e-53 already exists (record 1)");
  }
  EXPECT_EQ(env.tree->find(bytes_of("K")), (std::vector<uint64_t>{1}));
}

TEST(BtreeTreeBasic, UniqueIndexAcceptsManyNulls) {
  TreeEnv env(/*unique=*/true);
  for (uint64_t r = 0; r < 5; ++r) env.tree->insert({}, r);
  EXPECT_EQ(env.tree->find({}), (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(BtreeTreeBasic, UniqueDescendingIndexAcceptsManyNulls) {
  TreeEnv env(/*unique=*/true, /*descending=*/true);
  std::vector<uint8_t> null_key{0xFF};
  env.tree->insert(null_key, 4);
  env.tree->insert(null_key, 2);
  EXPECT_EQ(env.tree->find(null_key), (std::vector<uint64_t>{2, 4}));
}

TEST(BtreeTreeBasic, RemoveAbsentEntryThrows) {
  TreeEnv env;
  env.tree->insert(bytes_of("K"), 1);
  EXPECT_THROW(env.tree->remove(bytes_of("K"), 2), UsageError);
  EXPECT_THROW(env.tree->remove(bytes_of("L"), 1), UsageError);
  EXPECT_EQ(env.tree->verify().entries, 1u);
}

TEST(BtreeTreeBasic, KeyTooLongIsRefused) {
  TreeEnv env;  // 4096-byte pages: keys must be shorter than 1024 bytes
  std::vector<uint8_t> key(1024, 'x');
  EXPECT_THROW(env.tree->insert(key, 1), KeyError);
  key.resize(1023);
  env.tree->insert(key, 1);
  EXPECT_EQ(env.tree->find(key), (std::vector<uint64_t>{1}));
}

TEST(BtreeTreeBasic, RecordNumberBeyond40BitsIsRefused) {
  TreeEnv env;
  EXPECT_THROW(env.tree->insert(bytes_of("K"), kMaxRecordNumber + 1), UsageError);
  env.tree->insert(bytes_of("K"), kMaxRecordNumber);
  EXPECT_EQ(env.tree->find(bytes_of("K")), (std::vector<uint64_t>{kMaxRecordNumber}));
}

TEST(BtreeTreeBasic, IncreasingInsertsFillLeavesAlmostFull) {
  TreeEnv env;
  for (uint64_t i = 0; i < 20000; ++i) env.tree->insert(be_key(i), i);
  TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.entries, 20000u);
  EXPECT_EQ(c.depth, 2u);
  EXPECT_GE(c.avg_leaf_fill, 0.95);
}

TEST(BtreeTreeBasic, RootSplitMakesDegenerateFirstNode) {
  TreeEnv env;
  uint64_t i = 0;
  while (env.root_changes.empty()) env.tree->insert(be_key(i), i), ++i;
  ASSERT_EQ(env.root_changes.size(), 1u);
  PageRef root = env.pool.pin(env.tree->root());
  BtreePageImage img = decode_page(root.data(), env.pool.page_size());
  EXPECT_EQ(img.header.level, 1);
  ASSERT_EQ(img.entries.size(), 2u);
  EXPECT_EQ(img.entries[0].key, std::vector<uint8_t>{});
  EXPECT_EQ(img.entries[0].recno, 0u);
  // Rightmost split: the new right page holds only the last key.
  EXPECT_EQ(img.entries[1].key, be_key(i - 1));
  EXPECT_EQ(img.entries[1].recno, i - 1);
  EXPECT_FALSE(img.end_bucket.has_value());
}

TEST(BtreeTreeBasic, RemovingEverythingLeavesOneEmptyLeafAndGrowsAgain) {
  TreeEnv env;
  const uint64_t n = 6000;
  for (uint64_t i = 0; i < n; ++i) env.tree->insert(be_key((i * 7919) % n), i);
  EXPECT_EQ(env.tree->verify().depth, 2u);
  for (uint64_t i = 0; i < n; ++i) env.tree->remove(be_key((i * 7919) % n), i);
  TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.depth, 1u);
  EXPECT_EQ(c.entries, 0u);
  EXPECT_EQ(env.alloc.in_use(), 1u);
  env.tree->insert(be_key(3), 3);
  EXPECT_EQ(env.tree->find(be_key(3)), (std::vector<uint64_t>{3}));
}

TEST(BtreeTreeBasic, LongDuplicateRunAcrossPages) {
  TreeEnv env;
  for (uint64_t r = 0; r < 3000; ++r) env.tree->insert(bytes_of("DUP"), 1 + r);
  env.tree->insert(bytes_of("DUO"), 1);
  env.tree->insert(bytes_of("DUQ"), 1);
  EXPECT_EQ(env.tree->verify().level_pages[0], 3u);
  std::vector<uint64_t> expected(3000);
  for (uint64_t r = 0; r < 3000; ++r) expected[r] = r + 1;
  EXPECT_EQ(env.tree->find(bytes_of("DUP")), expected);
  EXPECT_TRUE(env.tree->contains(bytes_of("DUP"), 1500));
  EXPECT_FALSE(env.tree->contains(bytes_of("DUP"), 3001));
}

TEST(BtreeTreeBasic, RangeScanBoundsInclusiveExclusive) {
  TreeEnv env;
  for (uint64_t i = 0; i < 1000; ++i) env.tree->insert(be_key(i), i);
  ScanRange r;
  r.lower = KeyBound{be_key(10), false};
  r.upper = KeyBound{be_key(14), true};
  EXPECT_EQ(recnos(collect(env.tree->scan(r))), (std::vector<uint64_t>{11, 12, 13, 14}));
  r.backward = true;
  EXPECT_EQ(recnos(collect(env.tree->scan(r))), (std::vector<uint64_t>{14, 13, 12, 11}));
  r.lower->inclusive = true;
  r.upper->inclusive = false;
  EXPECT_EQ(recnos(collect(env.tree->scan(r))), (std::vector<uint64_t>{13, 12, 11, 10}));
}

TEST(BtreeTreeBasic, FullScanBothDirections) {
  TreeEnv env;
  const uint64_t n = 5000;
  for (uint64_t i = 0; i < n; ++i) env.tree->insert(be_key((i * 37) % n), (i * 37) % n);
  auto fwd = recnos(collect(env.tree->scan()));
  ScanRange back;
  back.backward = true;
  auto bwd = recnos(collect(env.tree->scan(back)));
  ASSERT_EQ(fwd.size(), n);
  ASSERT_EQ(bwd.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(fwd[i], i);
    EXPECT_EQ(bwd[i], n - 1 - i);
  }
}

TEST(BtreeTreeBasic, PrefixScanAscending) {
  TreeEnv env;
  uint64_t r = 0;
  for (const char* s : {"AP", "APPLE", "APPLY", "APX", "AQ", "B", "A"})
    env.tree->insert(bytes_of(s), r++);
  ScanRange pr;
  pr.prefix = bytes_of("APP");
  EXPECT_EQ(recnos(collect(env.tree->scan(pr))), (std::vector<uint64_t>{1, 2}));
  pr.prefix = bytes_of("AP");
  EXPECT_EQ(recnos(collect(env.tree->scan(pr))), (std::vector<uint64_t>{0, 1, 2, 3}));
  pr.backward = true;
  EXPECT_EQ(recnos(collect(env.tree->scan(pr))), (std::vector<uint64_t>{3, 2, 1, 0}));
}

TEST(BtreeTreeBasic, PrefixScanOnDescendingIndex) {
  // Descending order: bytewise, a key that is a prefix of another sorts after it.
  TreeEnv env(false, /*descending=*/true);
  uint64_t r = 0;
  for (const char* s : {"AP", "APPLE", "APPLY", "APX", "AQ", "B", "A"})
    env.tree->insert(bytes_of(s), r++);
  auto all = collect(env.tree->scan());
  std::vector<std::string> order;
  for (auto& e : all) order.emplace_back(e.first.begin(), e.first.end());
  EXPECT_EQ(order, (std::vector<std::string>{"APPLE", "APPLY", "APX", "AP", "AQ", "A", "B"}));
  ScanRange pr;
  pr.prefix = bytes_of("AP");
  EXPECT_EQ(recnos(collect(env.tree->scan(pr))), (std::vector<uint64_t>{1, 2, 3, 0}));
  pr.backward = true;
  EXPECT_EQ(recnos(collect(env.tree->scan(pr))), (std::vector<uint64_t>{0, 3, 2, 1}));
}

TEST(BtreeTreeBasic, CursorSeekRepositions) {
  TreeEnv env;
  for (uint64_t i = 0; i < 100; i += 2) env.tree->insert(be_key(i), i);
  Cursor c = env.tree->scan();
  c.seek(be_key(51));
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(c.record_number(), 52u);
  ScanRange back;
  back.backward = true;
  Cursor b = env.tree->scan(back);
  b.seek(be_key(51));
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(b.record_number(), 50u);
  b.next();
  EXPECT_EQ(b.record_number(), 48u);
}

TEST(BtreeTreeBasic, CursorSurvivesWritesBetweenSteps) {
  TreeEnv env;
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(be_key(i * 2), i * 2);
  Cursor c = env.tree->scan();
  std::vector<uint64_t> seen;
  for (int i = 0; i < 10; ++i, c.next()) seen.push_back(c.record_number());
  for (uint64_t i = 0; i < 3000; ++i) env.tree->insert(be_key(i * 2 + 1), i * 2 + 1);  // splits
  env.tree->remove(be_key(10), 10);
  for (int i = 0; i < 5; ++i, c.next()) seen.push_back(c.record_number());
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 21, 22, 23, 24}));
}

TEST(BtreeTreeBasic, NonLeafRecordNumbersRouteAmongDuplicates) {
  TreeEnv env;
  for (uint64_t r = 0; r < 4000; ++r) env.tree->insert(bytes_of("SAME"), r * 3);
  // Removing a duplicate deep in the run finds exactly that page.
  env.tree->remove(bytes_of("SAME"), 2997);
  EXPECT_FALSE(env.tree->contains(bytes_of("SAME"), 2997));
  EXPECT_TRUE(env.tree->contains(bytes_of("SAME"), 3000));
  EXPECT_EQ(env.tree->find(bytes_of("SAME")).size(), 3999u);
  EXPECT_EQ(env.tree->verify().entries, 3999u);
}

}  // namespace
}  // namespace pbtree
