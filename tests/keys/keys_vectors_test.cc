// Byte-exact key vectors (docs/FORMAT.md §1) of Firebird v5.0.4's
// compress(), make_int64_key(), Decimal128/Int128 makeIndexKey, IndexKey::compose).
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <string>
#include <vector>

#include "util/bytes.h"

namespace pbtree {
namespace {

std::string key_hex(const char* type, KeyFormat format, const Value& v, bool desc = false) {
  const TypeSpec t = TypeSpec::parse(type);
  KeyBuffer kb;
  build_key(t, format, v, desc, kb);
  return hex_bytes(kb.bytes());
}

std::string key_hex_text(const char* type, KeyFormat format, const char* text, bool desc = false) {
  const TypeSpec t = TypeSpec::parse(type);
  return key_hex(type, format, parse_value(t, text), desc);
}

constexpr KeyFormat kD = KeyFormat::Double;
constexpr KeyFormat kR = KeyFormat::RescaledDouble;
constexpr KeyFormat kM = KeyFormat::Decimal128;
constexpr KeyFormat kB = KeyFormat::Bcd;
constexpr KeyFormat kT = KeyFormat::Text;

// idx_numeric
TEST(KeysVectors, DoubleIntegerZero) {
  EXPECT_EQ(key_hex_text("integer", kD, "0"), "80");
}
TEST(KeysVectors, DoubleIntegerOne) {
  EXPECT_EQ(key_hex_text("integer", kD, "1"), "BF F0");
}
TEST(KeysVectors, DoubleIntegerMinusOne) {
  EXPECT_EQ(key_hex_text("integer", kD, "-1"), "40 0F FF FF FF FF FF FF");
}
TEST(KeysVectors, DoubleIntegerMillion) {
  EXPECT_EQ(key_hex_text("integer", kD, "1000000"), "C1 2E 84 80");
}
TEST(KeysVectors, DoubleSmallValues) {
  EXPECT_EQ(key_hex_text("integer", kD, "2"), "C0");
  EXPECT_EQ(key_hex_text("integer", kD, "3"), "C0 08");
  EXPECT_EQ(key_hex_text("integer", kD, "10"), "C0 24");
  EXPECT_EQ(key_hex_text("integer", kD, "999999"), "C1 2E 84 7E");
}
TEST(KeysVectors, DoubleMinusMillion) {
  EXPECT_EQ(key_hex_text("integer", kD, "-1000000"), "3E D1 7B 7F FF FF FF FF");
}
TEST(KeysVectors, DoubleIntegerLimits) {
  EXPECT_EQ(key_hex_text("integer", kD, "2147483647"), "C1 DF FF FF FF C0");
  EXPECT_EQ(key_hex_text("integer", kD, "-2147483648"), "3E 1F FF FF FF FF FF FF");
}
TEST(KeysVectors, DoubleHalf) {
  EXPECT_EQ(key_hex_text("double", kD, "0.5"), "BF E0");
}
TEST(KeysVectors, DoubleNumeric92) {
  EXPECT_EQ(key_hex_text("numeric(9,2)", kD, "1.23"), "BF F3 AE 14 7A E1 47 AE");
}

// idx_numeric2
TEST(KeysVectors, RescaledZero) {
  EXPECT_EQ(key_hex_text("bigint", kR, "0"), "80 00 00 00 00 00 00 00 80");
}
TEST(KeysVectors, RescaledOne) {
  EXPECT_EQ(key_hex_text("bigint", kR, "1"), "BF 1A 36 E2 EB 1C 43 2D 80");
  EXPECT_EQ(key_hex_text("bigint", kR, "-1"), "40 E5 C9 1D 14 E3 BC D2 80");
}
TEST(KeysVectors, RescaledOnePointZeroZero) {
  EXPECT_EQ(key_hex_text("numeric(18,2)", kR, "1.00"), "BF 1A 36 E2 EB 1C 43 2D 80");
}
TEST(KeysVectors, RescaledMillion) {
  EXPECT_EQ(key_hex_text("bigint", kR, "1000000"), "C0 59 00 00 00 00 00 00 80");
  EXPECT_EQ(key_hex_text("bigint", kR, "-1000000"), "3F A6 FF FF FF FF FF FF 80");
  EXPECT_EQ(key_hex_text("bigint", kR, "1000001"), "C0 59 00 01 A3 6E 2E B2 80");
}
TEST(KeysVectors, RescaledAround2p53) {
  EXPECT_EQ(key_hex_text("bigint", kR, "9007199254740993"), "C2 6A 36 E2 EB 1C 43 2B 8B B8");
  EXPECT_EQ(key_hex_text("bigint", kR, "9007199254740992"), "C2 6A 36 E2 EB 1C 43 2B 87 D0");
}
TEST(KeysVectors, RescaledInt64Limits) {
  EXPECT_EQ(key_hex_text("bigint", kR, "9223372036854775807"), "C3 0A 36 E2 EB 1C 43 28 96 AF");
  EXPECT_EQ(key_hex_text("bigint", kR, "-9223372036854775808"), "3C F5 C9 1D 14 E3 BC D7 69 50");
}
TEST(KeysVectors, RescaledScaledEqual) {
  EXPECT_EQ(key_hex_text("numeric(18,2)", kR, "123.45"), "BF 89 48 55 DA 27 28 63 80");
  EXPECT_EQ(key_hex_text("numeric(18,3)", kR, "123.450"), "BF 89 48 55 DA 27 28 63 80");
}

// idx_decimal
TEST(KeysVectors, Decimal128Table) {
  EXPECT_EQ(key_hex_text("bigint", kM, "0"), "30 42");
  EXPECT_EQ(key_hex_text("bigint", kM, "1"), "48 42 19");
  EXPECT_EQ(key_hex_text("bigint", kM, "10"), "48 43 19");
  EXPECT_EQ(key_hex_text("bigint", kM, "1000000"), "48 48 19");
  EXPECT_EQ(key_hex_text("bigint", kM, "1234"), "48 45 1E D9");
  EXPECT_EQ(key_hex_text("bigint", kM, "123456"), "48 47 1E DC 80");
  EXPECT_EQ(key_hex_text("numeric(9,2)", kM, "1.23"), "48 42 1E C0");
  EXPECT_EQ(key_hex_text("bigint", kM, "9007199254740993"), "48 51 E1 2C FE 75 DA 18 D2 C0");
  EXPECT_EQ(key_hex_text("bigint", kM, "9223372036854775807"), "48 54 E6 95 13 2E AD 77 64 4A F0");
  EXPECT_EQ(key_hex_text("bigint", kM, "-1"), "18 42 E1");
  EXPECT_EQ(key_hex_text("bigint", kM, "-2"), "18 42 C8");
  EXPECT_EQ(key_hex_text("numeric(18,1)", kM, "-1.5"), "18 42 D4 80");
  EXPECT_EQ(key_hex_text("bigint", kM, "-1000000"), "18 3C E1");
}

// idx_bcd
TEST(KeysVectors, BcdTable) {
  EXPECT_EQ(key_hex_text("int128", kB, "0"), "01 02");
  EXPECT_EQ(key_hex_text("int128", kB, "1"), "01 5D 19");
  EXPECT_EQ(key_hex_text("int128", kB, "10"), "01 5E 19");
  EXPECT_EQ(key_hex_text("int128", kB, "1000000"), "01 63 19");
  EXPECT_EQ(key_hex_text("numeric(20,2)", kB, "1.23"), "01 5D 1E C0");
  EXPECT_EQ(key_hex_text("int128", kB, "-1"), "00 A7 E1");
  EXPECT_EQ(key_hex_text("int128", kB, "-1000000"), "00 A1 E1");
}

// idx_string
TEST(KeysVectors, TextTrailingSpacesCut) {
  EXPECT_EQ(key_hex_text("varchar(10)", kT, "AB  "), "41 42");
}
TEST(KeysVectors, TextEmptyIsOneSpace) {
  EXPECT_EQ(key_hex_text("varchar(10)", kT, ""), "20");
}

// NULL and descending
TEST(KeysVectors, NullAscendingIsEmpty) {
  EXPECT_EQ(key_hex("integer", kD, Value::null()), "");
}
TEST(KeysVectors, NullDescendingIsFF) {
  EXPECT_EQ(key_hex("integer", kD, Value::null(), true), "FF");
}
TEST(KeysVectors, DescendingExamples) {
  EXPECT_EQ(key_hex_text("integer", kD, "1", true), "40 0F");
  EXPECT_EQ(key_hex_text("integer", kD, "0", true), "7F");
  EXPECT_EQ(key_hex_text("integer", kD, "-1", true), "BF F0 00 00 00 00 00 00");
  EXPECT_EQ(key_hex_text("integer", kD, "1000000", true), "3E D1 7B 7F");
  EXPECT_EQ(key_hex_text("bigint", kR, "1000000", true), "3F A6 FF FF FF FF FF FF 7F");
  EXPECT_EQ(key_hex_text("varchar(5)", kT, "AB", true), "BE BD");
  EXPECT_EQ(key_hex_text("varchar(5)", kT, "", true), "DF");
  EXPECT_EQ(key_hex_text("double", kD, "-1e300", true), "FE FE 37 E4 3C 88 00 75 9C");
}

// compound keys
class KeysCompound : public ::testing::Test {
 protected:
  TypeSpec int_ = TypeSpec::parse("integer");
  TypeSpec str_ = TypeSpec::parse("varchar(20)");
  Segment i(int v) { return {&int_, kD, Value::exact(v)}; }
  Segment s(const char* v) { return {&str_, kT, Value::of_text(v)}; }
  Segment n_int() { return {&int_, kD, Value::null()}; }
  Segment n_str() { return {&str_, kT, Value::null()}; }
  std::string hex(std::vector<Segment> segs, bool desc = false, size_t n = 0, bool sw = false) {
    KeyBuffer kb;
    build_compound_key(segs, desc, kb, n, sw);
    return hex_bytes(kb.bytes());
  }
};

TEST_F(KeysCompound, IntAndText) {
  EXPECT_EQ(hex({i(1), s("AB")}), "02 BF F0 00 00 01 41 42");
}
TEST_F(KeysCompound, MillionAndLongText) {
  EXPECT_EQ(hex({i(1000000), s("ABCDEF")}), "02 C1 2E 84 80 01 41 42 43 44 01 45 46");
}
TEST_F(KeysCompound, ThreeInts) {
  EXPECT_EQ(hex({i(1), i(2), i(3)}), "03 BF F0 00 00 02 C0 00 00 00 01 C0 08");
}
TEST_F(KeysCompound, FullChunkThenText) {
  EXPECT_EQ(hex({s("ABCD"), s("E")}), "02 41 42 43 44 01 45");
}
TEST_F(KeysCompound, TextThenNull) {
  EXPECT_EQ(hex({s("A"), n_str()}), "02 41 00 00 00");
}
TEST_F(KeysCompound, TextThenEmpty) {
  EXPECT_EQ(hex({s("A"), s("")}), "02 41 00 00 00 01 20");
}
TEST_F(KeysCompound, NullThenText) {
  EXPECT_EQ(hex({n_str(), s("A")}), "01 41");
}
TEST_F(KeysCompound, AllNullIsEmpty) {
  EXPECT_EQ(hex({n_str(), n_str()}), "");
}
TEST_F(KeysCompound, DescendingIntAndText) {
  EXPECT_EQ(hex({i(1), s("AB")}, true), "FD 40 0F FF FF FE BE BD");
}
TEST_F(KeysCompound, DescendingAllNull) {
  EXPECT_EQ(hex({n_str(), n_str()}, true), "FD FF FF FF FF FE FF");
}
TEST_F(KeysCompound, DescendingIntAndNull) {
  EXPECT_EQ(hex({i(1000000), n_str()}, true), "FD 3E D1 7B 7F FE FF");
}
TEST_F(KeysCompound, SearchPrefixPadsLastSegment) {
  EXPECT_EQ(hex({i(1)}, false, 2), "02 BF F0 00 00");
}
TEST_F(KeysCompound, SearchStartingWithDoesNotPad) {
  EXPECT_EQ(hex({s("AB")}, false, 2, true), "02 41 42");
}

}  // namespace
}  // namespace pbtree
