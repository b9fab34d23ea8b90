// The rows of the combination matrix (tests/cli/combination_matrix_test.cc), one generator for
// the test and for its Firebird 3 fixture (tests/support/matrix_rows_main.cc prints the SQL
// that tests/firebird/make_matrix_fixture.sh runs through isql-fb). A row holds one value per
// segment (one for a single-segment index). Segment 0 of row i of n carries the value of
// x = (37 i + 11) mod 101: x = 0 and x = 100 are the type's extremes (varchar: the empty string
// and 12 tildes), other x a spread of values with duplicates (about n / 101 rows per value),
// varchar values with a trailing space now and then (equal keys to the value without it).
// Segment j >= 1 of a compound index carries x = 25 ((i / 101 + (j - 1) (i mod 3)) mod 5): a
// few values per leading value, its extremes among them, so equal leading segments are ordered
// by the next one and some whole keys repeat. A NULL pattern then makes rows special: none,
// the first or last n / 10, all of them, or one row only (n = 1). A special row of a
// single-segment index is NULL (varchar: alternately NULL and the empty string); of a
// compound index, segment j of special row i is NULL (varchar: the empty string when i + j is
// odd) unless i + j = 2 mod 3, so whole-NULL keys and keys with a NULL first or later segment
// all occur. "one" is a lone all-NULL row; "one-empty" (types with a varchar segment only) a
// lone row with the empty string in every varchar segment and NULL in the others. Record
// numbers are row ordinals.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace pbtree::testing {

/// A column type, the key format the matrix builds it with, and the Firebird 3 SQL type of
/// its fixture table (nullptr: not a Firebird 3 type, no import). A compound index lists its
/// segments' types; each segment has its type's default key format (the CLI's only choice),
/// `type` and `format` are segment 0's, and there is no Firebird fixture.
struct MatrixType {
  const char* name;                   ///< case name
  const char* type;                   ///< pbtree --type (compound: segment 0's)
  const char* format;                 ///< pbtree --key-format (compound: segment 0's default)
  const char* fb3;                    ///< Firebird 3 column type, or nullptr
  const char* fb3_tag;                ///< fixture table suffix (one table per Firebird type)
  std::vector<const char*> segments;  ///< compound: every segment's --type; else empty

  bool compound() const { return !segments.empty(); }
  /// Every segment's type: `type` alone for a single-segment index.
  std::vector<std::string> segment_types() const {
    if (segments.empty()) return {type};
    return std::vector<std::string>(segments.begin(), segments.end());
  }
};

inline bool is_text_type(const std::string& type) {
  return type.rfind("varchar", 0) == 0;
}

/// True if some segment of `t` is a varchar (the empty string is a value of it).
inline bool has_text_segment(const MatrixType& t) {
  for (const std::string& s : t.segment_types()) {
    if (is_text_type(s)) return true;
  }
  return false;
}

/// Every (type, key format) pair that key_format_allowed() accepts for the matrix's types
/// (smallint, integer and numeric(P <= 9): double, decimal128, bcd; bigint and numeric(P <=
/// 18): rescaled-double, decimal128, bcd; int128 and numeric(P > 18): bcd; double: double;
/// varchar: text), then compound indexes.
inline const std::vector<MatrixType>& matrix_types() {
  static const std::vector<MatrixType> types{
      {"smallint/double", "smallint", "double", "smallint", "SMALLINT", {}},
      {"smallint/decimal128", "smallint", "decimal128", "smallint", "SMALLINT", {}},
      {"smallint/bcd", "smallint", "bcd", "smallint", "SMALLINT", {}},
      {"integer/double", "integer", "double", "integer", "INTEGER", {}},
      {"integer/decimal128", "integer", "decimal128", "integer", "INTEGER", {}},
      {"integer/bcd", "integer", "bcd", "integer", "INTEGER", {}},
      {"bigint/rescaled-double", "bigint", "rescaled-double", "bigint", "BIGINT", {}},
      {"bigint/decimal128", "bigint", "decimal128", "bigint", "BIGINT", {}},
      {"bigint/bcd", "bigint", "bcd", "bigint", "BIGINT", {}},
      {"int128/bcd", "int128", "bcd", nullptr, nullptr, {}},
      {"double/double", "double", "double", "double precision", "DOUBLE", {}},
      {"numeric(9,2)/double", "numeric(9,2)", "double", "numeric(9,2)", "NUM9", {}},
      {"numeric(9,2)/decimal128", "numeric(9,2)", "decimal128", "numeric(9,2)", "NUM9", {}},
      {"numeric(9,2)/bcd", "numeric(9,2)", "bcd", "numeric(9,2)", "NUM9", {}},
      {"numeric(18,3)/rescaled-double",
       "numeric(18,3)",
       "rescaled-double",
       "numeric(18,3)",
       "NUM18",
       {}},
      {"numeric(18,3)/decimal128", "numeric(18,3)", "decimal128", "numeric(18,3)", "NUM18", {}},
      {"numeric(18,3)/bcd", "numeric(18,3)", "bcd", "numeric(18,3)", "NUM18", {}},
      {"numeric(38,6)/bcd", "numeric(38,6)", "bcd", nullptr, nullptr, {}},
      {"varchar(12)/text", "varchar(12)", "text", "varchar(12) character set none", "VARCHAR", {}},
      {"(integer,varchar(12))", "integer", "double", nullptr, nullptr, {"integer", "varchar(12)"}},
      {"(varchar(12),bigint)", "varchar(12)", "text", nullptr, nullptr, {"varchar(12)", "bigint"}},
      {"(numeric(18,3),double,smallint)",
       "numeric(18,3)",
       "rescaled-double",
       nullptr,
       nullptr,
       {"numeric(18,3)", "double", "smallint"}},
      {"(varchar(12),int128,varchar(12))",
       "varchar(12)",
       "text",
       nullptr,
       nullptr,
       {"varchar(12)", "int128", "varchar(12)"}},
  };
  return types;
}

enum class NullPattern { None, First, Last, All, One, OneEmpty };
inline constexpr NullPattern kNullPatterns[] = {NullPattern::None, NullPattern::First,
                                                NullPattern::Last, NullPattern::All,
                                                NullPattern::One,  NullPattern::OneEmpty};
inline const char* null_pattern_name(NullPattern p) {
  switch (p) {
    case NullPattern::None:
      return "none";
    case NullPattern::First:
      return "first";
    case NullPattern::Last:
      return "last";
    case NullPattern::All:
      return "all";
    case NullPattern::One:
      return "one";
    case NullPattern::OneEmpty:
      return "one-empty";
  }
  return "?";
}
/// The pattern's part of a fixture table or index name: upper case, '-' as '_' ("ONE_EMPTY").
inline std::string null_pattern_tag(NullPattern p) {
  std::string tag = null_pattern_name(p);
  for (char& c : tag)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return tag;
}
/// True if `p` applies to `t`: "one-empty" only where the empty string is a value.
inline bool null_pattern_applies(const MatrixType& t, NullPattern p) {
  return p != NullPattern::OneEmpty || has_text_segment(t);
}

/// One value: nullopt is NULL; otherwise the value's text (may be empty: the empty string).
using MatrixValue = std::optional<std::string>;
/// One row: a value per segment.
using MatrixRow = std::vector<MatrixValue>;

namespace matrix_detail {

// m * 10^zeros written with `scale` digits after the point.
inline std::string decimal(long long m, int zeros, int scale) {
  std::string digits = std::to_string(std::llabs(m)) + std::string(zeros, '0');
  if (scale > 0) {
    if (digits.size() <= static_cast<size_t>(scale)) {
      digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return (m < 0 ? "-" : "") + digits;
}

inline std::string value_of(const std::string& type, int x) {
  const bool lo = x == 0, hi = x == 100;
  const long long m = x - 50;
  if (type == "smallint") return lo ? "-32768" : hi ? "32767" : std::to_string(m * 650);
  if (type == "integer") {
    return lo ? "-2147483648" : hi ? "2147483647" : std::to_string(m * 43000000);
  }
  if (type == "bigint") {
    return lo   ? "-9223372036854775808"
           : hi ? "9223372036854775807"
                : std::to_string(m * 180000000000000000LL);
  }
  if (type == "int128") {
    return lo   ? "-170141183460469231731687303715884105728"
           : hi ? "170141183460469231731687303715884105727"
                : decimal(m, 36, 0);
  }
  if (type == "double") {
    if (lo) return "-1.7976931348623157e308";
    if (hi) return "1.7976931348623157e308";
    return decimal(m * 375, 0, 3);  // m * 0.375: exact in binary
  }
  if (type == "numeric(9,2)") {
    return lo ? "-9999999.99" : hi ? "9999999.99" : decimal(m * 123457, 0, 2);
  }
  if (type == "numeric(18,3)") {
    return lo   ? "-999999999999999.999"
           : hi ? "999999999999999.999"
                : decimal(m * 12345678901234567LL, 0, 3);
  }
  if (type == "numeric(38,6)") {
    const std::string nines = "99999999999999999999999999999999.999999";
    return lo ? "-" + nines : hi ? nines : decimal(m, 31, 6);
  }
  // varchar(12)
  if (lo) return "";
  if (hi) return std::string(12, '~');
  std::string s(static_cast<size_t>(1 + x % 7), static_cast<char>('a' + x % 26));
  s += std::to_string(x);
  if (x % 10 == 5) s += ' ';
  return s;
}

}  // namespace matrix_detail

/// The rows of `type` with `pattern`: n rows (1 for NullPattern::One and OneEmpty).
/// `firebird`: the rows of the Firebird 3 fixture, where bigint's least value is
/// -9223372036854775807: Firebird 3.0.11 indexes -9223372036854775808 under the key of 0 (its
/// index scan for v < -9e18 finds none of those rows, a natural scan finds them), so `import`
/// reads them as 0. The other build paths keep the true least value.
inline std::vector<MatrixRow> matrix_rows(const MatrixType& type, NullPattern pattern, size_t n,
                                          bool firebird = false) {
  const std::vector<std::string> segs = type.segment_types();
  if (pattern == NullPattern::One) return {MatrixRow(segs.size())};
  if (pattern == NullPattern::OneEmpty) {
    MatrixRow row;
    for (const std::string& s : segs) {
      row.push_back(is_text_type(s) ? MatrixValue(std::string()) : MatrixValue());
    }
    return {row};
  }
  std::vector<MatrixRow> rows;
  rows.reserve(n);
  const size_t k = n / 10;
  for (size_t i = 0; i < n; ++i) {
    const bool special = pattern == NullPattern::All || (pattern == NullPattern::First && i < k) ||
                         (pattern == NullPattern::Last && i + k >= n);
    MatrixRow row;
    for (size_t j = 0; j < segs.size(); ++j) {
      const bool text = is_text_type(segs[j]);
      if (special && (segs.size() == 1 || (i + j) % 3 != 2)) {
        const bool empty = segs.size() == 1 ? i % 2 == 1 : (i + j) % 2 == 1;
        row.push_back(text && empty ? MatrixValue(std::string()) : MatrixValue());
        continue;
      }
      const size_t x = j == 0 ? (37 * i + 11) % 101 : 25 * ((i / 101 + (j - 1) * (i % 3)) % 5);
      std::string v = matrix_detail::value_of(segs[j], static_cast<int>(x));
      if (firebird && v == "-9223372036854775808") v = "-9223372036854775807";
      row.emplace_back(std::move(v));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Rows per index built by the matrix (enough for `load --memory 64K` to spill sorted runs).
inline constexpr size_t kMatrixRows = 1000;
/// Rows per table of the Firebird 3 fixture (tests/firebird/matrix_fb3.fdb.zst).
inline constexpr size_t kMatrixFixtureRows = 300;

}  // namespace pbtree::testing
