// `pbtree find` and `pbtree scan` on the fixture file (tests/support/cli_tree_test_util.h): exact
// outputs for value order on ascending and descending indexes, NULL handling, converted
// bounds, STARTING WITH with trailing spaces, limits, and every error path.
#include <gtest/gtest.h>

#include "tests/support/cli_tree_test_util.h"

namespace pbtree::tools {
namespace {

using testing::CliTreeTest;
using testing::run;

const char* const kAscending = "NULL\t2\nNULL\t6\n-2\t4\n1\t1\n3\t3\n5\t0\n5\t5\n";
const char* const kDescending = "5\t0\n5\t5\n3\t3\n1\t1\n-2\t4\nNULL\t2\nNULL\t6\n";

using CliFindTest = CliTreeTest;
using CliScanTest = CliTreeTest;

TEST_F(CliFindTest, PrintsDuplicatesAscending) {
  auto r = run({"find", db_, "--index", "I", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n5\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliFindTest, DescendingIndex) {
  EXPECT_EQ(run({"find", db_, "--index", "D", "5"}).out, "0\n5\n");
  EXPECT_EQ(run({"find", db_, "--index", "D", "--", "-2"}).out, "4\n");
}

TEST_F(CliFindTest, NullFindsTheNullEntries) {
  EXPECT_EQ(run({"find", db_, "--index", "I", "--null"}).out, "2\n6\n");
  EXPECT_EQ(run({"find", db_, "--index", "D", "--null"}).out, "2\n6\n");
  EXPECT_EQ(run({"find", db_, "--index", "U", "--null"}).out, "2\n6\n");
}

TEST_F(CliFindTest, OtherNumericSpellings) {
  EXPECT_EQ(run({"find", db_, "--index", "I", "5.0"}).out, "0\n5\n");
  EXPECT_EQ(run({"find", db_, "--index", "I", "0.3e1"}).out, "3\n");
}

TEST_F(CliFindTest, UnrepresentableValueMatchesNothing) {
  auto r = run({"find", db_, "--index", "I", "1.5"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"find", db_, "--index", "I", "99999999999"}).out, "");
}

TEST_F(CliFindTest, AbsentValuePrintsNothing) {
  auto r = run({"find", db_, "--index", "I", "4"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(CliFindTest, VarcharIgnoresTrailingSpaces) {
  EXPECT_EQ(run({"find", db_, "--index", "V", "AB"}).out, "0\n4\n");
  EXPECT_EQ(run({"find", db_, "--index", "W", "AB   "}).out, "0\n4\n");
}

TEST_F(CliFindTest, NoSuchIndex) {
  auto r = run({"find", db_, "--index", "NOPE", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pbtree: " + db_ + ": no index named NOPE (indexes: I, D, U, V, W)\n");
}

TEST_F(CliFindTest, MalformedValue) {
  auto r = run({"find", db_, "--index", "I", "12x"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: malformed number '12x'\n");
}

TEST_F(CliFindTest, NullWithValueIsAnError) {
  auto r = run({"find", db_, "--index", "I", "--null", "1"});
  EXPECT_EQ(r.code, 2);  // an argument-count error
  EXPECT_EQ(r.err, "pbtree: --null takes no VALUE\n");
}

TEST_F(CliFindTest, MissingFile) {
  auto r = run({"find", dir_.file("none.pbt"), "--index", "I", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("none.pbt"), std::string::npos) << r.err;
}

TEST_F(CliScanTest, AscendingIndexValueOrder) {
  EXPECT_EQ(run({"scan", db_, "--index", "I"}).out, kAscending);
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--desc"}).out, kDescending);
}

TEST_F(CliScanTest, DescendingIndexSameValueOrder) {
  EXPECT_EQ(run({"scan", db_, "--index", "D"}).out, kAscending);
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--desc"}).out, kDescending);
}

TEST_F(CliScanTest, ClosedRange) {
  const std::string want = "1\t1\n3\t3\n";
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--from=1", "--to=3"}).out, want);
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--from=1", "--to=3"}).out, want);
}

TEST_F(CliScanTest, ExclusiveBounds) {
  EXPECT_EQ(
      run({"scan", db_, "--index", "I", "--from=1", "--from-exclusive", "--to=5", "--to-exclusive"})
          .out,
      "3\t3\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--from=1", "--from-exclusive", "--to=5",
                 "--to-exclusive", "--desc"})
                .out,
            "3\t3\n");
}

TEST_F(CliScanTest, OpenRangesExcludeNulls) {
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--to=1"}).out, "-2\t4\n1\t1\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--to=1"}).out, "-2\t4\n1\t1\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--from=3", "--desc"}).out, "5\t0\n5\t5\n3\t3\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--to=3", "--desc"}).out, "3\t3\n1\t1\n-2\t4\n");
}

TEST_F(CliScanTest, FractionalBoundsOnIntegerIndex) {
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--from=1.5"}).out, "3\t3\n5\t0\n5\t5\n");
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--from=1.5", "--from-exclusive"}).out,
            "3\t3\n5\t0\n5\t5\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--to=1.5"}).out, "-2\t4\n1\t1\n");
}

TEST_F(CliScanTest, OutOfRangeBounds) {
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--from=99999999999"}).out, "");
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--from=-1e400", "--to=1"}).out, "-2\t4\n1\t1\n");
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--to=99999999999", "--from=3"}).out,
            "3\t3\n5\t0\n5\t5\n");
}

TEST_F(CliScanTest, NullBoundMatchesNothing) {
  auto r = run({"scan", db_, "--index", "I", "--from-null"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--to-null", "--desc"}).out, "");
}

TEST_F(CliScanTest, Limit) {
  EXPECT_EQ(run({"scan", db_, "--index", "I", "--limit", "3"}).out, "NULL\t2\nNULL\t6\n-2\t4\n");
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--desc", "--limit", "1"}).out, "5\t0\n");
}

TEST_F(CliScanTest, VarcharOrder) {
  const std::string want = "NULL\t6\nA\t3\nAB\t0\nAB\t4\nAB C\t1\nABC\t2\nB\t5\n";
  EXPECT_EQ(run({"scan", db_, "--index", "V"}).out, want);
  EXPECT_EQ(run({"scan", db_, "--index", "W"}).out, want);
}

TEST_F(CliScanTest, StartingWith) {
  const std::string want = "AB\t0\nAB\t4\nAB C\t1\nABC\t2\n";
  EXPECT_EQ(run({"scan", db_, "--index", "V", "--starting-with", "AB"}).out, want);
  EXPECT_EQ(run({"scan", db_, "--index", "W", "--starting-with", "AB"}).out, want);
}

TEST_F(CliScanTest, StartingWithTrailingSpace) {
  const std::string want = "AB\t0\nAB\t4\nAB C\t1\n";
  EXPECT_EQ(run({"scan", db_, "--index", "V", "--starting-with", "AB "}).out, want);
  EXPECT_EQ(run({"scan", db_, "--index", "W", "--starting-with", "AB "}).out, want);
  EXPECT_EQ(run({"scan", db_, "--index", "V", "--starting-with", "AB ", "--desc"}).out,
            "AB C\t1\nAB\t0\nAB\t4\n");
  EXPECT_EQ(run({"scan", db_, "--index", "W", "--starting-with", "AB ", "--desc"}).out,
            "AB C\t1\nAB\t0\nAB\t4\n");
}

TEST_F(CliScanTest, StartingWithAndBounds) {
  EXPECT_EQ(run({"scan", db_, "--index", "W", "--starting-with", "AB", "--from", "AB ",
                 "--from-exclusive"})
                .out,
            "AB C\t1\nABC\t2\n");
}

TEST_F(CliScanTest, StartingWithOnNumericIndexIsAnError) {
  auto r = run({"scan", db_, "--index", "I", "--starting-with", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pbtree: --starting-with needs a varchar index; index I is integer\n");
}

TEST_F(CliScanTest, MalformedBound) {
  auto r = run({"scan", db_, "--index", "I", "--from", "abc"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: malformed number 'abc'\n");
}

TEST_F(CliScanTest, BoundAndNullBoundExcludeEachOther) {
  auto r = run({"scan", db_, "--index", "I", "--from=1", "--from-null"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: --from and --from-null exclude each other\n");
}

TEST_F(CliScanTest, NoSuchIndex) {
  auto r = run({"scan", db_, "--index", "X"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + db_ + ": no index named X (indexes: I, D, U, V, W)\n");
}

TEST_F(CliScanTest, HelpDocumentsNullChoice) {
  auto r = run({"scan", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("a NULL bound (--from-null, --to-null)\nmatches nothing"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace pbtree::tools
