// `pbtree key`: the key vectors of docs/FORMAT.md §1.5, negative values after
// "--", several values, and the usage/format errors.
#include <gtest/gtest.h>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;

TEST(CliKeyTest, Integer1000000) {
  auto r = run({"key", "--type", "integer", "--", "1000000"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "C1 2E 84 80\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliKeyTest, IntegerMinusOneAfterDoubleDash) {
  auto r = run({"key", "--type", "integer", "--", "-1"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "40 0F FF FF FF FF FF FF\n");
}

TEST(CliKeyTest, IntegerMinusOneWithoutDoubleDash) {
  auto r = run({"key", "--type", "integer", "-1"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "40 0F FF FF FF FF FF FF\n");
}

TEST(CliKeyTest, Bigint1000000RescaledDouble) {
  auto r = run({"key", "--type", "bigint", "--", "1000000"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "C0 59 00 00 00 00 00 00 80\n");
}

TEST(CliKeyTest, BigintTwoPow53PlusOne) {
  auto r = run({"key", "--type", "bigint", "--", "9007199254740993"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "C2 6A 36 E2 EB 1C 43 2B 8B B8\n");
}

TEST(CliKeyTest, Bigint1000000Decimal128) {
  auto r = run({"key", "--type", "bigint", "--key-format", "decimal128", "--", "1000000"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "48 48 19\n");
}

TEST(CliKeyTest, Int128Bcd1000000) {
  auto r = run({"key", "--type", "int128", "--", "1000000"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "01 63 19\n");
}

TEST(CliKeyTest, OneLinePerValue) {
  auto r = run({"key", "--type", "integer", "--", "1000000", "-1"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "C1 2E 84 80\n40 0F FF FF FF FF FF FF\n");
}

TEST(CliKeyTest, FormatNotAllowedForTypeIsError) {
  auto r = run({"key", "--type", "int128", "--key-format", "decimal128", "--", "5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "pbtree: key format decimal128 cannot hold every value of int128; allowed: bcd\n");
}

TEST(CliKeyTest, MalformedValueIsError) {
  auto r = run({"key", "--type", "integer", "--", "x1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("pbtree: malformed integer 'x1'", 0), 0u) << r.err;
}

TEST(CliKeyTest, MissingTypeIsUsageError) {
  auto r = run({"key", "--", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--type is required"), std::string::npos) << r.err;
}

TEST(CliKeyTest, NoSubcommandIsUsageError) {
  auto r = run({});
  EXPECT_EQ(r.code, 2);
}

TEST(CliKeyTest, UnknownTypeIsUsageError) {
  auto r = run({"key", "--type", "float", "--", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "pbtree: unknown column type 'float' (expected smallint, integer, bigint, int128, "
            "double, numeric(P,S), varchar(N))\n");
}

}  // namespace
}  // namespace pbtree::tools
