// CLI details of issue #10 item 9: argument errors exit 2 with a short message, and a new
// load's duplicate errors show the value as `load --append` does (not key bytes in hex).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools::testing {
namespace {

class CliHostileArgs : public ::testing::Test {
 protected:
  CliHostileArgs() : dir_("hostile-args"), db_(dir_.file("t.pbt")) {}
  void SetUp() override {
    const std::string in = dir_.write("a.csv", "1\n2\n3\n");
    auto r = run({"load", db_, "--index", "A", "--type", "integer", "--input", in});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  ScratchDir dir_;
  std::string db_;
};

TEST_F(CliHostileArgs, FindWithTwoValuesOnAOneSegmentIndexExitsTwo) {
  auto r = run({"find", db_, "--index", "A", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pbtree: expected one VALUE (or --null)\n");
}

TEST_F(CliHostileArgs, ScanLimitMinusOneIsAUsageError) {
  auto r = run({"scan", db_, "--index", "A", "--limit", "-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "pbtree: --limit: 0 (all) or a positive count, not '-1'");
}

// CLI11's own parse errors get the prefix too (an unknown name reads as a missing subcommand).
TEST_F(CliHostileArgs, UnknownSubcommandErrorStartsWithTheProgramName) {
  auto r = run({"frob"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "pbtree: A subcommand is required\n"
            "Run with --help for more information.\n");
}

TEST_F(CliHostileArgs, ScanLimitZeroStillMeansAll) {
  auto r = run({"scan", db_, "--index", "A", "--limit", "0"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "1\t0\n2\t1\n3\t2\n");
}

TEST_F(CliHostileArgs, ColumnZeroIsAShortUsageError) {
  const std::string in = dir_.write("b.csv", "1\n");
  auto r = run({"load", db_, "--index", "B", "--type", "integer", "--column", "0", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "pbtree: --column: columns are numbered from 1 (got '0')");
}

TEST_F(CliHostileArgs, RecnoColumnZeroIsAShortUsageError) {
  const std::string in = dir_.write("b.csv", "1\n");
  auto r =
      run({"load", db_, "--index", "B", "--type", "integer", "--recno-column", "0", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "pbtree: --recno-column: columns are numbered from 1 (got '0')");
}

TEST_F(CliHostileArgs, NewLoadDuplicateInUniqueIndexShowsTheValue) {
  const std::string in = dir_.write("d.csv", "-17\n4\n-17\n");
  auto r = run({"load", db_, "--index", "U", "--type", "integer", "--unique", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "pbtree: " + in + ":3: unique index U: value -17 appears twice (same as line 1)\n");
}

TEST_F(CliHostileArgs, NewLoadDuplicateEntryShowsTheValue) {
  const std::string in = dir_.write("p.csv", "abc,9\nabc,9\n");
  auto r = run(
      {"load", db_, "--index", "P", "--type", "varchar(8)", "--recno-column", "2", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in + ":2: entry (abc, 9) appears twice (same as line 1)\n");
}

}  // namespace
}  // namespace pbtree::tools::testing
