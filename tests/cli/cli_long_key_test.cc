// Long keys on the firebird layout: few nodes per page, nodes longer than the jump interval.
// Descending scans (a backward scan of an ascending index and a forward scan of a descending
// one) return every row when fast_load leaves a jump node on a page's END_BUCKET; the bulk
// loader never gives a page's first node a jump node, so find, bounded scans, insert and
// delete work on a freshly loaded index whose keys are longer than the jump interval.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

class CliLongKeyTest : public ::testing::Test {
 protected:
  CliLongKeyTest()
      : dir_(std::string("long-") +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        db_(dir_.file("t.pbt")) {}

  // Value of row i: four digits, then `fill` up to `length` bytes.
  static std::string value(int i, size_t length, char fill) {
    std::string v = fmt::format("{:04d}", i);
    v.append(length - v.size(), fill);
    return v;
  }

  // Loads `rows` values of `length` bytes into index `name` (record number = row).
  void load(const std::string& name, const std::string& type, int rows, size_t length, char fill,
            const std::string& page_size, bool descending = false) {
    std::string csv;
    for (int i = 0; i < rows; ++i) csv += value(i, length, fill) + "\n";
    const std::string input = dir_.write(name + ".csv", csv);
    std::vector<std::string> args{"load", db_,      "--page-size", page_size, "--index",
                                  name,   "--type", type,          "--input", input};
    if (descending) args.emplace_back("--descending");
    auto r = run_args(args);
    ASSERT_EQ(r.code, 0) << r.err;
    auto v = run({"verify", db_});
    ASSERT_EQ(v.code, 0) << v.out << v.err;
  }

  // Output lines "value\trecno" of rows first..last (inclusive), in that order.
  static std::string rows_text(const std::vector<int>& rows, size_t length, char fill) {
    std::string out;
    for (int i : rows) out += value(i, length, fill) + "\t" + std::to_string(i) + "\n";
    return out;
  }
  static std::vector<int> range(int first, int last) {  // first..last, either direction
    std::vector<int> v;
    for (int i = first;; i += first <= last ? 1 : -1) {
      v.push_back(i);
      if (i == last) break;
    }
    return v;
  }

  static testing::CliResult run_args(const std::vector<std::string>& args) {
    return testing::run_args(args);
  }

  static size_t lines(const std::string& s) {
    return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  }

  ScratchDir dir_;
  std::string db_;
};

// ---- Bug: descending scans dropped whole pages (jump node on the END_BUCKET) ----

TEST_F(CliLongKeyTest, DescScanOfAscendingIndex8KReturnsAllRows) {
  load("L", "varchar(700)", 200, 600, 'x', "8192");
  auto r = run({"scan", db_, "--index", "L", "--desc"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 200u);
  EXPECT_EQ(r.out, rows_text(range(199, 0), 600, 'x'));
}

TEST_F(CliLongKeyTest, DescScanWithUpperBound8K) {
  load("L", "varchar(700)", 200, 600, 'x', "8192");
  auto r = run({"scan", db_, "--index", "L", "--desc", "--to=0100"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 100u);
  EXPECT_EQ(r.out, rows_text(range(99, 0), 600, 'x'));
}

TEST_F(CliLongKeyTest, DescendingIndexScan8KReturnsAllRows) {
  load("L", "varchar(700)", 200, 600, 'x', "8192", true);
  auto r = run({"scan", db_, "--index", "L"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 200u);
  EXPECT_EQ(r.out, rows_text(range(0, 199), 600, 'x'));
}

TEST_F(CliLongKeyTest, DescScan700ByteKeys8K) {
  load("L", "varchar(1000)", 60, 700, 'x', "8192");
  auto r = run({"scan", db_, "--index", "L", "--desc"});
  EXPECT_EQ(lines(r.out), 60u);
  EXPECT_EQ(r.out, rows_text(range(59, 0), 700, 'x'));
}

TEST_F(CliLongKeyTest, DescendingIndexScan700ByteKeys8K) {
  load("L", "varchar(1000)", 60, 700, 'x', "8192", true);
  auto r = run({"scan", db_, "--index", "L"});
  EXPECT_EQ(lines(r.out), 60u);
  EXPECT_EQ(r.out, rows_text(range(0, 59), 700, 'x'));
}

TEST_F(CliLongKeyTest, DescScan994ByteKeys4K) {
  load("L", "varchar(1000)", 60, 994, 'x', "4096");
  auto r = run({"scan", db_, "--index", "L", "--desc"});
  EXPECT_EQ(lines(r.out), 60u);
  EXPECT_EQ(r.out, rows_text(range(59, 0), 994, 'x'));
}

TEST_F(CliLongKeyTest, DescendingIndexScan994ByteKeys4K) {
  load("L", "varchar(1000)", 60, 994, 'x', "4096", true);
  auto r = run({"scan", db_, "--index", "L"});
  EXPECT_EQ(lines(r.out), 60u);
  EXPECT_EQ(r.out, rows_text(range(0, 59), 994, 'x'));
}

TEST_F(CliLongKeyTest, DescScanFromMiddle4K) {
  load("L", "varchar(1000)", 60, 994, 'x', "4096");
  auto r = run({"scan", db_, "--index", "L", "--desc", "--from=0010", "--to=0050"});
  EXPECT_EQ(lines(r.out), 40u);
  EXPECT_EQ(r.out, rows_text(range(49, 10), 994, 'x'));
}

// ---- Bug: the loader gave a long first node a jump node, which searches rejected ----

TEST_F(CliLongKeyTest, FindKeyLongerThanJumpInterval8K) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192");
  auto r = run({"find", db_, "--index", "K", value(3, 1300, 'q')});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "3\n");
}

TEST_F(CliLongKeyTest, FindKeyLongerThanJumpInterval4K) {
  load("K", "varchar(1015)", 10, 1010, 'q', "4096");
  // Three nodes a page: row 1 is on the first leaf, whose first node is longer than the jump
  // interval (1008 for varchar(1015)).
  auto r = run({"find", db_, "--index", "K", value(1, 1010, 'q')});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
}

TEST_F(CliLongKeyTest, FindFirstKeyLongerThanJumpIntervalDescendingIndex) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192", true);
  // Row 9 sorts first in the descending index: the first node of the first leaf.
  auto r = run({"find", db_, "--index", "K", value(9, 1300, 'q')});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "9\n");
}

TEST_F(CliLongKeyTest, BoundedScanKeysLongerThanJumpInterval) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192");
  auto r = run({"scan", db_, "--index", "K", "--from=0002", "--to=0005"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, rows_text(range(2, 4), 1300, 'q'));
}

TEST_F(CliLongKeyTest, InsertKeyLongerThanJumpInterval) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192");
  auto r = run({"insert", db_, "--index", "K", value(20, 1300, 'q'), "20"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(run({"find", db_, "--index", "K", value(20, 1300, 'q')}).out, "20\n");
  EXPECT_EQ(run({"verify", db_}).code, 0);
  EXPECT_EQ(lines(run({"scan", db_, "--index", "K"}).out), 11u);
}

TEST_F(CliLongKeyTest, DeleteKeyLongerThanJumpInterval) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192");
  auto r = run({"delete", db_, "--index", "K", value(0, 1300, 'q'), "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(run({"find", db_, "--index", "K", value(0, 1300, 'q')}).out, "");
  EXPECT_EQ(run({"verify", db_}).code, 0);
  EXPECT_EQ(run({"scan", db_, "--index", "K"}).out, rows_text(range(1, 9), 1300, 'q'));
}

// Inserts split pages rebuilt with jump nodes (encode_page): every row is found and both
// directions return all of them.
TEST_F(CliLongKeyTest, InsertsSplittingLongKeyPagesKeepScansWhole) {
  load("K", "varchar(2000)", 10, 1300, 'q', "8192");
  for (int i = 10; i < 40; ++i) {
    const int row = (i * 7) % 30 + 10;  // 10..39 in a scrambled order
    auto r = run({"insert", db_, "--index", "K", value(row, 1300, 'q'), std::to_string(row)});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(run({"verify", db_}).code, 0);
  EXPECT_EQ(run({"scan", db_, "--index", "K"}).out, rows_text(range(0, 39), 1300, 'q'));
  EXPECT_EQ(run({"scan", db_, "--index", "K", "--desc"}).out, rows_text(range(39, 0), 1300, 'q'));
  EXPECT_EQ(run({"find", db_, "--index", "K", value(25, 1300, 'q')}).out, "25\n");
}

}  // namespace
}  // namespace pbtree::tools
