// Numeric options are bounded and checked before anything is sized by them (issue 30 item
// 16): a huge --column costs nothing, --busy-timeout and --wait say their range in words;
// and values after an option stay values (`key --type double -- -inf`, item 12).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"
#include "tools/csv_reader.h"

namespace pbtree::tools {
namespace {

using testing::CliResult;
using testing::run;
using testing::ScratchDir;

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// Column 2^40 of a two-field record: no table of 2^40 entries, the record is read.
TEST(CsvReaderFieldLimits, LimitOnAHugeColumnAllocatesNothing) {
  CsvReader r = CsvReader::from_string("ab,cd\n", "in.csv");
  r.limit_field(size_t{1} << 40, 1, "test");
  r.limit_field(0, 2, "keys are short");
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.field_count(), 2u);
  EXPECT_EQ(r.field(1), "cd");
}

TEST(CsvReaderFieldLimits, EachColumnKeepsItsOwnLimit) {
  CsvReader r = CsvReader::from_string("abc,abcdef\n", "in.csv");
  r.limit_field(0, 3, "first");
  r.limit_field(1, 5, "second");
  try {
    r.next();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "in.csv:1: column 2: field longer than 5 bytes (second): starts 'abcdef'");
  }
}

TEST(CliNumericOptions, HugeColumnIsRefusedInWords) {
  ScratchDir dir("numeric-column");
  const std::string in = dir.write("a.csv", "1\n");
  const CliResult r = run({"load", dir.file("t.pbt"), "--index", "I", "--type", "integer",
                           "--column", "4294967297", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --column: columns are numbered from 1 to 67108865 (a record holds at most "
            "64 MiB, so at most that many fields), not '4294967297'");
}

TEST(CliNumericOptions, LargestColumnIsAMissingColumnAtOnce) {
  ScratchDir dir("numeric-column-max");
  const std::string in = dir.write("a.csv", "1,2\n");
  const CliResult r = run({"load", dir.file("t.pbt"), "--index", "I", "--type", "integer",
                           "--recno-column", "67108865", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in + ":1: missing column 67108865 (the record has 2 fields)\n");
}

TEST(CliNumericOptions, NegativeBusyTimeoutSaysItsRange) {
  const CliResult r = run({"--busy-timeout", "-1", "stat", "x.pbt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --busy-timeout: whole milliseconds from 0 to 86400000 (one day), not '-1'");
}

TEST(CliNumericOptions, BusyTimeoutPastADayIsRefused) {
  const CliResult r = run({"--busy-timeout", "86400001", "stat", "x.pbt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --busy-timeout: whole milliseconds from 0 to 86400000 "
            "(one day), not '86400001'");
}

TEST(CliNumericOptions, WaitThatIsNoNumberSaysItsRange) {
  const CliResult r = run({"checkpoint", "x.pbt", "--wait", "abc"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --wait: whole milliseconds from 0 to 86400000 (one day), not 'abc'");
  EXPECT_LT(r.err.size(), 160u);
}

TEST(CliNumericOptions, NegativeDemoRowsIsRefusedNotWrapped) {
  const CliResult r = run({"demo", "--rows", "-5", "--output", "/nonexistent/d.pbt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --rows: a count of rows from 0 (all) to "
            "18446744073709551615, not '-5'");
}

TEST(CliNumericOptions, ScanLimitPast64BitsIsRefused) {
  const CliResult r = run({"scan", "x.pbt", "--index", "I", "--limit", "18446744073709551616"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --limit: 0 (all) or a positive count, not '18446744073709551616'");
}

TEST(CliNumericOptions, NegativePageSizeSaysThePageSizes) {
  const CliResult r = run({"load", "x.pbt", "--index", "I", "--type", "integer", "--input", "x.csv",
                           "--page-size", "-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err),
            "pbtree: --page-size: a page size: 4096, 8192, 16384 or 32768, not '-1'");
}

// An unsupported page size is an argument error (exit status 2) with the same message in
// every command that takes --page-size, before any input is read or file made.
TEST(CliNumericOptions, UnsupportedPageSizeIsAnArgumentErrorInDemo) {
  const CliResult r = run({"demo", "--page-size", "1000", "--output", "/nonexistent/d.pbt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: page size 1000 not supported (4096, 8192, 16384 or 32768)\n");
}

TEST(CliNumericOptions, UnsupportedPageSizeIsAnArgumentErrorInImport) {
  const CliResult r = run({"import", "/nonexistent/x.fdb", "/nonexistent/y.pbt", "--index", "I",
                           "--page-size", "1000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: page size 1000 not supported (4096, 8192, 16384 or 32768)\n");
}

// --type takes one value each time it is given: the words after it are the values.
TEST(CliNumericOptions, KeyValuesRightAfterTheType) {
  const CliResult r = run({"key", "--type", "integer", "5", "-3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "C0 14\n3F F7 FF FF FF FF FF FF\n");
}

TEST(CliNumericOptions, ValuesAfterDoubleDashStayValuesAfterAnOption) {
  ScratchDir dir("numeric-dash");
  const std::string db = dir.file("t.pbt");
  ASSERT_EQ(run({"load", db, "--index", "V", "--type", "varchar(8)", "--input",
                 dir.write("v.csv", "-abc\n-x\n")})
                .code,
            0);
  const CliResult r = run({"find", db, "--index", "V", "--", "-abc"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  const CliResult d = run({"key", "--type", "double", "--descending", "--", "-inf"});
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(d.out, "FE FF F0 00 00 00 00 00 00\n");
}

}  // namespace
}  // namespace pbtree::tools
