// Small byte-string helpers shared by every layer: common prefix, prefix test, appending a
// node's suffix to a key, and the hex dump used in messages. Depends on nothing of pbtree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
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

}  // namespace pbtree
