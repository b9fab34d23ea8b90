// The per-layout inline node decoders (internal to node/: included by node/ code, by the hot
// entry node/node_quick.h, and by btree/cursor.cc's one-loop-per-layout scan). try_decode_node
// decodes a well-formed Firebird node, try_decode_compact the common compact shapes (S 0..2
// and an explicit S 3 entry with both nibbles below 15), each without a call; both return
// false on anything else and the caller then takes the checked decode_node (node/node.h),
// so results and errors are decode_node's. Byte layout of both node forms: node/node.h.
#pragma once

#include <cstdint>

#include "node/btree_page.h"
#include "node/node.h"
#include "util/coding.h"

namespace pbtree {

/// The Firebird-layout inline decoder behind decode_node_quick, for scans and searches: decodes the
/// node at `offset` into `node` when its header lies wholly at least 16 bytes before `limit` (so
/// the varints need no per-byte bounds checks) and every field is well-formed; returns false
/// otherwise, and the caller then calls decode_node, which takes the checked path and throws
/// CorruptError on a malformed node. Firebird-layout pages only (false on compact pages, whose
/// nodes need their predecessor). Never reads at or beyond `limit`.
[[gnu::always_inline]] inline bool try_decode_node(const uint8_t* page, uint32_t limit,
                                                   uint32_t offset, bool leaf, IndexNode& node) {
  if (offset + 16 > limit || page_layout(page) != NodeLayout::Firebird) return false;
  const uint8_t* p = page + offset;
  const uint8_t b = *p++;
  const uint8_t flag = b >> 5;
  node.offset = offset;
  if (flag == static_cast<uint8_t>(NodeFlag::EndLevel)) {
    node.flag = NodeFlag::EndLevel;
    node.recno = 0;
    node.page_number = 0;
    node.prefix = 0;
    node.length = 0;
    node.size = 1;
    node.data = p;
    return true;
  }
  if (flag > 5) return false;
  uint64_t v;
  if (!quick_varint(p, 5, v)) return false;
  node.recno = (v << 5) | (b & 0x1F);
  node.page_number = 0;
  if (!leaf) {
    if (!quick_varint(p, 5, v) || v > 0xFFFFFFFFu) return false;
    node.page_number = static_cast<uint32_t>(v);
  }
  node.prefix = 0;
  if (flag != static_cast<uint8_t>(NodeFlag::ZeroPrefixZeroLength)) {
    if (!quick_varint(p, 2, v)) return false;
    node.prefix = static_cast<uint32_t>(v);
  }
  if (flag == static_cast<uint8_t>(NodeFlag::Normal) ||
      flag == static_cast<uint8_t>(NodeFlag::EndBucket)) {
    if (!quick_varint(p, 2, v)) return false;
    node.length = static_cast<uint32_t>(v);
  } else {
    node.length = flag == static_cast<uint8_t>(NodeFlag::OneLength) ? 1 : 0;
  }
  const uint32_t pos = static_cast<uint32_t>(p - page);
  if (pos + node.length > limit) return false;
  node.flag = static_cast<NodeFlag>(flag);
  node.data = p;
  node.size = pos + node.length - offset;
  return true;
}

/// Decodes the compact node at `offset` coded against `prev` (a leaf node if `leaf`, else one
/// with a page number) when its header lies at least 16 bytes before `limit` and it is an
/// S 0..2 node or an explicit entry whose prefix and length nibbles are below 15; returns false
/// otherwise (END markers, 0xF0 big entries, anything malformed), and the caller then takes
/// decode_node. Never reads at or beyond `limit`. The page must be a compact page.
[[gnu::always_inline]] inline bool try_decode_compact(const uint8_t* page, uint32_t limit,
                                                      uint32_t offset, bool leaf,
                                                      const NodeContext& prev, IndexNode& node) {
  if (offset + 16 > limit) return false;
  const uint8_t* p = page + offset;
  const uint8_t h = p[0];
  const uint32_t shape = h >> 6;
  const uint32_t nb = (h >> 4) & 3;
  uint64_t rest;
  // Up to 3 record-number bytes after the header (S 3 reads them after the prefix byte).
  auto le3 = [](const uint8_t* q, uint32_t n) -> uint64_t {
    const uint64_t v = uint64_t{q[0]} | uint64_t{q[1]} << 8 | uint64_t{q[2]} << 16;
    return n == 0 ? 0 : v & ((uint64_t{1} << (8 * n)) - 1);
  };
  if (shape == 3) {
    if (nb == 3) return false;  // END_BUCKET, END_LEVEL, big entry, reserved
    const uint8_t pl = p[1];
    const uint32_t prefix = pl >> 4, length = pl & 0x0F;
    if (prefix == 15 || length == 15) return false;
    rest = le3(p + 2, nb);
    const uint8_t* q = p + 2 + nb;
    node.page_number = 0;
    if (!leaf) {
      uint64_t v;
      if (!quick_varint(q, 5, v) || v > 0xFFFFFFFFu) return false;
      node.page_number = static_cast<uint32_t>(v);
    }
    const uint32_t pos = static_cast<uint32_t>(q - page);
    if (pos + length > limit) return false;
    node.flag = NodeFlag::Normal;
    node.recno = (rest << 4) | (h & 0x0F);
    node.prefix = prefix;
    node.length = length;
    node.data = page + pos;
    node.size = pos + length - offset;
    node.absolute = true;
  } else {
    if (shape > prev.key_length) return false;
    rest = le3(p + 1, nb);
    const uint64_t d = (rest << 4) | (h & 0x0F);
    uint64_t recno;
    if (shape == 0) {
      recno = prev.recno + d;
    } else {
      const int64_t r = static_cast<int64_t>(prev.recno) +
                        (static_cast<int64_t>(d >> 1) ^ -static_cast<int64_t>(d & 1));
      if (r < 0) return false;
      recno = static_cast<uint64_t>(r);
    }
    const uint8_t* q = p + 1 + nb;
    node.page_number = 0;
    if (!leaf) {
      uint64_t v;
      if (!quick_varint(q, 5, v) || v > 0xFFFFFFFFu) return false;
      node.page_number = static_cast<uint32_t>(v);
    }
    const uint32_t pos = static_cast<uint32_t>(q - page);
    if (pos + shape > limit) return false;
    node.flag = NodeFlag::Normal;
    node.recno = recno;
    node.prefix = prev.key_length - shape;
    node.length = shape;
    node.data = page + pos;
    node.size = pos + shape - offset;
    node.absolute = false;
  }
  if (node.recno >= (uint64_t{1} << 40)) return false;
  node.offset = offset;
  return true;
}

}  // namespace pbtree
