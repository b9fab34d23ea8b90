// The printer of stored keys: key_to_text (<pbtree/keys.h>) prints what decode_stored_key
// (keys/key_decode.cc) decodes, as the text parse_value reads back; key_value_text adds
// compound keys and a hex fallback for messages.
#include <pbtree/keys.h>
#include <pbtree/types.h>

#include <charconv>
#include <cmath>
#include <string>

#include "keys/key_internal.h"
#include "util/bytes.h"

namespace pbtree {

using namespace keys_internal;

namespace {

std::string shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

}  // namespace

namespace keys_internal {

std::string decoded_key_text(const TypeSpec& type, const DecodedKey& k) {
  switch (k.kind) {
    case DecodedKey::Kind::Null:
      return "NULL";
    case DecodedKey::Kind::Text:
      return std::string(k.text);
    case DecodedKey::Kind::Double: {
      const double d = k.dbl;
      if (type.type == ColumnType::Double || !std::isfinite(d)) return shortest(d);
      if (type.type == ColumnType::Numeric && type.scale > 0) {
        i128 c;
        if (double_at_scale(d, type.scale, c)) return decimal_to_string(c, type.scale, type.scale);
        return shortest(d);
      }
      if (d == std::trunc(d) && std::fabs(d) < 0x1p127) {
        return i128_to_string(static_cast<i128>(d));
      }
      return shortest(d);
    }
    case DecodedKey::Kind::Exact:
      return decimal_to_string(k.coefficient, k.scale,
                               type.type == ColumnType::Numeric ? type.scale : 0);
  }
  return "NULL";
}

}  // namespace keys_internal

std::string key_to_text(const TypeSpec& type, KeyFormat format, bool descending,
                        std::span<const uint8_t> key) {
  std::string text;
  const DecodedKey k = decode_stored_key(type, format, descending, key, text);
  if (k.kind == DecodedKey::Kind::Text) return text;
  return decoded_key_text(type, k);
}

std::string key_value_text(const IndexDefinition& def, std::span<const uint8_t> key) {
  if (def.compound()) {  // "(v1, v2, ...)", keys/compound.cc
    const auto texts = key_segment_texts(def, key);
    if (!texts) return hex_bytes(key);
    std::string s = "(";
    for (size_t i = 0; i < texts->size(); ++i) s += (i ? ", " : "") + (*texts)[i];
    return s + ")";
  }
  try {
    return key_to_text(def.type, resolve_key_format(def.type, def.format), def.descending, key);
  } catch (const KeyError&) {
    return hex_bytes(key);
  }
}

}  // namespace pbtree
