// Search-key conversion (<pbtree/search.h>): other numeric types, out-of-range values,
// directed rounding of bounds, NULL bounds, descending bound swap, STARTING WITH prefixes.
// Expected keys are checked through key_to_text (the converted value) and hex bytes.
#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>

#include "util/bytes.h"

namespace pbtree::tools {
namespace {

IndexDefinition def_of(const std::string& type, bool descending = false) {
  IndexDefinition d;
  d.name = "I";
  d.type = TypeSpec::parse(type);
  d.format = default_key_format(d.type);
  d.descending = descending;
  return d;
}

std::string text_of(const IndexDefinition& d, const std::vector<uint8_t>& key) {
  return key_to_text(d.type, d.format, d.descending, key);
}

// "At 2 inclusive", "At 2 exclusive", "Unbounded", "Empty".
std::string show(const IndexDefinition& d, const ValueBound& b) {
  switch (b.kind) {
    case ValueBound::Kind::Unbounded:
      return "Unbounded";
    case ValueBound::Kind::Empty:
      return "Empty";
    case ValueBound::Kind::At:
      break;
  }
  return "At " + text_of(d, b.key) + (b.inclusive ? " inclusive" : " exclusive");
}

std::string from(const IndexDefinition& d, const std::string& v, bool excl = false) {
  return show(d, bound_key(d, v, BoundSide::From, excl));
}
std::string to(const IndexDefinition& d, const std::string& v, bool excl = false) {
  return show(d, bound_key(d, v, BoundSide::To, excl));
}

TEST(KeysSearchKeyEquality, IntegerFindsItsOwnKey) {
  auto k = equality_key(def_of("integer"), "5");
  ASSERT_TRUE(k);
  EXPECT_EQ(hex_bytes(*k), "C0 14");
}

TEST(KeysSearchKeyEquality, OtherNumericSpellingsOfAnIntegerMatch) {
  const auto d = def_of("integer");
  for (const char* s : {"5.000", "5e0", "0.5e1", "+5", " 5 ", "500e-2"}) {
    auto k = equality_key(d, s);
    ASSERT_TRUE(k) << s;
    EXPECT_EQ(hex_bytes(*k), "C0 14") << s;
  }
}

TEST(KeysSearchKeyEquality, FractionOnIntegerIndexMatchesNothing) {
  EXPECT_FALSE(equality_key(def_of("integer"), "1.5"));
  EXPECT_FALSE(equality_key(def_of("bigint"), "1e-30"));
}

TEST(KeysSearchKeyEquality, OutOfRangeMatchesNothing) {
  EXPECT_FALSE(equality_key(def_of("smallint"), "40000"));
  EXPECT_FALSE(equality_key(def_of("integer"), "99999999999"));
  EXPECT_FALSE(equality_key(def_of("numeric(4,2)"), "100"));
  EXPECT_FALSE(equality_key(def_of("int128"), "1e400"));
  EXPECT_FALSE(equality_key(def_of("integer"), "inf"));
}

TEST(KeysSearchKeyEquality, IntegerTextFindsStoredDouble) {
  auto k = equality_key(def_of("double"), "5");
  ASSERT_TRUE(k);
  EXPECT_EQ(hex_bytes(*k), "C0 14");
}

TEST(KeysSearchKeyEquality, DoubleOverflowMatchesNothing) {
  EXPECT_FALSE(equality_key(def_of("double"), "1e400"));
  auto inf = equality_key(def_of("double"), "inf");
  ASSERT_TRUE(inf);
  EXPECT_EQ(hex_bytes(*inf), "FF F0");
}

TEST(KeysSearchKeyEquality, NumericScaleConversion) {
  const auto d = def_of("numeric(9,2)");
  auto k = equality_key(d, "1.2300");
  ASSERT_TRUE(k);
  EXPECT_EQ(text_of(d, *k), "1.23");
  EXPECT_FALSE(equality_key(d, "1.234"));
}

TEST(KeysSearchKeyEquality, Int128Extremes) {
  const auto d = def_of("int128");
  auto k = equality_key(d, "-170141183460469231731687303715884105728");
  ASSERT_TRUE(k);
  EXPECT_EQ(text_of(d, *k), "-170141183460469231731687303715884105728");
  EXPECT_FALSE(equality_key(d, "170141183460469231731687303715884105728"));
}

TEST(KeysSearchKeyEquality, VarcharTrailingSpacesAndLength) {
  const auto d = def_of("varchar(3)");
  auto k = equality_key(d, "AB  ");
  ASSERT_TRUE(k);
  EXPECT_EQ(hex_bytes(*k), "41 42");
  auto k3 = equality_key(d, "ABC   ");
  ASSERT_TRUE(k3);
  EXPECT_EQ(hex_bytes(*k3), "41 42 43");
  EXPECT_FALSE(equality_key(d, "ABCD"));
}

TEST(KeysSearchKeyEquality, MalformedNumberIsKeyError) {
  try {
    equality_key(def_of("integer"), "12x");
    FAIL();
  } catch (const KeyError& e) {
    EXPECT_STREQ(e.what(), "malformed number '12x'");
  }
  EXPECT_THROW(equality_key(def_of("double"), "nan"), KeyError);
  EXPECT_THROW(equality_key(def_of("integer"), "1e"), KeyError);
  EXPECT_THROW(equality_key(def_of("integer"), "."), KeyError);
}

TEST(KeysSearchKeyBound, FractionFromRoundsUpInclusive) {
  const auto d = def_of("integer");
  EXPECT_EQ(from(d, "1.5"), "At 2 inclusive");
  EXPECT_EQ(from(d, "1.5", true), "At 2 inclusive");
  EXPECT_EQ(from(d, "-1.5"), "At -1 inclusive");
}

TEST(KeysSearchKeyBound, FractionToRoundsDownInclusive) {
  const auto d = def_of("integer");
  EXPECT_EQ(to(d, "1.5"), "At 1 inclusive");
  EXPECT_EQ(to(d, "1.5", true), "At 1 inclusive");
  EXPECT_EQ(to(d, "-1.5"), "At -2 inclusive");
}

TEST(KeysSearchKeyBound, ExactExclusiveBoundsStepToTheNeighbour) {
  const auto d = def_of("integer");
  EXPECT_EQ(from(d, "2", true), "At 3 inclusive");
  EXPECT_EQ(to(d, "2", true), "At 1 inclusive");
  EXPECT_EQ(from(d, "2.0"), "At 2 inclusive");
}

TEST(KeysSearchKeyBound, OutOfRangeHighAndLow) {
  const auto d = def_of("smallint");
  EXPECT_EQ(to(d, "99999999999"), "Unbounded");
  EXPECT_EQ(from(d, "99999999999"), "Empty");
  EXPECT_EQ(from(d, "-1e400"), "Unbounded");
  EXPECT_EQ(to(d, "-1e400"), "Empty");
  EXPECT_EQ(from(d, "32767"), "At 32767 inclusive");
  EXPECT_EQ(from(d, "32767", true), "Empty");
  EXPECT_EQ(to(d, "-32768", true), "Empty");
  EXPECT_EQ(from(d, "-inf"), "Unbounded");
  EXPECT_EQ(from(d, "inf"), "Empty");
}

TEST(KeysSearchKeyBound, NumericScaleRounding) {
  const auto d = def_of("numeric(9,2)");
  EXPECT_EQ(from(d, "1.234"), "At 1.24 inclusive");
  EXPECT_EQ(to(d, "1.234"), "At 1.23 inclusive");
  EXPECT_EQ(from(d, "1.23", true), "At 1.24 inclusive");
  EXPECT_EQ(to(d, "1e10"), "Unbounded");
}

TEST(KeysSearchKeyBound, DoubleOverflowClampsInside) {
  const auto d = def_of("double");
  EXPECT_EQ(from(d, "-1e400"), "At -1.7976931348623157e+308 inclusive");
  EXPECT_EQ(to(d, "1e400"), "At 1.7976931348623157e+308 inclusive");
  EXPECT_EQ(from(d, "1e400", true), "At inf inclusive");
  EXPECT_EQ(to(d, "-1e400"), "At -inf inclusive");
  EXPECT_EQ(from(d, "1.5", true), "At 1.5 exclusive");
}

TEST(KeysSearchKeyBound, VarcharBoundLongerThanTheColumn) {
  const auto d = def_of("varchar(2)");
  auto b = bound_key(d, "ABC", BoundSide::From, false);
  EXPECT_EQ(hex_bytes(b.key), "41 42 43");
  EXPECT_TRUE(b.inclusive);
}

TEST(KeysSearchKeyPlan, NullBoundMatchesNothing) {
  ScanRequest r;
  r.from_null = true;
  EXPECT_TRUE(plan_scan(def_of("integer"), r).empty);
  ScanRequest t;
  t.to_null = true;
  t.from = "1";
  EXPECT_TRUE(plan_scan(def_of("integer", true), t).empty);
}

TEST(KeysSearchKeyPlan, UnboundedScanKeepsNulls) {
  ScanPlan p = plan_scan(def_of("integer"), ScanRequest{});
  EXPECT_FALSE(p.empty);
  EXPECT_FALSE(p.skip_nulls);
  EXPECT_FALSE(p.range.lower);
  EXPECT_FALSE(p.range.upper);
  EXPECT_FALSE(p.range.backward);
}

TEST(KeysSearchKeyPlan, DescendingIndexSwapsBounds) {
  const auto d = def_of("integer", true);
  ScanRequest r;
  r.from = "1";
  r.to = "3";
  r.to_exclusive = true;
  ScanPlan p = plan_scan(d, r);
  ASSERT_TRUE(p.range.lower && p.range.upper);
  EXPECT_EQ(text_of(d, p.range.lower->key), "2");  // to 3 exclusive -> 2 inclusive
  EXPECT_EQ(text_of(d, p.range.upper->key), "1");
  EXPECT_TRUE(p.range.backward);  // ascending value order on a descending index
  EXPECT_TRUE(p.skip_nulls);
  r.descending = true;
  EXPECT_FALSE(plan_scan(d, r).range.backward);
}

TEST(KeysSearchKeyPlan, CrossedBoundsAreEmpty) {
  ScanRequest r;
  r.from = "5";
  r.to = "4.5";
  EXPECT_TRUE(plan_scan(def_of("integer"), r).empty);
  ScanRequest e;
  e.from = "5";
  e.to = "5";
  e.to_exclusive = true;
  EXPECT_TRUE(plan_scan(def_of("integer"), e).empty);
  ScanRequest s;
  s.from = "1.2";
  s.to = "1.8";
  EXPECT_TRUE(plan_scan(def_of("integer"), s).empty);
}

TEST(KeysSearchKeyPlan, StartingWithOnNumericIndexIsAnError) {
  ScanRequest r;
  r.starting_with = "1";
  try {
    plan_scan(def_of("integer"), r);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--starting-with needs a varchar index; index I is integer");
  }
}

TEST(KeysSearchKeyPlan, StartingWithTrailingSpaceAscending) {
  ScanRequest r;
  r.starting_with = "AB ";
  ScanPlan p = plan_scan(def_of("varchar(10)"), r);
  ASSERT_TRUE(p.range.prefix);
  EXPECT_EQ(hex_bytes(*p.range.prefix), "41 42 20");
  ASSERT_TRUE(p.padded_equal);
  EXPECT_EQ(hex_bytes(*p.padded_equal), "41 42");
}

TEST(KeysSearchKeyPlan, StartingWithTrailingSpaceDescending) {
  ScanRequest r;
  r.starting_with = "AB ";
  ScanPlan p = plan_scan(def_of("varchar(10)", true), r);
  ASSERT_TRUE(p.range.prefix);
  EXPECT_EQ(hex_bytes(*p.range.prefix), "BE BD DF");
  ASSERT_TRUE(p.padded_equal);
  EXPECT_EQ(hex_bytes(*p.padded_equal), "BE BD");
}

TEST(KeysSearchKeyPlan, StartingWithSpaceOnlyNeedsNoExtraKey) {
  ScanRequest r;
  r.starting_with = " ";
  ScanPlan p = plan_scan(def_of("varchar(10)"), r);
  ASSERT_TRUE(p.range.prefix);
  EXPECT_EQ(hex_bytes(*p.range.prefix), "20");
  EXPECT_FALSE(p.padded_equal);
}

TEST(KeysSearchKeyPlan, StartingWithEscapedByteDescending) {
  ScanRequest r;
  r.starting_with =
      "\x01"
      "A";
  ScanPlan p = plan_scan(def_of("varchar(10)", true), r);
  ASSERT_TRUE(p.range.prefix);
  EXPECT_EQ(hex_bytes(*p.range.prefix), "FE FE BE");
}

TEST(KeysSearchKeyPlan, EmptyStartingWithMatchesAllButNulls) {
  ScanRequest r;
  r.starting_with = "";
  ScanPlan p = plan_scan(def_of("varchar(10)"), r);
  EXPECT_FALSE(p.range.prefix);
  EXPECT_TRUE(p.skip_nulls);
}

}  // namespace
}  // namespace pbtree::tools
