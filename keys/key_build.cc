// Normalized key builders: the hot path of the keys layer (build_key, build_compound_key).
// Nothing here allocates; every table is a static constexpr. The byte layouts, after
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

#include <bit>
#include <cmath>
#include <cstring>

#include <pbtree/keys.h>
#include "keys/key_internal.h"
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

/// Double key bytes of d (not NaN) into p; returns the length 1..8.
inline size_t encode_double(double d, uint8_t* p) {
  if (d == 0) d = 0;  // -0 -> +0
  uint64_t b = std::bit_cast<uint64_t>(d);
  b = (b >> 63) ? ~b : (b ^ (uint64_t(1) << 63));
  store_be64(p, b);
  return 8 - static_cast<size_t>(std::countr_zero(b)) / 8;  // b != 0: NaN excluded
}

/// The exact value coefficient × 10^-scale as the nearest double, as Firebird converts a
/// scaled integer (CVT_get_double: (double) value / 10^scale).
inline double exact_to_double(i128 c, int scale) {
  const double d = (c >= INT64_MIN && c <= INT64_MAX) ? static_cast<double>(static_cast<int64_t>(c))
                                                      : static_cast<double>(c);
  return scale == 0 ? d : d / kPow10Double[scale];
}

/// make_int64_key()'s magnitude table (src/jrd/btr.cpp, int64_scale_control): row n is
/// used for |q0| >= kLimit[n]; the factor is 10^n.
constexpr int64_t kLimit[19] = {922337203685470000LL,
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

constexpr uint64_t kPow10U64[20] = {1ull,
                                    10ull,
                                    100ull,
                                    1000ull,
                                    10000ull,
                                    100000ull,
                                    1000000ull,
                                    10000000ull,
                                    100000000ull,
                                    1000000000ull,
                                    10000000000ull,
                                    100000000000ull,
                                    1000000000000ull,
                                    10000000000000ull,
                                    100000000000000ull,
                                    1000000000000000ull,
                                    10000000000000000ull,
                                    100000000000000000ull,
                                    1000000000000000000ull,
                                    10000000000000000000ull};

inline int digits_u64(uint64_t u) {
  const int bits = 64 - std::countl_zero(u | 1);
  int k = (bits * 1233 >> 12) + 1;
  if (k > 1 && u < kPow10U64[k - 1]) --k;
  return k;
}

/// RescaledDouble key of q0 × 10^-scale into p (10 bytes written); returns 9 or 10.
inline size_t encode_rescaled(int64_t q0, int scale, uint8_t* p) {
  int64_t q = 0;
  int k = scale;  // digits after the point of q (Firebird's -scale after normalising)
  if (q0 != 0) {
    const uint64_t u = q0 < 0 ? 0 - static_cast<uint64_t>(q0) : static_cast<uint64_t>(q0);
    const int nd = digits_u64(u);
    int n;
    if (nd >= 19) {
      n = 0;
    } else if (nd == 1) {
      n = 18;
    } else {
      n = u >= static_cast<uint64_t>(kLimit[18 - nd]) ? 18 - nd : 19 - nd;
    }
    q = q0 * static_cast<int64_t>(kPow10U64[n]);
    k += n;
  }
  const int64_t x = q / 10000;
  const int s = static_cast<int>(q % 10000);
  const double d = static_cast<double>(x) / kPow10Double[k];  // k = scale + n <= 56
  uint64_t b = std::bit_cast<uint64_t>(d);
  b = (d < 0) ? ~b : (b ^ (uint64_t(1) << 63));
  store_be64(p, b);
  const uint16_t sw = static_cast<uint16_t>(static_cast<int16_t>(s)) ^ 0x8000u;
  p[8] = static_cast<uint8_t>(sw >> 8);
  p[9] = static_cast<uint8_t>(sw);
  return p[9] == 0 ? 9 : 10;  // p[8] is never 0: s >= -9999 gives p[8] >= 0x58
}

constexpr uint64_t kE18 = 1000000000000000000ull;
constexpr uint64_t kE19 = 10000000000000000000ull;

/// floor(u / 10^19) and the remainder, for u < 2^64 · 10^19 (so the quotient fits 64 bits),
/// without a divide instruction: Möller & Granlund, "Improved division by invariant
/// integers" (2011), algorithm 4, with 10^19 >= 2^63 already normalised.
inline uint64_t div_e19(u128 u, uint64_t& rem) {
  constexpr uint64_t kInv = static_cast<uint64_t>(~u128(0) / kE19 - (u128(1) << 64));
  const uint64_t hi = static_cast<uint64_t>(u >> 64), lo = static_cast<uint64_t>(u);
  u128 q = static_cast<u128>(kInv) * hi;
  q += (static_cast<u128>(hi + 1) << 64) | lo;
  uint64_t q1 = static_cast<uint64_t>(q >> 64);
  const uint64_t q0 = static_cast<uint64_t>(q);
  uint64_t r = lo - q1 * kE19;
  if (r > q0) {
    --q1;
    r += kE19;
  }
  if (r >= kE19) {
    ++q1;
    r -= kE19;
  }
  rem = r;
  return q1;
}

/// An 18-digit chunk (< 10^18) as six 10-bit groups of 3 digits, most significant first, in
/// the low 60 bits.
inline uint64_t pack_groups18(uint64_t w) {
  const uint32_t hi9 = static_cast<uint32_t>(w / 1000000000u);
  const uint32_t lo9 = static_cast<uint32_t>(w % 1000000000u);
  const uint64_t hi =
      (uint64_t{hi9 / 1000000u} << 20) | ((hi9 / 1000u % 1000u) << 10) | (hi9 % 1000u);
  const uint64_t lo =
      (uint64_t{lo9 / 1000000u} << 20) | ((lo9 / 1000u % 1000u) << 10) | (lo9 % 1000u);
  return (hi << 30) | lo;
}

/// (w2, w1, w0) base 10^18 times 10^SH (SH < 3; the result stays below 10^39).
template <int SH>
inline void shift_digits(uint64_t& w2, uint64_t& w1, uint64_t& w0) {
  if constexpr (SH > 0) {
    constexpr uint64_t kLow = kPow10U64[18 - SH], kMul = kPow10U64[SH];
    const uint64_t c0 = w0 / kLow, c1 = w1 / kLow;
    w0 = (w0 % kLow) * kMul;
    w1 = (w1 % kLow) * kMul + c0;
    w2 = w2 * kMul + c1;
  }
}

/// Decimal key (§1.5/§1.6) of (neg ? -u : u) × 10^exp10 with pMax / bias into p.
/// `u` has at most pmax significant digits (checked by the caller). Returns the length.
inline size_t encode_decimal(bool neg, u128 u, int exp10, int pmax, int bias, uint8_t* p) {
  if (u == 0) {
    const unsigned e = 2u * static_cast<unsigned>(bias + 1);
    p[0] = static_cast<uint8_t>(e >> 8);
    p[1] = static_cast<uint8_t>(e);
    return 2;
  }
  const bool small = (u >> 64) == 0;
  const int k = small ? digits_u64(static_cast<uint64_t>(u)) : decimal_digits(u);
  const int e1 = exp10 - (pmax - k);
  const unsigned e =
      neg ? static_cast<unsigned>(bias + 1 - e1) : static_cast<unsigned>(e1 + 3 * (bias + 1));
  p[0] = static_cast<uint8_t>(e >> 8);
  p[1] = static_cast<uint8_t>(e);

  if (small && k <= 18) {
    // Fast path, at most 6 groups: W = u × 10^sh (3·ng digits, < 10^18) in 64 bits; the
    // negative form is 10^(3·ng) - W; the groups become base-1024 digits of one word.
    const int ng = (k + 2) / 3;
    uint64_t w = static_cast<uint64_t>(u) * kPow10U64[3 * ng - k];
    if (neg) w = kPow10U64[3 * ng] - w;
    const uint32_t hi9 = static_cast<uint32_t>(w / 1000000000u);
    const uint32_t lo9 = static_cast<uint32_t>(w % 1000000000u);
    const uint64_t hi =
        (uint64_t{hi9 / 1000000u} << 20) | ((hi9 / 1000u % 1000u) << 10) | (hi9 % 1000u);
    const uint64_t lo =
        (uint64_t{lo9 / 1000000u} << 20) | ((lo9 / 1000u % 1000u) << 10) | (lo9 % 1000u);
    const uint64_t acc = ((hi << 30) | lo) << (64 - 10 * ng);  // MSB-aligned bit stream
    store_be64(p + 2, acc);
    return 2 + 8 - static_cast<size_t>(std::countr_zero(acc)) / 8;  // acc != 0
  }

  // 19..39 digits: u as three base-10^18 chunks (w2 < 1000), left-aligned to 3·ng digits
  // (× 10^sh), ten's complement if negative, then 10 bits a group, MSB first.
  uint64_t w2, w1, w0;
  if (small) {
    const uint64_t v = static_cast<uint64_t>(u);
    w2 = 0;
    w1 = v / kE18;
    w0 = v % kE18;
  } else {
    uint64_t r;
    const uint64_t q = div_e19(u, r);  // u >> 64 < 2^63 < 10^19
    w0 = r % kE18;
    w1 = (q % (kE18 / 10)) * 10 + r / kE18;
    w2 = q / (kE18 / 10);
  }
  const int ng = (k + 2) / 3;  // 7..13
  switch ((3 - k % 3) % 3) {
    case 1:
      shift_digits<1>(w2, w1, w0);
      break;
    case 2:
      shift_digits<2>(w2, w1, w0);
      break;
    default:
      break;
  }
  if (neg) {
    // 10^(3·ng) - W, chunk by chunk with a borrow.
    uint64_t borrow = w0 != 0;
    w0 = w0 ? kE18 - w0 : 0;
    if (ng <= 12) {
      w1 = kPow10U64[3 * ng - 18] - w1 - borrow;
      borrow = 0;
    } else if (w1 == 0 && borrow == 0) {
      // w1 stays 0, no borrow into w2
    } else {
      w1 = kE18 - w1 - borrow;
      borrow = 1;
    }
    if (ng == 13) {
      w2 = 1000 - w2 - borrow;
    }
  }
  // B = w2 (groups 12) | w1 (11..6) | w0 (5..0) as 10-bit groups; keep the low 10·ng bits.
  const u128 low120 = (static_cast<u128>(pack_groups18(w1)) << 60) | pack_groups18(w0);
  const int nb = 10 * ng;
  u128 top;  // the first 128 bits of the stream, MSB-aligned
  uint8_t extra = 0;
  if (nb <= 120) {
    top = low120 << (128 - nb);
  } else {  // ng = 13: 130 bits
    top = (static_cast<u128>(w2) << 118) | (low120 >> 2);
    extra = static_cast<uint8_t>((static_cast<uint64_t>(low120) & 3) << 6);
  }
  store_be64(p + 2, static_cast<uint64_t>(top >> 64));
  store_be64(p + 10, static_cast<uint64_t>(top));
  p[18] = extra;
  if (extra) return 19;
  const uint64_t thi = static_cast<uint64_t>(top >> 64), tlo = static_cast<uint64_t>(top);
  const int tz = tlo ? std::countr_zero(tlo) : 64 + std::countr_zero(thi);  // top != 0
  return 2 + 16 - static_cast<size_t>(tz) / 8;
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

// Compound key layout (§1.11, IndexKey::compose in src/jrd/btr.cpp v5.0.4): for segment i
// of N, its key (escaped if descending, not inverted) in 4-byte chunks, each preceded by
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
