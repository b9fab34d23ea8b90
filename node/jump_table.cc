// Jump nodes and the jump table (layout at the top of node/jump_table.h; Firebird
// src/jrd/btr.cpp): encode, decode, the table's invariants and the jump interval.
#include "node/jump_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "node/node_internal.h"

namespace pbtree {

using node_detail::get_varint;

namespace node_detail {

// A jump node's target must lie after the page's first node (at `first`) and before
// btr_length: Firebird's fast_load never makes a jump node for the first node, and a search
// starting there gains nothing. One check, one message, for decode_jump_table (verify) and
// find_in_page (every search).
void check_jump_target(const uint8_t* page, uint32_t index, uint32_t target, uint32_t first,
                       uint32_t limit) {
  if (target == first) {
    corrupt_page(page,
                 fmt::format("jump node {} points at the first node (offset {})", index, target));
  }
  if (target < first || target >= limit) {
    corrupt_page(page, fmt::format("jump node {} points at offset {} outside ({}, {})", index,
                                   target, first, limit));
  }
}

}  // namespace node_detail

uint32_t jump_node_size(uint32_t prefix, uint32_t length) {
  return varint_size(prefix) + varint_size(length) + 2 + length;
}

uint32_t encode_jump_node(uint32_t prefix, std::span<const uint8_t> data, uint16_t node_offset,
                          uint8_t* out) {
  if (prefix > kMaxNodeKeyField || data.size() > kMaxNodeKeyField) {
    throw std::invalid_argument("jump node prefix or length exceeds 14 bits");
  }
  uint32_t n = put_varint(prefix, out);
  n += put_varint(data.size(), out + n);
  put_u16(out + n, node_offset);
  n += 2;
  if (!data.empty()) std::memcpy(out + n, data.data(), data.size());
  return n + static_cast<uint32_t>(data.size());
}

JumpNode decode_jump_node(const uint8_t* page, uint32_t limit, uint32_t offset) {
  static constexpr const char* kWhat = "jump node";
  JumpNode j;
  j.offset = offset;
  uint32_t pos = offset;
  j.prefix = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "prefix", offset, kWhat));
  j.length = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "length", offset, kWhat));
  if (uint64_t{pos} + 2 + j.length > limit) {
    corrupt_page(page, fmt::format("jump node at offset {} runs past byte {}", offset, limit));
  }
  j.node_offset = get_u16(page + pos);
  pos += 2;
  j.data = page + pos;
  j.size = pos + j.length - offset;
  return j;
}

void JumpWalk::extend_key(std::vector<uint8_t>& key) const {
  if (node_.prefix > key.size()) {
    corrupt_page(page_, fmt::format("jump node {} has prefix {} beyond the previous jump key ({})",
                                    index(), node_.prefix, key.size()));
  }
  key.resize(node_.prefix);
  key.insert(key.end(), node_.data, node_.data + node_.length);
}

std::vector<JumpEntry> decode_jump_table(const uint8_t* page, uint32_t page_size) {
  BtreeHeader h = check_btree_header(page, page_size);
  std::vector<JumpEntry> out;
  out.reserve(h.jump_count);
  std::vector<uint8_t> key;
  for (JumpWalk w(page); w.next();) {
    const JumpNode& j = w.node();
    if (w.index() == 0 && j.prefix != 0) corrupt_page(page, "first jump node has a prefix");
    w.extend_key(key);
    node_detail::check_jump_target(page, w.index(), j.node_offset, w.first_node(), h.length);
    out.push_back(JumpEntry{key, j.node_offset});
  }
  return out;
}

uint16_t jump_area_size(size_t max_key_length, bool descending) {
  size_t k = (max_key_length + (descending ? 0 : 1) + 7) / 8 * 8;
  return static_cast<uint16_t>(512 + 16 * static_cast<size_t>(std::sqrt(static_cast<double>(k))));
}

}  // namespace pbtree
