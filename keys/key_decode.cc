// Stored single-segment keys back to values, natively (bytes -> Value, no text on the way):
// decode_stored_key decodes each key format (layouts at the top of keys/key_build.cc) and
// verifies the result by one re-encode (build_key gives back exactly the stored bytes);
// key_to_value turns that into the Value of the column type, as parse_value would from the
// printed text (key_to_text, keys/key_text.cc, prints the same decoded key). Only what the
// native path does not take (a value outside the column's range or scale, a format the column
// type does not allow) goes through the printer and parse_value, so errors read the same.
#include <fmt/format.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "keys/key_internal.h"
#include "util/bytes.h"

namespace pbtree {

using namespace keys_internal;

namespace {

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

namespace keys_internal {

bool double_at_scale(double d, int scale, i128& c) {
  const long double scaled = static_cast<long double>(d) * kPow10Long[scale];
  if (!(std::fabs(scaled) < 1e18L)) return false;
  const int64_t c0 = std::llround(scaled);
  for (int64_t x = c0 - 1; x <= c0 + 1; ++x) {
    if (static_cast<double>(x) / kPow10Double[scale] == d) {
      c = x;
      return true;
    }
  }
  return false;
}

DecodedKey decode_stored_key(const TypeSpec& type, KeyFormat format, bool descending,
                             std::span<const uint8_t> key, std::string& text) {
  DecodedKey out;
  if (key.size() > KeyBuffer::kCapacity) corrupt(type, format, key, "longer than 8192 bytes");
  if (key.empty()) {
    if (descending) corrupt(type, format, key, "empty descending key");
    return out;  // NULL
  }
  uint8_t buf[KeyBuffer::kCapacity];
  std::memcpy(buf, key.data(), key.size());
  size_t len = key.size();
  if (descending) {
    for (size_t i = 0; i < len; ++i) buf[i] = static_cast<uint8_t>(~buf[i]);
    if (len == 1 && buf[0] == 0) return out;  // NULL
  }
  std::span<const uint8_t> body(buf, len);
  if (descending && body[0] <= 1) {
    if (body[0] == 1 && body.size() >= 2 && body[1] <= 1) {
      body = body.subspan(1);
    } else {
      corrupt(type, format, key, "bad descending escape");
    }
  }
  switch (format) {
    case KeyFormat::Text: {
      text.assign(reinterpret_cast<const char*>(body.data()), body.size());
      if (text == " ") text.clear();
      if (!same_key(type, format, descending, Value::of_text(text), key)) {
        corrupt(type, format, key, "not a canonical text key");
      }
      out.kind = DecodedKey::Kind::Text;
      out.text = text;
      return out;
    }
    case KeyFormat::Double: {
      if (body.size() > 8) corrupt(type, format, key, "longer than 8 bytes");
      const double d = decode_key_double(load_be64_padded(body));
      if (std::isnan(d) || !same_key(type, format, descending, Value::of_double(d), key)) {
        corrupt(type, format, key, "no double encodes to it");
      }
      out.kind = DecodedKey::Kind::Double;
      out.dbl = d;
      return out;
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
      out.kind = DecodedKey::Kind::Exact;
      out.coefficient = v.coefficient;
      out.scale = v.scale;
      return out;
    }
    case KeyFormat::Decimal128:
    case KeyFormat::Bcd: {
      Value v;
      const bool bcd = format == KeyFormat::Bcd;
      if (!decode_decimal(body, bcd ? 39 : 34, bcd ? 128 : 6176, v) ||
          !same_key(type, format, descending, v, key)) {
        corrupt(type, format, key, "no exact value encodes to it");
      }
      out.kind = DecodedKey::Kind::Exact;
      out.coefficient = v.coefficient;
      out.scale = v.scale;
      return out;
    }
    case KeyFormat::TypeDefault:
      return decode_stored_key(type, default_key_format(type), descending, key, text);
  }
  corrupt(type, format, key, "unknown key format");
}

}  // namespace keys_internal

namespace {

/// Exact value of an exact column type (integers: scale 0; numeric(P,S): scale S) equal to
/// coefficient × 10^-scale, as parse_value reads its printed text; false if the column cannot
/// hold it exactly (then parse_value on the printed text says why).
bool exact_of_column(const TypeSpec& type, i128 c, int scale, Value& out) {
  i128 lo, hi;
  if (!integral_range(type, lo, hi)) return false;
  const int s = type.type == ColumnType::Numeric ? type.scale : 0;
  if (scale < 0 || scale > s) return false;
  // Integral part within the column's digits: |c| / 10^scale <= hi.
  const u128 limit = static_cast<u128>(hi) + 1;  // 10^(P-S) for numeric, 2^k for integers
  const u128 mag = magnitude(c);
  const u128 whole = mag / kPow10U128[scale];
  if (type.type == ColumnType::Numeric) {
    if (whole >= limit) return false;
  } else if (c < 0 ? mag > magnitude(lo) : mag > static_cast<u128>(hi)) {
    return false;
  }
  out = Value::exact(c * static_cast<i128>(kPow10U128[s - scale]), static_cast<uint8_t>(s));
  return true;
}

}  // namespace

Value key_to_value(const TypeSpec& type, KeyFormat format, bool descending,
                   std::span<const uint8_t> key, std::string& storage) {
  if (key.empty() && !descending) return Value::null();
  if (descending && key.size() == 1 && key[0] == 0xFF) return Value::null();
  const DecodedKey k = decode_stored_key(type, format, descending, key, storage);
  Value v;
  switch (k.kind) {
    case DecodedKey::Kind::Null:
      return Value::null();
    case DecodedKey::Kind::Text:
      if (type.type == ColumnType::Varchar && k.text.size() <= type.length) {
        return Value::of_text(k.text);  // points into storage
      }
      break;
    case DecodedKey::Kind::Double:
      if (type.type == ColumnType::Double) return Value::of_double(k.dbl);
      if (!std::isfinite(k.dbl)) break;
      if (type.type == ColumnType::Numeric && type.scale > 0) {
        i128 c;
        if (double_at_scale(k.dbl, type.scale, c) && exact_of_column(type, c, type.scale, v)) {
          return v;
        }
      } else if (k.dbl == std::trunc(k.dbl) && std::fabs(k.dbl) < 0x1p127 &&
                 exact_of_column(type, static_cast<i128>(k.dbl), 0, v)) {
        return v;
      }
      break;
    case DecodedKey::Kind::Exact:
      if (exact_of_column(type, k.coefficient, k.scale, v)) return v;
      break;
  }
  // Not a value the column holds natively: the printed text, read as load reads it (the
  // same value or the same KeyError as ever).
  storage = decoded_key_text(type, k);
  return parse_value(type, storage);
}

}  // namespace pbtree
