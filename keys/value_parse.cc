// Strict parsing of value text into a Value of a column type (parse_value, <pbtree/keys.h>).
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

namespace {

/// `text` as a message shows it: shown_text (util/bytes.h), at most 80 bytes and then "...".
std::string shown(std::string_view text) {
  return shown_text(text, 80) + (text.size() > 80 ? "..." : "");
}

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
    throw KeyError(fmt::format("malformed integer '{}' for {}", shown(text), type.name()));
  }
  u128 mag = 0;
  bool too_big = false;
  const u128 cap = u128(1) << 127;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      if (looks_numeric(text)) {
        throw KeyError(fmt::format("value '{}' is not an integer: {} takes whole numbers only",
                                   shown(text), type.name()));
      }
      throw KeyError(
          fmt::format("malformed integer '{}' for {} (expected an optional sign and "
                      "decimal digits)",
                      shown(text), type.name()));
    }
    const unsigned d = static_cast<unsigned>(c - '0');
    if (mag > (cap - d) / 10) too_big = true;
    if (!too_big) mag = mag * 10 + d;
  }
  i128 lo, hi;
  integral_range(type, lo, hi);
  const bool out = too_big || (neg ? mag > magnitude(lo) : mag > static_cast<u128>(hi));
  if (out) {
    throw KeyError(fmt::format("value {} out of range for {} ({}..{})", shown(text), type.name(),
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
                    shown(text), type.name()));
  }
  size_t first = int_begin;
  while (first < int_end && text[first] == '0') ++first;
  const size_t int_digits = int_end - first;
  if (int_digits > static_cast<size_t>(p - s)) {
    throw KeyError(
        fmt::format("value {} out of range for {}: at most {} digits before the "
                    "decimal point",
                    shown(text), type.name(), p - s));
  }
  for (size_t j = frac_begin + static_cast<size_t>(s); j < frac_end; ++j) {
    if (text[j] != '0') {
      throw KeyError(
          fmt::format("value {} has more than {} fraction digits for {} (extra "
                      "fraction digits must be zeros)",
                      shown(text), s, type.name()));
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
    throw KeyError(fmt::format("malformed double '{}' for {}", shown(text), type.name()));
  }
  if (r.ec == std::errc::result_out_of_range) {
    throw KeyError(fmt::format("value {} out of range for {}", shown(text), type.name()));
  }
  if (std::isnan(d)) {
    throw KeyError(
        fmt::format("NaN ('{}') is not a valid value for {}: index keys need ordered "
                    "values",
                    shown(text), type.name()));
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

}  // namespace pbtree
