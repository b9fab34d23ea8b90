// Known traps of normalized keys: signed zero, NaN and infinities, int64 around 2^53 and at
// the make_int64_key rescaling edges, int128 beyond 34 digits, equal values at different
// scales, trailing blanks, cross-type search values; and key_to_text decoding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "util/bytes.h"

namespace pbtree {
namespace {

using ::testing::HasSubstr;

std::string key_of(const TypeSpec& t, KeyFormat f, const Value& v, bool desc = false) {
  KeyBuffer kb;
  build_key(t, f, v, desc, kb);
  return std::string(reinterpret_cast<const char*>(kb.data), kb.length);
}

std::string hex_of(const TypeSpec& t, KeyFormat f, const Value& v, bool desc = false) {
  KeyBuffer kb;
  build_key(t, f, v, desc, kb);
  return hex_bytes(kb.bytes());
}

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const KeyError& e) {
    return e.what();
  }
  return "no error";
}

/// Asserts that the keys of `values` (ascending in value) are strictly increasing, and
/// strictly decreasing in the descending index.
void expect_strictly_ordered(const TypeSpec& t, KeyFormat f, const std::vector<Value>& values) {
  for (size_t i = 1; i < values.size(); ++i) {
    const std::string a = key_of(t, f, values[i - 1]), b = key_of(t, f, values[i]);
    EXPECT_LT(compare_keys(bytes(a), bytes(b), false), 0)
        << key_format_name(f) << " #" << i << ": " << hex_bytes(bytes(a)) << " vs "
        << hex_bytes(bytes(b));
    const std::string da = key_of(t, f, values[i - 1], true), db = key_of(t, f, values[i], true);
    EXPECT_GT(compare_keys(bytes(da), bytes(db), true), 0) << key_format_name(f) << " #" << i;
  }
}

const TypeSpec kDouble = TypeSpec::parse("double");
const TypeSpec kInteger = TypeSpec::parse("integer");
const TypeSpec kBigint = TypeSpec::parse("bigint");
const TypeSpec kInt128 = TypeSpec::parse("int128");

TEST(KeysTraps, NegativeZeroSameKeyAsZero) {
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::of_double(-0.0)), "80");
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::of_double(-0.0), true), "7F");
  EXPECT_EQ(hex_of(kBigint, KeyFormat::Decimal128, Value::of_double(-0.0)), "30 42");
  EXPECT_EQ(hex_of(kInt128, KeyFormat::Bcd, Value::of_double(-0.0)), "01 02");
}

TEST(KeysTraps, NaNRefusedWithClearError) {
  const Value nan = Value::of_double(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(error_of([&] { key_of(kDouble, KeyFormat::Double, nan); }),
            "NaN cannot be stored in an index key (column type double)");
  EXPECT_EQ(error_of([&] { key_of(kInt128, KeyFormat::Bcd, nan); }),
            "NaN cannot be stored in a bcd key (column type int128)");
}

TEST(KeysTraps, InfinitiesAtTheEnds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double mx = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  expect_strictly_ordered(kDouble, KeyFormat::Double,
                          {Value::of_double(-inf), Value::of_double(-mx), Value::of_double(-1),
                           Value::of_double(-tiny), Value::of_double(0), Value::of_double(tiny),
                           Value::of_double(1), Value::of_double(mx), Value::of_double(inf)});
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::of_double(inf)), "FF F0");
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::of_double(-inf)), "00 0F FF FF FF FF FF FF");
  // Descending: -inf's raw key starts with 00, so it is escaped and still sorts before NULL.
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::of_double(-inf), true),
            "FE FF F0 00 00 00 00 00 00");
}

TEST(KeysTraps, Int64Around2p53) {
  const int64_t p = int64_t(1) << 53;
  std::vector<Value> values;
  for (int64_t v : {-p - 1, -p, -p + 1, p - 1, p, p + 1}) values.push_back(Value::exact(v));
  for (KeyFormat f : {KeyFormat::RescaledDouble, KeyFormat::Decimal128, KeyFormat::Bcd}) {
    expect_strictly_ordered(kBigint, f, values);
  }
}

constexpr int64_t kLimits[19] = {922337203685470000LL,
                                 92233720368547000LL,
                                 9223372036854700LL,
                                 922337203685470LL,
                                 92233720368548LL,
                                 9223372036855LL,
                                 922337203686LL,
                                 92233720369LL,
                                 9223372035LL,
                                 922337204LL,
                                 92233721LL,
                                 9223373LL,
                                 922338LL,
                                 92234LL,
                                 9224LL,
                                 923LL,
                                 93LL,
                                 10LL,
                                 1LL};

std::vector<Value> rescaling_edges(int scale) {
  std::vector<int64_t> v;
  for (int64_t l : kLimits) {
    for (int64_t d : {-1, 0, 1}) {
      v.push_back(l + d);
      v.push_back(-(l + d));
    }
  }
  v.push_back(INT64_MAX);
  v.push_back(INT64_MAX - 1);
  v.push_back(INT64_MIN);
  v.push_back(INT64_MIN + 1);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::vector<Value> out;
  for (int64_t x : v) out.push_back(Value::exact(x, static_cast<uint8_t>(scale)));
  return out;
}

TEST(KeysTraps, RescalingTableEdgesBigint) {
  expect_strictly_ordered(kBigint, KeyFormat::RescaledDouble, rescaling_edges(0));
}

TEST(KeysTraps, RescalingTableEdgesScaledNumeric) {
  for (int s : {2, 9, 18}) {
    const TypeSpec t = TypeSpec::parse("numeric(18," + std::to_string(s) + ")");
    expect_strictly_ordered(t, KeyFormat::RescaledDouble, rescaling_edges(s));
  }
}

TEST(KeysTraps, RescalingTableEdgesDecimalFormats) {
  expect_strictly_ordered(kBigint, KeyFormat::Decimal128, rescaling_edges(0));
  expect_strictly_ordered(kBigint, KeyFormat::Bcd, rescaling_edges(0));
}

TEST(KeysTraps, Int128BeyondDecimal34DigitsInBcd) {
  const __int128 e38 = static_cast<__int128>(10000000000000000000ull) * 10000000000000000000ull;
  expect_strictly_ordered(kInt128, KeyFormat::Bcd,
                          {Value::exact(-e38 - 1), Value::exact(-e38), Value::exact(-e38 + 1),
                           Value::exact(e38 - 1), Value::exact(e38), Value::exact(e38 + 1)});
  EXPECT_EQ(hex_of(kInt128, KeyFormat::Bcd, Value::exact(e38 + 1)),
            "01 83 19 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 40");
}

TEST(KeysTraps, Decimal128RefusesMoreThan34Digits) {
  const __int128 e35 = static_cast<__int128>(10000000000000000000ull) * 10000000000000000ull;
  EXPECT_EQ(hex_of(kInt128, KeyFormat::Decimal128, Value::exact(e35)), "48 65 19");
  EXPECT_EQ(error_of([&] { key_of(kInt128, KeyFormat::Decimal128, Value::exact(e35 + 1)); }),
            "value 100000000000000000000000000000000001 has more than 34 significant digits: a "
            "decimal128 key cannot hold it (column type int128)");
}

TEST(KeysTraps, EqualValuesDifferentScalesSmallNumeric) {
  const TypeSpec a = TypeSpec::parse("numeric(9,2)"), b = TypeSpec::parse("numeric(9,3)");
  for (KeyFormat f : {KeyFormat::Double, KeyFormat::Decimal128, KeyFormat::Bcd}) {
    EXPECT_EQ(hex_of(a, f, parse_value(a, "1.23")), hex_of(b, f, parse_value(b, "1.230")))
        << key_format_name(f);
  }
}

TEST(KeysTraps, EqualValuesDifferentScalesBigNumeric) {
  const TypeSpec a = TypeSpec::parse("numeric(18,2)"), b = TypeSpec::parse("numeric(18,3)");
  for (KeyFormat f : {KeyFormat::RescaledDouble, KeyFormat::Decimal128, KeyFormat::Bcd}) {
    EXPECT_EQ(hex_of(a, f, Value::exact(12345, 2)), hex_of(b, f, Value::exact(123450, 3)))
        << key_format_name(f);
  }
}

TEST(KeysTraps, SearchValueAtOtherScaleGivesColumnKey) {
  const TypeSpec t = TypeSpec::parse("numeric(18,2)");
  for (KeyFormat f : {KeyFormat::RescaledDouble, KeyFormat::Decimal128, KeyFormat::Bcd}) {
    EXPECT_EQ(hex_of(t, f, Value::exact(5)), hex_of(t, f, Value::exact(500, 2)));
    EXPECT_EQ(hex_of(t, f, Value::exact(50000, 4)), hex_of(t, f, Value::exact(500, 2)));
  }
  // A 19-digit bigint given with a scale maps to the column's scale-0 key.
  EXPECT_EQ(hex_of(kBigint, KeyFormat::RescaledDouble,
                   Value::exact(static_cast<__int128>(9223372036854700001LL) * 10, 1)),
            hex_of(kBigint, KeyFormat::RescaledDouble, Value::exact(9223372036854700001LL)));
}

TEST(KeysTraps, TrailingBlanksInTextKeys) {
  const TypeSpec t = TypeSpec::parse("varchar(10)");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text("A   ")), "41");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text("   ")), "20");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text(" A ")), "20 41");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text("A\t")), "41 09");
}

TEST(KeysTraps, TextDescendingEscape) {
  const TypeSpec t = TypeSpec::parse("varchar(10)");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text(std::string_view("\x00", 1)), true), "FE FF");
  EXPECT_EQ(hex_of(t, KeyFormat::Text, Value::of_text("\x01"), true), "FE FE");
}

TEST(KeysTraps, IntegerSearchFindsStoredDouble) {
  EXPECT_EQ(hex_of(kDouble, KeyFormat::Double, Value::exact(5)),
            hex_of(kDouble, KeyFormat::Double, Value::of_double(5.0)));
  EXPECT_EQ(hex_of(kInt128, KeyFormat::Bcd, Value::of_double(5.0)),
            hex_of(kInt128, KeyFormat::Bcd, Value::exact(5)));
  EXPECT_EQ(hex_of(kBigint, KeyFormat::RescaledDouble, Value::of_double(-7.0)),
            hex_of(kBigint, KeyFormat::RescaledDouble, Value::exact(-7)));
}

TEST(KeysTraps, DoubleToExactFormatMustBeIntegralAndInRange) {
  EXPECT_EQ(error_of([] { key_of(kBigint, KeyFormat::Bcd, Value::of_double(5.5)); }),
            "double value 5.5 is not an integer: a bcd key for bigint needs an exact value");
  EXPECT_EQ(error_of([] { key_of(kInteger, KeyFormat::Decimal128, Value::of_double(1e20)); }),
            "double value 1e+20 out of range for integer");
  EXPECT_THAT(error_of([] {
                key_of(kBigint, KeyFormat::RescaledDouble,
                       Value::of_double(std::numeric_limits<double>::infinity()));
              }),
              HasSubstr("is not an integer"));
}

TEST(KeysTraps, WrongValueKindRefused) {
  EXPECT_EQ(error_of([] { key_of(kInteger, KeyFormat::Double, Value::of_text("5")); }),
            "a text value cannot be stored in a double key (column type integer)");
  const TypeSpec t = TypeSpec::parse("varchar(4)");
  EXPECT_EQ(error_of([&] { key_of(t, KeyFormat::Text, Value::exact(5)); }),
            "a numeric value cannot be stored in a text key (column type varchar(4))");
}

TEST(KeysTraps, RescaledRefusesCoefficientBeyondInt64) {
  EXPECT_THAT(error_of([] {
                key_of(kBigint, KeyFormat::RescaledDouble,
                       Value::exact(static_cast<__int128>(INT64_MAX) + 1));
              }),
              HasSubstr("cannot be stored in a rescaled-double key"));
}

TEST(KeysTraps, TextLongerThanKeyBufferRefused) {
  const std::string big(KeyBuffer::kCapacity + 1, 'x');
  EXPECT_THAT(error_of([&] {
                key_of(TypeSpec::parse("varchar(9000)"), KeyFormat::Text, Value::of_text(big));
              }),
              HasSubstr("too long for a key"));
}

// key_to_text

std::string text_of(const char* type, KeyFormat f, const char* value, bool desc = false) {
  const TypeSpec t = TypeSpec::parse(type);
  KeyBuffer kb;
  build_key(t, f, parse_value(t, value), desc, kb);
  return key_to_text(t, f, desc, kb.bytes());
}

TEST(KeysDecode, DoubleKeyOfIntegerPrintsInteger) {
  EXPECT_EQ(text_of("integer", KeyFormat::Double, "5"), "5");
  EXPECT_EQ(text_of("integer", KeyFormat::Double, "-2147483648"), "-2147483648");
}

TEST(KeysDecode, DoubleKeyOfNumericKeepsScale) {
  EXPECT_EQ(text_of("numeric(9,2)", KeyFormat::Double, "1.23"), "1.23");
  EXPECT_EQ(text_of("numeric(9,2)", KeyFormat::Double, "5"), "5.00");
  EXPECT_EQ(text_of("numeric(9,3)", KeyFormat::Double, "-0.001"), "-0.001");
}

TEST(KeysDecode, DoubleShortestRoundTrip) {
  EXPECT_EQ(text_of("double", KeyFormat::Double, "0.1"), "0.1");
  EXPECT_EQ(text_of("double", KeyFormat::Double, "-1e300", true), "-1e+300");
  EXPECT_EQ(text_of("double", KeyFormat::Double, "-inf", true), "-inf");
  EXPECT_EQ(text_of("double", KeyFormat::Double, "-0"), "0");
}

TEST(KeysDecode, RescaledExact) {
  EXPECT_EQ(text_of("bigint", KeyFormat::RescaledDouble, "9007199254740993"), "9007199254740993");
  EXPECT_EQ(text_of("bigint", KeyFormat::RescaledDouble, "-9223372036854775808", true),
            "-9223372036854775808");
  EXPECT_EQ(text_of("numeric(18,2)", KeyFormat::RescaledDouble, "1"), "1.00");
  EXPECT_EQ(text_of("numeric(18,2)", KeyFormat::RescaledDouble, "0"), "0.00");
}

TEST(KeysDecode, DecimalFormatsExact) {
  EXPECT_EQ(text_of("numeric(18,1)", KeyFormat::Decimal128, "-1.5"), "-1.5");
  EXPECT_EQ(text_of("int128", KeyFormat::Bcd, "-170141183460469231731687303715884105728", true),
            "-170141183460469231731687303715884105728");
  EXPECT_EQ(text_of("numeric(38,10)", KeyFormat::Bcd, "-12.5"), "-12.5000000000");
}

TEST(KeysDecode, TextAndNull) {
  EXPECT_EQ(text_of("varchar(8)", KeyFormat::Text, "AB  "), "AB");
  EXPECT_EQ(text_of("varchar(8)", KeyFormat::Text, "", true), "");
  const TypeSpec t = TypeSpec::parse("integer");
  EXPECT_EQ(key_to_text(t, KeyFormat::Double, false, {}), "NULL");
  const uint8_t ff[] = {0xFF};
  EXPECT_EQ(key_to_text(t, KeyFormat::Double, true, ff), "NULL");
}

TEST(KeysDecode, GarbageDoubleKey) {
  const uint8_t negzero[] = {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(error_of([&] { key_to_text(kInteger, KeyFormat::Double, false, negzero); }),
            "corrupt double key for integer: 7F FF FF FF FF FF FF FF (no double encodes to it)");
  const uint8_t nine[] = {0xC0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_THROW(key_to_text(kInteger, KeyFormat::Double, false, nine), KeyError);
}

TEST(KeysDecode, GarbageDecimalKeys) {
  const uint8_t group_over_999[] = {0x01, 0x5D, 0xFF, 0xC0};
  EXPECT_THROW(key_to_text(kInt128, KeyFormat::Bcd, false, group_over_999), KeyError);
  const uint8_t zero_with_digits[] = {0x01, 0x02, 0x19};
  EXPECT_THROW(key_to_text(kInt128, KeyFormat::Bcd, false, zero_with_digits), KeyError);
  const uint8_t leading_zero_digit[] = {0x48, 0x42, 0x00, 0x40};
  EXPECT_THROW(key_to_text(kBigint, KeyFormat::Decimal128, false, leading_zero_digit), KeyError);
}

TEST(KeysDecode, GarbageRescaledAndTextKeys) {
  const uint8_t short_key[] = {0x12, 0x34};
  EXPECT_THROW(key_to_text(kBigint, KeyFormat::RescaledDouble, false, short_key), KeyError);
  const uint8_t off_grid[] = {0xC0, 0x59, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x80};
  EXPECT_THROW(key_to_text(kBigint, KeyFormat::RescaledDouble, false, off_grid), KeyError);
  const uint8_t trailing_space[] = {0x41, 0x20};
  EXPECT_THROW(key_to_text(TypeSpec::parse("varchar(4)"), KeyFormat::Text, false, trailing_space),
               KeyError);
}

TEST(KeysDecode, GarbageDescendingEscape) {
  const uint8_t unescaped[] = {0xFF, 0xFF};  // un-inverted 00 00: no escape byte
  EXPECT_THROW(key_to_text(kInt128, KeyFormat::Bcd, true, unescaped), KeyError);
  EXPECT_THROW(key_to_text(kInt128, KeyFormat::Bcd, true, {}), KeyError);
}

}  // namespace
}  // namespace pbtree
