// `pbtree stat` and `pbtree demo`: the gstat block's exact text for a small index, pbtree's
// lines after it, the JSON keys, and a small demo run.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::numbers;
using testing::run;
using testing::ScratchDir;

// Integers 1..10 as double keys: 1 -> BF F0, 2 -> C0, 3..10 -> C0 xx (19 key bytes). Every key
// from 3 on shares 1 byte with its predecessor: prefix 8/10 = 0.80, data 11/10 = 1.10; gstat's
// key length counts 1 flag byte + a prefix byte if prefix > 0 + a length byte if length > 1 +
// data: 4 + 2 + 8 x 3 = 30 bytes, 3.00; ratio (0.80 + 1.10) / 3.00 = 0.63.
// One leaf page of 8192 bytes for 10 entries: 819.20 bytes per entry.
TEST(CliStatTest, SmallIndexExactText) {
  ScratchDir dir("stat-text");
  const std::string db = dir.file("s.pbt");
  auto in = dir.write("in.csv", numbers(1, 10));
  ASSERT_EQ(
      run({"load", db, "--index", "I_SMALL", "--type", "integer", "--unique", "--input", in}).code,
      0);
  auto r = run({"stat", db});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "    Index I_SMALL (0)\n"
            "\tRoot page: 2, depth: 1, leaf buckets: 1, nodes: 10\n"
            "\tAverage node length: 4.20, total dup: 0, max dup: 0\n"
            "\tAverage key length: 3.00, compression ratio: 0.63\n"
            "\tAverage prefix length: 0.80, average data length: 1.10\n"
            "\tClustering factor: 1, ratio: 0.10\n"
            "\tFill distribution:\n"
            "\t     0 - 19% = 1\n"
            "\t    20 - 39% = 0\n"
            "\t    40 - 59% = 0\n"
            "\t    60 - 79% = 0\n"
            "\t    80 - 99% = 0\n"
            "\n"
            "\tType: integer, key format: double, unique, page size 8192\n"
            "\tIndex pages: 1, bytes per entry: 819.20, average leaf fill: 0.01\n"
            "\n");
}

TEST(CliStatTest, JsonHasEveryKey) {
  ScratchDir dir("stat-json");
  const std::string db = dir.file("s.pbt");
  auto in = dir.write("in.csv", numbers(1, 50));
  ASSERT_EQ(run({"load", db, "--index", "I_J", "--type", "bigint", "--input", in}).code, 0);
  auto r = run({"stat", db, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("[\n  {\"name\":\"I_J\",", 0), 0u) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 4), "}\n]\n");
  for (const char* key : {"name",
                          "type",
                          "key_format",
                          "page_size",
                          "root_page",
                          "depth",
                          "leaf_buckets",
                          "nodes",
                          "avg_node_length",
                          "total_dup",
                          "max_dup",
                          "avg_key_length",
                          "compression_ratio",
                          "avg_prefix_length",
                          "avg_data_length",
                          "clustering_factor",
                          "fill_distribution",
                          "index_pages",
                          "bytes_per_entry",
                          "avg_leaf_fill"}) {
    EXPECT_NE(r.out.find(std::string("\"") + key + "\":"), std::string::npos) << key;
  }
  EXPECT_NE(r.out.find("\"type\":\"bigint\",\"key_format\":\"rescaled-double\""),
            std::string::npos);
  EXPECT_NE(r.out.find("\"nodes\":50,"), std::string::npos);
  EXPECT_NE(r.out.find("\"fill_distribution\":[1,0,0,0,0]"), std::string::npos);
}

TEST(CliStatTest, UnknownIndexIsError) {
  ScratchDir dir("stat-unknown");
  const std::string db = dir.file("s.pbt");
  auto in = dir.write("in.csv", numbers(1, 3));
  ASSERT_EQ(run({"load", db, "--index", "I_X", "--type", "integer", "--input", in}).code, 0);
  auto r = run({"stat", db, "--index", "I_NONE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + db + ": no index named I_NONE (indexes: I_X)\n");
}

TEST(CliStatTest, MissingFileIsError) {
  auto r = run({"stat", "/nonexistent/pbtree/x.pbt"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("pbtree: ", 0), 0u);
}

TEST(CliDemoTest, ExistingOutputIsRefusedAndKept) {
  ScratchDir dir("demo-exists");
  const std::string path = dir.file("keep.txt");
  {
    std::ofstream f(path, std::ios::binary);
    f << "not a demo file";
  }
  auto r = run({"demo", "--rows", "10", "--data-dir", PBTREE_SOURCE_DIR "/data", "--output", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + path +
                       " exists: the demo writes a new file (remove it or choose another "
                       "--output)\n");
  std::ifstream f(path, std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "not a demo file");
}

TEST(CliDemoTest, SmallDemoPrintsEveryIndexAndTable) {
  ScratchDir dir("demo");
  auto r = run({"demo", "--rows", "1000", "--data-dir", PBTREE_SOURCE_DIR "/data", "--output",
                dir.file("demo.pbt")});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t blocks = 0;
  for (size_t p = r.out.find("\n    Index "); p != std::string::npos;
       p = r.out.find("\n    Index ", p + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, 15u);  // 13 single-segment, then the 2 compound ones (issue 12)
  EXPECT_NE(r.out.find("    Index I_INT_ID (0)\n\tRoot page: "), std::string::npos);
  EXPECT_NE(r.out.find("    Index I_EMAIL_DOMAIN (12)\n"), std::string::npos);
  EXPECT_NE(r.out.find("\nindex             type          key format       depth  leaves"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nI_INT_ID          integer       double               1       "),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace pbtree::tools
