// Keys layer outside the hot path: column type and key format names, the format/type
// rules and key length limits (src/jrd/dfw.epp, src/jrd/idx.cpp, src/jrd/Database.h of
// Firebird v5.0.4), strict value parsing, key comparison, and decoding of stored keys back
// to value text. The key bytes themselves are built in keys/key_build.cc (layouts there).
#include "keys/key.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include "keys/key_internal.h"

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

[[noreturn]] void corrupt(const TypeSpec& type, KeyFormat format, std::span<const uint8_t> key,
                          std::string_view why) {
  throw KeyError(fmt::format("corrupt {} key for {}: {} ({})", key_format_name(format), type.name(),
                             hex_bytes(key), why));
}

/// 10^0 .. 10^60 as long doubles (exact up to 10^27), for estimating decoded coefficients.
constexpr auto kPow10Long = [] {
  std::array<long double, 61> t{};
  long double p = 1;
  for (long double& x : t) {
    x = p;
    p *= 10;
  }
  return t;
}();

/// Reads up to 8 bytes big-endian, zero-padded on the right.
uint64_t load_be64_padded(std::span<const uint8_t> b) {
  uint8_t tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, b.data(), std::min<size_t>(8, b.size()));
  uint64_t v = 0;
  for (uint8_t x : tmp) v = (v << 8) | x;
  return v;
}

double decode_key_double(uint64_t bits) {
  bits = (bits >> 63) ? (bits ^ (uint64_t(1) << 63)) : ~bits;
  return std::bit_cast<double>(bits);
}

std::string shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

bool same_key(const TypeSpec& type, KeyFormat format, bool descending, const Value& v,
              std::span<const uint8_t> key) {
  KeyBuffer kb;
  try {
    build_key(type, format, v, descending, kb);
  } catch (const KeyError&) {
    return false;
  }
  return kb.length == key.size() && std::memcmp(kb.data, key.data(), key.size()) == 0;
}

/// Exact value of a RescaledDouble key body (9..10 bytes, not inverted), verified by
/// re-encoding against `key` (the stored form). Returns false if none encodes to it.
bool decode_rescaled(const TypeSpec& type, bool descending, std::span<const uint8_t> body,
                     std::span<const uint8_t> key, Value& out) {
  if (body.size() < 9 || body.size() > 10) return false;
  const double d = decode_key_double(load_be64_padded(body.first(8)));
  if (!std::isfinite(d)) return false;
  const uint8_t b9 = body.size() == 10 ? body[9] : 0;
  const int s = static_cast<int16_t>(static_cast<uint16_t>(((body[8] ^ 0x80u) << 8) | b9));
  if (d == 0 && s == 0) {
    out = Value::exact(0, 0);
    return same_key(type, KeyFormat::RescaledDouble, descending, out, key);
  }
  for (int k = 0; k <= 56; ++k) {
    const long double est = static_cast<long double>(d) * kPow10Long[k];
    if (!(std::fabs(est) < 1e15L)) break;
    if (std::fabs(est) < 9e13L) continue;
    const int64_t x0 = static_cast<int64_t>(std::llround(est));
    for (int64_t x = x0 - 1; x <= x0 + 1; ++x) {
      if (static_cast<double>(x) / kPow10Double[k] != d) continue;
      if ((x > 0 && s < 0) || (x < 0 && s > 0)) continue;
      i128 q = static_cast<i128>(x) * 10000 + s;
      int scale = k;
      while (scale > kMaxScale && q % 10 == 0) {
        q /= 10;
        --scale;
      }
      if (scale > kMaxScale) continue;
      const Value v = Value::exact(q, static_cast<uint8_t>(scale));
      if (same_key(type, KeyFormat::RescaledDouble, descending, v, key)) {
        out = v;
        return true;
      }
    }
  }
  return false;
}

/// Exact value of a Decimal128/Bcd key body (not inverted); false if malformed.
bool decode_decimal(std::span<const uint8_t> body, int pmax, int bias, Value& out) {
  if (body.size() < 2) return false;
  const int e = (body[0] << 8) | body[1];
  const int zero_e = 2 * (bias + 1);
  if (e == zero_e) {
    if (body.size() != 2) return false;
    out = Value::exact(0, 0);
    return true;
  }
  const bool neg = e < zero_e;
  const int e1 = neg ? (bias + 1) - e : e - 3 * (bias + 1);
  const size_t nbits = (body.size() - 2) * 8;
  // Trailing-zero stripping may have cut the last group short: missing bits are zeros.
  const size_t ng = (nbits + 9) / 10;
  if (ng == 0 || ng > 14) return false;
  char digits[42];
  size_t nd = 0;
  for (size_t g = 0; g < ng; ++g) {
    unsigned v = 0;
    for (size_t bit = g * 10; bit < g * 10 + 10; ++bit) {
      const unsigned b = bit < nbits ? (body[2 + bit / 8] >> (7 - bit % 8)) & 1u : 0u;
      v = (v << 1) | b;
    }
    if (v > 999) return false;
    digits[nd++] = static_cast<char>('0' + v / 100);
    digits[nd++] = static_cast<char>('0' + v / 10 % 10);
    digits[nd++] = static_cast<char>('0' + v % 10);
  }
  while (nd > 0 && digits[nd - 1] == '0') --nd;
  if (nd == 0 || nd > 39) return false;
  if (neg) {
    // Undo the ten's complement: D = 10^nd - C.
    int borrow = 0;
    for (size_t i = nd; i-- > 0;) {
      int v = (i == nd - 1 ? 10 : 9) - (digits[i] - '0') - borrow;
      borrow = 0;
      if (v < 0) {
        v += 10;
        borrow = 1;
      }
      digits[i] = static_cast<char>('0' + v);
    }
    if (borrow) return false;
  }
  if (digits[0] == '0') return false;
  u128 c = 0;
  const u128 limit = (~u128(0) >> 1) + (neg ? 1 : 0);  // |int128 min| = 2^127
  for (size_t i = 0; i < nd; ++i) {
    const unsigned d = static_cast<unsigned>(digits[i] - '0');
    if (c > (limit - d) / 10) return false;
    c = c * 10 + d;
  }
  int x = e1 + pmax - static_cast<int>(nd);  // value = c × 10^x
  while (x > 0) {
    if (c > limit / 10) return false;
    c *= 10;
    --x;
  }
  if (-x > kMaxScale) return false;
  out = Value::exact(static_cast<i128>(neg ? u128(0) - c : c), static_cast<uint8_t>(-x));
  return true;
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

namespace {

/// True if `text` is a number in decimal or scientific notation (to tell "not an integer"
/// from "malformed" in messages).
bool looks_numeric(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double d;
  auto r = std::from_chars(text.data(), text.data() + text.size(), d);
  return r.ptr == text.data() + text.size() && r.ec == std::errc() && std::isfinite(d) &&
         !text.empty() &&
         (std::isdigit(static_cast<unsigned char>(text.back())) || text.back() == '.');
}

Value parse_integer(const TypeSpec& type, std::string_view text) {
  size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    neg = text[i] == '-';
    ++i;
  }
  if (i == text.size()) {
    throw KeyError(fmt::format("malformed integer '{}' for {}", text, type.name()));
  }
  u128 mag = 0;
  bool too_big = false;
  const u128 cap = u128(1) << 127;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      if (looks_numeric(text)) {
        throw KeyError(fmt::format("value '{}' is not an integer: {} takes whole numbers only",
                                   text, type.name()));
      }
      throw KeyError(
          fmt::format("malformed integer '{}' for {} (expected an optional sign and "
                      "decimal digits)",
                      text, type.name()));
    }
    const unsigned d = static_cast<unsigned>(c - '0');
    if (mag > (cap - d) / 10) too_big = true;
    if (!too_big) mag = mag * 10 + d;
  }
  i128 lo, hi;
  integral_range(type, lo, hi);
  const bool out = too_big || (neg ? mag > magnitude(lo) : mag > static_cast<u128>(hi));
  if (out) {
    throw KeyError(fmt::format("value {} out of range for {} ({}..{})", text, type.name(),
                               i128_to_string(lo), i128_to_string(hi)));
  }
  const i128 v = neg ? static_cast<i128>(u128(0) - mag) : static_cast<i128>(mag);
  return Value::exact(v, 0);
}

Value parse_numeric(const TypeSpec& type, std::string_view text) {
  const int p = type.precision, s = type.scale;
  size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    neg = text[i] == '-';
    ++i;
  }
  const size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  const size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < text.size() && text[i] == '.') {
    frac_begin = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    frac_end = i;
  }
  if (i != text.size() || (int_end == int_begin && frac_end == frac_begin)) {
    throw KeyError(
        fmt::format("malformed number '{}' for {} (expected an optional sign, "
                    "digits and an optional fraction)",
                    text, type.name()));
  }
  size_t first = int_begin;
  while (first < int_end && text[first] == '0') ++first;
  const size_t int_digits = int_end - first;
  if (int_digits > static_cast<size_t>(p - s)) {
    throw KeyError(
        fmt::format("value {} out of range for {}: at most {} digits before the "
                    "decimal point",
                    text, type.name(), p - s));
  }
  for (size_t j = frac_begin + static_cast<size_t>(s); j < frac_end; ++j) {
    if (text[j] != '0') {
      throw KeyError(
          fmt::format("value {} has more than {} fraction digits for {} (extra "
                      "fraction digits must be zeros)",
                      text, s, type.name()));
    }
  }
  u128 mag = 0;
  for (size_t j = first; j < int_end; ++j) mag = mag * 10 + static_cast<unsigned>(text[j] - '0');
  for (int j = 0; j < s; ++j) {
    const size_t at = frac_begin + static_cast<size_t>(j);
    mag = mag * 10 + (at < frac_end ? static_cast<unsigned>(text[at] - '0') : 0u);
  }
  const i128 v = neg ? -static_cast<i128>(mag) : static_cast<i128>(mag);
  return Value::exact(v, static_cast<uint8_t>(s));
}

Value parse_double(const TypeSpec& type, std::string_view text) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '+' && t.size() > 1 && t[1] != '-' && t[1] != '+') {
    t.remove_prefix(1);
  }
  double d = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), d);
  if (t.empty() || r.ptr != t.data() + t.size() ||
      (r.ec != std::errc() && r.ec != std::errc::result_out_of_range)) {
    throw KeyError(fmt::format("malformed double '{}' for {}", text, type.name()));
  }
  if (r.ec == std::errc::result_out_of_range) {
    throw KeyError(fmt::format("value {} out of range for {}", text, type.name()));
  }
  if (std::isnan(d)) {
    throw KeyError(
        fmt::format("NaN ('{}') is not a valid value for {}: index keys need ordered "
                    "values",
                    text, type.name()));
  }
  return Value::of_double(d);
}

}  // namespace

Value parse_value(const TypeSpec& type, std::string_view text) {
  switch (type.type) {
    case ColumnType::Smallint:
    case ColumnType::Integer:
    case ColumnType::Bigint:
    case ColumnType::Int128:
      return parse_integer(type, text);
    case ColumnType::Numeric:
      return parse_numeric(type, text);
    case ColumnType::Double:
      return parse_double(type, text);
    case ColumnType::Varchar:
      if (text.size() > type.length) {
        throw KeyError(
            fmt::format("value of {} bytes is too long for {}", text.size(), type.name()));
      }
      return Value::of_text(text);
  }
  throw KeyError(fmt::format("unknown column type {}", static_cast<int>(type.type)));
}

int compare_keys(std::span<const uint8_t> a, std::span<const uint8_t> b, bool descending) {
  const size_t n = std::min(a.size(), b.size());
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.size() == b.size()) return 0;
  const bool a_shorter = a.size() < b.size();
  return (a_shorter != descending) ? -1 : 1;
}

std::string key_to_text(const TypeSpec& type, KeyFormat format, bool descending,
                        std::span<const uint8_t> key) {
  if (key.size() > KeyBuffer::kCapacity) corrupt(type, format, key, "longer than 8192 bytes");
  if (key.empty()) {
    if (descending) corrupt(type, format, key, "empty descending key");
    return "NULL";
  }
  uint8_t buf[KeyBuffer::kCapacity];
  std::memcpy(buf, key.data(), key.size());
  size_t len = key.size();
  if (descending) {
    for (size_t i = 0; i < len; ++i) buf[i] = static_cast<uint8_t>(~buf[i]);
    if (len == 1 && buf[0] == 0) return "NULL";
  }
  std::span<const uint8_t> body(buf, len);
  if (descending && body[0] <= 1) {
    if (body[0] == 1 && body.size() >= 2 && body[1] <= 1) {
      body = body.subspan(1);
    } else {
      corrupt(type, format, key, "bad descending escape");
    }
  }
  std::string text;
  switch (format) {
    case KeyFormat::Text: {
      const std::string bytes(reinterpret_cast<const char*>(body.data()), body.size());
      const std::string_view value = (bytes == " ") ? std::string_view() : std::string_view(bytes);
      if (!same_key(type, format, descending, Value::of_text(value), key)) {
        corrupt(type, format, key, "not a canonical text key");
      }
      return std::string(value);
    }
    case KeyFormat::Double: {
      if (body.size() > 8) corrupt(type, format, key, "longer than 8 bytes");
      const double d = decode_key_double(load_be64_padded(body));
      if (std::isnan(d) || !same_key(type, format, descending, Value::of_double(d), key)) {
        corrupt(type, format, key, "no double encodes to it");
      }
      if (type.type == ColumnType::Double || !std::isfinite(d)) return shortest(d);
      if (type.type == ColumnType::Numeric && type.scale > 0) {
        const long double scaled = static_cast<long double>(d) * kPow10Long[type.scale];
        if (std::fabs(scaled) < 1e18L) {
          const int64_t c0 = std::llround(scaled);
          for (int64_t c = c0 - 1; c <= c0 + 1; ++c) {
            if (static_cast<double>(c) / kPow10Double[type.scale] == d) {
              return decimal_to_string(c, type.scale, type.scale);
            }
          }
        }
        return shortest(d);
      }
      if (d == std::trunc(d) && std::fabs(d) < 0x1p127) {
        return i128_to_string(static_cast<i128>(d));
      }
      return shortest(d);
    }
    case KeyFormat::RescaledDouble: {
      Value v;
      if (!decode_rescaled(type, descending, body, key, v)) {
        corrupt(type, format, key, "no exact value encodes to it");
      }
      // A value with more fraction digits than the column holds is no value of the column
      // (a damaged low byte of the double: bigint 20.00000000000000256).
      const int column_scale = type.type == ColumnType::Numeric ? type.scale : 0;
      while (v.scale > column_scale && v.coefficient % 10 == 0) {
        v.coefficient /= 10;
        --v.scale;
      }
      if (v.scale > column_scale) {
        corrupt(type, format, key,
                fmt::format("decodes to {}, more fraction digits than {} holds",
                            decimal_to_string(v.coefficient, v.scale, 0), type.name()));
      }
      return decimal_to_string(v.coefficient, v.scale, column_scale);
    }
    case KeyFormat::Decimal128:
    case KeyFormat::Bcd: {
      Value v;
      const bool bcd = format == KeyFormat::Bcd;
      if (!decode_decimal(body, bcd ? 39 : 34, bcd ? 128 : 6176, v) ||
          !same_key(type, format, descending, v, key)) {
        corrupt(type, format, key, "no exact value encodes to it");
      }
      return decimal_to_string(v.coefficient, v.scale,
                               type.type == ColumnType::Numeric ? type.scale : 0);
    }
    case KeyFormat::TypeDefault:
      return key_to_text(type, default_key_format(type), descending, key);
  }
  corrupt(type, format, key, "unknown key format");
}

std::string hex_bytes(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i) out += ' ';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

}  // namespace pbtree
