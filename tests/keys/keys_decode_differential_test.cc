// key_to_value decodes natively (keys/key_decode.cc); this checks it against the text route
// it replaced, parse_value(key_to_text(key)), on every column type and key format, both
// directions: keys of random values, keys decoded under another column type (out of range,
// out of scale), and damaged keys (a byte changed, a byte cut). Both routes must give the
// same Value, or both a KeyError. PBTREE_FULL_TESTS=1 runs 10x the values.
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace pbtree {
namespace {

// The old route: the printed text, parsed as a stored value.
std::optional<Value> text_route(const TypeSpec& t, KeyFormat f, bool desc,
                                std::span<const uint8_t> key, std::string& storage) {
  if (key.empty() && !desc) return Value::null();
  if (desc && key.size() == 1 && key[0] == 0xFF) return Value::null();
  try {
    storage = key_to_text(t, f, desc, key);
    return parse_value(t, storage);
  } catch (const KeyError&) {
    return std::nullopt;
  }
}

std::optional<Value> native_route(const TypeSpec& t, KeyFormat f, bool desc,
                                  std::span<const uint8_t> key, std::string& storage) {
  try {
    return key_to_value(t, f, desc, key, storage);
  } catch (const KeyError&) {
    return std::nullopt;
  }
}

std::string show(const std::optional<Value>& v) {
  if (!v) return "KeyError";
  switch (v->kind) {
    case Value::Kind::Null:
      return "NULL";
    case Value::Kind::Exact: {
      const __int128 c = v->coefficient;
      return "exact " + std::to_string(static_cast<long long>(c / 1000000000000000000LL)) + "e18+" +
             std::to_string(static_cast<long long>(c % 1000000000000000000LL)) + " scale " +
             std::to_string(v->scale);
    }
    case Value::Kind::Double:
      return "double " + std::to_string(v->dbl);
    case Value::Kind::Text:
      return "text '" + std::string(v->text) + "'";
  }
  return "?";
}

bool same(const std::optional<Value>& a, const std::optional<Value>& b) {
  if (!a || !b) return !a && !b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case Value::Kind::Null:
      return true;
    case Value::Kind::Exact:
      return a->coefficient == b->coefficient && a->scale == b->scale;
    case Value::Kind::Double:
      return std::bit_cast<uint64_t>(a->dbl) == std::bit_cast<uint64_t>(b->dbl);
    case Value::Kind::Text:
      return a->text == b->text;
  }
  return false;
}

const char* const kTypes[] = {"smallint",       "integer",      "bigint",        "int128",
                              "numeric(4,0)",   "numeric(9,2)", "numeric(18,4)", "numeric(18,0)",
                              "numeric(38,10)", "numeric(5,5)", "double",        "varchar(12)"};
const KeyFormat kFormats[] = {KeyFormat::Double, KeyFormat::RescaledDouble, KeyFormat::Decimal128,
                              KeyFormat::Bcd, KeyFormat::Text};

// A random value of about any magnitude and scale (some outside every column).
Value random_value(std::mt19937_64& rng, std::string& text_storage) {
  switch (rng() % 6) {
    case 0:
      return Value::exact(static_cast<int64_t>(rng()) >> (rng() % 64), 0);
    case 1: {
      __int128 c = static_cast<__int128>(static_cast<int64_t>(rng()) >> (rng() % 64));
      if (rng() % 3 == 0) c *= static_cast<__int128>(rng() >> (rng() % 64));
      return Value::exact(c, static_cast<uint8_t>(rng() % 12));
    }
    case 2: {
      static const double kSpecial[] = {0.0,
                                        1.0,
                                        -1.0,
                                        0.5,
                                        1e300,
                                        -1e300,
                                        5e-324,
                                        1e-310,
                                        HUGE_VAL,
                                        -HUGE_VAL,
                                        123.25,
                                        1e18,
                                        9.2233720368547758e18};
      return Value::of_double(kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])]);
    }
    case 3: {
      const double d = std::ldexp(
          static_cast<double>(static_cast<int64_t>(rng() >> 11)) * ((rng() & 1) ? 1 : -1),
          static_cast<int>(rng() % 200) - 100);
      return Value::of_double(d);
    }
    case 4:
      return Value::exact(static_cast<int64_t>(rng() % 200001) - 100000,
                          static_cast<uint8_t>(rng() % 6));
    default: {
      static const char kChars[] = "ab 09\x01\x00\xff";
      text_storage.clear();
      const size_t n = rng() % 16;
      for (size_t i = 0; i < n; ++i) text_storage += kChars[rng() % (sizeof kChars - 1)];
      return Value::of_text(text_storage);
    }
  }
}

TEST(KeysDecodeDifferential, NativeMatchesTextRouteEveryFormat) {
  const uint64_t seed = 0xDEC0DE14;
  std::mt19937_64 rng(seed);
  const int rounds = std::getenv("PBTREE_FULL_TESTS") ? 20000 : 2000;
  std::string value_text, a_storage, b_storage;
  uint64_t compared = 0, decoded = 0;
  for (int i = 0; i < rounds; ++i) {
    const Value value = random_value(rng, value_text);
    const TypeSpec built_as = TypeSpec::parse(kTypes[rng() % std::size(kTypes)]);
    const KeyFormat f = kFormats[rng() % std::size(kFormats)];
    const bool desc = rng() & 1;
    KeyBuffer kb;
    try {
      build_key(built_as, f, value, desc, kb);
    } catch (const KeyError&) {
      continue;
    }
    std::vector<uint8_t> key(kb.bytes().begin(), kb.bytes().end());
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<uint8_t> k = key;
      if (variant == 1 && !k.empty())
        k[rng() % k.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      if (variant == 2 && !k.empty()) k.pop_back();
      for (const char* name : kTypes) {
        const TypeSpec t = TypeSpec::parse(name);
        const std::optional<Value> a = text_route(t, f, desc, k, a_storage);
        const std::optional<Value> b = native_route(t, f, desc, k, b_storage);
        ASSERT_TRUE(same(a, b)) << "seed " << seed << " round " << i << " type " << name
                                << " format " << key_format_name(f) << " desc " << desc
                                << ": text route " << show(a) << ", native " << show(b);
        ++compared;
        if (b) ++decoded;
      }
    }
  }
  std::printf("seed %llu: %llu comparisons, %llu decoded\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(compared), static_cast<unsigned long long>(decoded));
  EXPECT_GT(decoded, compared / 10);
}

}  // namespace
}  // namespace pbtree
