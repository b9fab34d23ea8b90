// Shared fixture of the cli_tree_* tests: a scratch file with small indexes built by
// `pbtree load` from fixed CSV inputs.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools::testing {

/// Indexes of the fixture file (page size 4096), all over the same 7 rows
/// (record number = row): 5, 1, NULL, 3, -2, 5, NULL.
///   I integer, D integer descending, U integer unique over 5 1 NULL 3 -2 7 NULL,
///   V varchar(10) over 'AB' 'AB C' 'ABC' 'A' 'AB ' 'B' NULL,
///   W varchar(10) descending over the same.
class CliTreeTest : public ::testing::Test {
 protected:
  CliTreeTest()
      : dir_(std::string("tree-") +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        db_(dir_.file("t.pbt")) {}

  void SetUp() override {
    const std::string ints = dir_.write("ints.csv", "5\n1\n\n3\n-2\n5\n\n");
    const std::string uniq = dir_.write("uniq.csv", "5\n1\n\n3\n-2\n7\n\n");
    const std::string text = dir_.write("text.csv", "AB\nAB C\nABC\nA\nAB \nB\n\n");
    load({"--index", "I", "--type", "integer", "--input", ints});
    load({"--index", "D", "--type", "integer", "--descending", "--input", ints});
    load({"--index", "U", "--type", "integer", "--unique", "--input", uniq});
    load({"--index", "V", "--type", "varchar(10)", "--input", text});
    load({"--index", "W", "--type", "varchar(10)", "--descending", "--input", text});
  }

  void load(std::initializer_list<std::string> more) {
    std::vector<std::string> args{"load", db_, "--page-size", "4096"};
    args.insert(args.end(), more.begin(), more.end());
    auto r = run_args(args);
    ASSERT_EQ(r.code, 0) << r.err;
  }

  static CliResult run_args(const std::vector<std::string>& args) {
    return testing::run_args(args);
  }

  ScratchDir dir_;
  std::string db_;
};

}  // namespace pbtree::tools::testing
