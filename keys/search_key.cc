// Search-key conversion for find/scan: general-number parsing with Boost.Multiprecision,
// directed rounding into the column's type, value-order bounds -> index-order ScanRange,
// and STARTING WITH prefixes on (possibly descending) varchar keys. See <pbtree/search.h>.
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace pbtree {

namespace {

using boost::multiprecision::cpp_int;

// A number read from text: (-1)^negative × magnitude × 10^exponent, or ±infinity.
struct GeneralNumber {
  bool negative = false;
  bool infinite = false;
  cpp_int magnitude;
  int64_t exponent = 0;
  size_t digits = 0;  // significant digits of magnitude (0 for zero)
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void malformed(std::string_view text) {
  throw KeyError(fmt::format("malformed number '{}'", text));
}

// Reads [sign] (digits [. digits] | . digits) [e [sign] digits] | [sign] inf[inity].
GeneralNumber parse_general(std::string_view original) {
  std::string_view s = trim(original);
  GeneralNumber n;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    n.negative = s[i] == '-';
    ++i;
  }
  std::string_view rest = s.substr(i);
  if (iequals(rest, "inf") || iequals(rest, "infinity")) {
    n.infinite = true;
    return n;
  }
  if (iequals(rest, "nan"))
    throw KeyError(fmt::format("NaN is not a search value ('{}')", original));
  std::string digits;
  int64_t frac = 0;
  bool any = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') digits += s[i++], any = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') digits += s[i++], ++frac, any = true;
  }
  if (!any) malformed(original);
  int64_t exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    if (i == s.size()) malformed(original);
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (exp < 1'000'000'000) exp = exp * 10 + (s[i] - '0');
      ++i;
    }
    if (eneg) exp = -exp;
  }
  if (i != s.size()) malformed(original);
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return n;  // zero
  digits.erase(0, first);
  n.digits = digits.size();
  n.magnitude = cpp_int(digits);
  n.exponent = exp - frac;
  return n;
}

// N = number × 10^scale rounded both ways. `huge`: |N| beyond every column's range.
struct Scaled {
  bool huge = false;
  bool exact = false;
  cpp_int floor, ceil;
};

cpp_int pow10(int64_t k) {
  cpp_int p = 1;
  for (int64_t i = 0; i < k; ++i) p *= 10;
  return p;
}

Scaled scale_number(const GeneralNumber& n, int scale) {
  Scaled r;
  if (n.infinite) {
    r.huge = true;
    return r;
  }
  if (n.digits == 0) {
    r.exact = true;
    return r;
  }
  const int64_t k = n.exponent + scale;
  // Above 10^60 every column type (at most 39 digits) is exceeded.
  if (k + static_cast<int64_t>(n.digits) > 60) {
    r.huge = true;
    return r;
  }
  if (k >= 0) {
    cpp_int v = n.magnitude * pow10(k);
    if (n.negative) v = cpp_int(-v);
    r.exact = true;
    r.floor = r.ceil = v;
    return r;
  }
  if (-k > static_cast<int64_t>(n.digits) + 2) {
    // 0 < |N| < 1.
    r.floor = n.negative ? -1 : 0;
    r.ceil = n.negative ? 0 : 1;
    return r;
  }
  cpp_int q, rem;
  boost::multiprecision::divide_qr(n.magnitude, pow10(-k), q, rem);
  r.exact = rem == 0;
  if (n.negative) {
    r.ceil = cpp_int(-q);
    r.floor = r.exact ? cpp_int(-q) : cpp_int(-q - 1);
  } else {
    r.floor = q;
    r.ceil = r.exact ? q : q + 1;
  }
  return r;
}

__int128 to_int128(const cpp_int& v) {
  const bool neg = v < 0;
  cpp_int a = neg ? cpp_int(-v) : cpp_int(v);
  const uint64_t lo = static_cast<uint64_t>(a & cpp_int(UINT64_MAX));
  const uint64_t hi = static_cast<uint64_t>(a >> 64);
  unsigned __int128 u = (static_cast<unsigned __int128>(hi) << 64) | lo;
  return neg ? static_cast<__int128>(-u) : static_cast<__int128>(u);
}

// The column's coefficient range at its scale.
void coefficient_range(const TypeSpec& type, cpp_int& lo, cpp_int& hi) {
  switch (type.type) {
    case ColumnType::Smallint:
      lo = INT16_MIN, hi = INT16_MAX;
      return;
    case ColumnType::Integer:
      lo = INT32_MIN, hi = INT32_MAX;
      return;
    case ColumnType::Bigint:
      lo = INT64_MIN, hi = INT64_MAX;
      return;
    case ColumnType::Int128:
      hi = (cpp_int(1) << 127) - 1;
      lo = -(cpp_int(1) << 127);
      return;
    case ColumnType::Numeric: {
      hi = pow10(type.precision) - 1;
      lo = -hi;
      return;
    }
    default:
      throw std::logic_error("coefficient_range: not an exact type");
  }
}

std::vector<uint8_t> key_of(const IndexDefinition& def, const Value& v) {
  KeyBuffer buf;
  build_key(def.type, def.format, v, def.descending, buf);
  return std::vector<uint8_t>(buf.data, buf.data + buf.length);
}

Value exact_value(const TypeSpec& type, const cpp_int& c) {
  return Value::exact(to_int128(c), type.type == ColumnType::Numeric ? type.scale : 0);
}

// Double indexes: the nearest double (strtod), `overflow` set when finite text overflowed.
double read_double(std::string_view text, const GeneralNumber& n, bool& overflow) {
  overflow = false;
  if (n.infinite) {
    return n.negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
  }
  std::string s(trim(text));
  errno = 0;
  double d = std::strtod(s.c_str(), nullptr);
  if (std::isinf(d)) overflow = true;
  return d;
}

ValueBound at(std::vector<uint8_t> key, bool inclusive) {
  ValueBound b;
  b.kind = ValueBound::Kind::At;
  b.key = std::move(key);
  b.inclusive = inclusive;
  return b;
}

ValueBound kind_only(ValueBound::Kind k) {
  ValueBound b;
  b.kind = k;
  return b;
}

}  // namespace

std::optional<std::vector<uint8_t>> equality_key(const IndexDefinition& def,
                                                 std::string_view text) {
  const TypeSpec& type = def.type;
  if (type.type == ColumnType::Varchar) {
    std::string_view t = text;
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    if (t.size() > type.length) return std::nullopt;
    return key_of(def, Value::of_text(t));
  }
  GeneralNumber n = parse_general(text);
  if (type.type == ColumnType::Double) {
    bool overflow = false;
    double d = read_double(text, n, overflow);
    if (overflow) return std::nullopt;
    return key_of(def, Value::of_double(d));
  }
  Scaled s = scale_number(n, type.type == ColumnType::Numeric ? type.scale : 0);
  if (s.huge || !s.exact) return std::nullopt;
  cpp_int lo, hi;
  coefficient_range(type, lo, hi);
  if (s.floor < lo || s.floor > hi) return std::nullopt;
  return key_of(def, exact_value(type, s.floor));
}

ValueBound bound_key(const IndexDefinition& def, std::string_view text, BoundSide side,
                     bool exclusive) {
  const TypeSpec& type = def.type;
  const bool from = side == BoundSide::From;
  if (type.type == ColumnType::Varchar) {
    return at(key_of(def, Value::of_text(text)), !exclusive);
  }
  GeneralNumber n = parse_general(text);
  if (type.type == ColumnType::Double) {
    bool overflow = false;
    double d = read_double(text, n, overflow);
    if (!overflow) return at(key_of(def, Value::of_double(d)), !exclusive);
    // |text| > DBL_MAX: the nearest double on the inside of the comparison, inclusive.
    double inside;
    if (from) {
      inside = n.negative ? -DBL_MAX : std::numeric_limits<double>::infinity();
    } else {
      inside = n.negative ? -std::numeric_limits<double>::infinity() : DBL_MAX;
    }
    return at(key_of(def, Value::of_double(inside)), true);
  }
  cpp_int lo, hi;
  coefficient_range(type, lo, hi);
  Scaled s = scale_number(n, type.type == ColumnType::Numeric ? type.scale : 0);
  if (s.huge) {
    // +huge: from -> nothing above; to -> no upper bound. -huge: the reverse.
    if (from) return kind_only(n.negative ? ValueBound::Kind::Unbounded : ValueBound::Kind::Empty);
    return kind_only(n.negative ? ValueBound::Kind::Empty : ValueBound::Kind::Unbounded);
  }
  cpp_int c;
  if (from) {
    c = s.exact ? (exclusive ? cpp_int(s.floor + 1) : s.floor) : s.ceil;
    if (c > hi) return kind_only(ValueBound::Kind::Empty);
    if (c <= lo) return kind_only(ValueBound::Kind::Unbounded);
  } else {
    c = s.exact ? (exclusive ? cpp_int(s.floor - 1) : s.floor) : s.floor;
    if (c < lo) return kind_only(ValueBound::Kind::Empty);
    if (c >= hi) return kind_only(ValueBound::Kind::Unbounded);
  }
  return at(key_of(def, exact_value(type, c)), true);
}

bool key_in_range(std::span<const uint8_t> key, const ScanRange& range, bool descending) {
  if (range.lower) {
    int c = compare_keys(key, range.lower->key, descending);
    if (c < 0 || (c == 0 && !range.lower->inclusive)) return false;
  }
  if (range.upper) {
    int c = compare_keys(key, range.upper->key, descending);
    if (c > 0 || (c == 0 && !range.upper->inclusive)) return false;
  }
  if (range.prefix) {
    const auto& p = *range.prefix;
    if (key.size() < p.size() || !std::equal(p.begin(), p.end(), key.begin())) return false;
  }
  return true;
}

bool compound_leading_equal(std::span<const uint8_t> key, std::span<const uint8_t> search,
                            size_t index_segments, size_t search_segments, bool descending) {
  if (key.size() < search.size() || !std::equal(search.begin(), search.end(), key.begin())) {
    return false;
  }
  if (key.size() == search.size()) return true;
  uint8_t next = key[search.size()];
  if (descending) next = static_cast<uint8_t>(~next);
  return next != index_segments - search_segments + 1;
}

ScanPlan plan_scan(const IndexDefinition& def, const ScanRequest& req) {
  ScanPlan plan;
  plan.skip_nulls = req.from || req.to || req.from_null || req.to_null || req.starting_with;
  plan.range.backward = req.descending != def.descending;
  if (req.starting_with && def.type.type != ColumnType::Varchar) {
    throw UsageError(fmt::format("--starting-with needs a varchar index; index {} is {}", def.name,
                                 def.type.name()));
  }
  if (req.from_null || req.to_null) {
    plan.empty = true;
    return plan;
  }
  ValueBound from =
      req.from ? bound_key(def, *req.from, BoundSide::From, req.from_exclusive) : ValueBound{};
  ValueBound to = req.to ? bound_key(def, *req.to, BoundSide::To, req.to_exclusive) : ValueBound{};
  if (from.kind == ValueBound::Kind::Empty || to.kind == ValueBound::Kind::Empty) {
    plan.empty = true;
    return plan;
  }
  auto key_bound = [](const ValueBound& b) -> std::optional<KeyBound> {
    if (b.kind != ValueBound::Kind::At) return std::nullopt;
    return KeyBound{b.key, b.inclusive};
  };
  // Index order: ascending keys follow value order; descending keys reverse it.
  std::optional<KeyBound> low = key_bound(def.descending ? to : from);
  std::optional<KeyBound> high = key_bound(def.descending ? from : to);
  if (low && high) {
    int c = compare_keys(low->key, high->key, def.descending);
    if (c > 0 || (c == 0 && !(low->inclusive && high->inclusive))) {
      plan.empty = true;
      return plan;
    }
  }
  plan.range.lower = std::move(low);
  plan.range.upper = std::move(high);
  if (req.starting_with) {
    const std::string& text = *req.starting_with;
    std::vector<uint8_t> prefix(text.begin(), text.end());
    if (def.descending) {
      if (!prefix.empty() && prefix[0] <= 1) prefix.insert(prefix.begin(), 1);
      for (uint8_t& b : prefix) b = static_cast<uint8_t>(~b);
    }
    if (!text.empty() && text.back() == ' ') {
      std::vector<uint8_t> k = key_of(def, Value::of_text(text));  // trailing spaces cut
      bool covered =
          k.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), k.begin());
      if (!covered && key_in_range(k, plan.range, def.descending)) plan.padded_equal = std::move(k);
    }
    if (!prefix.empty()) plan.range.prefix = std::move(prefix);
  }
  return plan;
}

}  // namespace pbtree
