// `pbtree stat --io`: the last checkpoint's cost as kept in the header page.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

// A bulk load of 10 integers: one leaf written straight into the file, then a checkpoint of
// the index root page and the header: 3 pages of 8192 bytes written; synced: the leaf plus
// the log batch of 2 frames of 24 + 8192 bytes and the 40-byte commit record.
TEST(CliWalCliIo, StatIoPrintsTheLastCheckpointCost) {
  ScratchDir dir("stat-io");
  const std::string db = dir.file("s.pbt");
  auto in = dir.write("in.csv", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
  ASSERT_EQ(
      run({"load", db, "--index", "I_SMALL", "--type", "integer", "--unique", "--input", in}).code,
      0);
  auto r = run({"stat", db, "--io"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Last checkpoint: 1, pages written: 3, bytes written: 24576, bytes synced: 24664\n");
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

// `pbtree insert` checkpoints before it exits: the next stat --io shows checkpoint 2, which
// wrote the one leaf and the header through the log (2 frames of 24 + 8192 bytes + 40).
TEST(CliWalCliIo, InsertCheckpointsOneLeafAndTheHeader) {
  ScratchDir dir("stat-io-insert");
  const std::string db = dir.file("s.pbt");
  auto in = dir.write("in.csv", "1\n2\n3\n");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input", in}).code, 0);
  auto ins = run({"insert", db, "--index", "I", "4", "3"});
  ASSERT_EQ(ins.code, 0) << ins.err;
  auto r = run({"stat", db, "--io"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Last checkpoint: 2, pages written: 2, bytes written: 16384, bytes synced: 16472\n");
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

}  // namespace
}  // namespace pbtree::tools
