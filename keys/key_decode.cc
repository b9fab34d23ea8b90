// key_to_value: a stored key -> its Value, through the verified text decoder of keys/key.cc
// (key_to_text re-encodes what it decodes, so the result is exact or an error).
#include <pbtree/keys.h>

namespace pbtree {

Value key_to_value(const TypeSpec& type, KeyFormat format, bool descending,
                   std::span<const uint8_t> key, std::string& storage) {
  if (key.empty() && !descending) return Value::null();
  if (descending && key.size() == 1 && key[0] == 0xFF) return Value::null();
  storage = key_to_text(type, format, descending, key);
  // key_to_text writes what parse_value reads (numeric with the column's S fraction digits,
  // doubles in shortest round-trip form, text with trailing spaces cut).
  return parse_value(type, storage);
}

}  // namespace pbtree
