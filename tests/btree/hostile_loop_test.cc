// Endless-loop attacks (issue #10 item 1): a file whose root routes the last leaf's keys to the
// first leaf, while the right-sibling chain of the leaves loops back (L[k-1] -> L1). Every
// command that moves right from the wrong leaf (find, insert into a unique index, scan --from)
// must end with a CorruptError naming the page it stands on once its moves exceed the file's
// pages, and delete (the writer's path, which never moves right) must refuse the key beyond
// the leaf's END_BUCKET. Each test runs under a watchdog.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "btree/walk_bound.h"
#include "file/index_file_access.h"
#include "node/btree_page.h"
#include "node/node.h"
#include "node/page_image.h"
#include "page/page_file.h"
#include "tests/support/cli_test_util.h"
#include "tests/support/watchdog.h"

namespace pbtree::tools::testing {
namespace {

using ::pbtree::testing::Watchdog;

constexpr uint32_t kPageSize = 4096;
constexpr int kRows = 3000;

class BtreeLoopingFile : public ::testing::Test {
 protected:
  BtreeLoopingFile() : dir_("loop"), db_(dir_.file("loop.pbt")) {}

  void SetUp() override {
    std::string csv;
    for (int i = 0; i < kRows; ++i) csv += std::to_string(i) + "\n";
    const std::string input = dir_.write("rows.csv", csv);
    auto r = run({"load", db_, "--index", "A", "--type", "bigint", "--unique", "--page-size",
                  "4096", "--input", input});
    ASSERT_EQ(r.code, 0) << r.err;
    {
      auto f = IndexFile::open(db_);
      root_ = f->find_index("A")->root_page;
      pages_ = f->page_count();
    }
    PageFile pf = PageFile::open(db_, true);
    pf.set_page_size(kPageSize);
    std::vector<uint8_t> page(kPageSize);
    pf.read(root_, page.data());
    BtreePageImage img = decode_page(page.data(), kPageSize);
    ASSERT_EQ(img.header.level, 1);
    for (const PageEntry& e : img.entries) leaves_.push_back(e.page_number);
    ASSERT_GE(leaves_.size(), 4u);
    const size_t k = leaves_.size() - 1;
    // The root's pointer to the last leaf now leads to the first one.
    img.entries[k].page_number = leaves_[0];
    ASSERT_NE(encode_page(img, page.data(), kPageSize), 0u);
    pf.write(root_, page.data());
    // Leaf k-1 links right back to leaf 1: the chain L1 .. L[k-1] loops.
    pf.read(leaves_[k - 1], page.data());
    put_u32(page.data() + 16, leaves_[1]);
    pf.write(leaves_[k - 1], page.data());
  }

  // The page a reader starting on leaf 0 stands on when its moves right exceed both
  // WalkBound::kFreeHops and the file's pages + 1: after m >= 1 moves it is on
  // L[1 + (m - 1) mod (k - 1)].
  std::string loop_message() const {
    const uint64_t k = leaves_.size() - 1;
    const uint64_t moves = std::max<uint64_t>(WalkBound::kFreeHops, uint64_t{pages_} + 1);
    const uint32_t page = leaves_[1 + (moves - 1) % (k - 1)];
    return fmt::format(
        "pbtree: page {} (b-tree): the right sibling chain loops back (more moves along a level "
        "than the file has pages)\n",
        page);
  }

  ScratchDir dir_;
  std::string db_;
  std::vector<uint32_t> leaves_;
  uint32_t root_ = 0;
  uint32_t pages_ = 0;
};

TEST_F(BtreeLoopingFile, FindEndsWithTheLoopError) {
  Watchdog w(120);
  auto r = run({"find", db_, "--index", "A", std::to_string(kRows - 1)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, loop_message());
}

TEST_F(BtreeLoopingFile, InsertIntoUniqueIndexEndsWithTheLoopError) {
  Watchdog w(120);
  auto r = run({"insert", db_, "--index", "A", std::to_string(kRows + 10), "99999"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, loop_message());
}

TEST_F(BtreeLoopingFile, ScanFromEndsWithTheLoopError) {
  Watchdog w(120);
  auto r = run({"scan", db_, "--index", "A", "--from", std::to_string(kRows - 1)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, loop_message());
}

TEST_F(BtreeLoopingFile, DescendingScanToEndsWithTheLoopError) {
  Watchdog w(120);
  auto r = run({"scan", db_, "--index", "A", "--desc", "--to", std::to_string(kRows - 1)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, loop_message());
}

TEST_F(BtreeLoopingFile, DeleteEndsWithTheLoopError) {
  Watchdog w(120);
  auto r =
      run({"delete", db_, "--index", "A", std::to_string(kRows - 1), std::to_string(kRows - 1)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, loop_message());
}

// The writer's own descent never moves right: the leaf it reaches must hold the key below its
// END_BUCKET copy, or the pointer that led there is wrong.
TEST_F(BtreeLoopingFile, WriterRemoveRefusesTheKeyBeyondTheLeafsEndBucket) {
  Watchdog w(120);
  auto f = IndexFile::open(db_, {.writable = true});
  BTree& tree = btree_of(*f, "A");
  KeyBuffer key;
  build_key(tree.definition().type, tree.definition().format, Value::exact(kRows - 1), false, key);
  try {
    tree.remove(key.bytes(), kRows - 1);
    FAIL() << "no exception";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("page {} (b-tree): key beyond the END_BUCKET copy on the writer's path",
                          leaves_[0]));
  }
}

// A child pointer one level wrong (the root's pointer leads to the root itself): readers restart
// from the root a bounded number of times, then report the page.
TEST_F(BtreeLoopingFile, ChildPointerToItsOwnLevelEndsAfterBoundedRestarts) {
  Watchdog w(120);
  {
    PageFile pf = PageFile::open(db_, true);
    pf.set_page_size(kPageSize);
    std::vector<uint8_t> page(kPageSize);
    pf.read(root_, page.data());
    BtreePageImage img = decode_page(page.data(), kPageSize);
    img.entries.back().page_number = root_;
    ASSERT_NE(encode_page(img, page.data(), kPageSize), 0u);
    pf.write(root_, page.data());
  }
  auto r = run({"find", db_, "--index", "A", std::to_string(kRows - 1)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("pbtree: page {} (b-tree): reached through a pointer, but not a "
                               "live b-tree page of the expected level (level 1, 10000 "
                               "restarts)\n",
                               root_));
}

TEST_F(BtreeLoopingFile, VerifyReportsTheDamage) {
  Watchdog w(120);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  const size_t k = leaves_.size() - 1;
  EXPECT_EQ(r.out,
            fmt::format("violation: index A: {}: index \"A\": page {}: right sibling {} but "
                        "page {} follows it\n"
                        "violation: index A: page {}: reachable twice (also from index A)\n"
                        "violation: page {} (b-tree): not reachable from any index and not "
                        "free\n",
                        db_, leaves_[k - 1], leaves_[1], leaves_[0], leaves_[0], leaves_[k]));
}

}  // namespace
}  // namespace pbtree::tools::testing
