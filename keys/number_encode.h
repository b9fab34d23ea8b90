// The numeric key encoders of the keys layer (internal to keys/): the bytes of a Double,
// RescaledDouble, Decimal128 and Bcd key from an already-checked number, after Firebird's
// compress() / make_int64_key() (src/jrd/btr.cpp) and Decimal128::makeIndexKey / makeBcdKey
// (src/common/DecFloat.cpp); the layouts are described at the top of keys/key_build.cc and in
// docs/FORMAT.md §1. Inline and allocation-free: they are the hot path of build_key.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "keys/key_internal.h"
#include "util/coding.h"

namespace pbtree::keys_internal {

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
inline constexpr int64_t kLimit[19] = {922337203685470000LL,
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

inline constexpr uint64_t kPow10U64[20] = {1ull,
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

inline constexpr uint64_t kE18 = 1000000000000000000ull;
inline constexpr uint64_t kE19 = 10000000000000000000ull;

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

/// Decimal key (docs/FORMAT.md §1.3) of (neg ? -u : u) × 10^exp10 with pMax / bias into p.
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
    const uint64_t acc = pack_groups18(w) << (64 - 10 * ng);  // MSB-aligned bit stream
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

}  // namespace pbtree::keys_internal
