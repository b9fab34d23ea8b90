// `pbtree load`: building indexes from CSV input, NULLs, record-number columns, and every
// input error: exit code 1, one "pbtree: <file>:<line>: ..." message, the index file's bytes
// unchanged, the existing index still readable, no new file left behind.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>

#include <filesystem>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::numbers;
using testing::read_bytes;
using testing::run;
using testing::ScratchDir;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

class CliLoadTest : public ::testing::Test {
 protected:
  CliLoadTest()
      : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()),
        db_(dir_.file("t.pbt")) {}

  /// Creates the file with index I_A (integer, unique) over 1..100; returns its bytes.
  std::string make_base() {
    auto in = dir_.write("base.csv", numbers(1, 100));
    auto r = run({"load", db_, "--index", "I_A", "--type", "integer", "--unique", "--page-size",
                  "4096", "--input", in});
    EXPECT_EQ(r.code, 0) << r.err;
    return read_bytes(db_);
  }

  /// The error path checks: exit 1, message prefix, nothing on stdout, file unchanged and I_A
  /// still analyzable with its 100 nodes.
  void expect_failed_load(const testing::CliResult& r, const std::string& before,
                          const std::string& prefix) {
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(starts_with(r.err, prefix)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(read_bytes(db_), before);
    auto file = IndexFile::open(db_);
    EXPECT_EQ(file->indexes().size(), 1u);
    EXPECT_EQ(file->analyze("I_A").nodes, 100u);
  }

  ScratchDir dir_;
  std::string db_;
};

TEST_F(CliLoadTest, CreatesFileAndIndex) {
  make_base();
  auto file = IndexFile::open(db_);
  EXPECT_EQ(file->page_size(), 4096u);
  ASSERT_EQ(file->indexes().size(), 1u);
  EXPECT_EQ(file->indexes()[0].def.name, "I_A");
  EXPECT_TRUE(file->indexes()[0].def.unique);
  EXPECT_EQ(file->analyze("I_A").nodes, 100u);
}

TEST_F(CliLoadTest, SecondIndexWithHeaderColumnAndNulls) {
  make_base();
  auto in = dir_.write("b.csv", "id,v\n1,10\n2,\n3,\"7\"\n4,10\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "bigint", "--input", in, "--header",
                "--column", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto file = IndexFile::open(db_);
  ASSERT_EQ(file->indexes().size(), 2u);
  EXPECT_EQ(file->indexes()[1].def.name, "I_B");
  EXPECT_EQ(file->indexes()[1].def.format, KeyFormat::RescaledDouble);
  IndexStats s = file->analyze("I_B");
  EXPECT_EQ(s.nodes, 4u);
  EXPECT_EQ(s.total_dup, 1u);
}

TEST_F(CliLoadTest, ZstdInputAndRecnoColumn) {
  auto plain = dir_.write("z.csv", "5,100\n6,480\n7,1099511627775\n");
  ASSERT_EQ(std::system(("zstd -q -f " + plain + " -o " + plain + ".zst").c_str()), 0);
  auto r = run({"load", db_, "--index", "I_Z", "--type", "int128", "--input", plain + ".zst",
                "--recno-column", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(IndexFile::open(db_)->analyze("I_Z").nodes, 3u);
}

TEST_F(CliLoadTest, MalformedNumberNamesFileAndLine) {
  auto before = make_base();
  auto in = dir_.write("bad.csv", "1\n2\nx3\n4\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ":3: column 1: malformed integer 'x3'");
}

TEST_F(CliLoadTest, OutOfRangeNamesFileAndLine) {
  auto before = make_base();
  auto in = dir_.write("range.csv", "1\n40000\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "smallint", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ":2: column 1: ");
  EXPECT_NE(r.err.find("40000"), std::string::npos) << r.err;
}

TEST_F(CliLoadTest, DuplicateInUniqueIndexNamesBothLines) {
  auto before = make_base();
  auto in = dir_.write("dup.csv", "5\n7\n9\n7\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer", "--unique", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ":4: ");
  EXPECT_EQ(r.err,
            "pbtree: " + in + ":4: unique index I_B: value 7 appears twice (same as line 2)\n");
}

TEST_F(CliLoadTest, MissingInputFile) {
  auto before = make_base();
  const std::string in = dir_.file("nope.csv");
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ": cannot open: No such file or directory");
}

TEST_F(CliLoadTest, MissingColumnNamesFileAndLine) {
  auto before = make_base();
  auto in = dir_.write("cols.csv", "1,2\n3\n");
  auto r =
      run({"load", db_, "--index", "I_B", "--type", "integer", "--column", "2", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ":2: missing column 2 (the record has 1 field)");
}

TEST_F(CliLoadTest, BadRecordNumberNamesFileAndLine) {
  auto before = make_base();
  auto in = dir_.write("recno.csv", "1,0\n2,1099511627776\n");
  auto r = run(
      {"load", db_, "--index", "I_B", "--type", "integer", "--recno-column", "2", "--input", in});
  expect_failed_load(r, before, "pbtree: " + in + ":2: bad record number '1099511627776'");
}

TEST_F(CliLoadTest, KeyOverQuarterPageIsError) {
  auto before = make_base();
  auto in = dir_.write("long.csv", "abc\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "varchar(2000)", "--input", in});
  expect_failed_load(r, before, "pbtree: ");
  EXPECT_NE(r.err.find("key size"), std::string::npos) << r.err;
}

TEST_F(CliLoadTest, ExistingIndexNameIsError) {
  auto before = make_base();
  auto in = dir_.write("again.csv", "1\n");
  auto r = run({"load", db_, "--index", "I_A", "--type", "integer", "--input", in});
  expect_failed_load(r, before, "pbtree: " + db_ + ": index I_A already exists");
}

TEST_F(CliLoadTest, PageSizeMismatchIsError) {
  auto before = make_base();
  auto in = dir_.write("ps.csv", "1\n");
  auto r = run(
      {"load", db_, "--index", "I_B", "--type", "integer", "--page-size", "8192", "--input", in});
  expect_failed_load(r, before, "pbtree: ");
}

TEST_F(CliLoadTest, FailedLoadCreatesNoFile) {
  auto in = dir_.write("bad.csv", "1\nzz\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(starts_with(r.err, "pbtree: " + in + ":2: ")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, DuplicateInNewFileRemovesIt) {
  auto in = dir_.write("dup.csv", "1\n1\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer", "--unique", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(starts_with(r.err, "pbtree: " + in + ":2: ")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, UnknownTypeIsUsageError) {
  auto in = dir_.write("t.csv", "1\n");
  auto r = run({"load", db_, "--index", "I_B", "--type", "float", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "pbtree: unknown column type 'float' (expected smallint, integer, bigint, int128, "
            "double, numeric(P,S), varchar(N))\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, UnsupportedPageSizeIsUsageError) {
  auto in = dir_.write("p.csv", "1\n");
  auto r = run(
      {"load", db_, "--index", "I_B", "--type", "integer", "--page-size", "1234", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: page size 1234 not supported (4096, 8192, 16384 or 32768)\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, UnsupportedPageSizeOnExistingFileIsUsageError) {
  const std::string before = make_base();
  auto in = dir_.write("p.csv", "1\n");
  auto r = run(
      {"load", db_, "--index", "I_B", "--type", "integer", "--page-size", "1000", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: page size 1000 not supported (4096, 8192, 16384 or 32768)\n");
  EXPECT_EQ(read_bytes(db_), before);
}

TEST_F(CliLoadTest, UnknownKeyFormatIsUsageError) {
  auto in = dir_.write("p.csv", "1\n");
  auto r = run(
      {"load", db_, "--index", "I_B", "--type", "bigint", "--key-format", "bogus", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "pbtree: unknown key format 'bogus' (expected double, rescaled-double, decimal128, "
            "bcd, text)\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, BadIndexNameIsUsageError) {
  auto in = dir_.write("p.csv", "1\n");
  auto r = run({"load", db_, "--index", "bad name", "--type", "integer", "--input", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: bad index name 'bad name': 1 to 31 characters of A-Z a-z 0-9 _ $\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliLoadTest, Utf8ByteOrderMarkAtStartIsSkipped) {
  // With the mark kept, the first value would be EF BB BF 'a' and differ from the second.
  auto in = dir_.write("bom.csv",
                       "\xEF\xBB\xBF"
                       "a\na\n");
  auto r = run({"load", db_, "--index", "I_T", "--type", "varchar(8)", "--unique", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "pbtree: " + in + ":2: unique index I_T: value a appears twice (same as line 1)\n");
}

TEST_F(CliLoadTest, NewlineOfAValueInAnErrorIsEscaped) {
  auto in = dir_.write("nl.csv", "\"a\nb\",1\n\"a\nb\",2\n");
  auto r = run({"load", db_, "--index", "I_T", "--type", "varchar(8)", "--unique", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "pbtree: " + in + ":3: unique index I_T: value a\\nb appears twice (same as line 1)\n");
}

TEST_F(CliLoadTest, MissingRequiredOptionIsUsageError) {
  auto r = run({"load", db_, "--index", "I_B", "--type", "integer"});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

}  // namespace
}  // namespace pbtree::tools
