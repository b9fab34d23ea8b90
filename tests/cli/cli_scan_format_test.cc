// `pbtree scan --format tsv|csv|json`: escaping of values with TABs, commas and quotes, and
// how each format writes NULL.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

class CliScanFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    csv_ = dir_.write("w.csv", "a\tb\n\"x,y\"\n\"say \"\"hi\"\"\"\n\n");
    db_ = dir_.file("y.pbt");
    ASSERT_EQ(run({"load", db_, "--index", "V", "--type", "varchar(20)", "--input", csv_}).code, 0);
  }
  std::string scan(const std::string& format) {
    testing::CliResult r = run({"scan", db_, "--index", "V", "--format", format});
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  }
  ScratchDir dir_{"scan-format"};
  std::string csv_, db_;
};

TEST_F(CliScanFormat, TsvEscapesTabsAndWritesNullAsBackslashN) {
  EXPECT_EQ(scan("tsv"), "\\N\t3\na\\tb\t0\nsay \"hi\"\t2\nx,y\t1\n");
}

TEST_F(CliScanFormat, CsvQuotesCommasAndQuotesAndWritesNullEmpty) {
  EXPECT_EQ(scan("csv"), "value,record_number\n,3\na\tb,0\n\"say \"\"hi\"\"\",2\n\"x,y\",1\n");
}

TEST_F(CliScanFormat, JsonArrayOfObjects) {
  EXPECT_EQ(scan("json"),
            "[\n  {\"value\":null,\"record_number\":3},\n  {\"value\":\"a\\tb\","
            "\"record_number\":0},\n  {\"value\":\"say \\\"hi\\\"\",\"record_number\":2},\n"
            "  {\"value\":\"x,y\",\"record_number\":1}\n]\n");
}

TEST_F(CliScanFormat, RawIsTheDefault) {
  testing::CliResult r = run({"scan", db_, "--index", "V"});
  EXPECT_EQ(r.out, "NULL\t3\na\tb\t0\nsay \"hi\"\t2\nx,y\t1\n");
}

// The JSON rule (docs/CLI.md "JSON output"): values of indexed columns are strings, record
// numbers numbers.
TEST(CliScanFormatNumbers, JsonNumericValuesAreStrings) {
  ScratchDir dir("scan-format-num");
  std::string csv = dir.write("n.csv", "1.5\n-2\n\n");
  std::string db = dir.file("z.pbt");
  ASSERT_EQ(run({"load", db, "--index", "N", "--type", "numeric(9,2)", "--input", csv}).code, 0);
  testing::CliResult r = run({"scan", db, "--index", "N", "--format", "json"});
  EXPECT_EQ(r.out,
            "[\n  {\"value\":null,\"record_number\":2},\n  {\"value\":\"-2.00\","
            "\"record_number\":1},\n  {\"value\":\"1.50\",\"record_number\":0}\n]\n");
}

TEST(CliScanFormatNumbers, JsonReplacesBytesThatAreNotUtf8) {
  ScratchDir dir("scan-format-utf8");
  // "a", byte FF, "b"; and "é" in UTF-8 (C3 A9), kept as is.
  std::string csv = dir.write("t.csv",
                              "a\xff"
                              "b\n\xc3\xa9\n");
  std::string db = dir.file("u.pbt");
  ASSERT_EQ(run({"load", db, "--index", "T", "--type", "varchar(8)", "--input", csv}).code, 0);
  testing::CliResult r = run({"scan", db, "--index", "T", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[\n  {\"value\":\"a\xef\xbf\xbd"
            "b\",\"record_number\":0},\n"
            "  {\"value\":\"\xc3\xa9\",\"record_number\":1}\n]\n");
}

TEST(CliScanFormatNumbers, UnknownFormatIsAUsageError) {
  ScratchDir dir("scan-format-bad");
  testing::CliResult r = run({"scan", dir.file("z.pbt"), "--index", "N", "--format", "xml"});
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace pbtree::tools
