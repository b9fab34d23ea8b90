// "no index named X" on the Firebird paths of the CLI lists the indexes there are, as pbtree
// files do: `import`, `stat --firebird --index` (with and without --table) and the Firebird
// side of `stat --compare`. Database: ../shared/data/firebird5's fb5_small_8192 (real
// Firebird 5.0.4), 36 indexes on user tables (fb5_small_8192.indexes.tsv), written to a
// scratch file.
#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"
#include "tests/support/fb5_data.h"

namespace pbtree::tools {
namespace {

using testing::CliResult;
using testing::run;
using testing::ScratchDir;

std::string fb5_text(const std::string& name) {
  const std::vector<uint8_t> bytes = pbtree::testdata::fb5_bytes(name);
  return std::string(bytes.begin(), bytes.end());
}

// The first 30 of the 36 index names in name order, then the count of the rest.
const char* const kListed =
    "indexes: T_BIGINT_COL, T_BIGINT_ID, T_BIGWIDE_COL, T_BIGWIDE_ID, T_DECFLOAT_COL, "
    "T_DECFLOAT_ID, T_INT128_COL, T_INT128_ID, T_INT_COL, T_INT_COL_DESC, T_INT_ID, T_NUM_COL, "
    "T_NUM_ID, T_POST_COL, T_POST_ID, T_POST_RID, T_TEXT_COL_NAME, T_TEXT_NAME_DESC, "
    "T_TEXT_WORD, T_TYPES_BOOL, T_TYPES_CHAR, T_TYPES_DATE, T_TYPES_DEC16, T_TYPES_DOUBLE, "
    "T_TYPES_ISO_PTBR, T_TYPES_NUM30, T_TYPES_SMALL, T_TYPES_SMALL_POS, T_TYPES_TIME, "
    "T_TYPES_TIMETZ, and 6 more";

class FdbNoIndex : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("fdb-no-index");
    fdb_ = new std::string(dir_->write("fb5.fdb", fb5_text("fb5_small_8192")));
  }
  static void TearDownTestSuite() {
    delete fdb_;
    delete dir_;
  }
  static std::string want(const std::string& name, const std::string& list) {
    return "pbtree: " + *fdb_ + ": no index named " + name + " (" + list + ")\n";
  }
  static inline ScratchDir* dir_ = nullptr;
  static inline std::string* fdb_ = nullptr;
};

TEST_F(FdbNoIndex, ImportListsTheIndexesOfTheUserTables) {
  const CliResult r = run({"import", *fdb_, dir_->file("i.pbt"), "--index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, want("NOPE", kListed));
  EXPECT_FALSE(std::filesystem::exists(dir_->file("i.pbt")));
}

TEST_F(FdbNoIndex, StatIndexListsTheIndexesOfTheUserTables) {
  const CliResult r = run({"stat", "--firebird", *fdb_, "--index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, want("NOPE", kListed));
}

TEST_F(FdbNoIndex, StatIndexWithATableListsThatTablesIndexes) {
  const CliResult r = run({"stat", "--firebird", *fdb_, "--table", "T_INT", "--index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, want("NOPE", "indexes: T_INT_COL, T_INT_COL_DESC, T_INT_ID"));
}

TEST_F(FdbNoIndex, StatIndexNamingAnotherTablesIndexListsThatTablesIndexes) {
  const CliResult r = run({"stat", "--firebird", *fdb_, "--table", "T_INT", "--index", "T_NUM_ID"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, want("T_NUM_ID", "indexes: T_INT_COL, T_INT_COL_DESC, T_INT_ID"));
}

TEST_F(FdbNoIndex, WhatIfIndexListsTheIndexesOfTheUserTables) {
  const CliResult r = run({"stat", *fdb_, "--what-if", "--index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, want("NOPE", kListed));
}

TEST_F(FdbNoIndex, CompareListsTheIndexesOfTheFirebirdSide) {
  const CliResult r =
      run({"stat", *fdb_, "--compare", *fdb_, "--index", "T_INT_ID", "--compare-index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, want("NOPE", kListed));
}

}  // namespace
}  // namespace pbtree::tools
