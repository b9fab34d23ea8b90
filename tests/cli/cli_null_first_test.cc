// Issue 30 item 1 through the CLI: `pbtree load --layout compact` of a column whose first
// key is NULL wrote a leaf that verify, scan, find and stat could not read
// ("relative node (code 0x00) without a predecessor") and exited 0; in memory and with its
// entries spilled as sorted runs (--memory 64K). tests/btree/bulk_first_node_test.cc has the
// library side.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using tools::testing::run;
using tools::testing::ScratchDir;

TEST(CliNullFirst, CliLoadNullFirstVerifies) {
  ScratchDir dir("first-node-cli");
  const std::string csv = dir.write("m.csv", "\n1\n");
  const std::string db = dir.file("m.pbt");
  ASSERT_EQ(
      run({"load", db, "--index", "X", "--type", "integer", "--layout", "compact", "--input", csv})
          .code,
      0);
  const auto v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  const auto s = run({"scan", db, "--index", "X"});
  EXPECT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(s.out, "NULL\t0\n1\t1\n");
}

TEST(CliNullFirst, CliSpilledLoadNullsFirstVerifies) {
  ScratchDir dir("first-node-spill");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += i % 3 == 0 ? "\n" : std::to_string(i) + "\n";
  const std::string csv = dir.write("m.csv", text);
  const std::string db = dir.file("m.pbt");
  const auto l = run({"load", db, "--index", "X", "--type", "integer", "--layout", "compact",
                      "--memory", "64K", "--input", csv, "--progress"});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.err.find("sort run 2"), std::string::npos) << l.err;
  const auto v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  const auto f = run({"find", db, "--index", "X", "--", "3000"});  // row 3000 is NULL
  EXPECT_EQ(f.out, "");
  const auto g = run({"find", db, "--index", "X", "--", "3001"});
  EXPECT_EQ(g.out, "3001\n");
}

}  // namespace
}  // namespace pbtree
