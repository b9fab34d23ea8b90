// Issue 30 item 3 through the CLI: `pbtree load --append` whose batch would add a level beyond
// the limit fails with exit 1 and one line, and leaves the file as it was (bytes and verify).
// PBTREE_LEVEL_LIMIT lowers the limit (tools/cmd_change.cc) so a few rows reach it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::read_bytes;
using testing::run;
using testing::ScratchDir;

// Row i: 1000 bytes, distinct in its first four.
std::string long_rows(int from, int to) {
  std::string csv;
  for (int i = from; i < to; ++i) {
    std::string v = std::to_string(1000 + i);
    v.append(1000 - v.size(), 'x');
    csv += v + "\n";
  }
  return csv;
}

TEST(CliLevelLimit, AppendBeyondTheLimitLeavesTheFileUnchanged) {
  ScratchDir dir("level-limit-append");
  const std::string db = dir.file("t.pbt");
  // 6 rows of 1000 bytes at 4 KiB pages: 3 per leaf, so 2 leaves under a root (2 levels).
  const std::string first = dir.write("first.csv", long_rows(0, 6));
  auto r = run({"load", db, "--page-size", "4096", "--index", "L", "--type", "varchar(1000)",
                "--input", first});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string before = read_bytes(db);
  const std::string more = dir.write("more.csv", long_rows(6, 36));
  ::setenv("PBTREE_LEVEL_LIMIT", "2", 1);
  r = run({"load", db, "--index", "L", "--append", "--input", more});
  ::unsetenv("PBTREE_LEVEL_LIMIT");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: index L: the batch would exceed 2 levels (nothing changed)\n");
  EXPECT_EQ(read_bytes(db), before);
  auto v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  auto s = run({"scan", db, "--index", "L"});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(std::count(s.out.begin(), s.out.end(), '\n'), 6);
  // Without the lowered limit the same append goes in.
  r = run({"load", db, "--index", "L", "--append", "--input", more});
  EXPECT_EQ(r.code, 0) << r.err;
  s = run({"scan", db, "--index", "L"});
  EXPECT_EQ(std::count(s.out.begin(), s.out.end(), '\n'), 36);
}

}  // namespace
}  // namespace pbtree::tools
