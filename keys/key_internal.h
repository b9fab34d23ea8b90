// Private helpers of the keys layer shared by keys/key.cc (parsing, limits), keys/key_build.cc
// (the allocation-free key builders), keys/key_decode.cc (stored keys to values) and
// keys/key_text.cc (their printer): powers of ten, digit counting, decimal rendering of
// 128-bit integers and the decoded form of a stored key. Not part of the public API.
#pragma once

#include <pbtree/keys.h>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pbtree::keys_internal {

using u128 = unsigned __int128;
using i128 = __int128;

/// 10^0 .. 10^38 as unsigned 128-bit integers (10^38 < 2^127).
inline constexpr u128 kPow10U128[39] = {
#define PBTREE_P10(x) static_cast<u128>(x)
    PBTREE_P10(1ull),
    PBTREE_P10(10ull),
    PBTREE_P10(100ull),
    PBTREE_P10(1000ull),
    PBTREE_P10(10000ull),
    PBTREE_P10(100000ull),
    PBTREE_P10(1000000ull),
    PBTREE_P10(10000000ull),
    PBTREE_P10(100000000ull),
    PBTREE_P10(1000000000ull),
    PBTREE_P10(10000000000ull),
    PBTREE_P10(100000000000ull),
    PBTREE_P10(1000000000000ull),
    PBTREE_P10(10000000000000ull),
    PBTREE_P10(100000000000000ull),
    PBTREE_P10(1000000000000000ull),
    PBTREE_P10(10000000000000000ull),
    PBTREE_P10(100000000000000000ull),
    PBTREE_P10(1000000000000000000ull),
    PBTREE_P10(10000000000000000000ull),
#undef PBTREE_P10
    static_cast<u128>(10000000000000000000ull) * 10u,
    static_cast<u128>(10000000000000000000ull) * 100u,
    static_cast<u128>(10000000000000000000ull) * 1000u,
    static_cast<u128>(10000000000000000000ull) * 10000u,
    static_cast<u128>(10000000000000000000ull) * 100000u,
    static_cast<u128>(10000000000000000000ull) * 1000000u,
    static_cast<u128>(10000000000000000000ull) * 10000000u,
    static_cast<u128>(10000000000000000000ull) * 100000000u,
    static_cast<u128>(10000000000000000000ull) * 1000000000u,
    static_cast<u128>(10000000000000000000ull) * 10000000000ull,
    static_cast<u128>(10000000000000000000ull) * 100000000000ull,
    static_cast<u128>(10000000000000000000ull) * 1000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 10000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 100000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 1000000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 10000000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 100000000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 1000000000000000000ull,
    static_cast<u128>(10000000000000000000ull) * 10000000000000000000ull,
};

/// 10^0 .. 10^60 as the nearest doubles (the C literals 1eN, as Firebird's pow10 table).
inline constexpr double kPow10Double[61] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39, 1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47,
    1e48, 1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59, 1e60};

/// Largest Value::scale the keys layer accepts (NUMERIC(38,38)).
inline constexpr int kMaxScale = 38;

/// Number of decimal digits of u (1 for 0).
inline int decimal_digits(u128 u) {
  const uint64_t hi = static_cast<uint64_t>(u >> 64);
  const int bits =
      hi ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(static_cast<uint64_t>(u) | 1);
  int k = (bits * 1233 >> 12) + 1;  // floor(bits*log10(2)) + 1, maybe one too many
  if (k > 39) k = 39;
  if (k > 1 && u < kPow10U128[k - 1]) --k;
  return k;
}

/// Magnitude of a signed 128-bit value (2^127 for the minimum).
inline u128 magnitude(i128 v) {
  return v < 0 ? u128(0) - static_cast<u128>(v) : static_cast<u128>(v);
}

/// Decimal text of a 128-bit integer.
std::string i128_to_string(i128 v);

/// Decimal text of coefficient × 10^-scale with at least `min_fraction` fraction digits
/// (more if the value needs them); scale may be negative (multiply).
std::string decimal_to_string(i128 coefficient, int scale, int min_fraction);

}  // namespace pbtree::keys_internal

namespace pbtree::keys_internal {

/// Smallest and largest integral value of an exact column type at scale 0 (NUMERIC(P,S):
/// ±(10^(P-S) - 1)); false for double/varchar (no exact range).
inline bool integral_range(const TypeSpec& t, i128& lo, i128& hi) {
  switch (t.type) {
    case ColumnType::Smallint:
      lo = INT16_MIN;
      hi = INT16_MAX;
      return true;
    case ColumnType::Integer:
      lo = INT32_MIN;
      hi = INT32_MAX;
      return true;
    case ColumnType::Bigint:
      lo = INT64_MIN;
      hi = INT64_MAX;
      return true;
    case ColumnType::Int128:
      hi = static_cast<i128>(~u128(0) >> 1);
      lo = -hi - 1;
      return true;
    case ColumnType::Numeric: {
      const int digits = t.precision >= t.scale ? t.precision - t.scale : 0;
      hi = static_cast<i128>(kPow10U128[digits > 38 ? 38 : digits]) - 1;
      lo = -hi;
      return true;
    }
    case ColumnType::Double:
    case ColumnType::Varchar:
      break;
  }
  return false;
}

}  // namespace pbtree::keys_internal

namespace pbtree::keys_internal {

/// A stored single-segment key decoded and verified (build_key re-encodes it to exactly the
/// stored bytes), before it becomes a Value (key_to_value) or text (key_to_text).
struct DecodedKey {
  enum class Kind : uint8_t { Null, Text, Double, Exact };
  Kind kind = Kind::Null;
  std::string_view text;  ///< Text: the value (trailing spaces cut), in the caller's string
  double dbl = 0;         ///< Double (never NaN)
  /// Exact: coefficient × 10^-scale; RescaledDouble at most the column's scale,
  /// Decimal128/Bcd with no trailing fraction zero.
  i128 coefficient = 0;
  int scale = 0;
};

/// Decodes `key` (keys/key_decode.cc); a Text key's bytes go into `text`. Throws KeyError
/// "corrupt <format> key for <type>: <hex> (<why>)" on bytes no value encodes to.
DecodedKey decode_stored_key(const TypeSpec& type, KeyFormat format, bool descending,
                             std::span<const uint8_t> key, std::string& text);

/// The text key_to_text prints for a decoded key of `type` (keys/key_text.cc).
std::string decoded_key_text(const TypeSpec& type, const DecodedKey& key);

/// The coefficient c with c / 10^scale == d as doubles (|d × 10^scale| < 10^18), if any:
/// a Double key's exact value at a numeric column's scale.
bool double_at_scale(double d, int scale, i128& c);

}  // namespace pbtree::keys_internal
