// Outputs that were silently wrong or lost (issue 30 items 6-10, 12 and the smaller things):
// verify's false unique alarm on keys with a NULL segment, report on compound indexes, the
// csv header of a compound scan, stat --json --levels, the JSON rule (values of indexed
// columns are strings, figures and record numbers numbers), `key -- -inf`, a Firebird file
// given to stat without --firebird, and the names listed by "no index named".
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::CliResult;
using testing::run;
using testing::run_args;
using testing::ScratchDir;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// A compound index C (integer, varchar(4)) of `csv` in `db`, with `extra` flags.
void load_compound(const std::string& db, const std::string& csv,
                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"load",     db,       "--index",    "C",        "--type",
                                   "integer",  "--type", "varchar(4)", "--column", "1",
                                   "--column", "2",      "--input",    csv};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_args(args);
  ASSERT_EQ(r.code, 0) << r.err;
}

// --- item 6: verify on unique indexes whose keys hold NULL segments ---

TEST(CliSilentVerify, UniqueCompoundKeysWithANullSegmentAreNoViolation) {
  ScratchDir dir("silent-verify-null-seg");
  const std::string db = dir.file("u.pbt");
  load_compound(db, dir.write("u.csv", "1,\n1,\n,AB\n,AB\n2,CD\n"), {"--unique"});
  const CliResult r = run({"verify", db});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "OK: " + db + ": 1 index, 3 pages (2 fixed, 1 b-tree, 0 free), 5 entries\n");
}

TEST(CliSilentVerify, DescendingUniqueCompoundNullNullTwiceIsNoViolation) {
  ScratchDir dir("silent-verify-null-desc");
  const std::string db = dir.file("d.pbt");
  load_compound(db, dir.write("d.csv", ",\n,\n3,X\n"), {"--unique", "--descending"});
  const CliResult r = run({"verify", db, "--index", "C"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "OK: " + db + ": index C: 1 pages, 3 entries\n");
}

TEST(CliSilentVerify, DescendingUniqueSingleSegmentNullTwiceIsNoViolation) {
  ScratchDir dir("silent-verify-null-desc1");
  const std::string db = dir.file("d.pbt");
  const std::string csv = dir.write("d.csv", "\n\n5\n");
  ASSERT_EQ(run({"load", db, "--index", "D", "--type", "integer", "--unique", "--descending",
                 "--input", csv})
                .code,
            0);
  const CliResult r = run({"verify", db, "--index", "D"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "OK: " + db + ": index D: 1 pages, 3 entries\n");
}

// --- item 7: report on a file with a compound index ---

TEST(CliSilentReport, CompoundIndexGetsItsPerSegmentSizeChart) {
  ScratchDir dir("silent-report-compound");
  const std::string db = dir.file("c.pbt");
  std::string rows;
  for (int i = 1; i <= 500; ++i) rows += std::to_string(i) + ",C" + std::to_string(i % 7) + "\n";
  load_compound(db, dir.write("c.csv", rows));
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input",
                 dir.write("i.csv", testing::numbers(1, 50))})
                .code,
            0);
  const std::string html_path = dir.file("r.html");
  const CliResult r = run({"report", db, "-o", html_path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string html = testing::read_bytes(html_path);
  EXPECT_EQ(count(html, "<section class=\"index\">"), 2u);
  EXPECT_NE(html.find("<h2>Index C</h2>\n<p>Type: integer, varchar(4)</p>"), std::string::npos)
      << html;
  // integer: double, decimal128, bcd; varchar(4): text; x firebird, compact = 6 bars; the
  // single-segment integer index 6 more; 5 fill bars each.
  EXPECT_EQ(count(html, "<svg class=\"sizes\""), 2u);
  EXPECT_EQ(count(html, "<rect "), 22u);
  EXPECT_EQ(count(html, ">* double + text / firebird</text>"), 1u) << html;
  EXPECT_EQ(count(html, ">bcd + text / compact</text>"), 1u);
  EXPECT_EQ(count(html, "compound_what_if"), 0u);
}

TEST(CliSilentReport, TheDemosFileGivesAReport) {
  ScratchDir dir("silent-report-demo");
  const std::string demo = dir.file("demo.pbt");
  ASSERT_EQ(
      run({"demo", "--rows", "200", "--data-dir", PBTREE_SOURCE_DIR "/data", "--output", demo})
          .code,
      0);
  const std::string html_path = dir.file("r.html");
  const CliResult r = run({"report", demo, "-o", html_path});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = testing::read_bytes(html_path);
  EXPECT_EQ(count(html, "<section class=\"index\">"), 15u);
  EXPECT_EQ(count(html, "<svg class=\"sizes\""), 15u);
  EXPECT_NE(html.find("<h2>Index I_CITY_COUNTRY_POP</h2>"), std::string::npos);
}

TEST(CliSilentReport, OutputThatIsTheFileItselfIsRefusedUnderAnyName) {
  ScratchDir dir("silent-report-self");
  const std::string db = dir.file("x.pbt"), link = dir.file("hl.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input",
                 dir.write("i.csv", testing::numbers(1, 100))})
                .code,
            0);
  std::filesystem::create_hard_link(db, link);
  const std::string before = testing::read_bytes(db);
  for (const std::string& out : {db, link}) {
    const CliResult r = run({"report", db, "-o", out});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "pbtree: " + out + ": is " + db + " itself: refused, nothing written\n");
  }
  EXPECT_TRUE(testing::read_bytes(db) == before);
  EXPECT_EQ(run({"verify", db}).code, 0);
}

TEST(CliSilentReport, OutputThatIsNoReportIsRefusedAndAnEarlierReportIsReplaced) {
  ScratchDir dir("silent-report-other");
  const std::string db = dir.file("x.pbt");
  const std::string csv = dir.write("i.csv", testing::numbers(1, 100));
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input", csv}).code, 0);
  const CliResult refused = run({"report", db, "-o", csv});
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(refused.err, "pbtree: " + csv +
                             ": exists and is not a report (an HTML page): refused, nothing "
                             "written\n");
  EXPECT_EQ(testing::read_bytes(csv), testing::numbers(1, 100));
  const std::string html = dir.file("r.html");
  ASSERT_EQ(run({"report", db, "-o", html}).code, 0);
  const CliResult again = run({"report", db, "-o", html});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(testing::read_bytes(html).rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(CliSilentOutput, StdoutThatCannotBeWrittenFailsTheRun) {
  ScratchDir dir("silent-stdout-full");
  const std::string db = dir.file("x.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input",
                 dir.write("i.csv", testing::numbers(1, 100))})
                .code,
            0);
  // /dev/full takes no byte: every write fails with ENOSPC.
  const std::string err = dir.file("err");
  const std::string cmd =
      std::string(PBTREE_BIN_DIR) + "/pbtree stat " + db + " >/dev/full 2>" + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(testing::read_bytes(err), "pbtree: <stdout>: write failed: No space left on device\n");
}

// --- item 8: csv header of a compound scan ---

TEST(CliSilentScan, CompoundCsvHeaderNamesOneFieldPerSegment) {
  ScratchDir dir("silent-scan-csv");
  const std::string db = dir.file("c.pbt");
  load_compound(db, dir.write("c.csv", "1,AB\n,\"x,y\"\n"));
  const CliResult r = run({"scan", db, "--index", "C", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "value_1,value_2,record_number\n,\"x,y\",1\n1,AB,0\n");
}

// --- item 9: stat --json --levels ---

TEST(CliSilentStat, JsonLevelsCarriesTheLevels) {
  ScratchDir dir("silent-stat-levels");
  const std::string db = dir.file("l.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--page-size", "4096", "--input",
                 dir.write("i.csv", testing::numbers(1, 3000) + "\n")})
                .code,
            0);
  const CliResult text = run({"stat", db, "--levels"});
  ASSERT_EQ(text.code, 0) << text.err;
  const CliResult r = run({"stat", db, "--json", "--levels"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The same figures as the text's lines.
  EXPECT_NE(text.out.find("\tLevel 1: pages: 1, nodes: 3,"), std::string::npos) << text.out;
  EXPECT_NE(r.out.find(",\"levels\":[{\"level\":1,\"pages\":1,\"nodes\":3,\"avg_fill\":"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"level\":0,\"pages\":3,\"nodes\":3001,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("],\"leaves_out_of_order\":0,\"null_entries\":1}"), std::string::npos)
      << r.out;
}

TEST(CliSilentStat, JsonWithoutLevelsHasNoLevels) {
  ScratchDir dir("silent-stat-nolevels");
  const std::string db = dir.file("l.pbt");
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input",
                 dir.write("i.csv", testing::numbers(1, 30))})
                .code,
            0);
  const CliResult r = run({"stat", db, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("\"levels\""), std::string::npos) << r.out;
}

// --- item 10: the JSON rule ---

TEST(CliSilentJson, BigintValuesAreStringsRecordNumbersNumbers) {
  ScratchDir dir("silent-json-bigint");
  const std::string db = dir.file("b.pbt");
  ASSERT_EQ(run({"load", db, "--index", "B", "--type", "bigint", "--input",
                 dir.write("b.csv", "9007199254740993\n-9223372036854775808\n\n")})
                .code,
            0);
  const CliResult r = run({"scan", db, "--index", "B", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[\n  {\"value\":null,\"record_number\":2},\n"
            "  {\"value\":\"-9223372036854775808\",\"record_number\":1},\n"
            "  {\"value\":\"9007199254740993\",\"record_number\":0}\n]\n");
}

TEST(CliSilentJson, Int128AndDoubleValuesAreStrings) {
  ScratchDir dir("silent-json-int128");
  const std::string db = dir.file("h.pbt");
  ASSERT_EQ(run({"load", db, "--index", "H", "--type", "int128", "--input",
                 dir.write("h.csv", "170141183460469231731687303715884105727\n")})
                .code,
            0);
  ASSERT_EQ(
      run({"load", db, "--index", "D", "--type", "double", "--input", dir.write("d.csv", "1.5\n")})
          .code,
      0);
  EXPECT_EQ(run({"scan", db, "--index", "H", "--format", "json"}).out,
            "[\n  {\"value\":\"170141183460469231731687303715884105727\",\"record_number\":0}"
            "\n]\n");
  EXPECT_EQ(run({"scan", db, "--index", "D", "--format", "json"}).out,
            "[\n  {\"value\":\"1.5\",\"record_number\":0}\n]\n");
}

TEST(CliSilentJson, CompoundValuesAreAnArrayOfStringsAndNulls) {
  ScratchDir dir("silent-json-compound");
  const std::string db = dir.file("c.pbt");
  load_compound(db, dir.write("c.csv", "1,AB\n,\n"));
  const CliResult r = run({"scan", db, "--index", "C", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[\n  {\"value\":[null,null],\"record_number\":1},\n"
            "  {\"value\":[\"1\",\"AB\"],\"record_number\":0}\n]\n");
}

// --- item 12: `key -- -inf` ---

TEST(CliSilentKey, MinusInfAfterDoubleDash) {
  const CliResult r = run({"key", "--type", "double", "--", "-inf"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "00 0F FF FF FF FF FF FF\n");
}

// --- smaller things ---

TEST(CliSilentNames, NoIndexNamedListsTheNamesThatExist) {
  ScratchDir dir("silent-no-index");
  const std::string db = dir.file("n.pbt");
  const std::string csv = dir.write("n.csv", testing::numbers(1, 3));
  ASSERT_EQ(run({"load", db, "--index", "B", "--type", "integer", "--input", csv}).code, 0);
  ASSERT_EQ(run({"load", db, "--index", "A", "--type", "integer", "--input", csv}).code, 0);
  const std::string want = "pbtree: " + db + ": no index named NOPE (indexes: B, A)\n";
  EXPECT_EQ(run({"stat", db, "--index", "NOPE"}).err, want);
  EXPECT_EQ(run({"verify", db, "--index", "NOPE"}).err, want);
  EXPECT_EQ(run({"find", db, "--index", "NOPE", "1"}).err, want);
  EXPECT_EQ(run({"stat", db, "--what-if", "--index", "NOPE"}).err, want);
}

// A Firebird 3 (ODS 12) database made by someone else (../shared/data/firebird-real).
std::string firebird3_file() {
  for (const char* d :
       {PBTREE_SOURCE_DIR "/../shared/data", PBTREE_SOURCE_DIR "/../../shared/data"}) {
    const std::string p = std::string(d) + "/firebird-real/jvelilla__eiffel_firebird__EMPLOYEE.FDB";
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

TEST(CliSilentStat, FirebirdFileIsDetectedWithoutTheFlag) {
  const std::string fdb = firebird3_file();
  ASSERT_NE(fdb, "") << "../shared/data/firebird-real is missing";
  const CliResult flagged = run({"stat", fdb, "--firebird", "--index", "RDB$PRIMARY1"});
  ASSERT_EQ(flagged.code, 0) << flagged.err;
  const CliResult r = run({"stat", fdb, "--index", "RDB$PRIMARY1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, flagged.out);
  const CliResult j = run({"stat", fdb, "--json", "--index", "RDB$PRIMARY1"});
  EXPECT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(j.out, run({"stat", fdb, "--firebird", "--json", "--index", "RDB$PRIMARY1"}).out);
}

}  // namespace
}  // namespace pbtree::tools
