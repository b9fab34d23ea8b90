// `pbtree load --layout compact`: the layout reaches the index root slot and the pages, `stat`
// names it, and insert / delete / find / verify work on the compact tree.
#include <gtest/gtest.h>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::numbers;
using testing::run;
using testing::ScratchDir;

TEST(CliCompactTest, StatNamesTheLayout) {
  ScratchDir dir("compact-stat");
  const std::string db = dir.file("c.pbt");
  auto in = dir.write("in.csv", numbers(1, 1000));
  ASSERT_EQ(run({"load", db, "--index", "I_C", "--type", "bigint", "--unique", "--layout",
                 "compact", "--input", in})
                .code,
            0);
  auto r = run({"stat", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\tType: bigint, key format: rescaled-double, unique, page size 8192, "
                       "compact layout\n"),
            std::string::npos)
      << r.out;
  auto j = run({"stat", db, "--json"});
  EXPECT_NE(j.out.find("\"layout\":\"compact\""), std::string::npos) << j.out;
}

TEST(CliCompactTest, ChangesAndVerifyWork) {
  ScratchDir dir("compact-change");
  const std::string db = dir.file("c.pbt");
  auto in = dir.write("in.csv", numbers(1, 3000));
  ASSERT_EQ(run({"load", db, "--index", "I_C", "--type", "integer", "--layout", "compact",
                 "--page-size", "4096", "--input", in})
                .code,
            0);
  ASSERT_EQ(run({"insert", db, "--index", "I_C", "1500", "9000"}).code, 0);
  ASSERT_EQ(run({"delete", db, "--index", "I_C", "1500", "1499"}).code, 0);
  auto f = run({"find", db, "--index", "I_C", "1500"});
  EXPECT_EQ(f.out, "9000\n");
  auto v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_EQ(v.out, "OK: " + db + ": 1 index, 5 pages (2 fixed, 3 b-tree, 0 free), 3000 entries\n");
}

TEST(CliCompactTest, UnknownLayoutIsRefused) {
  ScratchDir dir("compact-bad");
  const std::string db = dir.file("c.pbt");
  auto in = dir.write("in.csv", numbers(1, 10));
  auto r =
      run({"load", db, "--index", "I_C", "--type", "integer", "--layout", "dense", "--input", in});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--layout"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pbtree::tools
