// `pbtree stat --what-if [--json]` and `pbtree load --key-format auto`: exact table rows and
// JSON objects for a small index, the auto choice and its reason after the gstat block (dense
// BIGINT switches to decimal128; INTEGER multiples of 1000 keep double), and bad input.
#include <gtest/gtest.h>

#include <string>

#include "btree/what_if.h"
#include "file/index_root.h"
#include "page/file_header.h"
#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

std::string numbers(int from, int to, int times = 1) {
  std::string s;
  for (int i = from; i <= to; ++i) s += std::to_string(i * times) + "\n";
  return s;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(CliWhatIfCliTest, TextTableRows) {
  ScratchDir dir("whatif-text");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_X", "--type", "integer", "--input",
                 dir.write("in.csv", numbers(1, 50))})
                .code,
            0);
  auto r = run({"stat", db, "--what-if"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("What-if for index I_X (0): integer, 50 entries, page size 8192\n"
                        "   key format  layout    leaves  pages  depth  avg key len  compr. ratio"
                        "  leaf B/entry  bytes/entry\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\n*  double      firebird       1      1      1         3.00          "
                       "0.72        163.84       163.84\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n   decimal128  firebird       1      1      1         3.88          "
                       "0.88        163.84       163.84\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n   bcd         firebird       1      1      1         3.88          "
                       "0.88        163.84       163.84\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, "  compact "), 3u);
  EXPECT_NE(r.out.find("\n(* current; predicted for a bulk build into a new file)\n\n"),
            std::string::npos);
}

TEST(CliWhatIfCliTest, JsonShape) {
  ScratchDir dir("whatif-json");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_X", "--type", "integer", "--input",
                 dir.write("in.csv", numbers(1, 50))})
                .code,
            0);
  auto r = run({"stat", db, "--what-if", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("[\n  {\"name\":\"I_X\",\"id\":0,\"type\":\"integer\",\"key_format\":"
                        "\"double\",\"layout\":\"firebird\",\"page_size\":8192,\"entries\":"
                        "50,\"predictions\":[{",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("{\"key_format\":\"double\",\"layout\":\"firebird\",\"current\":true,"
                       "\"available\":true,\"nodes\":50,\"depth\":1,\"leaf_pages\":1,"
                       "\"index_pages\":1,\"total_dup\":0,\"avg_key_length\":3.0,"
                       "\"compression_ratio\":0.72,\"avg_prefix_length\":1.14,\"avg_data_length\":"
                       "1.02,\"bytes_per_entry\":163.84,\"leaf_bytes_per_entry\":163.84,"
                       "\"used_bytes_per_entry\":4.84}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("{\"key_format\":\"bcd\",\"layout\":\"firebird\",\"current\":false,"
                 "\"available\":true,\"nodes\":50,\"depth\":1,\"leaf_pages\":1,"
                 "\"index_pages\":1,\"total_dup\":0,\"avg_key_length\":3.88,"
                 "\"compression_ratio\":0.8762886597938144,\"avg_prefix_length\":1.94,"
                 "\"avg_data_length\":1.46,\"bytes_per_entry\":163.84,\"leaf_bytes_per_entry\":"
                 "163.84,\"used_bytes_per_entry\":5.7}"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, "{\"key_format\":"), 6u);
  EXPECT_EQ(count(r.out, "\"layout\":\"compact\""), 3u);
  EXPECT_EQ(r.out.substr(r.out.size() - 6), "}]}\n]\n");
}

TEST(CliWhatIfCliTest, AutoPicksDecimal128OnDenseBigint) {
  ScratchDir dir("whatif-auto-dense");
  const std::string db = dir.file("s.pbt");
  auto l = run({"load", db, "--index", "I_D", "--type", "bigint", "--unique", "--key-format",
                "auto", "--input", dir.write("in.csv", numbers(1, 2000)), "--progress"});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.err.find("pbtree: key format decimal128 (auto: 6.18 vs 11.36 bytes/entry on a 25% "
                       "sample, 1.84x)\n"),
            std::string::npos)
      << l.err;
  auto r = run({"stat", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\t    80 - 99% = 1\n\n\tLayout: firebird, key format: decimal128 (auto: "
                       "6.18 vs 11.36 bytes/entry on a 25% sample, 1.84x)\n\tType: bigint, key "
                       "format: decimal128, unique, page size 8192\n"),
            std::string::npos)
      << r.out;
}

TEST(CliWhatIfCliTest, AutoKeepsDefaultBelowGain) {
  ScratchDir dir("whatif-auto-keep");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_K", "--type", "integer", "--key-format", "auto",
                 "--input", dir.write("in.csv", numbers(1, 2000, 1000))})
                .code,
            0);
  auto r = run({"stat", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\n\tLayout: firebird, key format: double (auto: kept the default; "
                       "decimal128 6.18 vs 6.29 bytes/entry on a 25% sample, 1.02x < 1.20x)\n"
                       "\tType: integer, key format: double, page size 8192\n"),
            std::string::npos)
      << r.out;
}

TEST(CliWhatIfCliTest, AutoOnSingleFormatType) {
  ScratchDir dir("whatif-auto-one");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_H", "--type", "int128", "--key-format", "auto",
                 "--input", dir.write("in.csv", numbers(1, 10))})
                .code,
            0);
  auto r = run({"stat", db});
  EXPECT_NE(r.out.find("\n\tLayout: firebird, key format: bcd (auto: the only format of int128)\n"),
            std::string::npos)
      << r.out;
}

TEST(CliWhatIfCliTest, AutoJsonReason) {
  ScratchDir dir("whatif-auto-json");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_D", "--type", "bigint", "--key-format", "auto",
                 "--input", dir.write("in.csv", numbers(1, 2000))})
                .code,
            0);
  auto r = run({"stat", db, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(",\"key_format_auto\":{\"layout\":\"firebird\",\"default\":"
                       "\"rescaled-double\",\"default_bytes_per_entry\":"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"best\":\"decimal128\",\"best_bytes_per_entry\":"), std::string::npos);
  EXPECT_NE(r.out.find("\"sample_entries\":500,\"reason\":\"decimal128 (auto: 6.18 vs 11.36 "
                       "bytes/entry on a 25% sample, 1.84x)\"}}\n]\n"),
            std::string::npos)
      << r.out;
}

TEST(CliWhatIfCliTest, NonAutoStatHasNoLayoutLine) {
  ScratchDir dir("whatif-plain");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_D", "--type", "bigint", "--key-format", "decimal128",
                 "--input", dir.write("in.csv", numbers(1, 2000))})
                .code,
            0);
  auto r = run({"stat", db});
  EXPECT_EQ(r.out.find("Layout:"), std::string::npos);
  EXPECT_EQ(count(r.out, "\n\n"), 2u);
}

TEST(CliWhatIfCliTest, AutoSetsSlotFlag) {
  ScratchDir dir("whatif-flag");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_D", "--type", "bigint", "--key-format", "auto",
                 "--input", dir.write("in.csv", numbers(1, 20))})
                .code,
            0);
  const std::string bytes = testing::read_bytes(db);
  // Page 1 (index root) at 8192, slot 0 at offset 20: flags byte 14, key format byte 11.
  EXPECT_EQ(static_cast<uint8_t>(bytes[8192 + 20 + 14]), kSlotFlagAutoFormat);
  EXPECT_EQ(static_cast<uint8_t>(bytes[8192 + 20 + 11]), 10);  // decimal128
}

TEST(CliWhatIfCliTest, MissingIndexIsError) {
  ScratchDir dir("whatif-noindex");
  const std::string db = dir.file("s.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I_X", "--type", "integer", "--input",
                 dir.write("in.csv", numbers(1, 3))})
                .code,
            0);
  auto r = run({"stat", db, "--what-if", "--index", "I_NONE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pbtree: " + db + ": no index named I_NONE (indexes: I_X)\n");
}

TEST(CliWhatIfCliTest, MissingFileIsError) {
  auto r = run({"stat", "/nonexistent/pbtree/x.pbt", "--what-if"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: /nonexistent/pbtree/x.pbt: cannot open: No such file or directory\n");
}

TEST(CliWhatIfCliTest, WhatIfExcludesIo) {
  auto r = run({"stat", "x.pbt", "--what-if", "--io"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("pbtree: --io excludes --what-if", 0), 0u) << r.err;
}

}  // namespace
}  // namespace pbtree::tools
