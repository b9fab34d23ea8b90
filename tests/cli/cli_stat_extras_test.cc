// `pbtree stat --levels` (btree/level_stats.h), `stat --compare` (tools/cmd_compare.h) on
// pbtree files, and `pbtree --version`.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

TEST(CliLevels, OneLeafWithTwoNullEntries) {
  ScratchDir dir("levels-null");
  std::string csv = dir.write("v.csv", testing::numbers(1, 1000) + "\n\n");
  std::string db = dir.file("x.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input", csv}).code, 0);
  testing::CliResult r = run({"stat", "--levels", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\tLevel 0: pages: 1, nodes: 1002, average fill: 49.34%, average node "
                       "length: 4.00, unused bytes: 4115\n"
                       "\tLeaves out of file order: 0, NULL entries: 2\n\n"),
            std::string::npos)
      << r.out;
}

TEST(CliLevels, TwoLevelsRootFirst) {
  ScratchDir dir("levels-two");
  std::string csv = dir.write("v.csv", testing::numbers(1, 5000));
  std::string db = dir.file("x.pbt");
  ASSERT_EQ(run({"load", db, "--index", "D", "--type", "integer", "--descending", "--input", csv,
                 "--page-size", "4096"})
                .code,
            0);
  testing::CliResult r = run({"stat", "--levels", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\tLevel 1: pages: 1, nodes: 6, average fill: 1.01%, average node length: "
                       "6.67, unused bytes: 4016\n"
                       "\tLevel 0: pages: 6, nodes: 5000, average fill: 87.16%, average node "
                       "length: 4.21, unused bytes: 3121\n"
                       "\tLeaves out of file order: 0, NULL entries: 0\n"),
            std::string::npos)
      << r.out;
}

TEST(CliCompare, SameNamedIndexesWithRatios) {
  ScratchDir dir("compare");
  std::string csv = dir.write("v.csv", testing::numbers(1, 20000));
  std::string a = dir.file("a.pbt"), b = dir.file("b.pbt");
  ASSERT_EQ(
      run({"load", a, "--index", "I", "--type", "bigint", "--input", csv, "--page-size", "4096"})
          .code,
      0);
  ASSERT_EQ(run({"load", b, "--index", "I", "--type", "bigint", "--key-format", "decimal128",
                 "--layout", "compact", "--input", csv, "--page-size", "4096"})
                .code,
            0);
  testing::CliResult r = run({"stat", a, "--compare", b});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("  nodes")),
            "Compare I (" + a + ") with I (" + b +
                ")\n"
                "  figure                        A            B     B/A\n"
                "  ----------------------------------------------------\n"
                "  depth                         2            2    1.00\n"
                "  leaf buckets                 58           20    0.34\n"
                "  index pages                  59           21    0.36\n");
}

TEST(CliCompare, MissingIndexIsAnError) {
  ScratchDir dir("compare-missing");
  std::string csv = dir.write("v.csv", testing::numbers(1, 10));
  std::string a = dir.file("a.pbt");
  ASSERT_EQ(run({"load", a, "--index", "I", "--type", "integer", "--input", csv}).code, 0);
  testing::CliResult r = run({"stat", a, "--compare", a, "--index", "J"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + a + ": no index named J (indexes: I)\n");
}

TEST(CliVersion, PrintsProjectVersion) {
  testing::CliResult r = run({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "pbtree 0.1.0\n");
}

}  // namespace
}  // namespace pbtree::tools
