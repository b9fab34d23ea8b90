// Firebird ODS 12 node codec (byte layout at the top of node/node.h; Firebird
// src/jrd/btn.cpp IndexNode::writeNode/readNode): size, encode and the checked decode.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "node/node.h"
#include "node/node_inline.h"
#include "node/node_internal.h"

namespace pbtree {

using node_detail::get_varint;

NodeFlag node_flag(const NodeFields& node) {
  if (node.kind == NodeKind::EndLevel) return NodeFlag::EndLevel;
  if (node.kind == NodeKind::EndBucket) return NodeFlag::EndBucket;
  if (node.data.empty() && node.prefix == 0) return NodeFlag::ZeroPrefixZeroLength;
  if (node.data.empty()) return NodeFlag::ZeroLength;
  if (node.data.size() == 1) return NodeFlag::OneLength;
  return NodeFlag::Normal;
}

uint32_t node_size(const NodeFields& node, bool leaf) {
  NodeFlag flag = node_flag(node);
  if (flag == NodeFlag::EndLevel) return 1;
  uint32_t size = 1 + varint_size(node.recno >> 5);
  if (!leaf) size += varint_size(node.page_number);
  if (flag != NodeFlag::ZeroPrefixZeroLength) size += varint_size(node.prefix);
  if (flag == NodeFlag::Normal || flag == NodeFlag::EndBucket) {
    size += varint_size(node.data.size());
  }
  return size + static_cast<uint32_t>(node.data.size());
}

uint32_t encode_node(const NodeFields& node, bool leaf, uint8_t* out) {
  if (node.prefix > kMaxNodeKeyField || node.data.size() > kMaxNodeKeyField) {
    throw std::invalid_argument(fmt::format("node prefix {} / length {} exceeds {}", node.prefix,
                                            node.data.size(), kMaxNodeKeyField));
  }
  if (node.recno > (uint64_t{1} << 40) - 1) {
    throw std::invalid_argument(fmt::format("record number {} exceeds 40 bits", node.recno));
  }
  NodeFlag flag = node_flag(node);
  uint8_t f = static_cast<uint8_t>(flag) << 5;
  if (flag == NodeFlag::EndLevel) {
    out[0] = f;
    return 1;
  }
  uint32_t n = 0;
  out[n++] = f | static_cast<uint8_t>(node.recno & 0x1F);
  n += put_varint(node.recno >> 5, out + n);
  if (!leaf) n += put_varint(node.page_number, out + n);
  if (flag != NodeFlag::ZeroPrefixZeroLength) n += put_varint(node.prefix, out + n);
  if (flag == NodeFlag::Normal || flag == NodeFlag::EndBucket) {
    n += put_varint(node.data.size(), out + n);
  }
  if (!node.data.empty()) std::memcpy(out + n, node.data.data(), node.data.size());
  return n + static_cast<uint32_t>(node.data.size());
}

namespace node_detail {

IndexNode decode_firebird_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf) {
  static constexpr const char* kWhat = "node";
  {
    IndexNode quick;
    if (try_decode_node(page, limit, offset, leaf, quick)) return quick;
  }
  if (offset >= limit) {
    corrupt_page(page, fmt::format("node at offset {} lies at or beyond byte {}", offset, limit));
  }
  IndexNode node;
  node.offset = offset;
  uint8_t b = page[offset];
  uint8_t flag = b >> 5;
  if (flag > 5)
    corrupt_page(page, fmt::format("node at offset {}: reserved flag {}", offset, flag));
  node.flag = static_cast<NodeFlag>(flag);
  if (node.flag == NodeFlag::EndLevel) {
    node.size = 1;
    node.data = page + offset + 1;
    return node;
  }
  uint32_t pos = offset + 1;
  uint64_t rest = get_varint(page, limit, pos, 5, "record number", offset, kWhat);
  node.recno = (rest << 5) | (b & 0x1F);
  if (!leaf) {
    uint64_t p = get_varint(page, limit, pos, 5, "page number", offset, kWhat);
    if (p > 0xFFFFFFFFu) {
      corrupt_page(page,
                   fmt::format("node at offset {}: page number {} exceeds 32 bits", offset, p));
    }
    node.page_number = static_cast<uint32_t>(p);
  }
  if (node.flag != NodeFlag::ZeroPrefixZeroLength) {
    node.prefix = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "prefix", offset, kWhat));
  }
  switch (node.flag) {
    case NodeFlag::Normal:
    case NodeFlag::EndBucket:
      node.length = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "length", offset, kWhat));
      break;
    case NodeFlag::OneLength:
      node.length = 1;
      break;
    default:
      node.length = 0;
      break;
  }
  if (uint64_t{pos} + node.length > limit) {
    corrupt_page(page, fmt::format("node at offset {}: {} data bytes run past byte {}", offset,
                                   node.length, limit));
  }
  node.data = page + pos;
  node.size = pos + node.length - offset;
  return node;
}

}  // namespace node_detail

}  // namespace pbtree
