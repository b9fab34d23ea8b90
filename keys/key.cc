// Keys layer outside the hot path: column type and key format names, the format/type rules
// and key length limits (src/jrd/dfw.epp, src/jrd/idx.cpp, src/jrd/Database.h of Firebird
// v5.0.4). Strict value parsing is keys/value_parse.cc, stored keys back to text
// keys/key_text.cc; the key bytes themselves are built in keys/key_build.cc (layouts there).
#include <fmt/format.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include "keys/key_internal.h"
#include "util/bytes.h"

namespace pbtree {

using namespace keys_internal;

namespace keys_internal {

std::string i128_to_string(i128 v) {
  char buf[48];
  char* p = buf + sizeof buf;
  u128 u = magnitude(v);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  return std::string(p, buf + sizeof buf);
}

std::string decimal_to_string(i128 coefficient, int scale, int min_fraction) {
  // Digits of |coefficient|, least significant first.
  char rev[48];
  size_t nd = 0;
  u128 u = magnitude(coefficient);
  do {
    rev[nd++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  const size_t fmin = static_cast<size_t>(std::max(min_fraction, 0));
  // Fraction digits actually needed: scale minus the coefficient's trailing zeros.
  size_t frac = scale > 0 ? static_cast<size_t>(scale) : 0;
  size_t skip = 0;  // trailing fraction zeros not printed
  while (frac - skip > fmin && skip < nd && rev[skip] == '0') ++skip;
  if (skip == nd) skip = frac > fmin ? frac - fmin : 0;  // coefficient 0
  char buf[128];  // at most 1 + 39 digits + 38 scale zeros + '.' + fraction digits
  char* o = buf;
  if (coefficient < 0) *o++ = '-';
  // Integer part: digits at positions >= frac (position = power of ten + scale).
  if (nd > frac) {
    for (size_t i = nd; i-- > frac;) *o++ = rev[i];
    if (scale < 0 && coefficient != 0) {
      for (int i = 0; i < -scale && o < buf + 80; ++i) *o++ = '0';
    }
  } else {
    *o++ = '0';
  }
  const size_t shown = frac - skip;
  if (shown > 0 || fmin > 0) {
    *o++ = '.';
    for (size_t pos = frac; pos-- > skip;) *o++ = pos < nd ? rev[pos] : '0';
    for (size_t i = shown; i < fmin && o < buf + sizeof buf; ++i) *o++ = '0';
  }
  std::string out(buf, o);
  return out;
}

}  // namespace keys_internal

namespace {

std::string lower_trimmed(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string s(text.substr(b, e - b));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Reads "(a)" or "(a,b)" (spaces allowed) from s at pos; returns the count of numbers read.
int parse_args(std::string_view s, size_t pos, long& a, long& b, std::string_view whole) {
  auto bad = [&]() -> KeyError {
    return KeyError(
        fmt::format("malformed column type '{}' (expected e.g. numeric(12,2), "
                    "varchar(40))",
                    whole));
  };
  auto skip = [&] {
    while (pos < s.size() && s[pos] == ' ') ++pos;
  };
  auto number = [&](long& out) {
    skip();
    const size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) && pos - start < 6) {
      ++pos;
    }
    if (pos == start || (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))) {
      throw bad();
    }
    out = std::stol(std::string(s.substr(start, pos - start)));
    skip();
  };
  skip();
  if (pos >= s.size() || s[pos] != '(') throw bad();
  ++pos;
  number(a);
  int count = 1;
  if (pos < s.size() && s[pos] == ',') {
    ++pos;
    number(b);
    count = 2;
  }
  if (pos >= s.size() || s[pos] != ')') throw bad();
  ++pos;
  skip();
  if (pos != s.size()) throw bad();
  return count;
}

enum class Width { Small, Int64, Int128, Double, Text };

/// The class of values a type holds, for the key format rules.
Width width_of(const TypeSpec& t) {
  switch (t.type) {
    case ColumnType::Smallint:
    case ColumnType::Integer:
      return Width::Small;
    case ColumnType::Bigint:
      return Width::Int64;
    case ColumnType::Int128:
      return Width::Int128;
    case ColumnType::Double:
      return Width::Double;
    case ColumnType::Varchar:
      return Width::Text;
    case ColumnType::Numeric:
      return t.precision <= 9 ? Width::Small : t.precision <= 18 ? Width::Int64 : Width::Int128;
  }
  return Width::Text;
}

}  // namespace

TypeSpec TypeSpec::parse(std::string_view text) {
  const std::string s = lower_trimmed(text);
  size_t pos = 0;
  while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])))) ++pos;
  const std::string word = s.substr(0, pos);
  std::string_view rest = std::string_view(s).substr(pos);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  TypeSpec t;
  auto simple = [&](ColumnType ct) {
    if (!rest.empty()) {
      throw KeyError(fmt::format("malformed column type '{}': {} takes no parameters", text, word));
    }
    t.type = ct;
    return t;
  };
  if (word == "smallint") return simple(ColumnType::Smallint);
  if (word == "integer" || word == "int") return simple(ColumnType::Integer);
  if (word == "bigint") return simple(ColumnType::Bigint);
  if (word == "int128") return simple(ColumnType::Int128);
  if (word == "double") {
    if (rest == "precision") rest = {};
    return simple(ColumnType::Double);
  }
  if (word == "numeric" || word == "decimal") {
    long p = 0, sc = 0;
    parse_args(s, pos, p, sc, text);
    if (p < 1 || p > 38) {
      throw KeyError(fmt::format("precision {} out of range 1..38 in '{}'", p, text));
    }
    if (sc < 0 || sc > p) {
      throw KeyError(fmt::format("scale {} out of range 0..{} in '{}'", sc, p, text));
    }
    t.type = ColumnType::Numeric;
    t.precision = static_cast<uint8_t>(p);
    t.scale = static_cast<uint8_t>(sc);
    return t;
  }
  if (word == "varchar") {
    long n = 0, unused = 0;
    if (parse_args(s, pos, n, unused, text) != 1) {
      throw KeyError(fmt::format("malformed column type '{}': varchar takes one length", text));
    }
    if (n < 1 || n > 32765) {
      throw KeyError(fmt::format("varchar length {} out of range 1..32765 in '{}'", n, text));
    }
    t.type = ColumnType::Varchar;
    t.length = static_cast<uint16_t>(n);
    return t;
  }
  throw KeyError(
      fmt::format("unknown column type '{}' (expected smallint, integer, bigint, "
                  "int128, double, numeric(P,S), varchar(N))",
                  text));
}

std::string TypeSpec::name() const {
  switch (type) {
    case ColumnType::Smallint:
      return "smallint";
    case ColumnType::Integer:
      return "integer";
    case ColumnType::Bigint:
      return "bigint";
    case ColumnType::Int128:
      return "int128";
    case ColumnType::Double:
      return "double";
    case ColumnType::Numeric:
      return fmt::format("numeric({},{})", precision, scale);
    case ColumnType::Varchar:
      return fmt::format("varchar({})", length);
  }
  return fmt::format("unknown type {}", static_cast<int>(type));
}

int TypeSpec::storage_bits() const {
  switch (type) {
    case ColumnType::Smallint:
      return 16;
    case ColumnType::Integer:
      return 32;
    case ColumnType::Bigint:
      return 64;
    case ColumnType::Int128:
      return 128;
    case ColumnType::Numeric:
      return precision <= 4 ? 16 : precision <= 9 ? 32 : precision <= 18 ? 64 : 128;
    case ColumnType::Double:
    case ColumnType::Varchar:
      return 0;
  }
  return 0;
}

KeyFormat parse_key_format(std::string_view name) {
  const std::string s = lower_trimmed(name);
  if (s == "double") return KeyFormat::Double;
  if (s == "rescaled-double") return KeyFormat::RescaledDouble;
  if (s == "decimal128") return KeyFormat::Decimal128;
  if (s == "bcd") return KeyFormat::Bcd;
  if (s == "text") return KeyFormat::Text;
  throw KeyError(
      fmt::format("unknown key format '{}' (expected double, rescaled-double, "
                  "decimal128, bcd, text)",
                  name));
}

std::string_view key_format_name(KeyFormat format) {
  switch (format) {
    case KeyFormat::Double:
      return "double";
    case KeyFormat::Text:
      return "text";
    case KeyFormat::RescaledDouble:
      return "rescaled-double";
    case KeyFormat::Decimal128:
      return "decimal128";
    case KeyFormat::Bcd:
      return "bcd";
    case KeyFormat::TypeDefault:
      return "default";
  }
  return "unknown";
}

KeyFormat default_key_format(const TypeSpec& type) {
  switch (width_of(type)) {
    case Width::Small:
    case Width::Double:
      return KeyFormat::Double;
    case Width::Int64:
      return KeyFormat::RescaledDouble;
    case Width::Int128:
      return KeyFormat::Bcd;
    case Width::Text:
      return KeyFormat::Text;
  }
  return KeyFormat::Text;
}

namespace {

std::string_view allowed_list(const TypeSpec& type) {
  switch (width_of(type)) {
    case Width::Small:
      return "double, decimal128, bcd";
    case Width::Int64:
      return "rescaled-double, decimal128, bcd";
    case Width::Int128:
      return "bcd";
    case Width::Double:
      return "double";
    case Width::Text:
      return "text";
  }
  return "";
}

}  // namespace

bool key_format_allowed(const TypeSpec& type, KeyFormat format) {
  switch (width_of(type)) {
    case Width::Small:
      return format == KeyFormat::Double || format == KeyFormat::Decimal128 ||
             format == KeyFormat::Bcd;
    case Width::Int64:
      return format == KeyFormat::RescaledDouble || format == KeyFormat::Decimal128 ||
             format == KeyFormat::Bcd;
    case Width::Int128:
      return format == KeyFormat::Bcd;
    case Width::Double:
      return format == KeyFormat::Double;
    case Width::Text:
      return format == KeyFormat::Text;
  }
  return false;
}

void check_key_format(const TypeSpec& type, KeyFormat format) {
  if (!key_format_allowed(type, format)) {
    throw KeyError(fmt::format("key format {} cannot hold every value of {}; allowed: {}",
                               key_format_name(format), type.name(), allowed_list(type)));
  }
}

size_t max_key_length(const TypeSpec& type, KeyFormat format, bool descending) {
  size_t n = 0;
  switch (format) {
    case KeyFormat::Double:
      n = 8;
      break;
    case KeyFormat::RescaledDouble:
      n = 10;
      break;
    case KeyFormat::Decimal128:
      n = 17;
      break;
    case KeyFormat::Bcd:
      n = 19;
      break;
    case KeyFormat::Text:
      n = type.type == ColumnType::Varchar ? type.length : 1;
      break;
    case KeyFormat::TypeDefault:
      return max_key_length(type, default_key_format(type), descending);
  }
  return n + (descending ? 1 : 0);
}

void check_key_length(size_t length, uint32_t page_size) {
  if (length >= page_size / 4) {
    throw KeyError(
        fmt::format("key size {} exceeds implementation restriction: keys must be "
                    "shorter than page_size/4 = {} bytes (page size {})",
                    length, page_size / 4, page_size));
  }
}

void check_index_key_limit(const TypeSpec& type, KeyFormat format, bool descending,
                           uint32_t page_size) {
  const size_t max_len = max_key_length(type, format, descending);
  const size_t with_null = max_len + (descending ? 0 : 1);
  const size_t rounded = (with_null + 7) / 8 * 8;
  if (rounded >= page_size / 4) {
    throw KeyError(fmt::format(
        "key size exceeds implementation restriction for a{} index on {} in format {}: keys "
        "up to {} bytes{}, rounded up to {}, must be below page_size/4 = {} bytes (page size "
        "{})",
        descending ? " descending" : "n ascending", type.name(), key_format_name(format), max_len,
        descending ? "" : " plus the 1-byte NULL indicator", rounded, page_size / 4, page_size));
  }
}

}  // namespace pbtree
