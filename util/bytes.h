// Small byte-string helpers shared by every layer: common prefix, prefix test, appending a
// node's suffix to a key, the hex dump and the escaped text used in messages. Depends on nothing of
// pbtree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pbtree {

/// Bytes `a` and `b` share from the start.
inline size_t common_prefix(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

/// True if `key` starts with `prefix`.
inline bool starts_with(std::span<const uint8_t> key, std::span<const uint8_t> prefix) {
  return key.size() >= prefix.size() &&
         (prefix.empty() || std::memcmp(key.data(), prefix.data(), prefix.size()) == 0);
}

/// key = key[0, prefix) + data[0, length) (a prefix-compressed node's full key).
inline void append_suffix(std::vector<uint8_t>& key, uint32_t prefix, const uint8_t* data,
                          uint32_t length) {
  key.resize(size_t{prefix} + length);
  if (length != 0) std::memcpy(key.data() + prefix, data, length);
}

/// "C1 2E 84 80": upper-case hex bytes separated by spaces ("" for no bytes).
inline std::string hex_bytes(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i) out += ' ';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

/// hex_bytes(), or "(empty)" for no bytes: a key in error messages.
inline std::string key_hex(std::span<const uint8_t> bytes) {
  return bytes.empty() ? std::string("(empty)") : hex_bytes(bytes);
}

/// The first `max` bytes of `text` as a message shows them: printable ASCII as it is, any
/// other byte and the backslash as \xNN (upper-case hex), so that a NUL cannot end the message
/// where it is printed as a C string. The caller says whether there was more.
inline std::string shown_text(std::string_view text, size_t max) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  const size_t n = std::min(text.size(), max);
  for (size_t k = 0; k < n; ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace pbtree
