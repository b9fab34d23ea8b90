// Column type names, key format rules, key length limits (docs/FORMAT.md §1.1) and strict value
// parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <string>

#include "util/bytes.h"

namespace pbtree {
namespace {

using ::testing::HasSubstr;

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const KeyError& e) {
    return e.what();
  }
  return "no error";
}

std::string parse_error(const char* type, std::string_view text) {
  return error_of([&] { parse_value(TypeSpec::parse(type), text); });
}

TEST(KeysTypeSpec, ParsesEveryType) {
  EXPECT_EQ(TypeSpec::parse("SMALLINT").type, ColumnType::Smallint);
  EXPECT_EQ(TypeSpec::parse("integer").type, ColumnType::Integer);
  EXPECT_EQ(TypeSpec::parse("BigInt").type, ColumnType::Bigint);
  EXPECT_EQ(TypeSpec::parse("int128").type, ColumnType::Int128);
  EXPECT_EQ(TypeSpec::parse("double").type, ColumnType::Double);
  EXPECT_EQ(TypeSpec::parse("double precision").type, ColumnType::Double);
}

TEST(KeysTypeSpec, NumericParameters) {
  const TypeSpec t = TypeSpec::parse("numeric(12, 2)");
  EXPECT_EQ(t.type, ColumnType::Numeric);
  EXPECT_EQ(t.precision, 12);
  EXPECT_EQ(t.scale, 2);
  EXPECT_EQ(t.name(), "numeric(12,2)");
}

TEST(KeysTypeSpec, NumericWithoutScaleAndDecimalSynonym) {
  EXPECT_EQ(TypeSpec::parse("numeric(5)").name(), "numeric(5,0)");
  EXPECT_EQ(TypeSpec::parse("DECIMAL(18,4)").name(), "numeric(18,4)");
}

TEST(KeysTypeSpec, VarcharLength) {
  const TypeSpec t = TypeSpec::parse("varchar(40)");
  EXPECT_EQ(t.length, 40);
  EXPECT_EQ(t.name(), "varchar(40)");
}

TEST(KeysTypeSpec, CanonicalNames) {
  for (const char* n : {"smallint", "integer", "bigint", "int128", "double"}) {
    EXPECT_EQ(TypeSpec::parse(n).name(), n);
  }
}

TEST(KeysTypeSpec, RejectsBadSpellings) {
  EXPECT_THAT(error_of([] { TypeSpec::parse("float"); }), HasSubstr("unknown column type 'float'"));
  EXPECT_THAT(error_of([] { TypeSpec::parse("numeric(39,2)"); }),
              HasSubstr("precision 39 out of range 1..38"));
  EXPECT_THAT(error_of([] { TypeSpec::parse("numeric(5,6)"); }),
              HasSubstr("scale 6 out of range 0..5"));
  EXPECT_THAT(error_of([] { TypeSpec::parse("varchar(0)"); }),
              HasSubstr("varchar length 0 out of range 1..32765"));
  EXPECT_THAT(error_of([] { TypeSpec::parse("varchar(40"); }), HasSubstr("malformed column type"));
  EXPECT_THAT(error_of([] { TypeSpec::parse("integer(4)"); }), HasSubstr("takes no parameters"));
}

TEST(KeysTypeSpec, StorageBits) {
  EXPECT_EQ(TypeSpec::parse("smallint").storage_bits(), 16);
  EXPECT_EQ(TypeSpec::parse("numeric(4,2)").storage_bits(), 16);
  EXPECT_EQ(TypeSpec::parse("numeric(9,2)").storage_bits(), 32);
  EXPECT_EQ(TypeSpec::parse("numeric(18,2)").storage_bits(), 64);
  EXPECT_EQ(TypeSpec::parse("numeric(19,2)").storage_bits(), 128);
  EXPECT_EQ(TypeSpec::parse("double").storage_bits(), 0);
}

TEST(KeysFormat, NamesRoundTrip) {
  for (KeyFormat f : {KeyFormat::Double, KeyFormat::RescaledDouble, KeyFormat::Decimal128,
                      KeyFormat::Bcd, KeyFormat::Text}) {
    EXPECT_EQ(parse_key_format(key_format_name(f)), f);
  }
  EXPECT_THAT(error_of([] { parse_key_format("dec"); }), HasSubstr("unknown key format 'dec'"));
}

TEST(KeysFormat, FirebirdDefaults) {
  EXPECT_EQ(default_key_format(TypeSpec::parse("smallint")), KeyFormat::Double);
  EXPECT_EQ(default_key_format(TypeSpec::parse("numeric(9,2)")), KeyFormat::Double);
  EXPECT_EQ(default_key_format(TypeSpec::parse("bigint")), KeyFormat::RescaledDouble);
  EXPECT_EQ(default_key_format(TypeSpec::parse("numeric(10,2)")), KeyFormat::RescaledDouble);
  EXPECT_EQ(default_key_format(TypeSpec::parse("int128")), KeyFormat::Bcd);
  EXPECT_EQ(default_key_format(TypeSpec::parse("numeric(19,0)")), KeyFormat::Bcd);
  EXPECT_EQ(default_key_format(TypeSpec::parse("double")), KeyFormat::Double);
  EXPECT_EQ(default_key_format(TypeSpec::parse("varchar(3)")), KeyFormat::Text);
}

TEST(KeysFormat, AllowedCombinations) {
  const TypeSpec i = TypeSpec::parse("integer"), b = TypeSpec::parse("bigint"),
                 h = TypeSpec::parse("int128");
  EXPECT_TRUE(key_format_allowed(i, KeyFormat::Decimal128));
  EXPECT_FALSE(key_format_allowed(i, KeyFormat::RescaledDouble));
  EXPECT_FALSE(key_format_allowed(b, KeyFormat::Double));
  EXPECT_TRUE(key_format_allowed(b, KeyFormat::Bcd));
  EXPECT_FALSE(key_format_allowed(h, KeyFormat::Decimal128));
  EXPECT_FALSE(key_format_allowed(TypeSpec::parse("double"), KeyFormat::Bcd));
  EXPECT_FALSE(key_format_allowed(TypeSpec::parse("varchar(3)"), KeyFormat::Double));
}

TEST(KeysFormat, CheckNamesTypeFormatAndAllowedList) {
  EXPECT_EQ(error_of([] { check_key_format(TypeSpec::parse("int128"), KeyFormat::Decimal128); }),
            "key format decimal128 cannot hold every value of int128; allowed: bcd");
  EXPECT_EQ(error_of([] { check_key_format(TypeSpec::parse("bigint"), KeyFormat::Double); }),
            "key format double cannot hold every value of bigint; allowed: rescaled-double, "
            "decimal128, bcd");
}

TEST(KeysLimits, MaxKeyLength) {
  EXPECT_EQ(max_key_length(TypeSpec::parse("integer"), KeyFormat::Double, false), 8u);
  EXPECT_EQ(max_key_length(TypeSpec::parse("bigint"), KeyFormat::RescaledDouble, true), 11u);
  EXPECT_EQ(max_key_length(TypeSpec::parse("bigint"), KeyFormat::Decimal128, false), 17u);
  EXPECT_EQ(max_key_length(TypeSpec::parse("int128"), KeyFormat::Bcd, false), 19u);
  EXPECT_EQ(max_key_length(TypeSpec::parse("varchar(40)"), KeyFormat::Text, true), 41u);
}

TEST(KeysLimits, KeyLengthBoundaryEveryPageSize) {
  for (uint32_t ps : {4096u, 8192u, 16384u, 32768u}) {
    EXPECT_EQ(key_length_limit(ps), ps / 4 - 1);
    EXPECT_NO_THROW(check_key_length(ps / 4 - 1, ps));
    EXPECT_THROW(check_key_length(ps / 4, ps), KeyError);
  }
  EXPECT_EQ(error_of([] { check_key_length(2048, 8192); }),
            "key size 2048 exceeds implementation restriction: keys must be shorter than "
            "page_size/4 = 2048 bytes (page size 8192)");
}

TEST(KeysLimits, LongestVarcharEveryPageSize) {
  // docs/FORMAT.md §1.1: page_size/4 - 9 bytes, ascending and descending.
  for (uint32_t ps : {4096u, 8192u, 16384u, 32768u}) {
    const uint32_t longest = ps / 4 - 9;
    for (bool desc : {false, true}) {
      TypeSpec ok = TypeSpec::parse("varchar(" + std::to_string(longest) + ")");
      TypeSpec bad = TypeSpec::parse("varchar(" + std::to_string(longest + 1) + ")");
      EXPECT_NO_THROW(check_index_key_limit(ok, KeyFormat::Text, desc, ps)) << ps;
      EXPECT_THROW(check_index_key_limit(bad, KeyFormat::Text, desc, ps), KeyError) << ps;
    }
  }
}

TEST(KeysLimits, LongestVarcharValues) {
  EXPECT_NO_THROW(
      check_index_key_limit(TypeSpec::parse("varchar(1015)"), KeyFormat::Text, false, 4096));
  EXPECT_NO_THROW(
      check_index_key_limit(TypeSpec::parse("varchar(2039)"), KeyFormat::Text, false, 8192));
  EXPECT_NO_THROW(
      check_index_key_limit(TypeSpec::parse("varchar(4087)"), KeyFormat::Text, false, 16384));
  EXPECT_NO_THROW(
      check_index_key_limit(TypeSpec::parse("varchar(8183)"), KeyFormat::Text, false, 32768));
}

TEST(KeysLimits, IndexLimitMessage) {
  EXPECT_EQ(error_of([] {
              check_index_key_limit(TypeSpec::parse("varchar(2040)"), KeyFormat::Text, false, 8192);
            }),
            "key size exceeds implementation restriction for an ascending index on "
            "varchar(2040) in format text: keys up to 2040 bytes plus the 1-byte NULL "
            "indicator, rounded up to 2048, must be below page_size/4 = 2048 bytes (page size "
            "8192)");
}

TEST(KeysLimits, NumericFormatsFitEveryPageSize) {
  EXPECT_NO_THROW(check_index_key_limit(TypeSpec::parse("int128"), KeyFormat::Bcd, true, 4096));
}

TEST(KeysParse, Integers) {
  EXPECT_EQ(parse_value(TypeSpec::parse("integer"), "-42").coefficient, -42);
  EXPECT_EQ(parse_value(TypeSpec::parse("integer"), "+7").coefficient, 7);
  EXPECT_EQ(parse_value(TypeSpec::parse("smallint"), "-32768").coefficient, -32768);
  EXPECT_EQ(parse_value(TypeSpec::parse("bigint"), "9223372036854775807").coefficient, INT64_MAX);
}

TEST(KeysParse, Int128FullRange) {
  const TypeSpec t = TypeSpec::parse("int128");
  const __int128 max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
  EXPECT_TRUE(parse_value(t, "170141183460469231731687303715884105727").coefficient == max);
  EXPECT_TRUE(parse_value(t, "-170141183460469231731687303715884105728").coefficient == -max - 1);
  EXPECT_EQ(parse_error("int128", "170141183460469231731687303715884105728"),
            "value 170141183460469231731687303715884105728 out of range for int128 "
            "(-170141183460469231731687303715884105728..170141183460469231731687303715884105727)");
  EXPECT_THROW(parse_value(t, "99999999999999999999999999999999999999999999"), KeyError);
}

TEST(KeysParse, IntegerRangeMessages) {
  EXPECT_EQ(parse_error("smallint", "40000"),
            "value 40000 out of range for smallint (-32768..32767)");
  EXPECT_EQ(parse_error("integer", "-2147483649"),
            "value -2147483649 out of range for integer (-2147483648..2147483647)");
  EXPECT_THAT(parse_error("bigint", "9223372036854775808"), HasSubstr("out of range for bigint"));
}

TEST(KeysParse, IntegerMalformedMessages) {
  EXPECT_EQ(parse_error("integer", "x1"),
            "malformed integer 'x1' for integer (expected an optional sign and decimal digits)");
  EXPECT_THAT(parse_error("integer", ""), HasSubstr("malformed integer ''"));
  EXPECT_THAT(parse_error("integer", "-"), HasSubstr("malformed integer '-'"));
  EXPECT_THAT(parse_error("integer", " 1"), HasSubstr("malformed integer ' 1'"));
}

// A control byte in a value is shown escaped, as the CSV reader shows one (util/bytes.h
// shown_text): a NUL would end the message where it is printed as a C string. A long value is
// cut after 80 bytes.
TEST(KeysParse, MessagesShowControlBytesEscapedAndLongValuesCut) {
  EXPECT_EQ(parse_error("bigint", std::string("ab\0c\x7f\n", 6)),
            "malformed integer 'ab\\x00c\\x7F\\x0A' for bigint (expected an optional sign and "
            "decimal digits)");
  EXPECT_EQ(parse_error("double", std::string(90, 'z')),
            "malformed double '" + std::string(80, 'z') + "...' for double");
}

TEST(KeysParse, IntegerRefusesFraction) {
  EXPECT_EQ(parse_error("integer", "1.0"),
            "value '1.0' is not an integer: integer takes whole numbers only");
  EXPECT_THAT(parse_error("bigint", "1e3"), HasSubstr("not an integer"));
}

TEST(KeysParse, NumericPadsFraction) {
  const Value v = parse_value(TypeSpec::parse("numeric(9,2)"), "1.5");
  EXPECT_EQ(v.coefficient, 150);
  EXPECT_EQ(v.scale, 2);
  EXPECT_EQ(parse_value(TypeSpec::parse("numeric(9,2)"), "-.5").coefficient, -50);
  EXPECT_EQ(parse_value(TypeSpec::parse("numeric(9,2)"), "7").coefficient, 700);
}

TEST(KeysParse, NumericExtraZerosAccepted) {
  EXPECT_EQ(parse_value(TypeSpec::parse("numeric(9,2)"), "1.230").coefficient, 123);
}

TEST(KeysParse, NumericExtraDigitsRefused) {
  EXPECT_EQ(parse_error("numeric(9,2)", "1.234"),
            "value 1.234 has more than 2 fraction digits for numeric(9,2) (extra fraction "
            "digits must be zeros)");
}

TEST(KeysParse, NumericPrecisionLimit) {
  EXPECT_EQ(parse_value(TypeSpec::parse("numeric(5,2)"), "999.99").coefficient, 99999);
  EXPECT_EQ(parse_value(TypeSpec::parse("numeric(5,2)"), "000999.99").coefficient, 99999);
  EXPECT_EQ(parse_error("numeric(5,2)", "1000"),
            "value 1000 out of range for numeric(5,2): at most 3 digits before the decimal "
            "point");
}

TEST(KeysParse, Numeric38Full) {
  const Value v =
      parse_value(TypeSpec::parse("numeric(38,0)"), "-99999999999999999999999999999999999999");
  EXPECT_EQ(static_cast<long double>(v.coefficient), -1e38L);
  EXPECT_THROW(
      parse_value(TypeSpec::parse("numeric(38,0)"), "100000000000000000000000000000000000000"),
      KeyError);
}

TEST(KeysParse, NumericMalformed) {
  EXPECT_THAT(parse_error("numeric(9,2)", "1.2.3"), HasSubstr("malformed number '1.2.3'"));
  EXPECT_THAT(parse_error("numeric(9,2)", "."), HasSubstr("malformed number '.'"));
  EXPECT_THAT(parse_error("numeric(9,2)", "1e2"), HasSubstr("malformed number '1e2'"));
}

TEST(KeysParse, DoubleValues) {
  const TypeSpec t = TypeSpec::parse("double");
  EXPECT_EQ(parse_value(t, "0.5").dbl, 0.5);
  EXPECT_EQ(parse_value(t, "+2.5e3").dbl, 2500.0);
  EXPECT_EQ(parse_value(t, "inf").dbl, HUGE_VAL);
  EXPECT_EQ(parse_value(t, "-inf").dbl, -HUGE_VAL);
  EXPECT_TRUE(std::signbit(parse_value(t, "-0").dbl));
}

TEST(KeysParse, DoubleNaNRefused) {
  EXPECT_EQ(parse_error("double", "nan"),
            "NaN ('nan') is not a valid value for double: index keys need ordered values");
  EXPECT_THROW(parse_value(TypeSpec::parse("double"), "-NaN"), KeyError);
}

TEST(KeysParse, DoubleMalformedAndOutOfRange) {
  EXPECT_EQ(parse_error("double", "1.5x"), "malformed double '1.5x' for double");
  EXPECT_EQ(parse_error("double", ""), "malformed double '' for double");
  EXPECT_EQ(parse_error("double", "1e999"), "value 1e999 out of range for double");
}

TEST(KeysParse, VarcharLength) {
  EXPECT_EQ(parse_value(TypeSpec::parse("varchar(3)"), "abc").text, "abc");
  EXPECT_EQ(parse_error("varchar(3)", "abcd"), "value of 4 bytes is too long for varchar(3)");
}

TEST(KeysCompare, AscendingPrefixSortsFirst) {
  const uint8_t a[] = {0x41}, b[] = {0x41, 0x42};
  EXPECT_EQ(compare_keys(a, b, false), -1);
  EXPECT_EQ(compare_keys(b, a, false), 1);
  EXPECT_EQ(compare_keys(a, a, false), 0);
}

TEST(KeysCompare, DescendingPrefixSortsLast) {
  const uint8_t a[] = {0x41}, b[] = {0x41, 0x42}, c[] = {0x42};
  EXPECT_EQ(compare_keys(a, b, true), 1);
  EXPECT_EQ(compare_keys(b, a, true), -1);
  EXPECT_EQ(compare_keys(b, c, true), -1);
}

TEST(KeysHex, UppercaseSingleSpaces) {
  const uint8_t a[] = {0xC1, 0x2E, 0x84, 0x80};
  EXPECT_EQ(hex_bytes(a), "C1 2E 84 80");
  EXPECT_EQ(hex_bytes({}), "");
}

}  // namespace
}  // namespace pbtree
