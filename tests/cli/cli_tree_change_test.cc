// `pbtree insert`, `pbtree delete` and `pbtree load --append`: happy paths (the change is
// visible to a later process-equivalent run and the file verifies) and every error path
// (exit 1, exact message, file bytes unchanged).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <filesystem>
#include <fstream>

#include "page/page_file.h"
#include "page/wal.h"
#include "tests/support/cli_tree_test_util.h"
#include "tools/index_session.h"

namespace pbtree::tools {
namespace {

using testing::CliTreeTest;
using testing::numbers;
using testing::read_bytes;
using testing::run;

// Sets the 16-bit field at `offset` of page `page_no` of `path` (4096-byte pages) to `value`
// and re-stamps the page checksum: a page that reads fine but is malformed.
void patch_u16(const std::string& path, uint32_t page_no, size_t offset, uint16_t value) {
  std::string bytes = read_bytes(path);
  uint8_t* page = reinterpret_cast<uint8_t*>(bytes.data()) + uint64_t{page_no} * 4096;
  put_u16(page + offset, value);
  put_u32(page + 4, page_checksum(page, 4096));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class CliChangeTest : public CliTreeTest {
 protected:
  // Exit 1, that message, nothing on stdout, file unchanged.
  void expect_error(const testing::CliResult& r, const std::string& before,
                    const std::string& message) {
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "pbtree: " + message + "\n");
    EXPECT_TRUE(read_bytes(db_) == before) << "the file changed";
  }
  void expect_verifies() {
    auto v = run({"verify", db_});
    EXPECT_EQ(v.code, 0) << v.out << v.err;
  }
};

// 1..100000 in index I of s.pbt (4096-byte pages), then leaf page 3 with btr_length 0.
class CliChangeCorruptTest : public CliChangeTest {
 protected:
  void SetUp() override {
    db_ = dir_.file("s.pbt");
    const std::string csv = dir_.write("big.csv", numbers(1, 100000));
    load({"--index", "I", "--type", "integer", "--input", csv});
    patch_u16(db_, 3, 30, 0);
  }
};

TEST_F(CliChangeCorruptTest, FailedInsertChangesNothing) {
  ASSERT_EQ(run({"insert", db_, "--index", "I", "0", "123451"}).code, 0);
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "I", "--", "-1", "123452"}), before,
               "page 3 (b-tree): btr_length 0 outside [71, 4096] (jump size 31)");
  EXPECT_FALSE(std::filesystem::exists(Wal::log_path(db_)));
  EXPECT_EQ(run({"find", db_, "--index", "I", "--", "-1"}).out, "");
}

TEST_F(CliChangeCorruptTest, FailedAppendChangesNothing) {
  const std::string in = dir_.write("neg.csv", "-1\n-2\n-3\n-4\n-5\n");
  const std::string before = read_bytes(db_);
  expect_error(run({"load", db_, "--index", "I", "--append", "--input", in}), before,
               "page 3 (b-tree): btr_length 0 outside [71, 4096] (jump size 31)");
  EXPECT_FALSE(std::filesystem::exists(Wal::log_path(db_)));
  EXPECT_EQ(run({"find", db_, "--index", "I", "--", "-1"}).out, "");
}

TEST_F(CliChangeTest, FailedAppendOnCorruptFreeListChangesNothing) {
  // 1..5000 in index F of f.pbt, then 1000..2600 deleted: emptied leaves join the free list.
  db_ = dir_.file("f.pbt");
  load({"--index", "F", "--type", "integer", "--input", dir_.write("f.csv", numbers(1, 5000))});
  {
    auto s = IndexSession::open(db_, "F", true);
    const IndexDefinition& def = s->info().def;
    KeyBuffer k;
    for (int i = 1000; i <= 2600; ++i) {
      build_key(def.type, def.format, parse_value(def.type, std::to_string(i)), false, k);
      s->tree().remove(k.bytes(), static_cast<uint64_t>(i - 1));
    }
    s->commit();
  }
  // The head free page points outside the file.
  const std::string header = read_bytes(db_).substr(0, 48);
  const uint32_t pages = get_u32(reinterpret_cast<const uint8_t*>(header.data()) + 32);
  const uint32_t head = get_u32(reinterpret_cast<const uint8_t*>(header.data()) + 40);
  ASSERT_NE(head, 0u);
  {
    std::string bytes = read_bytes(db_);
    uint8_t* page = reinterpret_cast<uint8_t*>(bytes.data()) + uint64_t{head} * 4096;
    put_u32(page + 16, 999);
    put_u32(page + 4, page_checksum(page, 4096));
    std::ofstream(db_, std::ios::binary | std::ios::trunc) << bytes;
  }
  const std::string in = dir_.write("back.csv", numbers(1000, 2600));
  const std::string before = read_bytes(db_);
  expect_error(
      run({"load", db_, "--index", "F", "--append", "--input", in, "--recno-column", "1"}), before,
      fmt::format("{}: page {} (free): next free page 999 outside [2, {})", db_, head, pages));
  EXPECT_FALSE(std::filesystem::exists(Wal::log_path(db_)));
}

TEST_F(CliChangeTest, InsertThenFind) {
  auto r = run({"insert", db_, "--index", "I", "4", "9"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"find", db_, "--index", "I", "4"}).out, "9\n");
  expect_verifies();
}

TEST_F(CliChangeTest, InsertNegativeAfterDoubleDash) {
  EXPECT_EQ(run({"insert", db_, "--index", "D", "--", "-7", "8"}).code, 0);
  EXPECT_EQ(run({"scan", db_, "--index", "D", "--to=0"}).out, "-7\t8\n-2\t4\n");
  expect_verifies();
}

TEST_F(CliChangeTest, InsertDuplicateValueInNonUniqueIndex) {
  EXPECT_EQ(run({"insert", db_, "--index", "I", "5", "3"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "I", "5"}).out, "0\n3\n5\n");
}

TEST_F(CliChangeTest, InsertNullIntoUniqueIndexAllowed) {
  EXPECT_EQ(run({"insert", db_, "--index", "U", "--null", "10"}).code, 0);
  EXPECT_EQ(run({"insert", db_, "--index", "U", "--null", "11"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "U", "--null"}).out, "2\n6\n10\n11\n");
  expect_verifies();
}

TEST_F(CliChangeTest, InsertDuplicateIntoUniqueIndexFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "U", "7", "20"}), before,
               "unique index U: value 7 already exists (record 5)");
}

TEST_F(CliChangeTest, InsertExistingPairFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "I", "5", "5"}), before,
               "index I: entry (5, 5) already exists");
  expect_error(run({"insert", db_, "--index", "I", "--null", "2"}), before,
               "index I: entry (NULL, 2) already exists");
}

TEST_F(CliChangeTest, InsertMalformedValueFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "I", "1.5", "20"}), before,
               "value '1.5' is not an integer: integer takes whole numbers only");
}

TEST_F(CliChangeTest, InsertOutOfRangeValueFails) {
  const std::string before = read_bytes(db_);
  auto r = run({"insert", db_, "--index", "I", "99999999999", "20"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(db_), before);
}

TEST_F(CliChangeTest, InsertNoSuchIndexFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "Q", "1", "20"}), before,
               db_ + ": no index named Q (indexes: I, D, U, V, W)");
}

TEST_F(CliChangeTest, InsertBadRecordNumberFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"insert", db_, "--index", "I", "1", "1099511627776"}), before,
               "bad record number '1099511627776' (want an integer 0..1099511627775)");
  expect_error(run({"insert", db_, "--index", "I", "1", "x"}), before,
               "bad record number 'x' (want an integer 0..1099511627775)");
}

TEST_F(CliChangeTest, InsertWrongArgumentCountIsUsageError) {
  const std::string before = read_bytes(db_);
  auto r = run({"insert", db_, "--index", "I", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: expected VALUE RECNO (or --null RECNO)\n");
  r = run({"insert", db_, "--index", "I", "--null", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: expected RECNO after --null (one argument)\n");
  EXPECT_TRUE(read_bytes(db_) == before) << "the file changed";
}

TEST_F(CliChangeTest, InsertVarcharTooLongFails) {
  const std::string before = read_bytes(db_);
  auto r = run({"insert", db_, "--index", "V", "ABCDEFGHIJK", "20"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(read_bytes(db_), before);
}

TEST_F(CliChangeTest, DeleteThenFind) {
  EXPECT_EQ(run({"delete", db_, "--index", "I", "5", "0"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "I", "5"}).out, "5\n");
  EXPECT_EQ(run({"delete", db_, "--index", "W", "AB ", "4"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "W", "AB"}).out, "0\n");
  expect_verifies();
}

TEST_F(CliChangeTest, DeleteNull) {
  EXPECT_EQ(run({"delete", db_, "--index", "D", "--null", "6"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "D", "--null"}).out, "2\n");
}

TEST_F(CliChangeTest, DeleteAbsentFails) {
  const std::string before = read_bytes(db_);
  expect_error(run({"delete", db_, "--index", "I", "5", "1"}), before, "index I: no entry (5, 1)");
  expect_error(run({"delete", db_, "--index", "I", "--null", "0"}), before,
               "index I: no entry (NULL, 0)");
}

TEST_F(CliChangeTest, AppendInsertsAllRows) {
  const std::string in = dir_.write("more.csv", "4,10\n,11\n5,12\n");
  auto r = run({"load", db_, "--index", "I", "--append", "--input", in, "--recno-column", "2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(run({"scan", db_, "--index", "I"}).out,
            "NULL\t2\nNULL\t6\nNULL\t11\n-2\t4\n1\t1\n3\t3\n4\t10\n5\t0\n5\t5\n5\t12\n");
  expect_verifies();
}

TEST_F(CliChangeTest, AppendRowOrdinalsAsRecordNumbers) {
  const std::string in = dir_.write("more.csv", "100\n-100\n");
  EXPECT_EQ(run({"load", db_, "--index", "D", "--append", "--input", in}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "D", "100"}).out, "0\n");
  EXPECT_EQ(run({"find", db_, "--index", "D", "--", "-100"}).out, "1\n");
}

TEST_F(CliChangeTest, AppendNoSuchIndexFails) {
  const std::string in = dir_.write("more.csv", "1\n");
  const std::string before = read_bytes(db_);
  expect_error(run({"load", db_, "--index", "Z", "--append", "--input", in}), before,
               db_ + ": no index named Z (indexes: I, D, U, V, W)");
}

TEST_F(CliChangeTest, AppendMalformedRowChangesNothing) {
  const std::string in = dir_.write("more.csv", "8,20\nx,21\n");
  const std::string before = read_bytes(db_);
  expect_error(
      run({"load", db_, "--index", "I", "--append", "--input", in, "--recno-column", "2"}), before,
      in + ":2: column 1: malformed integer 'x' for integer (expected an optional sign and "
           "decimal digits)");
}

TEST_F(CliChangeTest, AppendDuplicateWithinInputFails) {
  const std::string in = dir_.write("more.csv", "8,20\n9,21\n8,20\n");
  const std::string before = read_bytes(db_);
  expect_error(run({"load", db_, "--index", "I", "--append", "--input", in, "--recno-column", "2"}),
               before, in + ":3: entry (8, 20) appears twice (same as line 1)");
}

TEST_F(CliChangeTest, AppendDuplicateAgainstIndexFails) {
  const std::string in = dir_.write("more.csv", "8,20\n3,3\n");
  const std::string before = read_bytes(db_);
  expect_error(run({"load", db_, "--index", "I", "--append", "--input", in, "--recno-column", "2"}),
               before, in + ":2: index I: entry (3, 3) already exists");
}

TEST_F(CliChangeTest, AppendUniqueViolationsFail) {
  const std::string before = read_bytes(db_);
  const std::string a = dir_.write("a.csv", "8,20\n8,21\n");
  expect_error(run({"load", db_, "--index", "U", "--append", "--input", a, "--recno-column", "2"}),
               before, a + ":2: unique index U: value 8 appears twice (same as line 1)");
  const std::string b = dir_.write("b.csv", "8,20\n1,21\n");
  expect_error(run({"load", db_, "--index", "U", "--append", "--input", b, "--recno-column", "2"}),
               before, b + ":2: unique index U: value 1 already exists (record 1)");
}

TEST_F(CliChangeTest, AppendNullsIntoUniqueIndex) {
  const std::string in = dir_.write("more.csv", ",20\n,21\n");
  EXPECT_EQ(
      run({"load", db_, "--index", "U", "--append", "--input", in, "--recno-column", "2"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "U", "--null"}).out, "2\n6\n20\n21\n");
}

TEST_F(CliChangeTest, AppendWithOtherTypeFails) {
  const std::string in = dir_.write("more.csv", "1,20\n");
  const std::string before = read_bytes(db_);
  expect_error(run({"load", db_, "--index", "I", "--type", "bigint", "--append", "--input", in,
                    "--recno-column", "2"}),
               before, "index I is integer, not bigint");
  EXPECT_EQ(run({"load", db_, "--index", "I", "--type", "INTEGER", "--append", "--input", in,
                 "--recno-column", "2"})
                .code,
            0);
}

TEST_F(CliChangeTest, AppendWithKeyFormatIsUsageError) {
  const std::string in = dir_.write("more.csv", "1,20\n");
  const std::string before = read_bytes(db_);
  auto r = run({"load", db_, "--index", "I", "--append", "--key-format", "decimal128", "--input",
                in, "--recno-column", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--key-format defines a new index; --append inserts into the existing one "
                       "as it was created"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(read_bytes(db_) == before) << "the file changed";
}

TEST_F(CliChangeTest, AppendWithLayoutIsUsageError) {
  const std::string in = dir_.write("more.csv", "1,20\n");
  auto r = run({"load", db_, "--index", "I", "--append", "--layout", "compact", "--input", in,
                "--recno-column", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--layout defines a new index"), std::string::npos) << r.err;
}

TEST_F(CliChangeTest, LoadWithoutTypeOrAppendIsUsageError) {
  const std::string in = dir_.write("more.csv", "1\n");
  auto r = run({"load", db_, "--index", "NEW", "--input", in});
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace pbtree::tools
