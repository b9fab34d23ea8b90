// The CLI on compound indexes (issue 12 item 2): load with repeated --type / --column, find
// and scan with positional values (NULL, =NULL), --explain's examined count, insert/delete
// with one value per segment, key, stat, verify, and the definition-time key-size refusal
// before the file is touched.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools::testing {
namespace {

// country, code, pop
const char* kCsv =
    "US,CA,100\n"
    "US,CA,200\n"
    "US,NY,300\n"
    "US,,400\n"
    "USA,XX,500\n"
    "NULL,AA,600\n"
    "AD,02,700\n";

std::string load(const ScratchDir& dir, const std::string& extra = "") {
  const std::string db = dir.file("c.pbt");
  const std::string csv = dir.write("c.csv", kCsv);
  std::vector<std::string> args = {"load",       db,        "--index",    "C",      "--type",
                                   "varchar(4)", "--type",  "varchar(2)", "--type", "integer",
                                   "--column",   "1",       "--column",   "2",      "--column",
                                   "3",          "--input", csv};
  if (!extra.empty()) args.push_back(extra);
  const CliResult r = run_args(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return db;
}

TEST(CliCompound, FindOnLeadingSegmentsWithExplain) {
  ScratchDir dir("compound-find");
  const std::string db = load(dir);
  const CliResult r = run({"find", db, "--index", "C", "--explain", "--", "US"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");
  EXPECT_EQ(r.err.substr(r.err.find("examined")), "examined: 5 entries\n");
  const CliResult ca = run({"find", db, "--index", "C", "--", "US", "CA"});
  EXPECT_EQ(ca.out, "0\n1\n");
  const CliResult null_code = run({"find", db, "--index", "C", "--explain", "--", "US", "NULL"});
  EXPECT_EQ(null_code.out, "3\n");
  EXPECT_EQ(null_code.err.substr(null_code.err.find("examined")), "examined: 2 entries\n");
}

TEST(CliCompound, EqualsNullIsTheTextNull) {
  ScratchDir dir("compound-eqnull");
  const std::string db = load(dir);
  EXPECT_EQ(run({"find", db, "--index", "C", "--", "=NULL"}).out, "5\n");
  EXPECT_EQ(run({"find", db, "--index", "C", "--", "NULL"}).out, "");
}

TEST(CliCompound, ScanBoundsApplyToTheNextSegment) {
  ScratchDir dir("compound-scan");
  const std::string db = load(dir);
  const CliResult r =
      run({"scan", db, "--index", "C", "--explain", "--from=150", "--to=300", "--", "US", "CA"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "US\tCA\t200\t1\n");
  EXPECT_EQ(r.err.substr(r.err.find("examined")), "examined: 2 entries\n");
  const CliResult sw = run({"scan", db, "--index", "C", "--starting-with", "N", "--", "US"});
  EXPECT_EQ(sw.out, "US\tNY\t300\t2\n");
  const CliResult all = run({"scan", db, "--index", "C", "--format", "csv", "--", "US"});
  EXPECT_EQ(all.out,
            "value_1,value_2,value_3,record_number\nUS,,400,3\nUS,CA,100,0\nUS,CA,200,1\n"
            "US,NY,300,2\n");
}

TEST(CliCompound, InsertAndDeleteTakeOneValuePerSegment) {
  ScratchDir dir("compound-change");
  const std::string db = load(dir);
  EXPECT_EQ(run({"insert", db, "--index", "C", "--", "US", "CA", "150", "9"}).code, 0);
  EXPECT_EQ(run({"find", db, "--index", "C", "--", "US", "CA"}).out, "0\n1\n9\n");
  const CliResult few = run({"insert", db, "--index", "C", "--", "US", "CA", "9"});
  EXPECT_EQ(few.code, 2);
  EXPECT_EQ(run({"delete", db, "--index", "C", "--", "US", "CA", "150", "9"}).code, 0);
  EXPECT_EQ(run({"find", db, "--index", "C", "--", "US", "CA"}).out, "0\n1\n");
  EXPECT_EQ(run({"verify", db}).code, 0);
}

TEST(CliCompound, KeyPrintsTheCompoundKey) {
  const CliResult r = run({"key", "--type", "integer", "--type", "varchar(5)", "--", "1", "AB"});
  EXPECT_EQ(r.out, "02 BF F0 00 00 01 41 42\n");
  const CliResult d =
      run({"key", "--descending", "--type", "integer", "--type", "varchar(5)", "--", "1", "NULL"});
  EXPECT_EQ(d.out, "FD 40 0F FF FF FE FF\n");
}

TEST(CliCompound, StatPrintsTheSegments) {
  ScratchDir dir("compound-stat");
  const std::string db = load(dir);
  const CliResult r = run({"stat", db});
  EXPECT_NE(r.out.find("\tSegments: 3 (varchar(4) text, varchar(2) text, integer double), page "
                       "size 8192\n"),
            std::string::npos)
      << r.out;
  const CliResult w = run({"stat", db, "--what-if"});
  EXPECT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("What-if for index C (0): (varchar(4), varchar(2), integer), 7 entries"),
            std::string::npos)
      << w.out;
  EXPECT_NE(w.out.find("text, text, decimal128 (3)"), std::string::npos) << w.out;
}

TEST(CliCompound, TooLongDefinitionRefusedBeforeTheFileIsCreated) {
  ScratchDir dir("compound-long");
  const std::string db = dir.file("long.pbt");
  const std::string csv = dir.write("c.csv", "1,a\n");
  const CliResult r =
      run({"load", db, "--index", "L", "--page-size", "4096", "--type", "integer", "--type",
           "varchar(805)", "--column", "1", "--column", "2", "--input", csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "pbtree: key size exceeds implementation restriction for an ascending index on "
            "(integer, varchar(805)): keys up to 1020 bytes, rounded up to 1024, must be below "
            "page_size/4 = 1024 bytes (page size 4096)\n");
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(CliCompound, TypeAndColumnCountsMustMatch) {
  ScratchDir dir("compound-count");
  const std::string csv = dir.write("c.csv", "1,2\n");
  const CliResult r = run({"load", dir.file("x.pbt"), "--index", "X", "--type", "integer", "--type",
                           "integer", "--column", "1", "--input", csv});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.pbt")));
}

}  // namespace
}  // namespace pbtree::tools::testing
