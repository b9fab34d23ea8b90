// libFuzzer target for the keys layer (<pbtree/keys.h>). Input byte 0 selects a mode:
//  - even: the rest is a stored key; key_to_text must succeed or throw KeyError for every
//    (type, key format) pair the format allows, ascending and descending.
//  - odd: the rest is value text for the type picked by byte 1; if parse_value accepts it,
//    then for every allowed format and both directions build_key -> key_to_text ->
//    parse_value -> build_key must give the same key bytes (only KeyError may be thrown).
#include <pbtree/keys.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace {

using namespace pbtree;

TypeSpec spec(ColumnType type, uint8_t precision = 0, uint8_t scale = 0, uint16_t length = 0) {
  TypeSpec t;
  t.type = type;
  t.precision = precision;
  t.scale = scale;
  t.length = length;
  return t;
}

const TypeSpec kTypes[] = {
    spec(ColumnType::Smallint),
    spec(ColumnType::Integer),
    spec(ColumnType::Bigint),
    spec(ColumnType::Int128),
    spec(ColumnType::Double),
    spec(ColumnType::Numeric, 4, 2),
    spec(ColumnType::Numeric, 9, 0),
    spec(ColumnType::Numeric, 9, 9),
    spec(ColumnType::Numeric, 18, 4),
    spec(ColumnType::Numeric, 38, 0),
    spec(ColumnType::Numeric, 38, 12),
    spec(ColumnType::Varchar, 0, 0, 1),
    spec(ColumnType::Varchar, 0, 0, 40),
};
constexpr KeyFormat kFormats[] = {KeyFormat::Double, KeyFormat::Text, KeyFormat::RescaledDouble,
                                  KeyFormat::Decimal128, KeyFormat::Bcd};

void decode_arbitrary(std::span<const uint8_t> key) {
  for (const TypeSpec& type : kTypes) {
    for (KeyFormat format : kFormats) {
      if (!key_format_allowed(type, format)) continue;
      for (bool descending : {false, true}) {
        try {
          std::string text = key_to_text(type, format, descending, key);
          if (text.empty() && type.type != ColumnType::Varchar) std::abort();
        } catch (const KeyError&) {
        }
      }
    }
  }
}

void round_trip(const TypeSpec& type, std::string_view text) {
  Value value;
  try {
    value = parse_value(type, text);
  } catch (const KeyError&) {
    return;
  }
  for (KeyFormat format : kFormats) {
    if (!key_format_allowed(type, format)) continue;
    for (bool descending : {false, true}) {
      KeyBuffer first;
      try {
        build_key(type, format, value, descending, first);
      } catch (const KeyError&) {
        continue;  // e.g. a value the format cannot hold
      }
      std::string back = key_to_text(type, format, descending, first.bytes());
      // The empty string and NULL share the empty key (ascending), as in Firebird.
      if (back == "NULL" && type.type == ColumnType::Varchar) continue;
      Value again = parse_value(type, back);
      KeyBuffer second;
      build_key(type, format, again, descending, second);
      if (first.length != second.length ||
          std::memcmp(first.data, second.data, first.length) != 0) {
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if ((data[0] & 1) == 0) {
    decode_arbitrary({data + 1, size - 1});
  } else if (size >= 2) {
    const TypeSpec& type = kTypes[data[1] % std::size(kTypes)];
    round_trip(type, std::string_view(reinterpret_cast<const char*>(data + 2), size - 2));
  }
  return 0;
}
