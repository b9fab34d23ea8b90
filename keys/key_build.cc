// Normalized key builders: the hot path of the keys layer (build_key, build_compound_key).
// Nothing here allocates; every table is a static constexpr. The numeric encoders are
// keys/number_encode.h. The byte layouts, after
// Firebird's compress() in src/jrd/btr.cpp (v3.0.14 .. v5.0.4) and docs/FORMAT.md §1:
//
//   Double (idx_numeric, 1..8 bytes): the IEEE-754 double, big-endian; negative values have
//     all 8 bytes complemented, others only the sign bit flipped; -0 is +0; trailing 00 cut.
//   RescaledDouble (idx_numeric2, 9..10 bytes): make_int64_key(): |q0| is scaled by 10^n to
//     18..19 digits (row n of kLimit), d = (double)(q / 10^4) / 10^(scale + n) as above in
//     bytes 0..7, s = q % 10^4 as big-endian int16 with its top bit flipped in bytes 8..9;
//     trailing 00 cut.
//   Decimal128 (idx_decimal, 2..17 bytes; bias 6176, pMax 34) and Bcd (idx_bcd, 2..19
//     bytes; bias 128, pMax 39): 16-bit exponent word E (zero 2(bias+1); positive
//     e' + 3(bias+1); negative (bias+1) - e', e' = exponent of the coefficient normalised
//     to pMax digits), then the significant digits in groups of 3 as 10-bit numbers, MSB
//     first (negative: ten's complement of the digits); trailing 00 cut.
//     Source: Decimal128::makeIndexKey / makeBcdKey (src/common/DecFloat.cpp) and
//     Int128::makeIndexKey (src/common/Int128.cpp), v5.0.4.
//   Text (idx_string, 1..N bytes): the bytes with trailing spaces cut, '' -> 20.
//   NULL: empty ascending, FF descending. Descending: 01 put in front of a key starting
//     with 00/01, then every byte XOR FF. Compound keys: see build_compound_key below.
#include <fmt/format.h>
#include <pbtree/keys.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "keys/key_internal.h"
#include "keys/number_encode.h"
#include "util/coding.h"

namespace pbtree {

using namespace keys_internal;

namespace {

constexpr size_t kTmp = 24;  // room for any numeric key (19 bytes) plus an escape

[[noreturn, gnu::cold, gnu::noinline]] void throw_key_error(std::string message) {
  throw KeyError(std::move(message));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_kind(const TypeSpec& type, KeyFormat format,
                                                           const Value& value) {
  const char* kind = value.kind == Value::Kind::Text ? "a text value" : "a numeric value";
  throw KeyError(fmt::format("{} cannot be stored in a {} key (column type {})", kind,
                             key_format_name(format), type.name()));
}

/// An integral double as an exact value of `type` (scale 0); KeyError unless integral and
/// within the type's range.
[[gnu::noinline]] i128 double_to_exact(const TypeSpec& type, KeyFormat format, double d) {
  if (std::isnan(d)) {
    throw_key_error(fmt::format("NaN cannot be stored in a {} key (column type {})",
                                key_format_name(format), type.name()));
  }
  if (!std::isfinite(d) || d != std::trunc(d)) {
    throw_key_error(
        fmt::format("double value {} is not an integer: a {} key for {} needs an exact value", d,
                    key_format_name(format), type.name()));
  }
  i128 lo, hi;
  const bool ranged = integral_range(type, lo, hi);
  if (!(std::fabs(d) < 0x1p127)) {
    throw_key_error(fmt::format("double value {} out of range for {}", d, type.name()));
  }
  const i128 c = static_cast<i128>(d);
  if (ranged && (c < lo || c > hi)) {
    throw_key_error(fmt::format("double value {} out of range for {}", d, type.name()));
  }
  return c;
}

/// (c, scale) for the RescaledDouble key: the value at the column scale when exact and
/// within int64 (Firebird converts a search value to the column type), else its own
/// representation with trailing fraction zeros removed. KeyError if no int64 coefficient.
[[gnu::noinline]] int64_t rescale_slow(const TypeSpec& type, i128 c, int& scale) {
  const int col = type.type == ColumnType::Numeric ? type.scale : 0;
  while (scale > col && c % 10 == 0) {
    c /= 10;
    --scale;
  }
  constexpr i128 kMax = INT64_MAX, kMin = INT64_MIN;
  while (scale < col && c <= kMax / 10 && c >= kMin / 10) {
    c *= 10;
    ++scale;
  }
  if (c < kMin || c > kMax) {
    throw_key_error(fmt::format(
        "value {} cannot be stored in a rescaled-double key: it needs a 64-bit coefficient "
        "(column type {})",
        decimal_to_string(c, scale, 0), type.name()));
  }
  return static_cast<int64_t>(c);
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_too_many_digits(const TypeSpec& type,
                                                                  KeyFormat format, i128 c,
                                                                  int scale) {
  throw KeyError(
      fmt::format("value {} has more than {} significant digits: a {} key cannot "
                  "hold it (column type {})",
                  decimal_to_string(c, scale, 0), format == KeyFormat::Bcd ? 39 : 34,
                  key_format_name(format), type.name()));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_scale(int scale) {
  throw KeyError(fmt::format("value scale {} out of range 0..38", scale));
}

/// Ascending per-type key of a non-NULL numeric value into p (kTmp bytes); returns length.
[[gnu::always_inline]] inline size_t encode_number(const TypeSpec& type, KeyFormat format,
                                                   const Value& value, uint8_t* p) {
  if (format == KeyFormat::Double) {
    double d;
    if (value.kind == Value::Kind::Double) {
      d = value.dbl;
      if (std::isnan(d)) {
        throw_key_error(
            fmt::format("NaN cannot be stored in an index key (column type {})", type.name()));
      }
    } else {
      if (value.scale > kMaxScale) throw_bad_scale(value.scale);
      d = exact_to_double(value.coefficient, value.scale);
    }
    return encode_double(d, p);
  }
  i128 c;
  int scale;
  if (value.kind == Value::Kind::Double) {
    c = double_to_exact(type, format, value.dbl);
    scale = 0;
  } else {
    c = value.coefficient;
    scale = value.scale;
    if (scale > kMaxScale) throw_bad_scale(scale);
  }
  switch (format) {
    case KeyFormat::RescaledDouble: {
      const int col = type.type == ColumnType::Numeric ? type.scale : 0;
      int64_t q0;
      if (scale == col && c >= INT64_MIN && c <= INT64_MAX) {
        q0 = static_cast<int64_t>(c);
      } else {
        q0 = rescale_slow(type, c, scale);
      }
      return encode_rescaled(q0, scale, p);
    }
    case KeyFormat::Decimal128: {
      const u128 u = magnitude(c);
      if (u >= kPow10U128[34]) {
        // More than 34 digits: fine only if the extra low-order digits are zeros.
        const int k = decimal_digits(u);
        if (u % kPow10U128[k - 34] != 0) throw_too_many_digits(type, format, c, scale);
      }
      return encode_decimal(c < 0, u, -scale, 34, 6176, p);
    }
    case KeyFormat::Bcd:
      return encode_decimal(c < 0, magnitude(c), -scale, 39, 128, p);
    case KeyFormat::Double:
    case KeyFormat::Text:
    case KeyFormat::TypeDefault:
      break;
  }
  throw_key_error(fmt::format("unknown key format {}", static_cast<int>(format)));
}

/// Writes the per-segment key (ascending bytes, with the descending escape when
/// `descending`, not inverted) into dst (capacity cap); returns the length. NULL gives the
/// empty key ascending and 00 descending.
[[gnu::always_inline]] inline size_t encode_segment(const TypeSpec& type, KeyFormat format,
                                                    const Value& value, bool descending,
                                                    uint8_t* dst, size_t cap) {
  if (value.kind == Value::Kind::Null) {
    if (!descending) return 0;
    dst[0] = 0;
    return 1;
  }
  if (format == KeyFormat::Text) {
    if (value.kind != Value::Kind::Text) throw_bad_kind(type, format, value);
    const char* s = value.text.data();
    size_t n = value.text.size();
    while (n > 0 && s[n - 1] == ' ') --n;
    if (n == 0) {
      dst[0] = 0x20;
      return 1;
    }
    const uint8_t first = static_cast<uint8_t>(s[0]);
    const size_t esc = (descending && first <= 1) ? 1 : 0;
    if (n + esc > cap) {
      throw_key_error(fmt::format("text value of {} bytes is too long for a key (at most {} bytes)",
                                  n, cap - esc));
    }
    dst[0] = 1;
    std::memcpy(dst + esc, s, n);
    return n + esc;
  }
  if (value.kind == Value::Kind::Text) throw_bad_kind(type, format, value);
  if (kTmp + 1 > cap) throw_key_error("key buffer too small");
  // Encoded in place: a copy through a scratch array made the wide loads wait on the narrow
  // stores just made (store-forwarding stalls, ~10 ns a key).
  const size_t n = encode_number(type, format, value, dst);
  if (descending && dst[0] <= 1) {
    std::memmove(dst + 1, dst, n);  // rare: the descending escape byte
    dst[0] = 1;
    return n + 1;
  }
  return n;
}

inline void invert(uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(~p[i]);
}

}  // namespace

size_t build_key(const TypeSpec& type, KeyFormat format, const Value& value, bool descending,
                 KeyBuffer& out) {
  size_t n = encode_segment(type, format, value, descending, out.data, KeyBuffer::kCapacity);
  if (descending) invert(out.data, n);
  out.length = n;
  return n;
}

// Compound key layout (docs/FORMAT.md §1.4, IndexKey::compose in src/jrd/btr.cpp v5.0.4): for
// segment i of N, its key (escaped if descending, not inverted) in 4-byte chunks, each preceded by
// the marker byte N - i; a segment that wrote bytes is zero-padded to a full chunk before
// the next segment starts; an empty (ascending NULL) segment writes nothing; the whole
// key is inverted if descending.
size_t build_compound_key(std::span<const Segment> segments, bool descending, KeyBuffer& out,
                          size_t index_segments, bool starting_with) {
  if (segments.empty()) throw_key_error("a compound key needs at least one segment");
  const size_t n_index = index_segments == 0 ? segments.size() : index_segments;
  if (segments.size() > n_index) {
    throw_key_error(fmt::format("{} segment values given for an index of {} segments",
                                segments.size(), n_index));
  }
  if (n_index > 16) {
    throw_key_error(fmt::format("an index has at most 16 segments, not {}", n_index));
  }
  if (n_index == 1) {
    const Segment& s = segments[0];
    return build_key(*s.type, s.format, s.value, descending, out);
  }
  uint8_t seg[KeyBuffer::kCapacity];
  size_t pos = 0;
  size_t prev = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    if (prev % 4 != 0) {
      const size_t pad = 4 - prev % 4;
      if (pos + pad > KeyBuffer::kCapacity) throw_key_error("compound key too long");
      std::memset(out.data + pos, 0, pad);
      pos += pad;
    }
    const size_t len = encode_segment(*s.type, s.format, s.value, descending, seg, sizeof seg);
    const uint8_t marker = static_cast<uint8_t>(n_index - i);
    for (size_t off = 0; off < len; off += 4) {
      const size_t chunk = len - off < 4 ? len - off : 4;
      if (pos + 1 + chunk > KeyBuffer::kCapacity) {
        throw_key_error(fmt::format("compound key longer than {} bytes", KeyBuffer::kCapacity));
      }
      out.data[pos++] = marker;
      std::memcpy(out.data + pos, seg + off, chunk);
      pos += chunk;
    }
    prev = len;
  }
  if (segments.size() < n_index && !starting_with && prev % 4 != 0) {
    const size_t pad = 4 - prev % 4;
    if (pos + pad > KeyBuffer::kCapacity) throw_key_error("compound key too long");
    std::memset(out.data + pos, 0, pad);
    pos += pad;
  }
  if (descending) invert(out.data, pos);
  out.length = pos;
  return pos;
}

}  // namespace pbtree
