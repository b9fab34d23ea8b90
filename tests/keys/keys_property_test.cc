// Property test of normalized keys against an exact value model: for every allowed column
// type / key format pair, >= 10^5 edge and random values (fixed, printed seed). Checks that
// key order (compare_keys) equals value order ascending and is reversed descending, that
// equal values have equal keys and different values different keys, and that
// key_to_text(build_key(v)) parses back to v.
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "util/bytes.h"

namespace pbtree {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr uint64_t kSeed = 20261130;
constexpr size_t kValuesPerCombo = 100000;

i128 pow10_i128(int k) {
  i128 p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

struct Model {
  enum Kind { Exact, Double, Text } kind;
  i128 c = 0;  // Exact: coefficient at the column scale
  double d = 0;
  std::string s;  // Text: with trailing spaces cut
};

int compare_model(const Model& a, const Model& b) {
  switch (a.kind) {
    case Model::Exact:
      return a.c < b.c ? -1 : a.c > b.c ? 1 : 0;
    case Model::Double:
      return a.d < b.d ? -1 : a.d > b.d ? 1 : 0;  // -0 == +0
    case Model::Text: {
      const int c = a.s.compare(b.s);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
  }
  return 0;
}

std::string trim_spaces(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  u128 u128_random() { return (static_cast<u128>(rng_()) << 64) | rng_(); }

  /// Exact coefficients in [lo, hi] (lo = -hi or -hi-1).
  std::vector<i128> exact(i128 lo, i128 hi, size_t n) {
    std::vector<i128> out;
    auto add = [&](i128 v) {
      if (v >= lo && v <= hi) out.push_back(v);
    };
    for (i128 v : {i128(0), i128(1), i128(-1), lo, hi, lo + 1, hi - 1}) add(v);
    const i128 p53 = i128(1) << 53;
    for (i128 d = -1; d <= 1; ++d) {
      add(p53 + d);
      add(-p53 + d);
    }
    for (int k = 1; k <= 38; ++k) {
      const i128 p = pow10_i128(k);
      for (i128 d = -1; d <= 1; ++d) {
        add(p + d);
        add(-p - d);
      }
    }
    int max_digits = 1;
    for (i128 h = hi; h >= 10; h /= 10) ++max_digits;
    while (out.size() < n) {
      i128 v;
      switch (rng_() % 3) {
        case 0: {  // uniform over the full range
          const u128 span = static_cast<u128>(hi) - static_cast<u128>(lo) + 1;
          v = static_cast<i128>(static_cast<u128>(lo) +
                                (span == 0 ? u128_random() : u128_random() % span));
          break;
        }
        case 1: {  // log-uniform magnitude
          const int digits = 1 + static_cast<int>(rng_() % static_cast<uint64_t>(max_digits));
          const i128 base = pow10_i128(digits - 1);
          const u128 span =
              base > hi / 9 ? static_cast<u128>(hi - base) + 1 : static_cast<u128>(base) * 9;
          v = base + static_cast<i128>(u128_random() % span);
          if (rng_() & 1) v = -v;
          break;
        }
        default: {  // near-duplicates: small values and neighbours of earlier values
          const i128 x = out[rng_() % out.size()];
          const i128 delta = static_cast<i128>(rng_() % 5) - 2;
          v = (x > lo + 2 && x < hi - 2) ? x + delta : x;
          break;
        }
      }
      add(v);
    }
    return out;
  }

  std::vector<double> doubles(size_t n) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> out = {0.0,
                               -0.0,
                               1.0,
                               -1.0,
                               inf,
                               -inf,
                               std::numeric_limits<double>::max(),
                               -std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::min(),
                               -std::numeric_limits<double>::min(),
                               std::numeric_limits<double>::denorm_min(),
                               -std::numeric_limits<double>::denorm_min(),
                               9007199254740991.0,
                               9007199254740992.0,
                               9007199254740994.0,
                               -9007199254740992.0,
                               1e300,
                               -1e300,
                               0.1,
                               -0.1};
    std::uniform_real_distribution<double> exp10(-300, 300);
    while (out.size() < n) {
      double d;
      switch (rng_() % 3) {
        case 0: {
          uint64_t bits = rng_();
          std::memcpy(&d, &bits, 8);
          if (std::isnan(d)) continue;
          break;
        }
        case 1:
          d = std::pow(10.0, exp10(rng_)) * ((rng_() & 1) ? -1 : 1);
          break;
        default:
          d = static_cast<double>(static_cast<int32_t>(rng_() % 2001) - 1000) / 8;
          break;
      }
      out.push_back(d);
    }
    return out;
  }

  std::vector<std::string> texts(size_t n, size_t max_len) {
    std::vector<std::string> out = {"", " ", "A", "A ", "AB", "  A", "~~~~"};
    while (out.size() < n) {
      const size_t len = rng_() % (max_len + 1);
      std::string s;
      for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>(0x20 + rng_() % 8));
      out.push_back(s);
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

/// Values of one column, in value order, with their exact model.
struct Column {
  Model::Kind kind = Model::Exact;
  std::vector<i128> exact;
  std::vector<double> doubles;
  std::vector<std::string> texts;
  size_t size() const {
    return kind == Model::Exact    ? exact.size()
           : kind == Model::Double ? doubles.size()
                                   : texts.size();
  }
  Model model(size_t i) const {
    Model m;
    m.kind = kind;
    if (kind == Model::Exact) m.c = exact[i];
    if (kind == Model::Double) m.d = doubles[i];
    if (kind == Model::Text) m.s = trim_spaces(texts[i]);
    return m;
  }
};

Column make_column(const TypeSpec& type, uint64_t seed) {
  Generator gen(seed);
  Column col;
  if (type.type == ColumnType::Double) {
    col.kind = Model::Double;
    col.doubles = gen.doubles(kValuesPerCombo);
    std::sort(col.doubles.begin(), col.doubles.end());
  } else if (type.type == ColumnType::Varchar) {
    col.kind = Model::Text;
    std::vector<std::pair<std::string, std::string>> by_trimmed;  // (trimmed, value)
    for (std::string& t : gen.texts(kValuesPerCombo, type.length)) {
      by_trimmed.emplace_back(trim_spaces(t), std::move(t));
    }
    std::sort(by_trimmed.begin(), by_trimmed.end());
    for (auto& [trimmed, t] : by_trimmed) col.texts.push_back(std::move(t));
  } else {
    i128 lo, hi;
    switch (type.type) {
      case ColumnType::Smallint:
        lo = INT16_MIN, hi = INT16_MAX;
        break;
      case ColumnType::Integer:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
      case ColumnType::Bigint:
        lo = INT64_MIN, hi = INT64_MAX;
        break;
      case ColumnType::Int128:
        hi = static_cast<i128>(~u128(0) >> 1);
        lo = -hi - 1;
        break;
      default:
        hi = pow10_i128(type.precision) - 1;
        lo = -hi;
        break;
    }
    col.exact = gen.exact(lo, hi, kValuesPerCombo);
    std::sort(col.exact.begin(), col.exact.end());
  }
  return col;
}

void check_combo(const char* type_name, KeyFormat format, uint64_t seed) {
  SCOPED_TRACE(std::string(type_name) + " / " + std::string(key_format_name(format)));
  const TypeSpec type = TypeSpec::parse(type_name);
  const Column col = make_column(type, seed);
  const uint8_t scale = type.type == ColumnType::Numeric ? type.scale : 0;
  auto value_at = [&](size_t i) {
    switch (col.kind) {
      case Model::Exact:
        return Value::exact(col.exact[i], scale);
      case Model::Double:
        return Value::of_double(col.doubles[i]);
      case Model::Text:
        break;
    }
    return Value::of_text(col.texts[i]);
  };
  auto buffers = std::make_unique<KeyBuffer[]>(4);
  KeyBuffer* prev_asc = &buffers[0];
  KeyBuffer* prev_desc = &buffers[1];
  KeyBuffer* asc = &buffers[2];
  KeyBuffer* desc = &buffers[3];
  size_t failures = 0;
  Model prev_model;
  for (size_t i = 0; i < col.size() && failures < 10; ++i) {
    const Value v = value_at(i);
    build_key(type, format, v, false, *asc);
    build_key(type, format, v, true, *desc);
    Model m = col.model(i);
    if (i > 0) {
      // Sorted by value, so adjacent checks give the whole order (both orders are total).
      const int want = compare_model(prev_model, m);
      const int a = compare_keys(prev_asc->bytes(), asc->bytes(), false);
      const int d = compare_keys(prev_desc->bytes(), desc->bytes(), true);
      if (a != want || d != -want) {
        ++failures;
        ADD_FAILURE() << "order mismatch at " << i << ": keys " << hex_bytes(prev_asc->bytes())
                      << " / " << hex_bytes(asc->bytes()) << " want " << want << " asc " << a
                      << " desc " << d;
      }
    }
    // Round trip through text (descending keys for odd positions).
    const bool use_desc = i % 2 == 1;
    const std::string text = key_to_text(type, format, use_desc, (use_desc ? desc : asc)->bytes());
    const Value back = parse_value(type, text);
    bool same = false;
    switch (m.kind) {
      case Model::Exact:
        same = back.kind == Value::Kind::Exact && back.coefficient == m.c && back.scale == scale;
        break;
      case Model::Double:
        same = back.kind == Value::Kind::Double && back.dbl == m.d;
        break;
      case Model::Text:
        same = back.kind == Value::Kind::Text && back.text == m.s;
        break;
    }
    if (!same) {
      ++failures;
      ADD_FAILURE() << "round trip of key " << hex_bytes((use_desc ? desc : asc)->bytes())
                    << " gave '" << text << "'";
    }
    std::swap(prev_asc, asc);
    std::swap(prev_desc, desc);
    prev_model = std::move(m);
  }
}

struct Combo {
  const char* type;
  KeyFormat format;
};

class KeysProperty : public ::testing::TestWithParam<Combo> {};

const Combo kCombos[] = {
    {"smallint", KeyFormat::Double},
    {"smallint", KeyFormat::Decimal128},
    {"smallint", KeyFormat::Bcd},
    {"integer", KeyFormat::Double},
    {"integer", KeyFormat::Decimal128},
    {"integer", KeyFormat::Bcd},
    {"numeric(4,2)", KeyFormat::Double},
    {"numeric(9,3)", KeyFormat::Double},
    {"numeric(9,3)", KeyFormat::Decimal128},
    {"numeric(9,9)", KeyFormat::Bcd},
    {"bigint", KeyFormat::RescaledDouble},
    {"bigint", KeyFormat::Decimal128},
    {"bigint", KeyFormat::Bcd},
    {"numeric(18,4)", KeyFormat::RescaledDouble},
    {"numeric(18,18)", KeyFormat::RescaledDouble},
    {"numeric(12,2)", KeyFormat::Decimal128},
    {"numeric(18,6)", KeyFormat::Bcd},
    {"int128", KeyFormat::Bcd},
    {"numeric(38,10)", KeyFormat::Bcd},
    {"numeric(25,0)", KeyFormat::Bcd},
    {"double", KeyFormat::Double},
    {"varchar(12)", KeyFormat::Text},
};

TEST_P(KeysProperty, OrderEqualityAndRoundTrip) {
  size_t index = 0;
  while (index + 1 < std::size(kCombos) &&
         (kCombos[index].type != GetParam().type || kCombos[index].format != GetParam().format)) {
    ++index;
  }
  const uint64_t seed = kSeed + index;
  std::cout << "[ keys property ] " << GetParam().type << " / "
            << key_format_name(GetParam().format) << ": seed " << seed << ", " << kValuesPerCombo
            << " values\n";
  check_combo(GetParam().type, GetParam().format, seed);
}

INSTANTIATE_TEST_SUITE_P(EveryTypeAndFormat, KeysProperty, ::testing::ValuesIn(kCombos),
                         [](const ::testing::TestParamInfo<Combo>& info) {
                           std::string name = std::string(info.param.type) + "_" +
                                              std::string(key_format_name(info.param.format));
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace pbtree
